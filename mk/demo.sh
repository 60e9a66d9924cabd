#!/bin/sh
# mk/demo.sh BUILD - show pcp-stap working: pmstap running a script, and
# pmdastap serving the default metrics/ scripts as stap.* through pmcd.
#
# make demo runs it after building and installing the PMDA (make
# pmda-install).  Exits non-zero if a step does not behave as shown.
set -u

build=${1:-build}
pmstap=$build/bin/pmstap

[ -x "$pmstap" ] || { echo "demo: $pmstap is missing; run 'make all' first" >&2; exit 1; }

step() {
	printf '\n== %s\n\n' "$*"
}

step "pmstap runs a script on a tracepoint for 2 seconds (like stap)"
script='global switches
probe kernel.trace("sched:sched_switch") { switches[execname()]++ }
probe end { foreach (name in switches- limit 5) printf("%-16s %d\n", name, switches[name]) }'
printf '$ pmstap -T 2 -e %s\n' "'...'"
printf '%s\n\n' "$script"
"$pmstap" -T 2 -e "$script" || { echo "demo: pmstap failed" >&2; exit 1; }

step "a mistake gets file:line:col, the line, a caret and a hint"
"$pmstap" -p2 -e 'probe begin { printf("%s\n", exename()) }' && exit 1

step "pmdastap serves the default scripts of metrics/ through pmcd"
# wait until every autostart script has started (or failed), at most 120 s
i=0
while [ $i -lt 240 ]; do
	states=$(pmprobe -v stap.scripts.status 2>/dev/null)
	case "$states" in
	*'"starting"'* | *'"compiling"'* | "" | *" -"[0-9]*) ;;
	*) break ;;
	esac
	sleep 0.5
	i=$((i + 1))
done
pminfo -f stap.scripts.status || exit 1

step "pminfo -dfmtT stap (a few seconds of live values; the full list follows)"
sleep 2
pminfo -dfmtT stap || exit 1

step "the web page (web/) reads the same metrics through pmproxy's REST API"
# pmproxy (port 44322) is started as pmcd was, if it does not answer yet
proxy=http://localhost:44322
page=$(cd "$(dirname "$0")/.." && pwd)/web/index.html
answers() {
	curl -sf -m 2 "$proxy/pmapi/fetch?names=stap.syscalls.calls" 2>/dev/null
}
if ! answers >/dev/null && [ -x /etc/init.d/pmproxy ]; then
	echo "starting pmproxy: /etc/init.d/pmproxy start"
	"$(dirname "$0")/detached.sh" /etc/init.d/pmproxy start >/dev/null 2>&1
fi
i=0
while ! answers >/dev/null && [ $i -lt 20 ]; do
	sleep 0.5
	i=$((i + 1))
done
if json=$(answers); then
	echo "  pmproxy:  $proxy answers: curl '$proxy/pmapi/fetch?names=stap.syscalls.calls'"
	echo "            $(printf '%s' "$json" | head -c 160)..."
else
	echo "  pmproxy:  $proxy does not answer; start it (/etc/init.d/pmproxy start) for the page"
fi
echo "  the page: $page (this tree's; make install puts it in \$PREFIX/share/pmstap/web)"
echo "  open it:  file://$page in a browser on this machine (it asks $proxy),"
echo "            e.g. chromium file://$page   (as root: chromium --no-sandbox ...)"
echo "            or from another machine: file://.../index.html?pmproxy=http://$(hostname -f 2>/dev/null || hostname):44322"
echo "  flame graphs: cp metrics/profile.stp /etc/pcp/stap/scripts/   (sampled stacks; pmdastap starts it)"
echo "  Grafana:  import $(dirname "$page")/grafana/pcp-stap.json with grafana-pcp's PCP Vector datasource"

step "what the scripts are, and where to read more"
echo "  scripts:  $(ls /etc/pcp/stap/scripts 2>/dev/null | tr '\n' ' ')"
echo "  try:      pmval -t 1 stap.syscalls.calls"
echo "            pmevent -t 1 stap.scripts.output    (exec events from execsnoop)"
echo "            pmrep -t 1 stap.ctxswitch.switches stap.pagefaults.faults"
echo "  man:      man -l man/pmstap.1; man -l pmda/pmdastap.1"
