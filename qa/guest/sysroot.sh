#!/bin/bash
# qa/guest/sysroot.sh - the guest kernel's view of itself, for compiling on
# the host: prints the directory of a snapshot that pmstap reads with
# PMSTAP_SYSROOT=DIR (see pmstap(1)), made by one short boot when missing.
#
#	qa/guest/sysroot.sh [--force]
#
# The snapshot ($BUILD/guest/sysroot-KVER) holds the guest's BTF
# (sys/kernel/btf/vmlinux), its build-id (sys/kernel/notes), tracefs (event formats, available_filter_
# functions, kprobe_events), proc/kallsyms (read as root: with addresses),
# proc/sys/kernel/osrelease and version, and the possible CPUs.  With it,
# pmstap -p4 on the host makes the very build (same cache key) that pmstap
# in the guest looks for, so the guest only runs passes 1, 2 and 5.
# Exit status as qa/guest/boot.sh's when the boot fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$here/../../build}
BUILD=$(cd "$BUILD" && pwd)
export BUILD
kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
snap=$BUILD/guest/sysroot-${kver:-none}
if [ "${1:-}" != --force ] && [ -s "$snap/proc/sys/kernel/osrelease" ] &&
   [ "$snap/proc/sys/kernel/osrelease" -nt "$0" ] &&
   [ ! "/boot/vmlinuz-$kver" -nt "$snap/proc/sys/kernel/osrelease" ]; then
	echo "$snap"
	exit 0
fi

xfer=$BUILD/guest/snapxfer
rm -rf "$xfer"
mkdir -p "$xfer"
# in the guest: copy into tmpfs first (tracefs files report size 0, and
# thousands of small writes over 9p are slow under emulation), then one tar
cat >"$xfer/run.sh" <<'END'
#!/bin/sh
set -e
d=/tmp/sysroot
t=/sys/kernel/tracing
mountpoint -q $t || mount -t tracefs nodev $t
mkdir -p $d/sys/kernel/btf $d$t/events $d/proc/sys/kernel $d/sys/devices/system/cpu
cat /sys/kernel/btf/vmlinux >$d/sys/kernel/btf/vmlinux
cat /sys/kernel/notes >$d/sys/kernel/notes
cat /proc/kallsyms >$d/proc/kallsyms
cat $t/available_filter_functions >$d$t/available_filter_functions
for f in kprobe_events uprobe_events; do [ ! -e $t/$f ] || : >$d$t/$f; done
for f in osrelease version; do cat /proc/sys/kernel/$f >$d/proc/sys/kernel/$f; done
cat /sys/devices/system/cpu/possible >$d/sys/devices/system/cpu/possible
# the formats in one process: a fork per file takes a minute under TCG
python3 -c '
import glob, os, sys
for f in glob.glob(sys.argv[1] + "/events/*/*/format"):
    out = sys.argv[2] + f
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(f, "rb") as i, open(out, "wb") as o:
        o.write(i.read())
' $t $d
tar -C $d -cf /xfer/sysroot.tar .
END
chmod 755 "$xfer/run.sh"
GUEST_TIMEOUT=${GUEST_TIMEOUT:-300} "$here/boot.sh" "$xfer" >&2
rm -rf "$snap.tmp"
mkdir -p "$snap.tmp"
tar -C "$snap.tmp" -xf "$xfer/sysroot.tar"
[ -s "$snap.tmp/proc/sys/kernel/osrelease" ] ||
	{ echo "guest: the snapshot of the guest's kernel is incomplete" >&2; exit 125; }
rm -rf "$snap" "$xfer"
mv "$snap.tmp" "$snap"
echo "$snap"
