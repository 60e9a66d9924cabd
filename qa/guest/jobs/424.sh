# 424: $$parms, $$vars, $$locals at kernel.statement lines with DWARF,
# --runtime=kernel (the peer scripts kstmt_vars and kstmt_inline_vars,
# the same scripts beside stap 4.8's module; the BPF runtime has no
# kernel.statement yet).
for s in kstmt_vars kstmt_inline_vars; do
	work=$(sed -n 's/^# workload: //p' "$REPO/qa/guest/peer/$s.stp" | sed "s|QA_BIN|$QA_BIN|")
	$PMSTAP --runtime=kernel "$REPO/qa/guest/peer/$s.stp" -c "$work" >"$tmp/$s.out" 2>&1
	echo "$s: status $?"
	[ -n "${GUEST_COMPILE_ONLY:-}" ] || cat "$tmp/$s.out"
done
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
