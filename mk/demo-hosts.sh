#!/bin/bash
# mk/demo-hosts.sh BUILD - make demo-hosts: a fleet of three hosts on this
# machine (network and UTS namespaces, each with its own pmcd and
# pmdastap running a script), a pmlogger farm logging them, redis-server
# and pmproxy loading the archives into Redis; then pmseries and
# /series/query answer a stap metric per host.  Everything it starts and
# makes (processes, namespaces, files) is gone when it ends, on an error
# or an interrupt too.  qa/hosts/hosts.rc says how the hosts are made.
#
# HOSTS_KEEP=1 keeps the work directory (logs, archives) for a look.
set -u
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$(cd "$BUILD" && pwd) ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/qa/hosts/hosts.rc"

say() { printf '\n== %s\n' "$*"; }
die() { echo "demo-hosts: $*" >&2; exit 1; }

why=$(hosts_need)
[ -z "$why" ] || die "cannot run: $why"
for b in pmdastap pmstap getppid_loop; do
	[ -x "$BUILD/bin/$b" ] || die "$BUILD/bin/$b is not built: run make"
done

work=$(mktemp -d /tmp/pmstap-hosts.XXXXXX)
trap 'status=$?; hosts_down; [ -n "${HOSTS_KEEP:-}" ] && echo "kept $work"; exit $status' EXIT
trap 'exit 1' HUP INT TERM

hosts_setup "$work" "$BUILD" || die "cannot write the hosts' files in $work"
hosts_net_up || die "cannot make the namespaces"

say "three hosts: pmcd and pmdastap in each"
for i in $(seq 1 "$HOSTS_N"); do
	hosts_pmcd_start "$i"
	echo "$(hosts_name "$i")  $(hosts_addr "$i"):44321  netns $(hosts_ns "$i")"
done
for i in $(seq 1 "$HOSTS_N"); do
	_hosts_wait 180 hosts_running "$i" ||
		die "hostload did not start on $(hosts_name "$i"): see $(hosts_dir "$i")/log/pmcd/stap.log"
done
hosts_pminfo 1 -t stap.hostload
echo "hostname reported by pmcd 2: $(hosts_pminfo 2 -f pmcd.hostname | sed -n 's/^    value //p')"

say "the farm: a pmlogger per host, redis-server, pmproxy [discover] on the archives"
hosts_farm_start || die "the farm did not start"
ls "$work/archives"

say "workloads: host i makes i x 20000 getppid calls, three times"
for round in 1 2 3; do
	for i in $(seq 1 "$HOSTS_N"); do
		hosts_workload "$i" $((i * 20000)) || die "the workload failed on host $i"
	done
	sleep 1.5
done
for i in $(seq 1 "$HOSTS_N"); do
	echo "$(hosts_name "$i"): stap.hostload.calls $(hosts_pminfo "$i" -f stap.hostload.calls | sed -n 's/^    value //p')"
done

say "pmseries 'stap.hostload.calls' (Redis, loaded by pmproxy from the archives)"
want=$((HOSTS_N * 20000 * 3))
loaded()
{
	hosts_curl /series/query "stap.hostload.calls{hostname==\"$(hosts_name "$HOSTS_N")\"}[samples:1]" |
		grep -q "\"value\":\"$want\""
}
_hosts_wait 60 loaded || die "the series store did not get host $HOSTS_N's last value ($want)"
hosts_pmseries 'stap.hostload.calls'
echo
# -a takes series ids, not a query: pmstap-h1's, from the query
hosts_pmseries -a "$(hosts_pmseries 'stap.hostload.calls{hostname=="pmstap-h1"}')"

say "/series/query, the newest value of each host's stap.hostload.calls"
for i in $(seq 1 "$HOSTS_N"); do
	h=$(hosts_name "$i")
	echo "$h: $(hosts_curl /series/query "stap.hostload.calls{hostname==\"$h\"}[samples:1]")"
done
crashes=$(hosts_proxy_crashes)
[ -z "$crashes" ] || printf '\npmproxy crashed and was started again:\n%s\n' "$crashes"
say "tearing down"
exit 0
