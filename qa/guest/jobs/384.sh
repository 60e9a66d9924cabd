# 384: --runtime=kernel -g: a script's embedded C written for stap's
# module runtime runs in the module: a top-level %{ %} block (an include,
# module variables, read by the functions), functions in the STAP_ARG_/
# STAP_RETVALUE/STAP_RETURN and THIS->l_x/THIS->__retvalue forms, long
# and string arguments and results, `current`, kread() of a task (and of
# a bad pointer: a soft error), kwrite()/kderef() on a module variable,
# kderef_string(),
# STAP_ERROR() with a printf-style message (caught by try, and uncaught:
# the script's location, status 1), %{ %} as an expression and as a
# statement in a kernel probe (a long, and a string with /* string */).
# The bpf runtime still refuses the script.
cat >"$tmp/t.stp" <<'END'
%{
#include <linux/sched.h>
static int64_t guru_scale = 3;
static int32_t guru_cell;
%}
function dbl:long (x:long) %{ /* pure */ STAP_RETVALUE = STAP_ARG_x * 2; %}
function scaled:long (x:long) %{ THIS->__retvalue = THIS->l_x * guru_scale; %}
function greet:string (who:string, n:long) %{
	snprintf(STAP_RETVALUE, MAXSTRINGLEN, "hello %s #%lld", STAP_ARG_who, (long long)STAP_ARG_n);
%}
function upper:string (s:string) %{
	int i;

	strlcpy(THIS->__retvalue, THIS->l_s, MAXSTRINGLEN);
	for (i = 0; THIS->__retvalue[i]; i++)
		THIS->__retvalue[i] = toupper(THIS->__retvalue[i]);
%}
function checked:long (x:long) %{
	if (STAP_ARG_x < 0)
		STAP_ERROR("negative argument %lld", (long long)STAP_ARG_x);
	STAP_RETURN(STAP_ARG_x + 1);
%}
function task_tgid:long (task:long) %{ /* pure */ /* stable */
	struct task_struct *t = (struct task_struct *)(uintptr_t)STAP_ARG_task;

	STAP_RETVALUE = kread(&t->tgid);
	CATCH_DEREF_FAULT();
%}
function self_tgid:long () %{ STAP_RETVALUE = current->tgid; %}
function poke (v:long) %{ kwrite(&guru_cell, STAP_ARG_v); %}
function peek:long () %{ STAP_RETVALUE = kderef(sizeof(guru_cell), &guru_cell); %}
function kstr:string (addr:long) %{ kderef_string(STAP_RETVALUE, STAP_ARG_addr, MAXSTRINGLEN); CATCH_DEREF_FAULT(); %}
global n = 7
probe kernel.trace("sched:sched_process_exec") {
	if (pid() != target())
		next
	printf("%d %d %s\n", dbl(21), scaled(14), greet("world", 7))
	println(upper(execname()))
	printf("embedded expression: %d\n", %{ 6 * 7 %})
	printf("a string one: %s\n", %{ /* string */ "from C" %})
	%{ guru_scale = 5 %}
	printf("scale now %d\n", scaled(1))
	printf("kread of the task agrees with pid(): %s\n", task_tgid(task_current()) == pid() ? "yes" : "no")
	printf("current agrees with pid(): %s\n", self_tgid() == pid() ? "yes" : "no")
	poke(12345)
	printf("kwrite then kderef: %d\n", peek())
	printf("kderef_string: %s\n", kstr(%{ (long)"a module string" %}))
	println(checked(41))
	try { checked(-3) } catch (msg) { println("caught: ", msg) }
	try { println(task_tgid(0)) } catch (msg) { println("caught a fault: ", msg =~ "^read fault \\[man error::fault\\] at 0x[0-9a-f]+$" ? "yes" : msg) }
	n = checked(-2)
	println("not reached")
}
END
$PMSTAP --runtime=kernel -g "$tmp/t.stp" -c true >"$tmp/out" 2>"$tmp/err"
echo "kernel: status $?"
$PMSTAP -g -p3 "$tmp/t.stp" >/dev/null 2>"$tmp/err.bpf"
echo "bpf -p3: status $?"
[ -n "${GUEST_COMPILE_ONLY:-}" ] && exit 0
cat "$tmp/out"
sed "s|$tmp/||" "$tmp/err"
sed -n "s|$tmp/||g; 1p" "$tmp/err.bpf"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
