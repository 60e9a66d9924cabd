# 368: qa/334 (target-variable writes with bpf_probe_write_user) in the
# guest, whose kernel is not locked down: the same script, workload and
# expected output (qa/334.out)
sed -n "/^_script t.stp <<'END'\$/,/^END\$/p" 334 | sed '1d;$d' >"$tmp/t.stp"
[ -s "$tmp/t.stp" ] || { echo "no script in qa/334" >&2; exit 1; }
cd "$tmp" || exit 1
$PMSTAP -g t.stp "$QA_BIN/dwarf_more" -c "$QA_BIN/dwarf_more" >"$tmp/out" 2>"$tmp/err"
rc=$?
cat "$tmp/out"
grep -v '^Number of errors: 0, skipped probes: [0-9]*$' "$tmp/err" | sed '1s/^/== stderr\n/'
echo "exit status $rc"
