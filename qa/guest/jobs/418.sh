# 418: the ipmib and linuxmib tapsets, and SystemTap's example
# network/tcpipstat.stp (unchanged: tcpmib.*, ipmib.*, linuxmib.*,
# tcp.sendmsg/recvmsg.return and its own filter functions), with
# --runtime=kernel during tcpmib_work 5 2 2 3 (see qa/guest/jobs/417.sh).
# 1. ipmib.InReceives and ipmib.OutRequests with the default filter
#    against the kernel's Ip: deltas (ip_rcv() and ip_output() see every
#    IPv4 packet of the loopback, as the kernel counts them).
# 2. tcpipstat.stp index=lport *.*.*.*:41701-*.*.*.*:*, the sockets whose
#    local port is the workload's listener's: its report's lines that the
#    workload fixes: 9 passive opens, 2 of them reset (EstabResets), 5
#    one-byte messages received, none sent, no failed attempt and none
#    established at the end, and that it counted packets to that port
#    (InReceives: its ipmib_filter_key() reads the addresses and ports of
#    each packet; the other lines count segments and packets, which
#    depend on when ACKs go).
[ -n "${GUEST_COMPILE_ONLY:-}" ] || ip link set lo up 2>/dev/null || ifconfig lo up
ex=$BUILD/systemtap-doc/usr/share/systemtap/examples/network
cat >"$tmp/ip.stp" <<'END'
probe ipmib.InReceives, ipmib.OutRequests {}
probe end
{
	printf("InReceives %d\nOutRequests %d\n", InReceives[1], OutRequests[1])
}
END
work="$QA_BIN/tcpmib_work 5 2 2 3"
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel "$tmp/ip.stp" -c "$work"
	[ -f "$ex/tcpipstat.stp" ] &&
		(cd "$ex" && $PMSTAP --runtime=kernel tcpipstat.stp -c "$work" \
			index=lport '*.*.*.*:41701-*.*.*.*:*')
	exit 0
fi

. "$REPO/qa/guest/snmp.rc"
echo "== ipmib, the default filter"
_snmp_run Ip "$tmp/ip.stp" "$work" |
	awk '$3 == "kernel" { print $1, ($2 == $4 && $2 > 0 ? "as the kernel'"'"'s, not 0" : $2 " kernel " $4); next }
	     { print }'

echo "== tcpipstat.stp index=lport *.*.*.*:41701-*.*.*.*:*"
if [ ! -f "$ex/tcpipstat.stp" ]; then
	echo "no $ex/tcpipstat.stp"
	exit 1
fi
(cd "$ex" && $PMSTAP --runtime=kernel tcpipstat.stp -c "$work" \
	index=lport '*.*.*.*:41701-*.*.*.*:*') >"$tmp/out"
echo "status $?"
awk '/^(Indexing|Processed|Local|Remote|[A-Za-z]+:$)|(Opens|Resets|Fails|CurrEstab|Messages [A-Za-z]+|Bytes [A-Za-z]+) =/
     $1 == "InReceives" { print "\tInReceives", ($3 > 0 ? "not 0" : $3) }' "$tmp/out"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
