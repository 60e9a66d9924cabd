#!/bin/bash
# qa/translator/manifest.sh BUILD - the cache's direct lookup (manifest.h).
#
# A run whose inputs are unchanged since its build skips passes 1-4
# (-v: "Pass 1-2: skipped"), prints the same objects and C, and says again
# what passes 1-2 said.  Any input changed makes it run them: a tapset or
# the script rewritten with its size and mtime kept, a file added to the
# tapset directory, an environment variable pmstap reads, a program found
# earlier in PATH, a missing program of an optional probe installed, a
# stripped program's debuginfo installed, the build gone from the cache.  No manifest is written for a script from
# stdin, a process path that is a pattern, or a file dated in the last
# second or the future; a damaged manifest is not used.  The totals "PASSED FAILED SKIPPED" go to
# BUILD/results/manifest.

. "$(dirname "$0")/suite.rc"
suite_begin manifest "$@"
mkdir -p "$tmp/tapset" "$tmp/bin1" "$tmp/bin2"

# settle FILE...: wait until the newest FILE changed over a second ago
# (pmstap writes no manifest while a file it read may still change)
settle() {
	local newest

	newest=$(stat -c %Z "$@" | sort -n | tail -1)
	while [ "$(date +%s)" -le $((newest + 1)) ]; do
		sleep 0.2
	done
}

# run ARGS...: pmstap -v -p4 -I tapset ARGS; stdout in out, stderr in err
run() {
	"$pmstap" -v -p4 -I "$tmp/tapset" "$@" >"$tmp/out" 2>"$tmp/err"
}

direct() {
	grep -q '^Pass 1-2: skipped: nothing the cached build was made from has changed' "$tmp/err"
}

# second_direct CMD...: run CMD twice; "yes" when the second run used the
# manifest the first wrote
second_direct() {
	"$@"
	"$@"
	direct && echo yes
}

# run_path ARGS...: run with $tmp/bin1 and $tmp/bin2 first in PATH
run_path() {
	PATH=$tmp/bin1:$tmp/bin2:$PATH run "$@"
}

compiled() {
	grep -q '^Pass 4: compiled C' "$tmp/err"
}

manifests() {
	find "$PMSTAP_CACHE" -maxdepth 1 -name 'manifest-*' 2>/dev/null | wc -l
}

# rewrite FILE TEXT: new text of the same size, its mtime kept
rewrite() {
	touch -r "$1" "$tmp/stamp"
	printf '%s\n' "$2" >"$1"
	touch -r "$tmp/stamp" "$1"
}

echo 'function m_t:long () { return 1 }' >"$tmp/tapset/m_t.stp"
echo 'probe begin { println(m_t() + $1) }' >"$tmp/m.stp"
echo 'probe begin { 1 + 2; println(m_t()) }' >"$tmp/w.stp"
echo 'probe process("uprobe_target").function("main") { println(1) }' >"$tmp/u.stp"
cp "$build/bin/uprobe_target" "$tmp/bin2/"
settle "$tmp/tapset/m_t.stp" "$tmp"/*.stp "$tmp/bin2/uprobe_target"

# 1. a build writes a manifest; the next run uses it: same objects
if run "$tmp/m.stp" 1 && compiled && [ "$(manifests)" -eq 1 ] && cp "$tmp/out" "$tmp/first" &&
	run "$tmp/m.stp" 1 && direct && grep -q '^Pass 4: using cached ' "$tmp/err" &&
	cmp -s "$tmp/out" "$tmp/first" && xargs ls <"$tmp/out" >/dev/null 2>&1; then
	ok
else
	bad "the second run of an unchanged script did not skip passes 1-4 with the same objects"
fi

# 2. -p3 from a direct lookup prints the C a run of every pass printed
"$pmstap" -v -p3 -I "$tmp/tapset" "$tmp/m.stp" 1 >"$tmp/p3.a" 2>"$tmp/err"
"$pmstap" -v -p3 -I "$tmp/tapset" "$tmp/m.stp" 1 >"$tmp/p3.b" 2>"$tmp/err"
if direct && [ -s "$tmp/p3.a" ] && cmp -s "$tmp/p3.a" "$tmp/p3.b"; then
	ok
else
	bad "-p3 from the manifest printed other C than -p3 from passes 1-2"
fi

# 3. a tapset rewritten with its size and mtime kept: passes 1-4 again
rewrite "$tmp/tapset/m_t.stp" 'function m_t:long () { return 2 }'
if run "$tmp/m.stp" 1 && ! direct && compiled; then
	ok
else
	bad "a tapset rewritten with its old size and mtime was not read again"
fi

# 4. a file added to the tapset directory: passes 1-2 again, then the
# build of the same key
settle "$tmp/tapset/m_t.stp"
was_direct=$(second_direct run "$tmp/m.stp" 1)
echo 'function m_u:long () { return 3 }' >"$tmp/tapset/m_u.stp"
if [ "$was_direct" = yes ] && run "$tmp/m.stp" 1 && ! direct && ! compiled &&
	grep -q '^Pass 3: using cached ' "$tmp/err"; then
	ok
else
	bad "a file added to the tapset directory did not make pmstap run passes 1-2 (direct before: $was_direct)"
fi

# 5. the script rewritten with its size and mtime kept
settle "$tmp/tapset/m_u.stp"
run "$tmp/m.stp" 1
rewrite "$tmp/m.stp" 'probe begin { println(m_t() - $1) }'
if run "$tmp/m.stp" 1 && ! direct && compiled; then
	ok
else
	bad "a script rewritten with its old size and mtime was not read again"
fi

# 6. a variable pmstap reads changes the lookup, another does not
settle "$tmp/m.stp"
run "$tmp/m.stp" 1
if MANIFEST_QA_OTHER=1 run "$tmp/m.stp" 1 && direct &&
	PMSTAP_NO_MERGE=1 run "$tmp/m.stp" 1 && ! direct; then
	ok
else
	bad "the environment: PMSTAP_NO_MERGE did not, or another variable did, change the lookup"
fi

# 7. what passes 1-2 said is said again
run "$tmp/w.stp"
grep -v '^Pass ' "$tmp/err" >"$tmp/said.a"
run "$tmp/w.stp"
grep -v '^Pass ' "$tmp/err" >"$tmp/said.b"
if direct && grep -q 'warning: statement has no effect' "$tmp/said.a" &&
	cmp -s "$tmp/said.a" "$tmp/said.b"; then
	ok
else
	bad "a direct run did not repeat pass 2's warning: $(head -1 "$tmp/said.b")"
fi

# 8. a program found in PATH: one of the same name earlier in PATH is used
was_direct=$(second_direct run_path "$tmp/u.stp")
cp "$tmp/bin2/uprobe_target" "$tmp/bin1/"
if [ "$was_direct" = yes ] && run_path "$tmp/u.stp" && ! direct && compiled; then
	ok
else
	bad "a program put earlier in PATH was not found (direct before: $was_direct)"
fi

# 9. no manifest: a script from stdin, a process path that is a pattern,
# a file dated in the future
echo "probe process(\"$tmp/bin2/uprobe_targe*\").function(\"main\") { println(1) }" >"$tmp/g.stp"
cp "$tmp/m.stp" "$tmp/f.stp"
touch -d '+1 hour' "$tmp/f.stp"
settle "$tmp/g.stp"
before=$(manifests)
"$pmstap" -p4 -I "$tmp/tapset" - 1 <"$tmp/m.stp" >/dev/null 2>&1
run "$tmp/g.stp"
rc_g=$?
run "$tmp/f.stp" 1
rc_f=$?
if [ $rc_g -eq 0 ] && [ $rc_f -eq 0 ] && [ "$(manifests)" -eq "$before" ]; then
	ok
else
	bad "stdin, a pattern or a file from the future left a manifest ($before -> $(manifests); rc $rc_g $rc_f)"
fi

# 10. an optional probe on a program that is missing: once it is there,
# passes 1-4 again, and the build probes it
echo "probe process(\"$tmp/bin1/late\").function(\"main\") ?, begin { println(1) }" >"$tmp/o.stp"
settle "$tmp/o.stp"
was_direct=$(second_direct run "$tmp/o.stp")
cp "$tmp/bin2/uprobe_target" "$tmp/bin1/late"
if [ "$was_direct" = yes ] && run "$tmp/o.stp" && ! direct && compiled &&
	grep -q '^Pass 2: analyzed script: 2 probes' "$tmp/err"; then
	ok
else
	bad "a program that appeared for an optional probe was not looked for again (direct before: $was_direct)"
fi

# 11. a stripped program: once the separate debuginfo its debuglink names
# is installed beside it, passes 1-4 again (the search's misses are kept)
mkdir -p "$tmp/split"
cp "$build/bin/uprobe_target.split" "$tmp/split/prog"
echo "probe process(\"$tmp/split/prog\").function(\"main\") { println(1) }" >"$tmp/d.stp"
settle "$tmp/d.stp" "$tmp/split/prog"
was_direct=$(second_direct run "$tmp/d.stp")
cp "$build/bin/uprobe_target.split.debug" "$tmp/split/"
if [ "$was_direct" = yes ] && run "$tmp/d.stp" && ! direct && compiled; then
	ok
else
	bad "debuginfo installed for a probed program was not looked for again (direct before: $was_direct)"
fi

# 12. the build gone from the cache: passes 1-4 again, and a new manifest
run "$tmp/m.stp" 1
find "$PMSTAP_CACHE" -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{64}' -exec rm -rf {} +
if run "$tmp/m.stp" 1 && ! direct && compiled && run "$tmp/m.stp" 1 && direct &&
	xargs ls <"$tmp/out" >/dev/null 2>&1; then
	ok
else
	bad "a manifest whose build is gone was used, or no new one was written"
fi

# 13. a damaged manifest (cut short, or not one) is not used, and the
# next build writes it whole again
for how in cut garbage; do
	for f in "$PMSTAP_CACHE"/manifest-*; do
		case $how in
		cut) head -c 100 "$f" >"$f.tmp" ;;
		garbage) printf 'pmstap manifest 1\nkey 0\nsaid 99\n' >"$f.tmp" ;;
		esac
		mv "$f.tmp" "$f"
	done
	if run "$tmp/m.stp" 1 && ! direct && grep -q '^Pass 3: using cached ' "$tmp/err" &&
		run "$tmp/m.stp" 1 && direct; then
		ok
	else
		bad "a $how manifest was used, or not written again"
	fi
done

finish
