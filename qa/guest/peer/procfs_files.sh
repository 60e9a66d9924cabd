# the workload of procfs_files.stp: its files' modes, a read, writes, a
# read after a write on the file that has both (the folder is stap's
# module's or pmstap's: a glob finds it)
for f in /proc/systemtap/*/pfs_*; do
	stat -c "${f##*/} %A" "$f"
done
cat /proc/systemtap/*/pfs_rw
echo
echo forty-two >/proc/systemtap/*/pfs_rw
cat /proc/systemtap/*/pfs_rw
head -c 1000 /dev/zero | tr '\0' x >/proc/systemtap/*/pfs_w
cat /proc/systemtap/*/pfs_big | sed -n '1p;$p;$='
