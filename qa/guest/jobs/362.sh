# 362: $file->f_inode->i_ino and $file->f_path->dentry->d_name->name through BTF;
# ...->name$ (a char *) quoted, as stap's kernel_string_quoted()
cat >"$tmp/t.stp" <<'END'
probe kernel.function("vfs_read") {
	if (pid() == target() && $count == 7)
		printf("ino=%d name=%s quoted=%s chr=%d\n", $file->f_inode->i_ino,
		       kernel_string($file->f_path->dentry->d_name->name),
		       $file->f_path->dentry->d_name->name$,
		       ($file->f_inode->i_mode & 0170000) == 0020000)
}
END
$PMSTAP "$tmp/t.stp" -c "$QA_BIN/read_sizes 7x2" >"$tmp/out"
rc=$?
ino=$(stat -Lc %i /dev/zero)
sed "s/ino=$ino /ino=INODE_OF_DEV_ZERO /" "$tmp/out"
exit $rc
