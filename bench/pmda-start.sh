#!/bin/bash
# bench/pmda-start.sh BUILD - how long the default metrics/ scripts take
# to start in pmdastap (issue 15, item 4: under 2 s on a fresh install,
# nothing cached, every script's first value fetchable by then).
#
# The installed pmdastap runs on a private configuration for the run:
# its autostart directory holds the metrics/ scripts whose .meta says
# "default: yes", its cache is under BUILD/tmp.  Each repetition stops the
# agent, empties the cache (cold: nothing cached at all, as after an
# install or a kernel update: vmlinux.h, the kernel headers' PCH and
# every script built anew) or keeps it (cached), and
# has pmcd start the agent again; from pmcd's restart of it, every 20 ms
# stap.scripts.status and the first metric each script's .meta names are
# fetched, until the script is "running" and the metric answers (an
# array may have no instance yet).  Printed: each script's time to its first value and the last of
# them, median of BENCH_REPS (default 3); also to
# BUILD/bench/results-pmda-start.txt; the agent's log of each start in
# BUILD/tmp/bench-pmda-start/KIND-N.log.  pmcd.conf is put back at the end.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
src=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$src")
pmstap=$build/bin/pmstap
pmdastap=$build/bin/pmdastap
work=$build/tmp/bench-pmda-start
REPS=${BENCH_REPS:-3}

die() {
	echo "bench-pmda-start: $*" >&2
	exit 1
}

. "$src/pmda/agent.rc"
agent_preamble
for b in "$pmstap" "$pmdastap"; do
	[ -x "$b" ] || die "$b is not built (make all)"
done

rm -rf "$work"
mkdir -p "$work/auto" "$work/state" "$build/bench"
mkdir -p -m 700 "$work/cache"
chmod 755 "$work/auto"
scripts= metrics=
for meta in "$top"/metrics/*.meta; do
	grep -q '^default: *yes' "$meta" || continue
	s=$(basename "$meta" .meta)
	install -m 644 "$top/metrics/$s.stp" "$work/auto/$s.stp"
	scripts="$scripts $s"
	metrics="$metrics $(sed -n 's/^metric: *\([^ ]*\).*/\1/p' "$meta" | head -n 1)"
done
[ -n "$scripts" ] || die "no default scripts in $top/metrics"

cp "$conf" "$work/pmcd.conf.save"
cleanup() {
	cp "$work/pmcd.conf.save" "$conf"
	restart_agent || echo "bench-pmda-start: pmdastap did not come back: check $conf" >&2
}
trap cleanup 0
trap 'exit 1' INT TERM

cmp -s "$pmdastap" "$stapdir/pmdastap" || install -m 755 "$pmdastap" "$stapdir/pmdastap"
cat >"$work/pmdastap.conf" <<CONF
[pmdastap]
pmstap = $pmstap
autostart_dir = $work/auto
cache_dir = $work/cache
state_dir = $work/state
CONF
sed -e "s|^stap[ 	].*|stap	412	pipe	binary notready	$stapdir/pmdastap -d 412 -c $work/pmdastap.conf -P $pmstap|" \
	"$conf" >"$work/pmcd.conf.bench" && cp "$work/pmcd.conf.bench" "$conf"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start KIND: one start of the agent; prints "SCRIPT MS" for each script
# and "last MS", or fails after 120 s naming the scripts without a value
start() {
	local old=$(agent_pid) t0 pending=$metrics m t line

	[ -n "$old" ] && kill -TERM "$old"
	wait_for 30 gone "$old"
	[ "$1" = cold ] && find "$work/cache" -mindepth 1 -delete
	t0=$(now_ms)
	$PCP_BINADM_DIR/pmsignal -a -s HUP pmcd >/dev/null 2>&1
	while [ -n "$pending" ]; do
		t=$(($(now_ms) - t0))
		[ $t -gt 120000 ] && { echo "no value after 120 s:$pending" >&2; return 1; }
		running=" $(pminfo -f stap.scripts.status 2>/dev/null |
			sed -n 's/.*inst \[[0-9]* or "\(.*\)"\] value "running"$/\1/p' | tr '\n' ' ')"
		# "METRIC N ...": fetched (an array may have no instance yet); a
		# negative count: not yet.  And the script says it is running.
		while read -r m n; do
			s=${m#stap.}
			s=${s%%.*}
			case "$n:$running" in
			-*) ;;
			*" $s "*) echo "$s $t"; pending=$(echo " $pending " | sed "s| $m | |; s/^ *//; s/ *$//") ;;
			esac
		done < <(pmprobe $pending 2>/dev/null)
		sleep 0.02
	done
	echo "last $(($(now_ms) - t0))"
	cp "$PCP_LOG_DIR/pmcd/stap.log" "$work/$1-$2.log" 2>/dev/null
}

median() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

declare -A res
for kind in cold cached; do
	for ((r = 1; r <= REPS; r++)); do
		out=$(start "$kind" "$r") || die "$kind start $r failed"
		while read -r what ms; do
			res[$kind,$what]="${res[$kind,$what]:-} $ms"
		done <<<"$out"
	done
done

{
	echo "pmdastap, the default metrics/ scripts ($(echo $scripts | wc -w)) from pmcd's start of the agent to each one's first value, median of $REPS, ms:"
	printf '| %-10s | %8s | %8s |\n' script cold cached
	printf '|%s|%s|%s|\n' ------------ ---------- ----------
	for s in $scripts last; do
		printf '| %-10s | %8s | %8s |\n' "$s" "$(median ${res[cold,$s]})" "$(median ${res[cached,$s]})"
	done
	echo "cold: the cache empty (vmlinux.h, the headers' PCH and each script made); target: the last under 2000 ms"
} | tee "$build/bench/results-pmda-start.txt"
