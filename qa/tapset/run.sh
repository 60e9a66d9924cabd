#!/bin/sh
# qa/tapset/run.sh BUILD [--untested] - a test per function of the tapset
# library, table-driven.
#
# qa/tapset/cases holds one case a line, fields separated by " | ":
#
#	CONTEXTS | EXPRESSION | EXPECTED
#
# CONTEXTS is one or more of these letters; the case runs in each:
#
#	u  user context: a begin probe
#	k  kernel context: the syscalls:sys_enter_getppid tracepoint, fired
#	   once by the tapset_work workload (qa/src/tapset_work.c), which
#	   pmstap starts with -c as "tapset_work one two"
#	p  a uprobe on tapset_work's tw_args(7, -3, 0x123456789, "arg")
#	e  the uprobe at tw_args's return (it returns 42)
#	w  the syscalls:sys_enter_write tracepoint of tapset_work writing its
#	   64 known bytes (tw_data) to fd 77: $buf is their address
#	r  syscall.close.return of tapset_work's second close(77) (-EBADF)
#	t  sock:inet_sock_set_state of tapset_work's TCP connection on
#	   loopback (127.0.0.1 port @CPORT@ to port @PORT@) as it
#	   becomes established: $skaddr is the connecting socket, still in
#	   TCP_SYN_SENT
#	z  the end probe of the script of those: globals tw_ua, tw_ua1,
#	   tw_ka, tw_ubt, tw_kbt, tw_kc, tw_km, set by cases, keep addresses,
#	   stacks and facts for it to name or compare (names are known only
#	   in user context)
#
# EXPRESSION is script text whose value (a long or a string) is printed
# with print(); an EXPRESSION written { STATEMENTS } is run as it is and
# what it prints is the value.  EXPECTED is the exact text it must print.
# @BIN@ in either stands for BUILD/bin, @HZ@ for the kernel config's
# CONFIG_HZ, @TZ@ for date +%Z, @SID@ for this shell's session id (0
# when no ancestor called setsid, as under some CI runners; pmstap and
# the workload inherit it), @ESC@ for the escape character, @RUN@
# for a word unique to the run, @PORT@ and @CPORT@ for the t rows'
# listening and connecting ports, @NOFILE@ for ulimit -Sn (-1 when
# unlimited).  An EXPECTED written "~ REGEX" is an
# extended regular expression the whole value must match (for values that
# depend on time, addresses or the kernel build).  Lines starting with # and blank
# lines are skipped.  Expected values follow stap 4.8's documented
# behaviour (its tapset reference and source), written here by hand.
# A context written !k (etc.) marks a known bug there: the case is
# skipped, and listed, until the bug is fixed (then drop the !).
#
#	stderr | u | TEXT	the user script must write the line TEXT to
#	stderr | k | TEXT	stderr (warn(), error paths); k: the kernel one
#	kmsg | TEXT		the kernel log must have a line ending in TEXT
#				after the run (printk(); the user script runs
#				with -g for it)
#
# Other stderr lines are shown (and fail the run).  A function that this
# table cannot call is named by a line "untestable | NAME | REASON";
# --untested lists those with their reasons, then the functions that have
# neither a case nor such a line.
#
# All cases of u run in one script, those of the kernel contexts in
# another (one compile each): a probe per ten cases, each printing
# "N=VALUE".  A case whose value differs, or that is missing (an error
# stopped its probe), fails and shows both.  Totals "PASSED FAILED
# SKIPPED" go to BUILD/results/tapset.

build=${1:?usage: $0 BUILD [--untested]}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
cd "$(dirname "$0")/../.." || exit 2
cases=qa/tapset/cases
tmp=$build/tmp/qa-tapset
pmstap=$build/bin/pmstap
work=$build/bin/tapset_work
mkdir -p "$tmp" "$build/results"
hz=$( (cat "/boot/config-$(uname -r)" 2>/dev/null || zcat /proc/config.gz 2>/dev/null) |
	sed -n 's/^CONFIG_HZ=//p')
tz=$(date +%Z)
sid=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f4)	# field 6: after "pid (comm) "
esc=$(printf '\033')
run=qa-tapset-$$-$(date +%s)
nofile=$(ulimit -Sn); [ "$nofile" = unlimited ] && nofile=-1
# the t rows' listener: this run's own, below Linux's ephemeral range
# (32768-60999), where an earlier connection's TIME_WAIT could hold it
port=$((20000 + $$ % 6000 * 2))
[ -x "$pmstap" ] || { echo "qa/tapset: $pmstap is not built" >&2; exit 2; }
[ -x "$work" ] || { echo "qa/tapset: $work is not built" >&2; exit 2; }

if [ "$2" = --untested ]; then
	sed -n 's/^function \([A-Za-z_0-9]*\).*/\1/p' tapset/*.stp | grep -v '^_' | sort -u >"$tmp/all"
	grep '^untestable | ' "$cases" | sed 's/^untestable | \([^ ]*\) | /\1	/' | sort >"$tmp/untestable"
	n=0 m=0
	for f in $(cat "$tmp/all"); do
		grep -v '^#' "$cases" | grep -v '^untestable' | grep -q "\\b$f(" && continue
		reason=$(sed -n "s/^$f	//p" "$tmp/untestable")
		if [ -n "$reason" ]; then
			echo "untestable here: $f: $reason"
			m=$((m + 1))
		else
			echo "untested: $f"
			n=$((n + 1))
		fi
	done
	echo "$(wc -l <"$tmp/all") public tapset functions: $m untestable here, $n without a case"
	exit 0
fi

# header CTX N: the probe (and its guard) that runs cases N.. of CTX.
header() {
	case $1 in
	u)	echo "probe begin {" ;;
	k)	echo "global fired$2"
		echo "probe kernel.trace(\"syscalls:sys_enter_getppid\") {"
		echo "	if (pid() != target() || fired$2++) next" ;;
	p|e)	echo "global fired$2"
		ret=; [ "$1" = e ] && ret=.return
		echo "probe process(\"$work\").function(\"tw_args\")$ret {"
		echo "	if (pid() != target() || fired$2++) next" ;;
	w)	echo "global fired$2"
		echo "probe kernel.trace(\"syscalls:sys_enter_write\") {"
		echo "	if (pid() != target() || \$fd != 77 || fired$2++) next" ;;
	t)	echo "global fired$2"
		echo "probe kernel.trace(\"sock:inet_sock_set_state\") {"
		echo "	if (\$sport != $((port + 1)) || \$newstate != 1 || fired$2++) next" ;;
	z)	echo "probe end {" ;;
	r)	echo "global fired$2"
		echo "probe syscall.close.return {"
		echo "	if (pid() != target() || tw_closes[tid()] != 2 || fired$2++) next" ;;
	esac
}

# script GROUP: the script for the cases of GROUP (u, or the kernel
# contexts kpewrtz), and their expected lines.
script() {
	n=0
	[ "$1" = u ] || {
		echo "global tw_closes, tw_ua, tw_ua1, tw_ka, tw_ubt, tw_kbt, tw_kc, tw_km"
		echo "probe syscall.close { if (pid() == target() && fd == 77) tw_closes[tid()]++ }"
	}
	grep -v '^[#!]' "$cases" | grep -Ev '^(stderr|kmsg|untestable) \|' |
	grep -v '^[[:space:]]*$' | sed -e "s|@BIN@|$build/bin|g" -e "s|@HZ@|${hz:-unknown}|g" -e "s|@TZ@|$tz|g" -e "s|@SID@|$sid|g" \
		-e "s|@ESC@|$esc|g" -e "s|@RUN@|$run|g" -e "s|@PORT@|$port|g" -e "s|@NOFILE@|$nofile|g" -e "s|@CPORT@|$((port + 1))|g" | while IFS= read -r line; do
		c=${line%% | *}
		rest=${line#* | }
		expr=${rest% | *}
		want=${rest##* | }
		for ctx in $(echo "$c" | sed 's/./& /g'); do
			case $1 in *"$ctx"*) ;; *) continue ;; esac
			n=$((n + 1))
			# a new probe every ten cases, and wherever the context changes
			if [ $((n % 10)) -eq 1 ] || [ "$ctx" != "$last" ]; then
				[ $n -gt 1 ] && echo "}"
				header "$ctx" "$n"
			fi
			last=$ctx
			case $expr in
			"{ "*)	printf '\tprint("%d=")\n\t%s\n\tprint("\\n")\n' "$n" "$expr" ;;
			*)	printf '\tprint("%d=", %s, "\\n")\n' "$n" "$expr" ;;
			esac
			printf '%d=%s\n' "$n" "$want" >>"$tmp/$1.want"
			printf '%d	%s) %s\n' "$n" "$ctx" "$expr" >>"$tmp/$1.exprs"
		done
	done
	echo "}"
	[ "$1" = u ] && echo "probe begin(1) { exit() }"
}

# check_stderr GROUP: the expected lines are there; nothing else is.
check_stderr() {
	sed -n "s/^stderr | $2 | //p" "$cases" | sed "s|@RUN@|$run|g" >"$tmp/$1.errwant"
	while IFS= read -r want; do
		grep -qxF -- "$want" "$tmp/$1.err" && continue
		failed=$((failed + 1))
		echo "FAIL ($1) stderr has no line: $want"
	done <"$tmp/$1.errwant"
	grep -vxF -f "$tmp/$1.errwant" "$tmp/$1.err" >"$tmp/$1.errother"
	if [ -s "$tmp/$1.errother" ]; then
		failed=$((failed + 1))
		echo "FAIL ($1) the script also said:"
		sed 's/^/	/' "$tmp/$1.errother" | head -20
	fi
}

passed=0 failed=0
skipped=$(grep -c '^!' "$cases")
grep '^!' "$cases" | sed 's/^/known bug, skipped: /'
for group in u kpewrtz; do
	rm -f "$tmp/$group.want" "$tmp/$group.exprs"
	script $group >"$tmp/$group.stp"
	if [ "$group" = u ]; then
		(cd "$tmp" && timeout 120 "$pmstap" -g u.stp) >"$tmp/$group.got" 2>"$tmp/$group.err"
	else
		(cd "$tmp" && TW_PORT=$port timeout 120 "$pmstap" -c "$work one two" $group.stp) \
			>"$tmp/$group.got" 2>"$tmp/$group.err"
	fi
	rc=$?
	if [ $rc -ne 0 ]; then
		failed=$((failed + 1))
		echo "FAIL ($group) pmstap exited with status $rc"
	fi
	check_stderr $group "$(echo $group | cut -c1)"
	while IFS= read -r want; do
		n=${want%%=*}
		got=$(grep "^$n=" "$tmp/$group.got" | head -n 1)
		[ -n "$got" ] || got="$n=(nothing)"
		case $want in
		"$n=~ "*) printf '%s\n' "${got#*=}" | grep -Eqx -- "${want#*=~ }" && got=$want ;;
		esac
		if [ "$got" = "$want" ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			expr=$(sed -n "s/^$n	//p" "$tmp/$group.exprs")
			echo "FAIL ($expr"
			printf '\texpected: %s\n' "${want#*=}"
			printf '\tgot:      %s\n' "${got#*=}"
		fi
	done <"$tmp/$group.want"
done
sed -n 's/^kmsg | //p' "$cases" | sed "s|@RUN@|$run|g" | while IFS= read -r want; do
	dmesg | grep -qF -- "$want" || echo "FAIL (kmsg) the kernel log has no line: $want"
done >"$tmp/kmsg.fail"
cat "$tmp/kmsg.fail"
failed=$((failed + $(wc -l <"$tmp/kmsg.fail")))
echo "$passed $failed $skipped" >"$build/results/tapset"
echo "qa/tapset: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
