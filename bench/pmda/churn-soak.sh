#!/bin/bash
# bench/pmda/churn-soak.sh [FETCHES] - scripts come and go while a
# client fetches every metric under stap FETCHES times (default 100,000),
# as qa/143 does in small, against the real pmcd: three scripts with an
# array and printf output come into the autostart directory one after
# another, run and are removed, round after round, for as long as the
# client fetches.  Prints the fetches, the failed ones and those without
# the staying script's value, the rounds, and pmdastap's descriptors and
# RSS after the first round and at the end (issue 16, item 4).  Needs
# root and the PMDA installable (make; installed for the run).
#
#	make && bench/pmda/churn-soak.sh 100000
n=${1:-100000}
seq=soak-churn
cd "$(dirname "$0")/../../qa" || exit 2
. ./common.rc
. ./pmda/common.pmda

_pmda_need
_script_auto soakstay.stp <<'END'
export global ticks
probe timer.ms(10) { ticks++ }
END
for k in 0 1 2; do
	cat >"$tmp/soakgo$k.stp" <<END
global calls, by_cpu
probe kernel.trace("syscalls:sys_enter_getppid") { calls++; by_cpu[cpu()]++ }
probe timer.ms(50) { printf("soakgo$k %d\\n", calls) }
END
done

came() { _status_is "$1" running && pminfo "stap.$1.calls" >/dev/null 2>&1; }
went() { [ -z "$(_value stap.scripts.status "$1")" ] && ! pminfo "stap.$1" >/dev/null 2>&1; }

round()
{
	local name=soakgo$(($1 % 3))

	_script_auto $name.stp <"$tmp/$name.stp"
	_wait_for "$name to come" 120 came $name || _fail "$name did not come"
	rm -f "$qa_auto/$name.stp"
	_wait_for "$name to go" 60 went $name || _fail "$name did not go"
}

_pmda_start
_pmda_wait_status soakstay running 120 || _fail "soakstay did not start"
pmda=$(_pmda_pid)
t0=$(date +%s%N)
"$QA_BIN/stapfetch" -n "$n" -r "$tmp/ready" -s stap stap.soakstay.ticks >"$tmp/fetch" &
fetcher=$!
_wait_for "the client's first fetch" 30 test -f "$tmp/ready" || _fail "stapfetch did not start"
round 0
fds1=$(_fds "$pmda") rss1=$(_rss "$pmda")
rounds=1
while kill -0 "$fetcher" 2>/dev/null; do
	round $rounds
	rounds=$((rounds + 1))
done
wait "$fetcher"
t1=$(date +%s%N)

echo "client: $(tr '\n' ' ' <"$tmp/fetch")in $(((t1 - t0) / 1000000)) ms"
echo "scripts that came and went: $rounds; their metrics left: $(pminfo stap | grep -c '^stap\.soakgo')"
[ "$(_pmda_pid)" = "$pmda" ] && echo "pmdastap: the same process throughout (pid $pmda)"
echo "pmdastap open descriptors: $fds1 after the first round, $(_fds "$pmda") at the end"
echo "pmdastap RSS: $rss1 KB after the first round, $(_rss "$pmda") KB at the end"
status=0
exit
