# 405: --runtime=kernel: netfilter probes in a module, registered with
# nf_register_net_hook() on the initial network namespace as stap's
# module does.  The qa/164 workload's loopback datagrams to a port are
# counted at LOCAL_OUT, POST_ROUTING, PRE_ROUTING and LOCAL_IN (exactly
# the N sent, from $skb's headers and by the tapset's dport), $hooknum,
# $in and $out read as on the bpf runtime; with -g, $verdict = nf_drop at
# LOCAL_IN drops them while the control port gets its N.
port=48164
control=48165
n=25
cat >"$tmp/count.stp" <<'END'
global raw, alias, devs
function udp_dport:long(skb:long) {
	ip = @cast(skb, "struct sk_buff")->head + @cast(skb, "struct sk_buff")->network_header
	if (@cast(ip, "struct iphdr")->protocol != 17)
		return 0
	udp = ip + (kernel_char(ip) & 15) * 4
	return ntohs(@cast(udp, "struct udphdr")->dest)
}
function dev:string(d:long) {
	return d ? kernel_string(@cast(d, "struct net_device")->name) : "-"
}
probe netfilter.hook("NF_INET_LOCAL_OUT").pf("NFPROTO_IPV4"),
      netfilter.hook("NF_INET_POST_ROUTING").pf("NFPROTO_IPV4"),
      netfilter.pf("NFPROTO_IPV4").hook("NF_INET_PRE_ROUTING"),
      netfilter.hook("NF_INET_LOCAL_IN").pf("NFPROTO_IPV4").priority("-100") {
	if (udp_dport($skb) != $1)
		next
	raw[$hooknum]++
	devs[$hooknum, dev($in), dev($out), $verdict]++
}
probe netfilter.ipv4.local_in { if (dport == $1 && protocol == ipproto_udp) alias++ }
probe end {
	foreach (h+ in raw)
		printf("hook %d: %d datagrams\n", h, raw[h])
	foreach ([h+, i, o, v] in devs)
		printf("hook %d: $in %s $out %s $verdict %d (%d)\n", h, i, o, v, devs[h, i, o, v])
	printf("netfilter.ipv4.local_in: %d\n", alias)
}
END
cat >"$tmp/drop.stp" <<'END'
global dropped
probe netfilter.ipv4.local_in {
	if (dport == $1) {
		$verdict = nf_drop
		dropped++
	}
}
probe end { printf("dropped %d\n", dropped) }
END
work="$QA_BIN/nf_udp $port $control $n"
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP --runtime=kernel "$tmp/count.stp" -c "$work" "$port"
	$PMSTAP --runtime=kernel -g "$tmp/drop.stp" -c "$work" "$port"
	exit 0
fi
# the guest boots with its loopback device down
ip link set lo up || exit 1
filter() { sed -e "s/\\<$n\\>/N/g; s/^$port /PORT /; s/^$control /CONTROL /"; }
echo "== $n datagrams to the port, $n to the control port"
$PMSTAP --runtime=kernel "$tmp/count.stp" -c "$work" "$port" 2>&1 | filter
echo "exit status ${PIPESTATUS[0]}"
echo "== -g, \$verdict = nf_drop for the port at LOCAL_IN"
$PMSTAP --runtime=kernel -g "$tmp/drop.stp" -c "$work" "$port" 2>&1 | filter
echo "exit status ${PIPESTATUS[0]}"
echo "modules left: $(grep -c "^pmstap_kmod_" /proc/modules)"
