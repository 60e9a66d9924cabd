#!/bin/bash
# bench/pmda/store-soak.sh [N] [BYTES] - N pmstores (default 4000) of a
# BYTES-long script text (default 900, about the average of
# register-soak.sh's bad scripts) into stap.control.register, each from a
# client context of its own as pmstore makes, through a real pmcd; and
# pmdastap's RSS after a warm-up of N/4 stores and at the end, and the
# bytes a store that makes.  libpcp 6.0.3 kept every store's value pinned
# in a PDU buffer, the value's size and about 100 bytes more, until
# stap_store_release in pmda/pmda.c; qa/118 is the small size, under
# dbpmda and valgrind (issue 16, item 4).
#
# The system's pmcd is not touched: the run has a pmcd of its own (a copy
# of pmcd named stapsoak-pmcd, on a Unix socket in its temporary folder
# and 127.0.0.1 port BENCH_PORT, default 44399; PCP_VAR_DIR there too, so
# that it starts its agent itself rather than through the system's
# pmdaroot) with one agent, the build's pmdastap as stapsoak-pmda (the QA
# and the soak scripts, which look for pmcd and pmdastap by name, see
# neither).  Registration is disabled, so every store is refused before
# anything is compiled: no BPF is loaded.  Needs root (pmcd -U root);
# PMDASTAP=... measures another build.
#
#	make && bench/pmda/store-soak.sh 4000 900
n=${1:-4000}
bytes=${2:-900}
port=${BENCH_PORT:-44399}
seq=soak-store
cd "$(dirname "$0")/../../qa" || exit 2
. ./common.rc
. ./pmda/common.pmda

_need_root
[ -x "$PMDASTAP" ] || _fail "$PMDASTAP is not built: run make"
mkdir -p "$qa_auto" "$tmp/state" "$tmp/var/pmns"
chmod 755 "$qa_auto"
_pmda_write_conf
cp "$PCP_BINADM_DIR/pmcd" "$tmp/stapsoak-pmcd"
cp "$PMDASTAP" "$tmp/stapsoak-pmda"
printf 'root {\n\tstap\t412:*:*\n}\n' >"$tmp/var/pmns/root"
printf 'stap\t412\tpipe\tbinary\t%s -R -d 412 -c %s -l %s\n' \
	"$tmp/stapsoak-pmda" "$qa_conf" "$tmp/stap.log" >"$tmp/pmcd.conf"

export PMCD_SOCKET=$tmp/pmcd.socket
_background env PCP_VAR_DIR="$tmp/var" PCP_TMP_DIR="$tmp" PCP_RUN_DIR="$tmp" \
	PMNS_DEFAULT="$tmp/var/pmns/root" "$tmp/stapsoak-pmcd" -f -U root \
	-i 127.0.0.1 -p "$port" -s "$PMCD_SOCKET" -c "$tmp/pmcd.conf" -l "$tmp/pmcd.log"
pmcd=$bg_pid
_wait_for "the private pmcd" 30 pmprobe -h local: stap.info.version >/dev/null 2>&1 ||
	_fail "the private pmcd did not start: see $tmp/pmcd.log"
pid=$(pgrep -P "$pmcd" -x stapsoak-pmda)
[ -n "$pid" ] || _fail "the private pmcd has no pmdastap: see $tmp/pmcd.log"

pad=$(head -c "$bytes" /dev/zero | tr '\0' '#')
refused=0
stores()
{
	local i

	for i in $(seq "$1" "$2"); do
		pmstore -h local: stap.control.register "# name: soak$i"$'\n'"${pad:${#i}+13}" \
			>/dev/null 2>&1 || refused=$((refused + 1))
	done
}

warm=$((n / 4))
fds0=$(_fds "$pid")
stores 1 "$warm"
rss0=$(_rss "$pid")
t0=$(date +%s%N)
stores $((warm + 1)) "$n"
t1=$(date +%s%N)
rss1=$(_rss "$pid")
echo "stores: $n of $bytes bytes (pmstore, a context each); refused: $refused;" \
	"$(((n - warm) * 1000000000 / (t1 - t0 + 1))) a second after the warm-up"
echo "refused for: $(grep -c 'store refused: registration is disabled$' "$tmp/stap.log")" \
	"stores, registration being disabled (pmdastap's log)"
[ "$(pgrep -P "$pmcd" -x stapsoak-pmda)" = "$pid" ] && echo "pmdastap: the same process throughout" ||
	echo "pmdastap: RESTARTED"
echo "pmdastap open descriptors: $fds0 before, $(_fds "$pid") after"
echo "pmdastap RSS: $rss0 KB after $warm stores, $rss1 KB after $n:" \
	"$(((rss1 - rss0) * 1024 / (n - warm))) bytes a store"
kill -TERM "$pmcd"
wait "$pmcd"
status=0
exit
