# 416: pmdastap serves a "# runtime: kernel" script's procfs files as it
# serves a BPF script's (qa/162, whose script and sections this job
# follows): stap.SCRIPT.procfs.NAME, with the same names, help, types and
# semantics.  The module serves them as /proc/systemtap/qa416/NAME: a
# fetch of a .read file reads it, so its handler runs in the PMDA's task
# (a file answering execname() says so), and gives what the handler put
# in $value, what cat gets; a pmstore to a .write file writes the value
# to it, and the handler's effect (a global) shows in the global's metric
# and a .read file; a file with both probes (which the bpf runtime
# refuses) is fetched and stored.  A counter a tracepoint raises is exact
# against the workload's getppid() calls (the control); a store to a
# .read file is refused; a fetch while another process holds the file
# open (the module lets one opener in at a time) says "try again" after
# waiting a second for it, the script's other metrics served all along,
# and works again once it is let go.
# The module is compiled on the host (the PMDA's cache key, pmda/child.c).
script=$tmp/auto/qa416.stp
mkdir -p "$tmp/auto"
chmod 755 "$tmp/auto"
cat >"$script" <<'END'
# runtime: kernel
/** getppid calls of qa416_loop. @semantics counter */
global calls
global last = "nothing"
probe kernel.trace("syscalls:sys_enter_getppid") {
	if (execname() == "qa416_loop")
		calls++
}
probe procfs("calls").read { $value = sprint(calls) }
probe procfs("last").read { $value = last }
probe procfs("cmd").write { last = $value }
probe procfs("who").read { $value = execname() }
global mode = "off"
probe procfs("mode").read { $value = mode }
probe procfs("mode").write { mode = $value }
probe prometheus { $value = sprintf("qa416_calls %d", calls) }
END
chmod 644 "$script"
. ./guest/pmcd.rc
_pmda_compile "$script"

cp "$QA_BIN/getppid_loop" "$tmp/qa416_loop"
pmdastap_conf_more='[registration]
enabled = true
allowed_users = root
'
_pmcd_start
wait_for "qa416 to run" 100 value_is '"running"' stap.scripts.status qa416 ||
	{ _value stap.scripts.error qa416; cat "$pmda_log"; }
echo "the module's files: $(ls /proc/systemtap/qa416 | tr '\n' ' ')"

echo "== the names and their help"
pminfo stap.qa416.procfs
pminfo -dtT stap.qa416.procfs.calls stap.qa416.procfs.cmd |
	sed -e 's/PMID: [0-9.]*/PMID: ID/' -e "s|$tmp/auto/||"

echo "== read"
"$tmp/qa416_loop" 300
echo "calls: $(_value stap.qa416.calls)"
echo "procfs.calls: $(_value stap.qa416.procfs.calls)"
echo "cat: $(cat /proc/systemtap/qa416/calls)"
echo "procfs.prometheus: $(_value stap.qa416.procfs.prometheus)"
echo "procfs.last: $(_value stap.qa416.procfs.last)"

echo "== written"
"$BUILD/bin/stapctl" stap.qa416.procfs.cmd "hello there" | sed -n 's/^store: /store: /p'
echo "procfs.last: $(_value stap.qa416.procfs.last)"
echo "last (the global): $(_value stap.qa416.last)"
echo "cat: $(cat /proc/systemtap/qa416/last)"
echo "procfs.cmd: $(pminfo -f stap.qa416.procfs.cmd | sed -n '/value\|No value/p' | sed 's/^ *//')"
"$BUILD/bin/stapctl" stap.qa416.procfs.calls "7" | sed -n 's/^store: /store: /p'
"$tmp/qa416_loop" 200
echo "procfs.calls: $(_value stap.qa416.procfs.calls)"
echo "status: $(_value stap.scripts.status qa416)"

echo "== a file with a .read and a .write probe (the module's runtime only)"
pminfo -tT stap.qa416.procfs.mode
echo "procfs.mode: $(_value stap.qa416.procfs.mode)"
"$BUILD/bin/stapctl" stap.qa416.procfs.mode "on" | sed -n 's/^store: /store: /p'
echo "procfs.mode: $(_value stap.qa416.procfs.mode)"
echo "mode (the global): $(_value stap.qa416.mode)"

echo "== the reader's task runs the .read handler"
echo "procfs.who: $(_value stap.qa416.procfs.who)"
echo "cat: $(cat /proc/systemtap/qa416/who)"

echo "== the file held open by another process"
exec 3</proc/systemtap/qa416/calls
pminfo -f stap.qa416.procfs.calls stap.qa416.calls | sed -e '/^$/d' -e 's/^ *//'
exec 3<&-
echo "let go: procfs.calls: $(_value stap.qa416.procfs.calls)"
echo "status: $(_value stap.scripts.status qa416), errors: $(_value stap.scripts.errors qa416)"
kill $pmcd
wait $pmcd
grep -E 'qa416' "$pmda_log" | grep -iE 'error|warning|cannot'
exit 0
