#!/bin/bash
# bench/run-pmda.sh BUILD - pmdastap through pmcd: pmFetch latency, the
# time from registering a script to its first value, and memory.
#
# pmdastap runs on a private configuration for the run (as qa/pmda does):
# its autostart directory holds bench/pmda/pmdabench.stp (a scalar, arrays
# of 1,000 and 10,000 keys and a histogram, filled in a begin probe),
# registration is enabled for root, and the cache is under BUILD/tmp; the
# agent's pmcd.conf line is put back at the end.  The client,
# BUILD/bench/fetchlat, times BENCH_FETCHES (default 2000) pmFetch calls of
# each metric alone (median and p99), against PCP's sample PMDA
# (sample.long.one: installed for the run when missing, removed again) and
# pmdabpftrace (installed for the run when it can be, see below).  First value: stap.control.register
# with bench/pmda/first.stp, then lookup + fetch every millisecond until
# its global is not 0, BENCH_REPS (default 3) times with an empty cache
# (cold: a script not compiled before, the kernel headers' PCH already
# made; also once with nothing cached at all) and
# from the cache.  RSS is VmRSS from /proc.
# Results also go to BUILD/bench/results-pmda.txt.
#
# The floors: sample.many.int with sample.many.count set to 10,000 (32-bit
# values, an indom table: what pmcd and libpcp_pmda cost for 10,000 values),
# and BUILD/bench/floor64 (bench/pmda/floor64.c), an agent added to pmcd.conf
# for the run as domain 510 that answers every fetch with the same 10,000
# 64-bit values made once: what pmcd, libpcp and the pipe alone cost for the
# values a stap array of longs has.
# BENCH_PERF=DIR records pmdastap and pmcd with perf (call graphs) during the
# 10,000-key fetches into DIR/perf.data and writes DIR/perf.txt;
# BENCH_FIRST=0 leaves the first-value measures out.

set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
src=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$src")
fetchlat=$build/bench/fetchlat
pmstap=$build/bin/pmstap
pmdastap=$build/bin/pmdastap
work=$build/tmp/bench-pmda
N=${BENCH_FETCHES:-2000}
REPS=${BENCH_REPS:-3}
PERF=${BENCH_PERF:-}
FIRST=${BENCH_FIRST:-1}

die() {
	echo "bench-pmda: $*" >&2
	exit 1
}

# A lock the caller holds (flock /tmp/pmcd.lock make bench-pmda) stays
# with flock: a pmcd that the sample PMDA's Install restarts must not
# inherit its fd and hold the lock for ever.
for fd in /proc/$$/fd/*; do
	n=${fd##*/}
	[ "$n" -gt 2 ] && [ "$(readlink "$fd")" = /tmp/pmcd.lock ] && eval "exec $n>&-"
done

. "$src/pmda/agent.rc"
agent_preamble
floor64=$build/bench/floor64
for b in "$fetchlat" "$floor64" "$pmstap" "$pmdastap"; do
	[ -x "$b" ] || die "$b is not built (make all bench-pmda-bins)"
done

rm -rf "$work"
mkdir -p "$work/auto" "$work/state"
mkdir -p -m 700 "$work/cache"
chmod 755 "$work/auto"
cp "$src/pmda/pmdabench.stp" "$work/auto/"
chmod 644 "$work/auto/pmdabench.stp"

# ---- setup, undone by cleanup ----

sample_installed=false
bt_installed=false
conf_saved=false

cleanup() {
	if $conf_saved; then
		cp "$work/pmcd.conf.save" "$conf"
		restart_agent || echo "bench-pmda: pmdastap did not come back: check $conf" >&2
	fi
	if $sample_installed; then
		(cd "$PCP_PMDAS_DIR/sample" && ./Remove) >>"$work/sample.log" 2>&1
	fi
	if $bt_installed; then
		(cd "$bt_dir" && PATH=/usr/bin:$PATH ./Remove) >>"$work/bpftrace.log" 2>&1
		rm -f "$bt_script"
	fi
}
trap cleanup 0
trap 'exit 1' INT TERM

# pmcd.conf as it was (also without the sample PMDA's lines, if installed below)
cp "$conf" "$work/pmcd.conf.save"
conf_saved=true
if ! pminfo sample.long.one >/dev/null 2>&1; then
	echo "bench-pmda: installing the sample PMDA for the run" >&2
	if (cd "$PCP_PMDAS_DIR/sample" && ./Install -e </dev/null) >"$work/sample.log" 2>&1; then
		sample_installed=true
	fi
fi

declare -A why
pminfo sample.long.one >/dev/null 2>&1 || why[sample]="sample PMDA missing (see $work/sample.log)"
# pmdabpftrace: when PCP has it and bpftrace and the python PMDA module are
# there but it is not installed in pmcd, installed for the run with one
# autostart script, pmdabench_big, whose map @big gets keys 0..9999 (of
# which bpftrace keeps its default limit, 4,096); removed again at the end
bt_dir=$PCP_PMDAS_DIR/bpftrace
bt_script=$bt_dir/autostart/pmdabench_big.bt
if [ ! -d "$bt_dir" ]; then
	why[bpftrace]="pmdabpftrace is not installed (no $bt_dir)"
elif ! pminfo bpftrace.info >/dev/null 2>&1; then
	if ! command -v bpftrace >/dev/null; then
		why[bpftrace]="pmdabpftrace is not installed in pmcd and there is no bpftrace to install it with"
	elif ! PATH=/usr/bin:$PATH python3 -c 'import pcp.pmda' 2>/dev/null; then
		why[bpftrace]="pmdabpftrace is not installed in pmcd and python3 has no pcp.pmda (python3-pcp)"
	else
		echo "bench-pmda: installing pmdabpftrace for the run" >&2
		cat >"$bt_script" <<'EOF'
// name: pmdabench_big
BEGIN { $i = 0; while ($i < 10000) { @big[$i] = $i; $i++; } }
EOF
		bt_installed=true
		# PCP_PYTHON_PROG is "python3": the system's, with python3-pcp
		(cd "$bt_dir" && PATH=/usr/bin:$PATH ./Install -e </dev/null) >"$work/bpftrace.log" 2>&1 ||
			why[bpftrace]="pmdabpftrace's Install failed (see $work/bpftrace.log)"
	fi
fi

# the build's agent, as qa/pmda/common.pmda installs it
cmp -s "$pmdastap" "$stapdir/pmdastap" || install -m 755 "$pmdastap" "$stapdir/pmdastap"
cat >"$work/pmdastap.conf" <<EOF
[pmdastap]
pmstap = $pmstap
autostart_dir = $work/auto
cache_dir = $work/cache
state_dir = $work/state
[registration]
enabled = true
allowed_users = root
[limits]
ready_timeout = 120
EOF
sed -e "s|^stap[ 	].*|stap	412	pipe	binary notready	$stapdir/pmdastap -d 412 -c $work/pmdastap.conf -P $pmstap|" \
	-e "/^floor64[ 	]/d" -e "/^\[access\]/i floor64	510	pipe	binary	$floor64 -d 510 -n 10000" \
	"$conf" >"$work/pmcd.conf.bench" && cp "$work/pmcd.conf.bench" "$conf"
restart_agent || die "pmdastap did not start on the bench configuration"
bench_agent=$(agent_pid)

. "$src/../qa/pmda/value.rc"	# _value METRIC [INSTANCE]

big_full() {
	[ "$(_value stap.scripts.status pmdabench)" = '"failed"' ] && die "pmdabench failed: $(_value stap.scripts.error pmdabench)"
	[ "$(pmprobe stap.pmdabench.big 2>/dev/null | awk '{ print $2 }')" = 10000 ]
}
wait_for 120 big_full ||
	die "pmdabench did not start: $(_value stap.scripts.status pmdabench) $(_value stap.scripts.error pmdabench)"

# ---- fetch latency ----

declare -A lat
fetch() {
	local key=$1 metric=$2 out

	if out=$("$fetchlat" -n "$N" "$metric" 2>"$work/err.$key"); then
		lat[$key]=$out
	else
		why[$key]="fetchlat $metric failed: $(head -c 200 "$work/err.$key")"
	fi
}
sample_ready() {
	pmprobe sample.long.one 2>/dev/null | grep -q ' 1$'
}
if [ -z "${why[sample]:-}" ]; then
	wait_for 30 sample_ready && fetch sample sample.long.one || why[sample]="sample.long.one has no value"
fi
if [ -z "${why[sample]:-}" ]; then
	many_was=$(_value sample.many.count)
	if pmstore sample.many.count 10000 >/dev/null 2>&1; then
		fetch many sample.many.int
		pmstore sample.many.count "${many_was:-5}" >/dev/null 2>&1
	else
		why[many]="pmstore sample.many.count 10000 failed"
	fi
fi
floor_ready() {
	"$fetchlat" -n 1 pmid:510.0.0 >/dev/null 2>&1
}
if wait_for 30 floor_ready; then
	fetch floor64 pmid:510.0.0
else
	why[floor64]="the floor64 agent did not answer (see $PCP_LOG_DIR/pmcd/floor64.log)"
fi
fetch scalar stap.pmdabench.one
fetch small stap.pmdabench.small
if [ -n "$PERF" ]; then
	mkdir -p "$PERF"
	perf record -g -o "$PERF/perf.data" -p "$bench_agent,$(pgrep -o -x pmcd)" \
		>"$PERF/record.log" 2>&1 &
	perf_pid=$!
	sleep 1
fi
fetch big stap.pmdabench.big
if [ -n "$PERF" ]; then
	kill -INT "$perf_pid"
	wait "$perf_pid"
	perf report -i "$PERF/perf.data" --no-children --percent-limit 0.5 --stdio \
		>"$PERF/perf.txt" 2>/dev/null
	echo "bench-pmda: profile of the 10,000-key fetches in $PERF/perf.txt" >&2
fi
fetch hist stap.pmdabench.lat.hist
bt_full() {
	[ "$(pmprobe bpftrace.scripts.pmdabench_big.data.big 2>/dev/null | awk '{ print $2 }')" -gt 1000 ] 2>/dev/null
}
if [ -z "${why[bpftrace]:-}" ] && $bt_installed; then
	wait_for 120 bt_full && fetch bpftrace bpftrace.scripts.pmdabench_big.data.big ||
		why[bpftrace]="pmdabench_big.bt had no values after 120 s (see $work/bpftrace.log)"
elif [ -z "${why[bpftrace]:-}" ]; then
	m=$(pminfo bpftrace.scripts 2>/dev/null | grep -v -e '^bpftrace.scripts.*\.\(status\|pid\|exit_code\|error\|probes\|code\|data_bytes\|output\)' | head -1)
	if [ -n "$m" ]; then
		fetch bpftrace "$m"
	else
		why[bpftrace]="pmdabpftrace runs no script with a variable to fetch"
	fi
fi

# ---- RSS ----

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null
}
agent=$(agent_pid)
agent_rss=$(rss_kb "$agent")
script_pid=$(_value stap.scripts.pid pmdabench)
script_rss=$(rss_kb "$script_pid")

# ---- register to first value ----

# first KIND I: register first.stp as pmdafirst_KIND (cold: the cache emptied)
first() {
	local name=pmdafirst_$1 out

	sed -e "s/^# name: pmdafirst/# name: $name/" "$src/pmda/first.stp" >"$work/$name.stp"
	if out=$("$fetchlat" -r "$work/$name.stp" -t 180 "stap.$name.ready" 2>"$work/err.first"); then
		echo "${out#* }"
	else
		echo "registering failed: $(head -c 200 "$work/err.first") $(_value stap.scripts.error "$name")" \
			>"$work/why.first"
		return 1
	fi
}

deregister() {
	pmstore stap.control.deregister "$1" >/dev/null 2>&1
	unknown() { ! pminfo "stap.$1" >/dev/null 2>&1; }
	wait_for 30 unknown "$1"
}

# cold: the script's build removed, the pieces pass 4 makes once per kernel
# (vmlinux.h, its PCH) kept; empty: nothing
# cached at all (the first script after an install or a kernel update)
clear_builds() {
	find "$work/cache" -mindepth 1 -maxdepth 1 -regextype egrep -regex '.*/[0-9a-f]{64}' \
		-exec rm -rf {} +
}
empty=
cold=
cached=
find "$work/cache" -mindepth 1 -delete
[ "$FIRST" = 0 ] && REPS=0
if [ "$FIRST" != 0 ] && t=$(first cold); then
	empty=$t
	deregister pmdafirst_cold
fi
for ((r = 1; r <= REPS; r++)); do
	clear_builds
	t=$(first cold) || break
	cold="$cold $t"
	deregister pmdafirst_cold
	t=$(first cold) || break
	cached="$cached $t"
	deregister pmdafirst_cold
done

[ -s "$work/why.first" ] && why[first]=$(cat "$work/why.first")

median() {
	[ $# -gt 0 ] || return 1
	printf '%s\n' "$@" | sort -n | awk '
		{ v[NR] = $1 }
		END {
			if (NR == 0) exit 1
			printf "%.1f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# ---- table ----

# row NAME VALUE TARGET OK
row() {
	printf '%-34s  %-22s  %-22s  %s\n' "$1" "$2" "$3" "$4"
}
verdict() {
	awk "BEGIN { exit !($1) }" && echo ok || echo MISSED
}
# lat_cell KEY: "median / p99 us (instances)"
lat_cell() {
	set -- ${lat[$1]:-}
	[ $# -eq 4 ] && echo "$3 / $4 us ($2 inst)"
}
lat_med() {
	set -- ${lat[$1]:-}
	echo "${3:-}"
}

{
	echo "pmdastap through pmcd: $(uname -r), $(nproc) CPUs, $(pminfo -f pmcd.version | sed -n 's/^    value //p')"
	echo "fetch: pmFetch of one metric, round trip, median / p99 of $N; first value: median of $REPS"
	echo
	row measure value target verdict
	sm=$(lat_med sample)
	for k in sample many floor64 scalar small big hist bpftrace; do
		case $k in
		sample) label="sample.long.one (sample PMDA)" ;;
		many) label="sample.many.int, 10,000 (floor)" ;;
		floor64) label="floor64, 10,000 longs (floor)" ;;
		scalar) label="stap scalar" ;;
		small) label="stap array, 1,000 keys" ;;
		big) label="stap array, 10,000 keys" ;;
		hist) label="stap histogram (.hist)" ;;
		bpftrace) label="pmdabpftrace map" ;;
		esac
		if [ -z "${lat[$k]:-}" ]; then
			row "$label" "not available" "" ""
			continue
		fi
		m=$(lat_med $k)
		case $k in
		scalar)
			if [ -n "$sm" ]; then
				row "$label" "$(lat_cell $k)" "<= 1.5x sample ($(awk -v a="$m" -v b="$sm" 'BEGIN { printf "%.2fx", a / b }'))" \
					"$(verdict "$m <= 1.5 * $sm")"
			else
				row "$label" "$(lat_cell $k)" "<= 1.5x sample" "no sample"
			fi ;;
		big)
			fm=$(lat_med floor64)
			row "$label" "$(lat_cell $k)" "< 1000 us${fm:+ ($(awk -v a="$m" -v b="$fm" 'BEGIN { printf "%.2fx floor64", a / b }'))}" \
				"$(verdict "$m < 1000")" ;;
		*) row "$label" "$(lat_cell $k)" "" "" ;;
		esac
	done
	if c=$(median $cold); then
		row "first value, cold compile" "$c ms ($(echo $cold | tr ' ' ','))" "< 300 ms" "$(verdict "$c < 300")"
	else
		row "first value, cold compile" "not available" "< 300 ms" ""
	fi
	[ -n "$empty" ] && row "first value, empty cache" "$empty ms" "(PCH, vmlinux.h made)" ""
	if c=$(median $cached); then
		row "first value, from cache" "$c ms ($(echo $cached | tr ' ' ','))" "< 50 ms" "$(verdict "$c < 50")"
	else
		row "first value, from cache" "not available" "< 50 ms" ""
	fi
	if [ -n "$agent_rss" ]; then
		row "pmdastap RSS" "$((agent_rss / 1024)).$((agent_rss % 1024 * 10 / 1024)) MB" "< 10 MB" \
			"$(verdict "$agent_rss < 10240")"
	fi
	[ -n "$script_rss" ] && row "pmdabench script child RSS" "$((script_rss / 1024)).$((script_rss % 1024 * 10 / 1024)) MB" "" ""
	[ "$(agent_pid)" = "$bench_agent" ] ||
		echo "WARNING: pmdastap was restarted during the run (a qa/pmda test or another pmcd user?): the numbers are not valid"
	for k in sample many floor64 bpftrace first scalar small big hist; do
		[ -n "${why[$k]:-}" ] && echo "$k: not available: ${why[$k]}"
	done
	true
} | tee "$build/bench/results-pmda.txt"
