#!/bin/sh
# mk/bpf-health.sh BUILD - can this kernel load and free BPF programs?
#
# make check and make demo run it first.  A kernel whose BPF JIT has
# deadlocked (seen once on this project's 6.18 VM, after thousands of
# program frees in flight at once: kworkers in bpf_prog_pack_free behind
# a holder stuck in the vmap purge) never ends a BPF load again, and
# SIGKILL cannot stop the loader.  Every BPF test would then hang until
# CI's limit; this check says why at once instead, and exits 1:
#   1. no task may sleep uninterruptibly in bpf_prog_pack_alloc/_free
#      (their kernel stacks, /proc/PID/stack, root only);
#   2. a script that loads one program, on the exec of its -c command,
#      must finish within BPF_HEALTH_TIMEOUT seconds (default 300; it
#      takes about one second).
# Exits 0 when both hold, and 0 with a note when it cannot check (no
# pmstap, not root).
build=${1:-build}
limit=${BPF_HEALTH_TIMEOUT:-300}
pmstap=$build/bin/pmstap

say() {
	echo "bpf-health: $*" >&2
}

stuck_tasks() {
	for stat in /proc/[0-9]*/stat; do
		# field 3 is the state; names with spaces are in parentheses
		state=$(sed 's/.*) \(.\).*/\1/' "$stat" 2>/dev/null)
		[ "$state" = D ] || continue
		grep -l 'bpf_prog_pack_\(alloc\|free\)' "${stat%stat}stack" 2>/dev/null
	done | wc -l
}

[ "$(id -u)" = 0 ] || { say "not root: not checked"; exit 0; }
[ -x "$pmstap" ] || { say "$pmstap is not built: not checked"; exit 0; }

n=$(stuck_tasks)
if [ "$n" -gt 0 ]; then
	say "error: this kernel's BPF loads are stuck: $n tasks sleep in bpf_prog_pack_alloc or bpf_prog_pack_free (see /proc/*/stack); no BPF test can run until the machine is rebooted"
	exit 1
fi

out=$(mktemp)
"$pmstap" -e 'probe kernel.trace("sched:sched_process_exec") { exit() }' -c true >"$out" 2>&1 &
pid=$!
waited=0
while kill -0 "$pid" 2>/dev/null; do
	if [ "$waited" -ge "$limit" ]; then
		say "error: the smallest BPF script did not end in $limit s (its pmstap, pid $pid, is left running); tasks stuck in the BPF JIT: $(stuck_tasks); no BPF test can run on this kernel"
		rm -f "$out"
		exit 1
	fi
	sleep 1
	waited=$((waited + 1))
done
wait "$pid"
rc=$?
if [ "$rc" -ne 0 ]; then
	say "note: the smallest BPF script failed (status $rc); the tests will say why:"
	sed 's/^/    /' "$out" >&2
fi
rm -f "$out"
exit 0
