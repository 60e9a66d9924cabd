#!/bin/bash
# bench/pmda/register-soak.sh [N] - N bad scripts (default 200) through
# pmstore stap.control.register against the real pmcd, as qa/124 does in
# small, and the figures: how many were refused with a reason a client
# could fetch, whether the same pmdastap served throughout, and its open
# descriptors and RSS before and after (issue 16, item 4).  Needs root and
# the PMDA installable (make; it is installed for the run as the QA
# installs it, and pmcd.conf put back at the end).
#
#	make && bench/pmda/register-soak.sh 200
n=${1:-200}
seq=soak-register
cd "$(dirname "$0")/../../qa" || exit 2
. ./common.rc
. ./pmda/common.pmda

_pmda_need
qa_registration=true
qa_users=root
qa_limits="max_script_bytes = 4096"
_pmda_start
pid=$(_pmda_pid)

# ten kinds of refusal, each made distinct by its number
bad()
{
	local i=$1

	case $((i % 10)) in
	0) printf '# name: soak%d\nprobe begin { x = ; }\n' "$i" ;;
	1) printf '# name: soak%d\nprobe begin { println(no_such_%d(1)) }\n' "$i" "$i" ;;
	2) printf '# name: soak%d\n%%{ int x%d; %%}\nprobe begin { }\n' "$i" "$i" ;;
	3) printf '# name: ../soak%d\nprobe begin { }\n' "$i" ;;
	4) printf '# name: scripts\nprobe begin { } // %d\n' "$i" ;;
	5) printf '# name: soak%d\nprobe begin { \001\377 }\n' "$i" ;;
	6) printf '# name: soak%d\n' "$i"; head -c 6000 /dev/zero | tr '\0' '#'; echo ;;
	7) printf '# name: soak%d\nprobe begin { x = ' "$i"
	   for _ in $(seq 600); do printf '('; done; printf 1
	   for _ in $(seq 600); do printf ')'; done; echo ' }' ;;
	8) printf '# name: soak%d\n' "$i" ;;
	9) printf '# name: soak%d\nprobe no.such.point%d { }\n' "$i" "$i" ;;
	esac
}

fds() { ls "/proc/$pid/fd" | wc -l; }
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }

fds0=$(fds) rss0=$(rss) refused=0 reasons=0 t0=$(date +%s)
for i in $(seq "$n"); do
	bad "$i" >"$tmp/bad.stp"
	if ! "$STAPCTL" stap.control.register - <"$tmp/bad.stp" >"$tmp/out" 2>&1; then
		refused=$((refused + 1))
		grep -q '^result: .' "$tmp/out" && ! grep -q '^result: (none)' "$tmp/out" &&
			reasons=$((reasons + 1))
	fi
done
t1=$(date +%s)
echo "bad registrations: $n in $((t1 - t0)) s; refused: $refused; with a reason fetched: $reasons"
[ "$(_pmda_pid)" = "$pid" ] && echo "pmdastap: the same process throughout (pid $pid)" ||
	echo "pmdastap: RESTARTED (was $pid, now $(_pmda_pid))"
_pmda_ready && echo "pmcd and pmdastap answer stap.info.version"
echo "pmdastap open descriptors: $fds0 before, $(fds) after"
echo "pmdastap RSS: $rss0 KB before, $(rss) KB after"
status=0
exit
