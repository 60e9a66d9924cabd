# 385: symname(), symdata() and modname() of a kernel address as strings
# in a kernel probe (an array's keys here), where the kernel names the
# address itself (its vsprintf's %ps/%pS), with the bpf runtime and
# --runtime=kernel: the same text the runner prints for the same address
# (a deferred printf); an address in no symbol is named in hex, and
# modname() of it is an error, as in stap.  The address is ksys_read's,
# from /proc/kallsyms (-G).  addr() in a kernel.function probe is where
# the function was hit: its symbol is the function's.
cat >"$tmp/t.stp" <<'END'
global names, datas, mods, hit
global ksys_read = 0	# -G ksys_read=ADDRESS
probe kernel.trace("sched:sched_process_exec") {
	if (pid() != target())
		next
	a = ksys_read
	names[symname(a)]++
	datas[symdata(a)]++
	mods[modname(a)]++
	names[symname(16)]++
	printf("printed %s|%s\n", symname(a), symdata(a))
	try {
		mods[modname(16)]++
	} catch (msg) {
		println("modname(16): ", msg)
	}
}
probe kernel.function("ksys_read") {
	if (pid() == target())
		hit[symname(addr())]++
}
probe end {
	foreach (h in hit)
		printf("addr() in ksys_read: %s\n", h)
	foreach (n+ in names)
		printf("name %s\n", n)
	foreach (d in datas)
		printf("data %s\n", d)
	foreach (m in mods)
		printf("module %s\n", m)
}
END
a=$((0x$(awk '$3 == "ksys_read" { print $1; exit }' /proc/kallsyms)))
for rt in bpf kernel; do
	echo "== --runtime=$rt"
	$PMSTAP --runtime=$rt -G ksys_read=$a "$tmp/t.stp" -c true >"$tmp/$rt.out" 2>&1
	echo "status $?"
	[ -n "${GUEST_COMPILE_ONLY:-}" ] && continue
	grep -v '^printed' "$tmp/$rt.out" | sed 's/+0x[0-9a-f]*\/0x[0-9a-f]*/+OFF\/SIZE/'
	p=$(sed -n 's/^printed //p' "$tmp/$rt.out")
	k="$(sed -n 's/^name \(ksys_read\)$/\1/p' "$tmp/$rt.out")|$(sed -n 's/^data //p' "$tmp/$rt.out")"
	if [ "$p" = "$k" ]; then
		echo "the keys are what the runner printed"
	else
		echo "the keys ($k) are not what the runner printed ($p)"
	fi
done
