#!/bin/bash
# bench/pmda/storm-soak.sh [SECONDS] - an event storm against the real
# pmcd, as qa/141 does in small: a workload makes a script print a line on
# each getppid call for SECONDS (default 10) as fast as it can, while a
# client (stapevents) reads stap.scripts.output as fast as fetches go,
# with the installed default queue (output_queue_bytes 1 MB).  Prints the
# lines printed, delivered, missed and dropped, whether they add up
# exactly, and the rates: lines printed a second, lines the PMDA counted
# a second (stap.scripts.output_lines), lines delivered to the client a
# second (issue 16, item 4).  Needs root and the PMDA installable (make;
# installed for the run as the QA installs it, pmcd.conf put back after).
#
#	make && bench/pmda/storm-soak.sh 10
secs=${1:-10}
seq=soak-storm
cd "$(dirname "$0")/../../qa" || exit 2
. ./common.rc
. ./pmda/common.pmda

_pmda_need
cp "$QA_BIN/getppid_loop" "$tmp/soak_storm"
_script_auto soakstorm.stp <<'END'
export global printed
probe kernel.trace("syscalls:sys_enter_getppid")
{
	if (execname() == "soak_storm")
		printf("storm line %d\n", ++printed)
}
END
_pmda_start
_pmda_wait_status soakstorm running 120 || _fail "soakstorm did not start"
pid=$(_pmda_pid)

"$QA_BIN/stapevents" -i soakstorm -r "$tmp/ready" -x "$tmp/stop" -t 30 >"$tmp/events" &
reader=$!
_wait_for "the client's first fetch" 30 test -f "$tmp/ready" || _fail "stapevents did not start"
lines0=$(_value stap.scripts.output_lines soakstorm)
t0=$(date +%s%N)
"$tmp/soak_storm" 0 &
storm=$!
sleep "$secs"		# the length of the storm: a measure, not a synchronization
kill "$storm"
wait "$storm" 2>/dev/null
t1=$(date +%s%N)
printed=$(_value stap.soakstorm.printed)
dropped=$(_value stap.scripts.dropped soakstorm)
_wait_value $((lines0 + printed - dropped)) 60 stap.scripts.output_lines soakstorm
t2=$(date +%s%N)
echo "$((printed - dropped))" >"$tmp/stop"
wait "$reader"
got=$(sed -n 's/^lines got //p' "$tmp/events")
missed=$(sed -n 's/^lines missed //p' "$tmp/events")
secs_got=$(sed -n 's/^seconds //p' "$tmp/events")

echo "storm: $secs s; lines printed: $printed ($((printed * 1000000000 / (t1 - t0))) a second)"
echo "dropped in the kernel (ring buffer full): $dropped"
echo "counted by pmdastap (output_lines): $((printed - dropped)) in $(((t2 - t0) / 1000000)) ms," \
	"$(((printed - dropped) * 1000000000 / (t2 - t0))) a second"
echo "delivered to the client: $got in $secs_got s, $(sed -n 's/^lines.s //p' "$tmp/events") a second;" \
	"missed (told in $(sed -n 's/^missed records //p' "$tmp/events") records): $missed;" \
	"$(sed -n 's/^out of order //p' "$tmp/events") out of order"
if [ $((got + missed + dropped)) -eq "$printed" ]; then
	echo "got + missed + dropped = printed: yes, exactly"
else
	echo "got + missed + dropped = printed: NO ($((got + missed + dropped)) != $printed)"
fi
[ "$(_pmda_pid)" = "$pid" ] && echo "pmdastap: the same process throughout (pid $pid)"
echo "pmdastap RSS after: $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status") KB"
status=0
exit
