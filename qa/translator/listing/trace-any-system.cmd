# no system: the name in every system
needs: tracefs
args: -l 'kernel.trace("sched_switch")'
