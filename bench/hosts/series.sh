#!/bin/bash
# bench/hosts/series.sh BUILD [ROUNDS] - the fleet of qa/hosts/hosts.rc
# (three namespaced hosts, a pmlogger farm logging every second, Redis,
# pmproxy) and two figures:
#
#  - latency: host 1's workload changes stap.hostload.calls; the time from
#    the workload's end to /series/query answering the new value, ROUNDS
#    times (default 10): min, median, max.  It includes up to one logging
#    interval (1 s here) before pmlogger samples the new value.
#  - memory: Redis's MEMORY USAGE of each stap series' value stream after
#    the run, divided by its samples: bytes per sample, and per day at
#    pmlogger's default interval (60 s: 1440 samples), and Redis's
#    used_memory per series (metadata included).
#
# Run it under the shared locks: flock /tmp/pmcd.lock flock /tmp/bpf.lock ...
set -u
BUILD=${1:-build}
ROUNDS=${2:-10}
case $BUILD in /*) ;; *) BUILD=$(cd "$BUILD" && pwd) ;; esac
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/qa/hosts/hosts.rc"

die() { echo "series.sh: $*" >&2; exit 1; }
why=$(hosts_need)
[ -z "$why" ] || die "cannot run: $why"
work=$(mktemp -d /tmp/pmstap-hosts-bench.XXXXXX)
trap 'hosts_down' EXIT
trap 'exit 1' HUP INT TERM
hosts_setup "$work" "$BUILD" && hosts_net_up || die "cannot make the hosts"
for i in $(seq 1 "$HOSTS_N"); do hosts_pmcd_start "$i"; done
for i in $(seq 1 "$HOSTS_N"); do
	_hosts_wait 180 hosts_running "$i" || die "hostload did not start on host $i"
done
hosts_farm_start >/dev/null || die "the farm did not start"

# value VALUE: host 1's newest sample in the series store is VALUE
answered()
{
	hosts_curl /series/query 'stap.hostload.calls{hostname=="pmstap-h1"}[samples:1]' |
		jq -e --arg v "$1" '.[] | select(.value == $v)' >/dev/null
}

total=0
for r in $(seq 1 "$ROUNDS"); do
	total=$((total + 1000))
	hosts_workload 1 1000 || die "the workload failed"
	t0=$(date +%s%N)
	_hosts_wait 60 answered "$total" || die "value $total never answered"
	echo $((($(date +%s%N) - t0) / 1000000))
	sleep 0.$((RANDOM % 10))	# spread the changes over the logging interval
done | sort -n >"$work/lat"
echo "latency from a change on a host to /series/query, ms ($ROUNDS rounds):" \
	"min $(head -1 "$work/lat") median $(sed -n "$(((ROUNDS + 1) / 2))p" "$work/lat") max $(tail -1 "$work/lat")"

# every stap series' value stream: bytes and samples
for key in $(hosts_hub redis-cli -p "$HOSTS_REDIS_PORT" --scan --pattern 'pcp:values:series:*'); do
	sid=${key##*:}
	name=$(hosts_curl "/series/metrics?series=$sid" | jq -r '.[0].name')
	case $name in stap.*) ;; *) continue ;; esac
	bytes=$(hosts_hub redis-cli -p "$HOSTS_REDIS_PORT" memory usage "$key" samples 0)
	n=$(hosts_hub redis-cli -p "$HOSTS_REDIS_PORT" xlen "$key")
	echo "$name $bytes $n"
done >"$work/mem"
awk '{ b += $2; n += $3; s++ } END {
	printf "stap series: %d, samples %d, stream bytes per sample %.0f, per series per day at 60 s: %.0f KB\n",
		s, n, b / n, b / n * 1440 / 1024 }' "$work/mem"
used=$(hosts_hub redis-cli -p "$HOSTS_REDIS_PORT" info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')
nseries=$(hosts_hub redis-cli -p "$HOSTS_REDIS_PORT" --scan --pattern 'pcp:values:series:*' | wc -l)
echo "redis used_memory $used bytes for $nseries series (all metrics logged)"
