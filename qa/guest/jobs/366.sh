# 366: the vfs tapset (vfs.read, vfs.read.return, vfs.write) on kernel functions
# (the inode is compared after the run: as an argument it would be part of
# the cache key, and /dev/zero's differs between the host and the guest)
cat >"$tmp/t.stp" <<'END'
probe vfs.read {
	if (pid() == target() && bytes_to_read == 9)
		printf("%s bytes_to_read=%d ino=%d\n", name, bytes_to_read, ino)
}
probe vfs.read.return {
	if (pid() == target() && bytes_to_read == 9)
		printf("%s.return ret=%d bytes_read=%d error=%d\n", name, ret, bytes_read, error)
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 9x2" >"$tmp/out"
rc=$?
ino=$(stat -Lc %i /dev/zero)
sed -e "s/ ino=$ino\$/ ino_ok=1/" -e "s/ ino=[0-9]*\$/ ino_ok=0/" "$tmp/out"
exit $rc
