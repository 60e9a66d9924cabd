#!/bin/sh
# qa/bpf/run.sh BUILD [-v]... [SEED] - the kernel-context tapset services, for real.
#
# Compiles qa/bpf/tapset_verify.bpf.c (every service of
# runtime/bpf/tapset.bpf.h, on runtime/bpf/stp.bpf.h) as pass 4 compiles a
# script, against this kernel's vmlinux.h; builds the loader with
# runtime/user/tapset_user.c; and runs it: the verifier must accept every
# service, and each must give what the system and its user-context twin
# say (see tapset_verify.c).  Once per MAXSTRINGLEN in
# $TAPSET_VERIFY_LENGTHS (default "512 100 2048").  SEED seeds the random
# string cases.  Needs root and BTF; without them the suite is skipped,
# saying why.  The totals "PASSED FAILED SKIPPED" go to
# BUILD/results/tapset_verify.

[ $# -ge 1 ] || { echo "usage: $0 BUILD [-v]... [SEED]" >&2; exit 2; }
build=$1
shift
flags= seed=
for a in "$@"; do
	case $a in -v) flags="$flags -v" ;; *) seed=$a ;; esac
done
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
cd "$(dirname "$0")/../.." || exit 2

out=$build/qa-bpf
results=$build/results
mkdir -p "$out" "$results"

skip() {
	echo "tapset_verify: skipped: $*"
	echo "0 0 1" >"$results/tapset_verify"
	exit 0
}

fail() {
	echo "0 1 0" >"$results/tapset_verify"
	echo "tapset_verify: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || skip "not root: loading BPF programs needs it"
[ -r /sys/kernel/btf/vmlinux ] || skip "no /sys/kernel/btf/vmlinux"
for tool in clang bpftool cc; do
	command -v $tool >/dev/null 2>&1 || skip "no $tool"
done

vmlinux=$out/vmlinux-$(uname -r).h
if [ ! -s "$vmlinux" ]; then
	{ bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$vmlinux.tmp" &&
		mv "$vmlinux.tmp" "$vmlinux"; } || fail "bpftool could not write vmlinux.h"
fi
ln -sf "$(basename "$vmlinux")" "$out/vmlinux.h"

arch=$(uname -m)
case $arch in x86_64) arch=x86 ;; aarch64) arch=arm64 ;; esac

total_p=0 total_f=0 status=0
for len in ${TAPSET_VERIFY_LENGTHS:-512 100 2048}; do
	obj=$out/tapset_verify-$len.bpf.o
	loader=$out/tapset_verify-$len
	log=$out/log-$len
	clang -O2 -g -target bpf -mcpu=v3 -fwrapv -D__TARGET_ARCH_$arch -DMAXSTRINGLEN=$len \
		-Wall -I"$out" -c qa/bpf/tapset_verify.bpf.c -o "$obj" ||
		fail "clang -target bpf failed (MAXSTRINGLEN $len)"
	cc -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -DMAXSTRINGLEN=$len \
		-o "$loader" qa/bpf/tapset_verify.c runtime/user/tapset_user.c runtime/user/kread.c -lbpf -lz ||
		fail "building the loader failed (MAXSTRINGLEN $len)"
	"$loader" $flags "$obj" $seed >"$log" 2>&1 || status=1
	grep -v '^[0-9]* [0-9]* [0-9]*$' "$log" | sed "s/^/[$len] /"
	last=$(tail -n 1 "$log")
	echo "$last" | grep -q '^[0-9]* [0-9]* [0-9]*$' ||
		fail "the loader died (MAXSTRINGLEN $len)"
	set -- $last
	total_p=$((total_p + $1)) total_f=$((total_f + $2))
done
echo "$total_p $total_f 0" >"$results/tapset_verify"
echo "tapset_verify: $total_p passed, $total_f failed"
exit $status
