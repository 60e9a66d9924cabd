# -l of one tracepoint prints it as written
needs: tracefs
args: -l 'kernel.trace("sched:sched_switch")'
