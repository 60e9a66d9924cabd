#!/bin/sh
# mk/deps.sh - install what pcp-stap needs on Debian 12, when it is missing.
#
#   mk/deps.sh           packages, then tracefs mounted
#   mk/deps.sh --pmcd    the same, and pmcd running
#   mk/deps.sh --guest   the same (kept for old scripts)
#   mk/deps.sh --deb     what make deb needs: the packages without the qa
#                        guest's, and the packaging tools
#
# The packages of the qa guest (qa/guest: Debian's own kernel under qemu,
# for kernel.function & co; make check-guest, part of make check) come
# too: about 90 MB to download, 600 MB on disk, a minute to install.
# PMSTAP_NO_GUEST=1 leaves them out; failing to install them only warns
# (the guest tests then report that they did not run, and why).  So does
# the guest kernel's debuginfo (linux-image-RELEASE-dbg: 860 MB to
# download, 5.6 GB on disk, half a minute here), which kernel.function
# and .statement read for static and inline functions, source lines and
# $vars beyond BTF (qa/407, 413, 418; stap -r needs it too).
#
# systemtap (Debian's 4.8) is the reference some tests compare with
# (qa/179 runs stap -p2; qa/guest/peer.sh runs it in the guest).
#
# valgrind is for the QA: qa/118 counts the bytes pmdastap holds under it;
# strace too: qa/160 counts a -c command's calls with it, as the control.
#
# The packaging tools (make deb; qa/063 builds and installs the packages)
# come with the others: dpkg-dev, debhelper, fakeroot and lintian.
#
# The browser test of the dashboard (qa/151: web/ in headless Chromium,
# driven by chromium-driver and python3-selenium) needs about 100 MB of
# packages: PMSTAP_NO_WEB=1 leaves them out, and failing to install them
# only warns (qa/151 then says it did not run, and why).  curl and jq read
# pmproxy's REST API in the tests (qa/150).
#
# redis-server and iproute2 are for the fleet on one machine
# (make demo-hosts, qa/152): pmproxy loads archives into Redis.
#
# debuginfod (the server and debuginfod-find) serves a program's
# debuginfo to pmstap in qa/315; pmstap itself loads libdebuginfod1,
# which comes with it, only when DEBUGINFOD_URLS is set.
#
# Idempotent and quiet when everything is present.  pcp's postinst calls
# systemctl, which fails when systemd is not PID 1 (containers, CI VMs):
# a stub systemctl that exits 0 goes first in the PATH that apt gives dpkg.
set -eu

PACKAGES="make gcc clang llvm pkg-config
	pcp libpcp3-dev libpcp-pmda3-dev
	libbpf-dev bpftool libdw-dev libelf-dev
	libcunit1-dev libclang-rt-14-dev valgrind strace
	systemtap-sdt-dev libzydis-dev g++ systemtap
	dpkg-dev debhelper fakeroot lintian
	curl jq redis-server iproute2 debuginfod"
# nfs-kernel-server: rpc.nfsd and exportfs for the NFS server the nfsd
# tapset's guest tests run (qa/420); it starts no daemon here (see below)
GUEST_PACKAGES="qemu-system-x86 linux-image-amd64 busybox-static cpio kmod xz-utils
	nfs-kernel-server"
[ -n "${PMSTAP_NO_GUEST:-}" ] && GUEST_PACKAGES=""
[ "${1:-}" = --deb ] && GUEST_PACKAGES=""
WEB_PACKAGES="chromium chromium-driver python3-selenium"
[ -n "${PMSTAP_NO_WEB:-}" ] && WEB_PACKAGES=""
[ "${1:-}" = --deb ] && WEB_PACKAGES=""

# the packages of $* not installed, each with a leading space
missing_of()
{
	for p in "$@"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
		case "$status" in
		ii*) ;;
		*) printf ' %s' "$p" ;;
		esac
	done
}
missing=$(missing_of $PACKAGES)
guest_missing=$(missing_of $GUEST_PACKAGES)
if [ -n "$guest_missing" ] && [ -z "$missing" ] && [ "$(id -u)" != 0 ]; then
	echo "deps: warning: the qa guest's packages are missing:$guest_missing; run 'make deps' as root" >&2
	guest_missing=""
fi
web_missing=$(missing_of $WEB_PACKAGES)
if [ -n "$web_missing" ] && [ -z "$missing" ] && [ "$(id -u)" != 0 ]; then
	echo "deps: warning: the browser test's packages are missing:$web_missing; run 'make deps' as root" >&2
	web_missing=""
fi

if [ -n "$missing$guest_missing$web_missing" ] || [ -n "$(dpkg --audit 2>/dev/null)" ]; then
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
	[ -z "$missing$guest_missing$web_missing" ] || apt-get update -qq
	if [ -n "$missing" ]; then
		echo "deps: installing$missing"
		apt-get install -y -qq --no-install-recommends \
			-o DPkg::Path="$dpath" $missing >/dev/null
	fi
	if [ -n "$guest_missing" ]; then
		echo "deps: installing the qa guest's$guest_missing (PMSTAP_NO_GUEST=1 leaves them out)"
		# the guest's packages are for the guest (which shares this root):
		# an invoke-rc.d that exits 0 keeps rpcbind and nfsd from starting here
		cp "$stub/systemctl" "$stub/invoke-rc.d"
		apt-get install -y -qq --no-install-recommends \
			-o DPkg::Path="$dpath" $guest_missing >/dev/null ||
			echo "deps: warning: cannot install the qa guest's packages: the guest tests will not run" >&2
	fi
	rm -f "$stub/invoke-rc.d"
	if [ -n "$web_missing" ]; then
		echo "deps: installing the browser test's$web_missing (PMSTAP_NO_WEB=1 leaves them out)"
		apt-get install -y -qq --no-install-recommends \
			-o DPkg::Path="$dpath" $web_missing >/dev/null ||
			echo "deps: warning: cannot install the browser test's packages: qa/151 will not run" >&2
	fi
	# a pcp left half-configured by an earlier install without the stub
	PATH="$dpath" dpkg --configure -a
fi

# guest_extra PKG WHY CONSEQUENCE: install one package for the guest's
# kernel, saying why; failing only warns, with what then does not work
guest_extra()
{
	echo "deps: installing $1 ($2)"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$1" >/dev/null; } ||
		echo "deps: warning: cannot install $1: $3" >&2
}

# --runtime=kernel builds its modules for the guest's kernel: that release's
# kbuild; its debuginfo, for the DWARF of kernel.function & co
if [ -n "$GUEST_PACKAGES" ] && [ "$(id -u)" = 0 ]; then
	kver=$(ls -d /lib/modules/*-amd64 2>/dev/null | sed 's|.*/||' | sort -V | tail -1)
	if [ -n "$kver" ] && [ ! -e "/usr/src/linux-headers-$kver/Makefile" ]; then
		guest_extra "linux-headers-$kver" "kbuild for the guest's kernel" \
			"the kernel runtime's guest tests will fail"
	fi
	if [ -n "$kver" ] && [ -z "${PMSTAP_NO_DBG:-}" ] &&
		[ -n "$(missing_of "linux-image-$kver-dbg")" ]; then
		guest_extra "linux-image-$kver-dbg" \
			"the guest kernel's DWARF; PMSTAP_NO_DBG=1 leaves it out" \
			"tests that need the kernel's DWARF will not run"
	fi
	# stap -r reads the build tree's System.map (/boot's is Debian's stub): the -dbg package's
	map=/usr/lib/debug/boot/System.map-$kver
	if [ -n "$kver" ] && [ -s "$map" ] && [ -d "/lib/modules/$kver/build" ] &&
		[ ! -s "/lib/modules/$kver/build/System.map" ]; then
		ln -sf "$map" "/lib/modules/$kver/build/System.map"
	fi
fi

# tracepoints are read from tracefs
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "deps: warning: cannot mount tracefs on /sys/kernel/tracing" >&2
fi

if [ "${1:-}" = --pmcd ] && ! pmprobe pmcd.version >/dev/null 2>&1; then
	"$(dirname "$0")/detached.sh" /etc/init.d/pmcd start >/dev/null
	pmprobe pmcd.version >/dev/null || { echo "deps: pmcd did not start" >&2; exit 1; }
fi
exit 0
