# 400: --runtime=kernel -g: stap's guru setters write kernel memory in a
# module's handler: a buffer of the module's own (a static of the
# script's embedded C, whose address a function returns), each setter
# read back with its reader: the bytes it writes and no more (an int
# into a long of -1, a short into that, a char into that), a pointer,
# a string and stap's set_kernel_string_n() cut (at most n bytes, then a
# NUL); address 0 (a user address) is stap's soft error for each, and
# so are a non-canonical address, caught, and one in the kernel's
# unmapped guard hole, uncaught (status 1).  The store checks the address first: under SMAP a store to
# a user address is an oops, not a fault the exception table fixes.
cat >"$tmp/t.stp" <<'END'
%{
static int64_t kg_cells[3];
static char kg_text[32];
%}
function cells:long () %{ STAP_RETVALUE = (long)kg_cells; %}
function text:long () %{ STAP_RETVALUE = (long)kg_text; %}
probe kernel.trace("sched:sched_process_exec") {
	if (pid() != target())
		next
	a = cells()
	printf("before: %d %d\n", kernel_long(a), kernel_long(a + 8))
	set_kernel_long(a, -1234567890123)
	printf("set_kernel_long: %d\n", kernel_long(a))
	set_kernel_long(a + 8, -1)
	set_kernel_int(a + 8, 0x123456789)
	printf("set_kernel_int: %d, the long now %d\n", kernel_int(a + 8), kernel_long(a + 8))
	set_kernel_short(a + 8, -2)
	printf("set_kernel_short: %d, the int now %d\n", kernel_short(a + 8), kernel_int(a + 8))
	set_kernel_char(a + 8, 0x141)
	printf("set_kernel_char: %d, the short now %d\n", kernel_char(a + 8), kernel_short(a + 8))
	set_kernel_pointer(a + 16, a)
	printf("set_kernel_pointer: %s\n", kernel_pointer(a + 16) == a ? "the buffer's address" : "wrong")
	t = text()
	set_kernel_string(t, "hello, kernel")
	printf("set_kernel_string: %s\n", kernel_string(t))
	set_kernel_string_n(t, 4, "abcdefgh")
	printf("set_kernel_string_n 4: %s, then %s\n", kernel_string(t), kernel_string(t + 5))
	set_kernel_string_n(t, 0, "xyz")
	printf("set_kernel_string_n 0: \"%s\"\n", kernel_string(t))
	try { set_kernel_long(0, 1) } catch (m) { println(m) }
	try { set_kernel_int(0, 1) } catch (m) { println(m) }
	try { set_kernel_short(0, 1) } catch (m) { println(m) }
	try { set_kernel_char(0, 1) } catch (m) { println(m) }
	try { set_kernel_pointer(0, 1) } catch (m) { println(m) }
	try { set_kernel_string(0, "x") } catch (m) { println(m) }
	try { set_kernel_string_n(0, 1, "x") } catch (m) { println(m) }
	try { set_kernel_long(1 << 63, 1) } catch (m) { println(m) }
	set_kernel_long(0xffff800000000000, 2)
	println("not reached")
}
END
$PMSTAP --runtime=kernel -g "$tmp/t.stp" -c true >"$tmp/out" 2>"$tmp/err"
echo "kernel: status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
cat "$tmp/out"
sed "s|$tmp/||" "$tmp/err"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
echo "oopses: $(dmesg | grep -c -e 'BUG:' -e 'Oops')"
