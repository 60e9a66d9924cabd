# 424: kernel.statement with both runtimes: the peer scripts (each the
# same beside stap 4.8's module) with --runtime=kernel, then with bpf,
# whose output must be the kernel runtime's: $$parms, $$vars, $$locals at
# each line of ksys_lseek and of do_sys_open's inline instance, the entry
# of ksys_read, two of its lines.  (425 runs the others: all seven took
# one job the whole of its time, under emulation on a busy host.)
. "$REPO/qa/guest/peer_both.rc"
_peer_both kstmt_vars kstmt_inline_vars kstmt_entry kstmt_lines
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
