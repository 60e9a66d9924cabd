#!/bin/bash
# qa/guest/peer.sh - scripts side by side with real SystemTap 4.8's own
# module, in one boot of the qa guest: pmstap --runtime=kernel and stap's
# module run each script with the same workload, and their stdout, stderr
# and exit status are compared.
#
#	qa/guest/peer.sh [SCRIPT.stp...]	(default: qa/guest/peer/*.stp)
#
# A script's "# workload: CMD" line names the command both run it with
# (-c; QA_BIN stands for the build's programs, there and in the script's
# probe points: the same path on both sides; QA_TMPBIN/PROG for a copy of
# PROG on a tmpfs, at one path on both sides, for a uprobe that stap puts
# on: stap's uprobes fail with EIO on the guest's 9p root); an
# "# options: OPTS" line
# options both take (-g for embedded C); a "# setup: CMD" line a command
# the guest runs before each (modprobe, so that a module's probes find it
# loaded, where pmstap would warn that they wait for it).  stap runs passes 1-4
# here (stap -r KVER -p4, its runtime copied and patched for the
# task_work_cancel_func() that 6.1.192 backported, as
# ../shared/reference/kmod-qemu does), staprun runs the module there;
# pmstap is compiled here and run there as the guest jobs are
# (run-jobs.sh).  Prints each script's verdict, "same" or the
# differences (with PEER_SHOW=1 set, a "same" script's stdout too, each
# line after "	| "); the exit status is the number of scripts that
# differ.
#
# stap: the installed one, or with STAP_PEER_ROOT=DIR the Debian 12
# packages systemtap, systemtap-runtime and systemtap-common (4.8)
# unpacked there (`apt-get download` them, then `dpkg -x DEB DIR`).
# Without either it says so and exits 77.
#
# A script with kernel.function, kernel.statement or kprobe.function probes
# (or a "# needs: kernel-debuginfo" line, for tapsets made of them) needs,
# for stap -r, the guest kernel's debuginfo, a vmlinux with DWARF, where
# stap looks for it (/usr/lib/debug/boot/vmlinux-KVER or
# /usr/lib/debug/lib/modules/KVER/vmlinux: Debian's linux-image-KVER-dbg
# package, unpacked) and its System.map in the headers' build tree
# (/lib/modules/KVER/build/System.map, the one stap -r reads; the -dbg
# package has it in /usr/lib/debug/boot/).  Where either is missing such a
# script is skipped, saying which file, and counts as neither same nor
# different.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$repo/build}
BUILD=$(cd "$BUILD" && pwd)
export BUILD
kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
work=$BUILD/guest/peer
[ $# -gt 0 ] || set -- "$here"/peer/*.stp

. "$here/stap.rc"
. "$here/tmpfs.rc"	# _tmpbin_progs
if ! stap_peer_find; then
	echo "peer: $stap_missing" >&2
	exit 77
fi

# what stap -r needs for kernel.function and kprobe.function, or why not
no_dbg=
vmlinux=
for f in /usr/lib/debug/boot/vmlinux-$kver /usr/lib/debug/lib/modules/$kver/vmlinux; do
	[ -s "$f" ] && { vmlinux=$f; break; }
done
if [ -z "$vmlinux" ]; then
	no_dbg="no debuginfo of the guest's kernel (/usr/lib/debug/boot/vmlinux-$kver, from linux-image-$kver-dbg)"
elif [ ! -s "/lib/modules/$kver/build/System.map" ]; then
	no_dbg="no /lib/modules/$kver/build/System.map (stap -r reads it; linux-image-$kver-dbg has it in /usr/lib/debug/boot/)"
fi

rm -rf "$work/ko" "$work/scripts" "$work/jobs"
mkdir -p "$work/ko" "$work/scripts" "$work/jobs" "$work/home"
stap_peer_runtime "$work"

# The job: for each script, stap's module then pmstap, outputs compared.
job=$work/jobs/peer.sh
{
	echo "# written by qa/guest/peer.sh"
	echo "export SYSTEMTAP_DIR=$work/home${stapio:+ SYSTEMTAP_STAPIO=$stapio}"
	echo "show=${PEER_SHOW:-}"
	echo 'compare() {'
	echo '	local n=$1 d=$tmp/$1'
	echo '	if cmp -s "$d/stap.out" "$d/pmstap.out" && cmp -s "$d/stap.err" "$d/pmstap.err" &&'
	echo '	   cmp -s "$d/stap.rc" "$d/pmstap.rc"; then'
	echo '		echo "$n: same ($(wc -l <"$d/stap.out") lines, status $(cat "$d/stap.rc"))"'
	echo '		[ -z "$show" ] || sed "s/^/	| /" "$d/stap.out"'
	echo '		return'
	echo '	fi'
	echo '	echo "$n: differs"'
	echo '	for f in out err rc; do'
	echo '		diff -u --label "stap $f" --label "pmstap $f" "$d/stap.$f" "$d/pmstap.$f" | sed "s/^/	/"'
	echo '	done'
	echo '}'
} >"$job"
n=0 failed=0 skipped=0
for s in "$@"; do
	name=$(basename "$s" .stp | tr -c 'a-zA-Z0-9_\n' _)
	if [ -n "$no_dbg" ] &&
	   grep -Eq '^# needs: kernel-debuginfo|(kernel\.(function|statement)|kprobe\.function)\(' "$s"; then
		echo "$name: skipped: $no_dbg"
		skipped=$((skipped + 1))
		continue
	fi
	w=$(sed -n 's/^# workload: //p' "$s" | head -1)
	w=${w:-true}
	o=$(sed -n 's/^# options: //p' "$s" | head -1)
	u=$(sed -n 's/^# setup: //p' "$s" | head -1)
	u=${u:-true}
	# programs a uprobe is put on: copies on a tmpfs at one path on both sides
	progs=$(_tmpbin_progs "$s" | tr '\n' ' ')
	for p in $progs; do
		mkdir -p "$work/bin"
		cp "$BUILD/bin/$p" "$work/bin/"
	done
	sed -e "s|QA_TMPBIN|$work/bin|g" -e "s|QA_BIN|$BUILD/bin|g" "$s" >"$work/scripts/$name.stp"
	w=${w//QA_TMPBIN/$work/bin}
	if ! (cd "$work/ko" && SYSTEMTAP_DIR=$work/home "$stap" $o -R "$work/runtime" -r "$kver" -p4 \
		-m "peer_$name" "$work/scripts/$name.stp" >/dev/null 2>"$work/ko/$name.log"); then
		echo "$name: stap cannot build it (see $work/ko/$name.log)"
		failed=$((failed + 1))
		continue
	fi
	n=$((n + 1))
	[ -z "$progs" ] || cat >>"$job" <<END
if [ -z "\${GUEST_COMPILE_ONLY:-}" ] && ! mountpoint -q $work/bin; then
	mkdir -p /tmp/peer-bin && cp $work/bin/* /tmp/peer-bin/
	mount -t tmpfs none $work/bin && cp /tmp/peer-bin/* $work/bin/
fi
END
	cat >>"$job" <<END
mkdir -p \$tmp/$name
w="${w//QA_BIN/\$QA_BIN}"
[ -n "\${GUEST_COMPILE_ONLY:-}" ] || $u
\$PMSTAP --runtime=kernel $o -m peer_$name $work/scripts/$name.stp -c "\$w" >\$tmp/$name/pmstap.out 2>\$tmp/$name/pmstap.err
echo \$? >\$tmp/$name/pmstap.rc
if [ -z "\${GUEST_COMPILE_ONLY:-}" ]; then
	$u
	timeout 120 $staprun -c "\$w" $work/ko/peer_$name.ko >\$tmp/$name/stap.out 2>\$tmp/$name/stap.err
	echo \$? >\$tmp/$name/stap.rc
	compare $name
fi
END
done
if [ $n = 0 ]; then
	# every script skipped: nothing to compare here
	[ "$failed" != 0 ] || [ "$skipped" = 0 ] || exit 77
	exit "$failed"
fi
# the job's time, here compiling and there running: run-jobs.sh's 120 s
# are not enough for 46 scripts (137 s and 224 s on 2026-11-29)
export GUEST_JOB_TIMEOUT=${GUEST_JOB_TIMEOUT:-$((120 + 15 * n))}
"$here/run-jobs.sh" "$job" >&2 || true
res=$BUILD/guest/results/peer
[ -s "$res.rc" ] || { echo "peer: the guest did not run the scripts (see $BUILD/guest/xfer/console.log)" >&2; exit 125; }
cat "$res.out"
[ "$(cat "$res.rc")" = 0 ] || sed 's/^/peer job stderr: /' "$res.err"
differ=$(grep -c ': differs$' "$res.out" || true)
# a script with no verdict: the job stopped there (an oops, its timeout)
same=$(grep -c ': same (' "$res.out" || true)
unjudged=$((n - differ - same))
[ "$unjudged" = 0 ] ||
	echo "peer: $unjudged scripts got no verdict: the guest job stopped (status $(cat "$res.rc"); see $BUILD/guest/xfer/console.log)"
echo "peer: $n scripts run, $same the same as stap's module, $differ differ; $failed not built by stap$([ "$skipped" = 0 ] || echo "; $skipped skipped: $no_dbg")"
exit $((differ + unjudged + failed))
