#!/bin/bash
# qa/guest/boot.sh - boot Debian's own kernel under qemu and run XFER/run.sh.
#
#	qa/guest/boot.sh [--check] XFER
#
# The guest runs the distribution's kernel (linux-image-amd64), which has
# kprobes, fentry/fexit and BTF, whatever the host runs.  The host's / is
# shared read-only over 9p (so build/bin/pmstap, clang and libbpf run in
# the guest as they are), with a tmpfs overlay on top; XFER is shared
# read-write at /xfer, and /xfer/run.sh runs in it (see qa/guest/init).
# The console goes to XFER/console.log, qemu's pid to XFER/qemu.pid.  Exit status: the guest's rc,
# 124 on timeout, 125 if the guest ended without reporting, 126 if this
# machine cannot boot a guest (the reason on stderr).  --check only tells
# whether it can (0 or 126).
#
# qemu uses TCG (plain emulation): it boots in about 2 s, and KVM is not
# always usable (nested sandboxes expose /dev/kvm backends that cannot run
# a stock kernel).  GUEST_ACCEL=kvm forces KVM.
# Env: BUILD (default: build/ beside qa/), GUEST_TIMEOUT (seconds, default
# 600), GUEST_MEM (MB, default 2048), GUEST_SMP (default 2).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-$here/../../build}
work=$BUILD/guest
check_only=false
[ "${1:-}" = --check ] && { check_only=true; shift; }

cannot() { echo "guest: $*" >&2; exit 126; }

kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
[ -n "$kver" ] || cannot "no Debian kernel installed (/lib/modules/*-amd64): run mk/deps.sh --guest (make deps-guest)"
[ -r "/boot/vmlinuz-$kver" ] || cannot "no /boot/vmlinuz-$kver: run mk/deps.sh --guest (make deps-guest)"
command -v qemu-system-x86_64 >/dev/null || cannot "qemu-system-x86_64 is not installed: run mk/deps.sh --guest (make deps-guest)"
busybox=$(command -v busybox || true)
file -L "$busybox" 2>/dev/null | grep -q static ||
	busybox=$(dpkg -L busybox-static 2>/dev/null | grep -m1 '/bin/busybox$' || true)
[ -x "$busybox" ] || cannot "busybox-static is not installed: run mk/deps.sh --guest (make deps-guest)"
command -v cpio >/dev/null || cannot "cpio is not installed: run mk/deps.sh --guest (make deps-guest)"
$check_only && exit 0

xfer=$(cd "${1:?usage: qa/guest/boot.sh XFER}" && pwd)
mkdir -p "$work"

# Debian's bzImage holds the kernel as an XZ stream: unpacked, the ELF is
# booted through its PVH entry, which skips ~2.5 s of decompression under
# TCG (and KASLR).
extract_vmlinux()
{
	local off

	off=$(LC_ALL=C grep -aboP -m1 '\xfd7zXZ\x00' "/boot/vmlinuz-$kver" | head -1 | cut -d: -f1)
	[ -n "$off" ] || cannot "/boot/vmlinuz-$kver holds no XZ-compressed kernel"
	tail -c +$((off + 1)) "/boot/vmlinuz-$kver" | xz -dc --single-stream >"$1.tmp" 2>/dev/null || true
	head -c 4 "$1.tmp" | grep -q ELF || cannot "cannot unpack /boot/vmlinuz-$kver"
	mv "$1.tmp" "$1"
}

# busybox, the init, and the modules the 9p root needs, in dependency order.
make_initramfs()
{
	local t f m

	t=$(mktemp -d "$work/initrd.XXXXXX")
	mkdir -p "$t"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp}
	cp "$busybox" "$t/bin/busybox"
	for f in $("$t/bin/busybox" --list); do
		[ "$f" = busybox ] || ln -sf busybox "$t/bin/$f"
	done
	install -m 755 "$here/init" "$t/init"
	: >"$t/modules.load"
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		for f in $(modprobe -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" { print $2 }'); do
			grep -qxF "$f" "$t/modules.load" && continue
			mkdir -p "$t$(dirname "$f")"
			cp "$f" "$t$f"
			echo "$f" >>"$t/modules.load"
		done
	done
	[ -s "$t/modules.load" ] || { rm -rf "$t"; cannot "cannot find the virtio/9p modules of $kver (is kmod installed?)"; }
	(cd "$t" && find . -print0 | cpio --null -o -H newc --quiet) >"$1.tmp"
	rm -rf "$t"
	mv "$1.tmp" "$1"
}

vmlinux=$work/vmlinux-$kver
initrd=$work/initrd-$kver.cpio
[ -s "$vmlinux" ] || extract_vmlinux "$vmlinux"
if [ ! -s "$initrd" ] || [ "$here/init" -nt "$initrd" ] || [ "$0" -nt "$initrd" ]; then
	make_initramfs "$initrd"
fi

case ${GUEST_ACCEL:-tcg} in
kvm) accel=(-accel kvm -cpu host) ;;
*) accel=(-accel tcg,thread=multi -cpu max) ;;
esac
append="console=ttyS0 panic=-1 quiet loglevel=4 tsc=reliable no_timer_check"
append="$append i8042.noaux i8042.nokbd i8042.nomux i8042.nopnp 8250.nr_uarts=1"
set +e
timeout --foreground "${GUEST_TIMEOUT:-600}" qemu-system-x86_64 "${accel[@]}" \
	-m "${GUEST_MEM:-2048}" -smp "${GUEST_SMP:-2}" -nodefaults -no-user-config \
	-pidfile "$xfer/qemu.pid" -display none -serial stdio -no-reboot -kernel "$vmlinux" -initrd "$initrd" \
	-append "$append" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$xfer",mount_tag=xfer,security_model=none,multidevs=remap \
	</dev/null 2>&1 | sed -u 's/\r$//' >"$xfer/console.log"
qrc=${PIPESTATUS[0]}
set -e
[ "$qrc" = 124 ] && { echo "guest: timeout after ${GUEST_TIMEOUT:-600} s" >&2; exit 124; }
rc=$(sed -n 's/^GUEST: done rc=\([0-9]*\).*/\1/p' "$xfer/console.log" | tail -1)
[ -n "$rc" ] || { echo "guest: ended without reporting (qemu status $qrc); see $xfer/console.log" >&2; exit 125; }
exit "$rc"
