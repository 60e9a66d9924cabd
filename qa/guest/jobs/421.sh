# 421: uprobes on files under an overlay (the guest's root is overlayfs
# over 9p, as a container's root is overlayfs): the overlay's inode cannot
# take a uprobe (uprobe_register() refuses it: EIO), the file's own inode
# under it can, as the kernel's uprobe events find it.  With both
# runtimes, straight from the tree (no copy to a tmpfs):
# 1. process(libc).function("free") fires in a command run with -c;
# 2. process("many_funcs").mark("sem"), a marker behind a semaphore, fires
#    as often as the workload saw it raised, and uf_00's entries count as
#    its calls.
M=$QA_BIN/many_funcs
cat >"$tmp/free.stp" <<'END'
global n
probe process("/lib/x86_64-linux-gnu/libc.so.6").function("free") { n++ }
probe end { printf("free: %s\n", n > 0 ? "fired" : "never fired") }
END
cat >"$tmp/sem.stp" <<END
global sem, calls
probe process("$M").mark("sem") { sem++ }
probe process("$M").function("uf_00") { calls++ }
probe end { printf("sem %d\nuf_00 %d\n", sem, calls) }
END
for rt in bpf kernel; do
	echo "== $rt runtime: libc's free"
	$PMSTAP --runtime=$rt "$tmp/free.stp" -c "ls /" | grep '^free'
	echo "status ${PIPESTATUS[0]}"
	echo "== $rt runtime: a mark with a semaphore"
	$PMSTAP --runtime=$rt "$tmp/sem.stp" -c "$M 5" >"$tmp/sem.out"
	echo "status $?"
	[ -n "${GUEST_COMPILE_ONLY:-}" ] && continue
	grep -E '^(sem|uf_00) ' "$tmp/sem.out" | sort | uniq -c | awk '
		$1 != 2 { print "differs from the workload: " $2 " " $3 }
		$2 == "sem" && $3 > 0 && $1 == 2 { print "mark fired as often as raised" }
		$2 == "uf_00" && $1 == 2 { print "uf_00 entered as often as called" }'
done
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
