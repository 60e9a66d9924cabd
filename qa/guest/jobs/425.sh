# 425: kernel.statement with both runtimes, as 424: the peer scripts
# with --runtime=kernel, then with bpf, whose output must be the kernel
# runtime's: every line of ksys_read; $$parms$ and $$parms$$ at
# ksys_lseek's lines; a struct on do_statx's stack frame (DW_OP_fbreg).
. "$REPO/qa/guest/peer_both.rc"
_peer_both kstmt_every_line kstmt_vars_pretty kstmt_fbreg
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
