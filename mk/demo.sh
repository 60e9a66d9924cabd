#!/bin/sh
# mk/demo.sh BUILD - show what pcp-stap does today: pmstap passes 1 and 2.
#
# Run from the repository root after 'make all' (make demo does both).
# Writes two small scripts under BUILD/demo, elaborates the first with
# 'pmstap -v -p2', shows the diagnostic for a typo in the second, and
# says what is not built yet.  Exits non-zero if a step does not behave
# as shown.
set -u

build=${1:-build}
pmstap=$build/bin/pmstap
dir=$build/demo

[ -x "$pmstap" ] || { echo "demo: $pmstap is missing; run 'make all' first" >&2; exit 1; }
mkdir -p "$dir" || exit 1

step() {
	printf '\n== %s\n\n' "$*"
}

show() {
	printf '$ %s\n' "$*"
	"$@"
}

cat >"$dir/switches.stp" <<'EOF'
# Context switches per process, and the time between switches on a CPU.

/**
 * Context switches, by the name of the process switched out.
 * @units count
 * @semantics counter
 */
export global switches

/** Time between two context switches on the same CPU. @units nsec */
export global gaps

global last		# per CPU: when its last switch happened

probe kernel.trace("sched:sched_switch")
{
	switches[execname()]++
	now = local_clock_ns()
	if (cpu() in last)
		gaps <<< now - last[cpu()]
	last[cpu()] = now
}

probe timer.s(5)
{
	foreach (name in switches- limit 5)
		printf("%-16s %6d\n", name, switches[name])
	printf("gap: %d ns on average over %d switches\n", @avg(gaps), @count(gaps))
	exit()
}
EOF

cat >"$dir/typo.stp" <<'EOF'
global n
probe kernel.trace("sched:sched_switch") { n[exename()]++ }
EOF

echo "pcp-stap demo: pmstap passes 1 (parse) and 2 (elaborate) on $(uname -sr)"

step "a script with a tracepoint, an array, a statistic and tapset functions"
cat "$dir/switches.stp"

step "pass 2: tapset functions pulled in, types inferred, probe points checked"
show "$pmstap" -v -p2 "$dir/switches.stp" 2>&1 || {
	echo "demo: pass 2 failed on $dir/switches.stp" >&2
	exit 1
}

step "a typo: the diagnostic points at it and suggests the fix"
cat "$dir/typo.stp"
echo
show "$pmstap" -p2 "$dir/typo.stp" 2>"$dir/typo.err"
rc=$?
cat "$dir/typo.err"
if [ $rc -eq 0 ] || ! grep -q "typo.stp:2:.*error:" "$dir/typo.err"; then
	echo "demo: expected an error at typo.stp line 2 (exit status $rc)" >&2
	exit 1
fi

step "what is not built yet"
show "$pmstap" "$dir/switches.stp" 2>&1 | tail -n 2
cat <<'EOF'

Passes 3-5 (translate to C, compile for the BPF runtime, run the probes)
are not built yet, so no probe runs: the script above is checked, not run.
The PMDA is not built yet either: no stap.* metrics in pmcd (pminfo stap)
until pmdastap exists.
EOF
exit 0
