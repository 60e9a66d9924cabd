# 366: the vfs tapset (vfs.read, vfs.read.return, vfs.write) on kernel functions
cat >"$tmp/t.stp" <<'END'
probe vfs.read {
	if (pid() == target() && bytes_to_read == 9)
		printf("%s bytes_to_read=%d ino_ok=%d\n", name, bytes_to_read, ino == $1)
}
probe vfs.read.return {
	if (pid() == target() && bytes_to_read == 9)
		printf("%s.return ret=%d bytes_read=%d error=%d\n", name, ret, bytes_read, error)
}
END
$PMSTAP "$tmp/t.stp" $(stat -Lc %i /dev/zero) -c "$QA_BIN/read_sizes 9x2"
