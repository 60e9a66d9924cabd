# -L: the record's fields (not common_*), then the raw tracepoint's
# arguments from BTF that no field hides ($prev_state is a field), C types
# written as stap writes them (struct task_struct*)
needs: tracefs btf
args: -L 'kernel.trace("sched:sched_switch")'
