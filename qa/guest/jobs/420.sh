# 420: the nfsd tapset with --runtime=kernel against a real NFS server:
# nfsd.ko loaded, a tmpfs exported to 127.0.0.1 (rpcbind, rpc.mountd,
# exportfs and rpc.nfsd of nfs-kernel-server; 9p cannot be exported) and
# mounted back over loopback twice, NFSv3 (nolock) and NFSv4.2 (fsid=0:
# the export is NFSv4's root, whose ancestors here are 9p), with
# lookupcache=none and noac: every name is looked up at the server.  The
# workload, NFSv3: create alpha, write it with 3 direct writes of 4096
# bytes, read it back the same way, mkdir dir1, stat nosuch (not there),
# rename alpha to beta, remove beta, rmdir dir1; NFSv4: the same with
# gamma, dir2, nosuch4 and delta (a regular file is created by OPEN, not
# by nfsd4_create(), so nfsd.proc4.create sees dir2 only).  The script
# prints what the nfsd.proc.* and nfsd.* aliases saw of those names, the
# bytes, nfsderror() of the failed lookups, and the tapset's functions on
# a few values (in the end probe: pmstap's user context).  The NFSv4 grace period
# is cut to its least, 10 s (OPEN, RENAME and REMOVE wait it out).
cat >"$tmp/nfsd.stp" <<'END'
global disp, looked, failed, last, create, fcreate, remove, rename, unlink, frename
global writes, wbytes, wret, reads, rbytes, fwrites, fwbytes, freads, fh_ok, fh_bad, uids

function ours(n) {
	return n == "alpha" || n == "beta" || n == "dir1" || n == "nosuch" ||
	       n == "gamma" || n == "delta" || n == "dir2" || n == "nosuch4"
}

probe nfsd.dispatch { if (isinstr(client_ip, "127.0.0.1:")) disp[version] = 1 }
probe nfsd.proc.lookup { if (ours(filename)) looked[sprintf("v%d:%s", version, filename)] = 1 }
probe nfsd.lookup { last[tid()] = filename }
probe nfsd.lookup.return {
	if (last[tid()] == "nosuch" || last[tid()] == "nosuch4")
		failed[last[tid()]] = retstr
	delete last[tid()]
}
probe nfsd.proc.create {
	create[sprintf("%s: %s (client 127.0.0.1: %d)", name, argstr,
		       client_ip =~ "^127\\.0\\.0\\.1:[0-9]+$")]++
	uids[uid, gid]++
}
probe nfsd.create { fcreate[argstr]++ }
probe nfsd.proc.remove { remove[name . ": " . argstr]++ }
probe nfsd.proc.rename { rename[sprintf("%s: %s (%d, %d)", name, argstr, filelen, tlen)]++ }
probe nfsd.unlink {
	unlink[sprintf("%s type %d", argstr, type)]++
	if (fh =~ "^[0-9]+: [0-9a-f]{8}( [0-9a-f]{8}){5}$") fh_ok++; else fh_bad[fh]++
}
probe nfsd.rename { frename[argstr]++ }
probe nfsd.proc.write { writes[version]++; wbytes[version] += size }
probe nfsd.proc.write.return { wret[version] += count }
probe nfsd.proc.read { reads[version]++; rbytes[version] += size }
probe nfsd.write { fwrites++; fwbytes += size }
probe nfsd.read { freads++ }
probe end {
	foreach (v+ in disp)
		printf("NFSv%d requests from 127.0.0.1\n", v)
	printf("looked up:")
	foreach (n+ in looked)
		printf(" %s", n)
	printf("\n")
	foreach (n+ in failed)
		printf("lookup of %s: %s\n", n, failed[n])
	foreach (c+ in create)
		printf("%s x%d\n", c, create[c])
	foreach ([u, g] in uids)
		printf("  uid %d gid %d x%d\n", u, g, uids[u, g])
	foreach (a+ in fcreate)
		printf("nfsd.create: %s x%d\n", a, fcreate[a])
	foreach (r+ in rename)
		printf("%s x%d\n", r, rename[r])
	foreach (a+ in frename)
		printf("nfsd.rename: %s x%d\n", a, frename[a])
	foreach (r+ in remove)
		printf("%s x%d\n", r, remove[r])
	foreach (k+ in unlink)
		printf("nfsd.unlink: %s x%d\n", k, unlink[k])
	printf("file handles as text: %d well formed\n", fh_ok)
	foreach (f in fh_bad)
		printf("  not: %s\n", f)
	foreach (v+ in writes)
		printf("nfsd.proc.write v%d: %d, %d bytes, %d written\n", v, writes[v], wbytes[v],
		       wret[v])
	foreach (v+ in reads)
		printf("nfsd.proc.read v%d: %d, %d bytes\n", v, reads[v], rbytes[v])
	printf("nfsd.write: %d, %d bytes; nfsd.read: %d\n", fwrites, fwbytes, freads)
	printf("%s, %s, %s, %s\n", nfsderror(0), nfsderror(htonl(70)), nfsderror(htonl(10087)),
	       nfsderror(htonl(10073)))
	printf("%s, %s, %s, %s, %s\n", ftype(0100644), ftype(0120777), nfs3_cmode(2),
	       nfs3_cmode(7), nfs4_ctype(9))
}
END
cat >"$tmp/work.sh" <<END
set -e
for v in 3 4; do
	m=$tmp/mnt\$v
	if [ \$v = 3 ]; then f=alpha g=beta d=dir1 x=nosuch; else f=gamma g=delta d=dir2 x=nosuch4; fi
	: >\$m/\$f
	dd if=/dev/zero of=\$m/\$f bs=4096 count=3 oflag=direct conv=notrunc status=none
	dd if=\$m/\$f of=/dev/null bs=4096 count=3 iflag=direct status=none
	mkdir \$m/\$d
	! stat \$m/\$x >/dev/null 2>&1
	mv \$m/\$f \$m/\$g
	rm \$m/\$g
	rmdir \$m/\$d
done
END
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel "$tmp/nfsd.stp" -c "bash $tmp/work.sh"
	exit 0
fi

# the server and its client; each step says what failed
step() { "$@" >>"$tmp/setup.log" 2>&1 || { echo "setup failed: $*"; cat "$tmp/setup.log"; exit 1; }; }
mkdir -p "$tmp/export" "$tmp/mnt3" "$tmp/mnt4" /var/lib/nfs/rpc_pipefs /run/rpcbind
step ip link set lo up
step modprobe nfsd
step modprobe nfsv3
step modprobe nfsv4
step mount -t nfsd nfsd /proc/fs/nfsd
echo 10 >/proc/fs/nfsd/nfsv4gracetime
echo 10 >/proc/fs/nfsd/nfsv4leasetime
step mount -t tmpfs tmpfs "$tmp/export"
step rpcbind -w
step exportfs -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 "127.0.0.1:$tmp/export"
step rpc.mountd
step rpc.nfsd 2
step mount -t nfs -o vers=3,nolock,lookupcache=none,noac "127.0.0.1:$tmp/export" "$tmp/mnt3"
step mount -t nfs -o vers=4.2,lookupcache=none,noac 127.0.0.1:/ "$tmp/mnt4"
echo "server up: $(cat /proc/fs/nfsd/versions)"

$PMSTAP --runtime=kernel "$tmp/nfsd.stp" -c "bash $tmp/work.sh"
echo "status $?"
echo "left in the export: $(ls -A "$tmp/export" | wc -l)"
umount "$tmp/mnt3" "$tmp/mnt4"
rpc.nfsd 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
