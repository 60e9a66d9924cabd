# a wildcard: every tracepoint tracefs has, sorted, as kernel.trace("SYS:NAME")
needs: tracefs
args: -l 'kernel.trace("sched:sched_process_*")'
expect: ls /sys/kernel/tracing/events/sched | grep "^sched_process_" | LC_ALL=C sort | sed 's/.*/kernel.trace("sched:&")/'
