# 404: netfilter probes on a kernel without BPF netfilter programs
# (Debian's 6.1; they came in 6.4): the bpf runtime refuses the probe when
# the script starts, naming what the kernel lacks, and a script whose
# netfilter probe is optional ('?') runs without it.
cat >"$tmp/nf.stp" <<'END'
global n
probe netfilter.ipv4.local_in { n++ }
probe begin { println("begun"); exit() }
END
cat >"$tmp/opt.stp" <<'END'
global n
probe netfilter.hook("NF_INET_LOCAL_IN").pf("NFPROTO_IPV4") ? { n++ }
probe begin { println("begun"); exit() }
END
if [ -n "${GUEST_COMPILE_ONLY:-}" ]; then
	$PMSTAP -p4 "$tmp/nf.stp" >/dev/null
	$PMSTAP -p4 "$tmp/opt.stp" >/dev/null
	exit 0
fi

echo "== a netfilter probe"
$PMSTAP "$tmp/nf.stp" 2>&1 | sed "s|$tmp/||"
echo "exit status ${PIPESTATUS[0]}"
echo "== an optional one, -v"
$PMSTAP -v "$tmp/opt.stp" 2>&1 | grep -e begun -e netfilter | sed "s|$tmp/||"
echo "exit status ${PIPESTATUS[0]}"
