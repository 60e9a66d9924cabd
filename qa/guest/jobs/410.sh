# 410: pmdastap's view of a kernel module's data is read-only, and exact
# while the module's handlers change it.  A "# runtime: kernel" script
# counts getppid() calls of a workload in a keyed array, key 0 (two
# threads, 500000 calls each: the workload is the control), and inserts
# and deletes the thread's own key at every call, so the map's chains are relinked
# all the time; the PMDA is fetched over and over while the workload
# runs (pmval, every 50 ms).  Shown: the PMDA's mapping of the module's device has no write
# permission (/proc/PID/maps), while the script's own pmstap maps it
# read-write; every value fetched is at least the one before, values
# in between are seen, the last is exactly 1000000, and the script
# counted no error.  A read the writers made give up keeps the last
# values served (it served a snapshot without any key, whose instance
# read 0, once in about ten runs on a loaded host).
script=$tmp/auto/qa410.stp
mkdir -p "$tmp/auto"
chmod 755 "$tmp/auto"
cat >"$script" <<'END'
# runtime: kernel
export global hits[16]

probe begin { hits[0] = 0 }	/* the instance is there for pmval -i */

probe kernel.trace("syscalls:sys_enter_getppid") {
	if (execname() == "getppid_loop") {
		hits[0]++
		hits[tid()] = 1
		delete hits[tid()]
	}
}
END
chmod 644 "$script"
. ./guest/pmcd.rc
_pmda_compile "$script"

calls=500000	# a thread's
_pmcd_start
wait_for "qa410 to run" 100 value_is '"running"' stap.scripts.status qa410 ||
	{ _value stap.scripts.error qa410; cat "$pmda_log"; }
wait_for "hits[0]" 30 value_is 0 stap.qa410.hits 0

echo "== the module's data, as mapped by each process (permissions)"
perms() {	# PID: the permissions of its mappings of the module's device
	awk '$6 ~ /\/dev\/pmstap_kmod_/ { print $2 }' "/proc/$1/maps" | sort -u | tr '\n' ' '
}
pmda=$(pgrep -x pmdastap)
child=$(pgrep -x stap:qa410)
echo "pmdastap: $(perms "$pmda")"
echo "the script's pmstap: $(perms "$child")"

echo "== the workload, fetched while it runs"
# one client fetching every 50 ms, from before the workload to its last count
pmval -r -w 16 -t 0.05 -i 0 stap.qa410.hits >"$tmp/pmval" 2>&1 &
fetcher=$!
SECONDS=0
"$QA_BIN/getppid_loop" -t 2 $calls && echo "the workload made $((2 * calls)) calls"
echo "the workload ran ${SECONDS}s" >&2
wait_for "the last count" 20 value_is $((2 * calls)) stap.qa410.hits 0 ||
	echo "the count: $(_value stap.qa410.hits 0)"
{ echo "pmval's first and last lines:"; head -12 "$tmp/pmval"; tail -3 "$tmp/pmval"; } >&2
fetched() { [ "$(awk '$NF ~ /^[0-9]+$/ { v = $NF } END { print v }' "$tmp/pmval")" = $((2 * calls)) ]; }
wait_for "the fetcher to see it" 20 fetched
kill $fetcher
wait $fetcher 2>/dev/null
awk -v total=$((2 * calls)) '
	$NF !~ /^[0-9]+$/ { next }
	{ v = $NF + 0; if (v < prev) { back++; printf "back at line %d: [%s] after %d\n", NR, $0, prev >"/dev/stderr" }
	  if (v > 0 && v < total) mid++; prev = v; n++ }
	END {
		printf "fetches: %s, values going back: %d, values in between seen: %s, the last: %d\n",
			(n > 2 ? "more than 2" : n), back, (mid > 0 ? "yes" : "no"), prev
	}' "$tmp/pmval"
echo "fetched values: $(grep -cE '^ *[0-9]+ *$' "$tmp/pmval") in ${SECONDS}s" >&2
pminfo -f stap.scripts.errors stap.scripts.map_full stap.scripts.restarts | grep -E '^stap|qa410' | ids
kill $pmcd
wait $pmcd
# a read that gave up (the writers kept changing the map for the
# reader's whole patience: under TCG a vCPU can stall inside a change)
# is a warning, not shown: the values it kept are what the test checks
grep -E 'qa410' "$pmda_log" | grep -iE 'error|warning|cannot' | grep -v 'reads of its data gave up'
grep -E 'qa410|taken again' "$pmda_log" | sed 's/^/stap.log: /' >&2
exit 0
