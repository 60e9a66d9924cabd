# 402: --runtime=kernel -g: a begin, end or timer probe (pmstap runs
# them) calls the script's embedded-C functions, which run in the module
# (ioctl on its device, runtime/kmod/kmod_abi.h): long and string results
# and arguments; a module static that a kernel probe changes through
# another embedded-C function, read by begin (0) and by end, which checks
# it against the script's own count of the same hits (the target's two
# execs: sh, then true); STAP_ERROR() caught by try in end with stap's
# text, and one uncaught in end (the function's location, status 1);
# %{ %} written into begin (a statement, a long and a string expression)
# and into a script function begin calls, which the module runs too.
cat >"$tmp/t.stp" <<'END'
%{
static int64_t kb_hits;
static int64_t kb_base;
%}
function bump () %{ kb_hits++; %}
function hits:long () %{ STAP_RETVALUE = kb_hits; %}
function add:long (a:long, b:long) %{ STAP_RETVALUE = STAP_ARG_a + STAP_ARG_b; %}
function greet:string (who:string, n:long) %{
	snprintf(STAP_RETVALUE, MAXSTRINGLEN, "hello %s #%lld", STAP_ARG_who, (long long)STAP_ARG_n);
%}
function checked:long (x:long) %{
	if (STAP_ARG_x < 0)
		STAP_ERROR("negative argument %lld", (long long)STAP_ARG_x);
	STAP_RETURN(STAP_ARG_x + 1);
%}
function set_base () { %{ kb_base = 100 %} }
global n
probe begin {
	printf("%d %s\n", add(40, 2), greet("world", 7))
	printf("module count at begin: %d\n", hits())
	set_base()
	%{ kb_base += 1 %}
	printf("module base: %d, %s\n", %{ kb_base * 2 %}, %{ /* string */ "a string from the module" %})
}
probe kernel.trace("sched:sched_process_exec") {
	if (pid() != target())
		next
	n++
	bump()
}
probe end {
	printf("module count %d, script count %d: %s\n", hits(), n, hits() == n ? "equal" : "differ")
	println(checked(41))
	try { checked(-3) } catch (msg) { println("caught: ", msg) }
	n = checked(-2)
	println("not reached")
}
END
$PMSTAP --runtime=kernel -g "$tmp/t.stp" -c "/bin/sh -c 'exec /bin/true'" >"$tmp/out" 2>"$tmp/err"
echo "kernel: status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
sed "s|$tmp/||" "$tmp/out" "$tmp/err"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules), oopses: $(dmesg | grep -c -e 'BUG:' -e 'Oops')"
