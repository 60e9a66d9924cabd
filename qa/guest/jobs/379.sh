# 379: --runtime=kernel: a task value is its task_struct's address in
# every context, as stap's (user context's task functions run in the
# module): task_current() in begin reads through @cast; the -c command's
# task kept by a kernel probe names its process in the end probe
# (task_pid, task_execname, task_parent); pid2task() in begin finds any
# process (init) and the same address a kernel probe saw; a guru
# function dereferences a task from begin, as SystemTap's psig.stp does;
# addr_to_node() of the task in the kernel probe (node_data: the guest
# has one node) and its error for a user address.
cat >"$tmp/task.stp" <<'END2'
global seen, begin_task
function comm_of:string(t:long) %{ /* guru: the task_struct itself */
	struct task_struct *p = (struct task_struct *)(long)STAP_ARG_t;
	strlcpy(STAP_RETVALUE, p ? p->comm : "NULL", MAXSTRINGLEN);
%}
probe begin {
	t = task_current()
	printf("begin: its own task read through @cast: %s\n",
	       @cast(t, "task_struct", "kernel")->pid == tid() ? "yes" : "no")
	printf("begin: task_pid(task_current()) == pid(): %s\n", task_pid(t) == pid() ? "yes" : "no")
	printf("begin: pid2task(1): %s, pid %d, by guru C: %s\n", pid2task(1) ? "found" : "none",
	       task_pid(pid2task(1)), comm_of(pid2task(1)) != "NULL" ? "read" : "not read")
}
probe kernel.trace("sched:sched_process_exec") {
	if (pid() == target()) {
		seen = task_current()
		/* addr_to_node(): the guest's one node; a user address raises */
		printf("kernel: addr_to_node of the task: %d\n", addr_to_node(seen))
		try { printf("%d\n", addr_to_node(0x400000)) } catch (msg) { printf("kernel: %s\n", msg) }
		exit()	/* the end probe runs while sleep does */
	}
}
probe end {
	printf("end: the exec's task: %s %s, parent is pmstap: %s\n",
	       task_pid(seen) == target() ? "target()'s" : "another's", task_execname(seen),
	       task_execname(task_parent(seen)) == "pmstap" ? "yes" : "no")
	printf("end: pid2task(target()) is that task: %s\n", pid2task(target()) == seen ? "yes" : "no")
}
END2
$PMSTAP --runtime=kernel -g "$tmp/task.stp" -c "sleep 60"
echo "status $?"
