# a kernel.function pattern: a line per function of the kernel's BTF it matches
needs: btf bpftool
args: -l 'kernel.function("vfs_rea*").return'
expect: bpftool btf dump file /sys/kernel/btf/vmlinux | sed -n "s/^\[[0-9]*\] FUNC '\(vfs_rea[^']*\)'.*/kernel.function(\"\1\").return/p" | LC_ALL=C sort -u
