#!/bin/sh
# mk/deps.sh - install what pcp-stap needs on Debian 12, when it is missing.
#
#   mk/deps.sh           packages, then tracefs mounted
#   mk/deps.sh --pmcd    the same, and pmcd running
#   mk/deps.sh --guest   the same, and what qa/guest needs to boot Debian's
#                        own kernel under qemu (make check-guest)
#
# Idempotent and quiet when everything is present.  pcp's postinst calls
# systemctl, which fails when systemd is not PID 1 (containers, CI VMs):
# a stub systemctl that exits 0 goes first in the PATH that apt gives dpkg.
set -eu

PACKAGES="make gcc clang llvm pkg-config
	pcp libpcp3-dev libpcp-pmda3-dev
	libbpf-dev bpftool libdw-dev libelf-dev
	libcunit1-dev libclang-rt-14-dev
	systemtap-sdt-dev"
GUEST_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static cpio kmod xz-utils"
[ "${1:-}" = --guest ] && PACKAGES="$PACKAGES $GUEST_PACKAGES"

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$status" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -n "$missing" ] || [ -n "$(dpkg --audit 2>/dev/null)" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing Debian packages:$missing; run 'make deps' as root" >&2
		exit 1
	fi
	stub=$(mktemp -d)
	trap 'rm -rf "$stub"' EXIT
	printf '#!/bin/sh\nexit 0\n' >"$stub/systemctl"
	chmod 755 "$stub/systemctl"
	dpath="$stub:/usr/sbin:/usr/bin:/sbin:/bin"
	export DEBIAN_FRONTEND=noninteractive
	if [ -n "$missing" ]; then
		echo "deps: installing$missing"
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends \
			-o DPkg::Path="$dpath" $missing >/dev/null
	fi
	# a pcp left half-configured by an earlier install without the stub
	PATH="$dpath" dpkg --configure -a
fi

# tracepoints are read from tracefs
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "deps: warning: cannot mount tracefs on /sys/kernel/tracing" >&2
fi

if [ "${1:-}" = --pmcd ] && ! pmprobe pmcd.version >/dev/null 2>&1; then
	/etc/init.d/pmcd start >/dev/null
	pmprobe pmcd.version >/dev/null || { echo "deps: pmcd did not start" >&2; exit 1; }
fi
exit 0
