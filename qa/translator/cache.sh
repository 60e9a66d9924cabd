#!/bin/bash
# qa/translator/cache.sh BUILD - the cache of compiled scripts, end to end.
#
# With PMSTAP_CACHE in a fresh directory: a second -p4 of a script hits
# the cache (-v says "Pass 3: using cached DIR") and prints the same
# objects; a changed tapset, -D or script argument misses; -p3 prints the
# same C from a miss and from a hit and leaves no build behind; two
# pmstaps compiling one script at once both succeed with one entry.  The
# kernel headers' PCH is made once and used by the next build, gives the
# same code as a build without it, and is made anew when missing or
# damaged, never used so; builds started at once make it once.  No build
# compiles the tapset services: script.so calls the runner's.  The
# totals "PASSED FAILED SKIPPED" go to BUILD/results/cache.

. "$(dirname "$0")/suite.rc"
suite_begin cache "$@"
mkdir -p "$tmp/tapset"

echo 'function cache_t:long () { return 1 }' >"$tmp/tapset/cache_t.stp"
echo 'probe begin { println(cache_t() + $1) }' >"$tmp/t.stp"

# p4 [ARGS...]: pmstap -v -p4 t.stp 1 ARGS; stdout in out, stderr in err
p4() {
	"$pmstap" -v -p4 -I "$tmp/tapset" "$@" "$tmp/t.stp" 1 >"$tmp/out" 2>"$tmp/err"
}

hit() {
	grep -q '^Pass 3: using cached ' "$tmp/err"
}

# 1. a miss compiles and prints two objects that exist
if p4 && ! hit && grep -q '^Pass 4: compiled C into "script.bpf.o"' "$tmp/err" &&
	[ "$(wc -l <"$tmp/out")" -eq 2 ] && xargs ls <"$tmp/out" >/dev/null 2>&1; then
	ok
else
	bad "the first -p4 did not compile two objects"
fi
cp "$tmp/out" "$tmp/first"

# 2. the second -p4 hits and prints the same paths
if p4 && hit && cmp -s "$tmp/out" "$tmp/first" && ! grep -q '^Pass 4: compiled' "$tmp/err"; then
	ok
else
	bad "the second -p4 was not a cache hit with the same objects"
fi

# 3. -D changes the code: a miss
if p4 -D MAXACTION=123 && ! hit && ! cmp -s "$tmp/out" "$tmp/first"; then
	ok
else
	bad "-D MAXACTION=123 did not miss"
fi

# 4. a changed tapset the script uses: a miss; changed back: a hit again
echo 'function cache_t:long () { return 2 }' >"$tmp/tapset/cache_t.stp"
if p4 && ! hit; then ok; else bad "a changed tapset did not miss"; fi
echo 'function cache_t:long () { return 1 }' >"$tmp/tapset/cache_t.stp"
if p4 && hit && cmp -s "$tmp/out" "$tmp/first"; then ok; else bad "the tapset changed back did not hit"; fi

# 5. another script argument ($1 is compiled in): a miss
if "$pmstap" -v -p4 -I "$tmp/tapset" "$tmp/t.stp" 2 >"$tmp/out" 2>"$tmp/err" && ! hit; then
	ok
else
	bad "another script argument did not miss"
fi

# 6. -p3: the same C from a miss and from a hit, and no build left behind
"$pmstap" -p3 -I "$tmp/tapset" "$tmp/t.stp" 3 >"$tmp/miss.c" 2>"$tmp/err"
rc1=$?
"$pmstap" -p4 -I "$tmp/tapset" "$tmp/t.stp" 3 >/dev/null 2>>"$tmp/err"
"$pmstap" -v -p3 -I "$tmp/tapset" "$tmp/t.stp" 3 >"$tmp/hit.c" 2>"$tmp/err2"
if [ $rc1 -eq 0 ] && grep -q '^Pass 3: using cached ' "$tmp/err2" && cmp -s "$tmp/miss.c" "$tmp/hit.c" &&
	grep -q '^/\* ---- script.bpf.c ---- \*/$' "$tmp/miss.c" &&
	grep -q '^/\* ---- script.c ---- \*/$' "$tmp/miss.c" &&
	! ls -d "$PMSTAP_CACHE"/tmp-* >/dev/null 2>&1; then
	ok
else
	bad "-p3 from a miss and from a hit differ, or a build was left behind"
fi

# 7. two at once, empty cache: both succeed, one entry, nothing left over
rm -rf "$PMSTAP_CACHE"
"$pmstap" -p4 -I "$tmp/tapset" "$tmp/t.stp" 4 >"$tmp/a" 2>"$tmp/err" &
a=$!
"$pmstap" -p4 -I "$tmp/tapset" "$tmp/t.stp" 4 >"$tmp/b" 2>>"$tmp/err" &
b=$!
wait $a
ra=$?
wait $b
rb=$?
entries=$(ls "$PMSTAP_CACHE" | grep -c '^[0-9a-f]\{64\}$')
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && cmp -s "$tmp/a" "$tmp/b" && [ "$entries" -eq 1 ] &&
	! ls -d "$PMSTAP_CACHE"/tmp-* "$PMSTAP_CACHE"/.vmlinux-* >/dev/null 2>&1; then
	ok
else
	bad "two pmstaps at once: status $ra $rb, $entries entries"
fi

# 8. the shared piece (translator/compile_int.h): the kernel headers'
# PCH is made once and used by the next build; script.so has no tapset
# services of its own (libstaprt's, in the runner)
echo 'global n; probe begin { n = strlen(sprint(cache_t())); println(n); exit() }' >"$tmp/u.stp"
# p4v2 SCRIPT ARG: pmstap -vv -p4; stderr in err
p4v2() {
	"$pmstap" -vv -p4 -I "$tmp/tapset" "$tmp/$1" "$2" >"$tmp/out" 2>"$tmp/err"
}
pch=$(ls "$PMSTAP_CACHE"/bpf-*.pch 2>/dev/null | head -1)
if [ -n "$pch" ] && p4v2 t.stp 5 &&
	grep -q '^Pass 4: using the precompiled kernel headers ' "$tmp/err" &&
	grep -q '^Pass 4: clang compiled script.bpf.c with the PCH' "$tmp/err" &&
	grep -q '^Pass 4: cc compiled script.c in' "$tmp/err" &&
	so=$(sed -n 2p "$tmp/out") && [ -f "$so" ] &&
	! nm -D --defined-only "$so" | grep -q ' stp_tapset_user_init$'; then
	ok
else
	bad "a second script did not use the PCH ($pch), or its script.so has tapset services of its own"
fi

# 9. the same objects with and without them: identical code
PMSTAP_CACHE=$tmp/plain PMSTAP_NO_PCH=1 \
	"$pmstap" -p4 -I "$tmp/tapset" "$tmp/u.stp" >"$tmp/plain.out" 2>"$tmp/err"
p4v2 u.stp 0 >/dev/null 2>&1
if command -v llvm-objdump >/dev/null 2>&1; then
	a=$(sed -n 1p "$tmp/plain.out")
	b=$(sed -n 1p "$tmp/out")
	if [ -n "$a" ] && [ -n "$b" ] &&
		cmp -s <(llvm-objdump -d -r "$a" | tail -n +3) <(llvm-objdump -d -r "$b" | tail -n +3); then
		ok
	else
		bad "script.bpf.o differs with the PCH ($b) and without ($a)"
	fi
else
	skipped=$((skipped + 1))
fi
run_u() {
	PMSTAP_CACHE=$1 "$pmstap" -I "$tmp/tapset" "$tmp/u.stp" 2>&1
}
if [ "$(run_u "$tmp/plain")" = 1 ] && [ "$(run_u "$PMSTAP_CACHE")" = 1 ]; then
	ok
else
	bad "u.stp printed $(run_u "$tmp/plain") without the PCH, $(run_u "$PMSTAP_CACHE") with it"
fi

# 10. a PCH that is missing, empty or damaged is made anew, never used
# (the one t.stp uses: scripts with other options have their own)
p4v2 t.stp 10 >/dev/null 2>&1
pch=$(sed -n 's/^Pass 4: using the precompiled kernel headers //p' "$tmp/err" | head -1)
n=10
for how in missing empty damaged; do
	n=$((n + 2))
	case $how in
	missing) rm -f "$pch" ;;
	empty) : >"$pch" ;;
	damaged) printf 'CPCH this is not a precompiled header\n' >"$pch" ;;
	esac
	if p4v2 t.stp $n && [ "$(wc -l <"$tmp/out")" -eq 2 ] &&
		grep -q '^Pass 4: precompiling the kernel headers' "$tmp/err" && p4v2 t.stp $((n + 1)) &&
		grep -q '^Pass 4: clang compiled script.bpf.c with the PCH' "$tmp/err"; then
		ok
	else
		bad "a $how PCH was not made anew"
	fi
done

# 11. builds started at once (pmdastap starts its scripts together) into
# an empty cache make vmlinux.h and the PCH once, and all of them
# compile with it (the one that makes it too)
together=$tmp/together
mkdir -p "$together"
for i in 1 2 3 4 5 6; do
	PMSTAP_CACHE=$together/cache "$pmstap" -vv -p4 -I "$tmp/tapset" "$tmp/t.stp" $((100 + i)) \
		>"$together/$i.out" 2>"$together/$i.err" &
done
wait
made=$(cat "$together"/*.err | grep -c '^Pass 4: precompiling the kernel headers')
used=$(cat "$together"/*.err | grep -c '^Pass 4: clang compiled script.bpf.c with the PCH')
npch=$(find "$together/cache" -maxdepth 1 -name 'bpf-*.pch' | wc -l)
if [ "$made" -eq 1 ] && [ "$used" -eq 6 ] && [ "$npch" -eq 1 ] &&
	[ "$(cat "$together"/*.out | wc -l)" -eq 12 ]; then
	ok
else
	bad "6 builds at once: $made made the PCH, $used used it; $npch PCHs"
fi

finish
