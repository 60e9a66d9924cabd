#!/bin/bash
# bench/pmda/kill-soak.sh [SECONDS] [BACKOFF_MAX] - a script's child
# killed with SIGKILL every second for SECONDS (default 60), as qa/140
# does a handful of times, against the real pmcd: whatever child the
# script has at that second is killed (running, or still starting).
# Meanwhile a client fetches the other script's counter as fast as it can
# and a workload makes a known number of calls for it to count.  Prints
# the kills, stap.scripts.restarts, the back-offs the log gave
# (restart_backoff_min 1 s, restart_backoff_max BACKOFF_MAX, default 4),
# fetches without values, the other script's count against the
# workload's, the BPF objects of the killed children still alive, the
# children and zombies of pmdastap, and its descriptors and RSS before
# and after (issue 16, item 4).  Needs root and the PMDA installable.
#
#	make && bench/pmda/kill-soak.sh 60
secs=${1:-60}
seq=soak-kill
cd "$(dirname "$0")/../../qa" || exit 2
. ./common.rc
. ./pmda/common.pmda

_pmda_need
cp "$QA_BIN/getppid_loop" "$tmp/soak_loop"
_script_auto soakvictim.stp <<'END'
export global ticks
probe timer.ms(100) { ticks++ }
probe kernel.trace("syscalls:sys_enter_getppid") { if (execname() == "soak_none") ticks++ }
END
_script_auto soakother.stp <<'END'
export global calls
probe kernel.trace("syscalls:sys_enter_getppid") { if (execname() == "soak_loop") calls++ }
END
qa_limits="restart_backoff_max = ${2:-4}"
_pmda_start
_pmda_wait_status soakvictim running 120 || _fail "soakvictim did not start"
_pmda_wait_status soakother running 120 || _fail "soakother did not start"
pmda=$(_pmda_pid)
fds0=$(_fds "$pmda") rss0=$(_rss "$pmda")
restarts0=$(_value stap.scripts.restarts soakvictim)

"$QA_BIN/stapfetch" -x "$tmp/stop" -r "$tmp/ready" stap.soakother.calls stap.info.version >"$tmp/fetch" &
fetcher=$!
_wait_for "the client's first fetch" 30 test -f "$tmp/ready" || _fail "stapfetch did not start"
calls=$((secs * 500))
"$tmp/soak_loop" -d 2000 "$calls" &
loop=$!

kills=0 attempts=0
: >"$tmp/bpf"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt "$secs" ]; do
	attempts=$((attempts + 1))
	victim=$(pgrep -P "$pmda" -x stap:soakvictim | head -1)
	if [ -n "$victim" ]; then
		_bpf_ids "$victim" >>"$tmp/bpf"
		kill -KILL "$victim" && kills=$((kills + 1))
	fi
	sleep 1		# the pace of the kills, not a synchronization
done
wait "$loop"
_pmda_wait_status soakvictim running 600 || echo "soakvictim did not come back"
_wait_value "$calls" 30 stap.soakother.calls
touch "$tmp/stop"
wait "$fetcher"

echo "kills: $kills in $attempts seconds (the other seconds it had no child: between restarts)"
echo "stap.scripts.restarts of soakvictim: $(($(_value stap.scripts.restarts soakvictim) - restarts0))"
echo "back-offs the log gave: $(sed -n 's/.*script soakvictim: .*; restarting in \([0-9]*\) s$/\1/p' \
	"$PCP_LOG_DIR/pmcd/stap.log" | sort -n | uniq -c | awk '{ printf "%s x %s s, ", $1, $2 }')"
echo "client: $(tr '\n' ' ' <"$tmp/fetch")"
echo "soakother: calls $(_value stap.soakother.calls) of $calls, restarts $(_value stap.scripts.restarts soakother)"
sort -u "$tmp/bpf" >"$tmp/bpf.u"
alive=0
_wait_for "the killed children's BPF objects to go" 30 _bpf_gone "$tmp/bpf.u" || alive=1
echo "BPF objects of killed children: $(wc -l <"$tmp/bpf.u"), still alive after 30 s: $alive (0: none)"
echo "pmdastap children: soakvictim $(_pmda_children soakvictim), soakother $(_pmda_children soakother)," \
	"zombies $(ps --ppid "$pmda" -o stat= | grep -c '^Z')"
[ "$(_pmda_pid)" = "$pmda" ] && echo "pmdastap: the same process throughout (pid $pmda)"
echo "pmdastap open descriptors: $fds0 before, $(_fds "$pmda") after; RSS $rss0 KB before, $(_rss "$pmda") KB after"
status=0
exit
