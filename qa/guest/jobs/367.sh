# 367: the networking tapset: tcp.sendmsg, tcp.recvmsg.return, udp.sendmsg on the loopback
[ -n "${GUEST_COMPILE_ONLY:-}" ] || ip link set lo up 2>/dev/null || ifconfig lo up
cat >"$tmp/t.stp" <<'END'
global tsend, trecv, usend
probe tcp.sendmsg { if (pid() == target()) tsend[size]++ }
probe tcp.recvmsg.return { if (pid() == target() && size > 0) trecv += size }
probe udp.sendmsg { if (pid() == target()) usend[size]++ }
probe end {
	foreach (s+ in tsend) printf("tcp.sendmsg size=%d calls=%d\n", s, tsend[s])
	printf("tcp.recvmsg.return bytes=%d\n", trecv)
	foreach (s+ in usend) printf("udp.sendmsg size=%d calls=%d\n", s, usend[s])
}
END
cat >"$tmp/net.py" <<'END'
import socket
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
c = socket.create_connection(l.getsockname()); a, _ = l.accept()
for n in (11, 22, 33):
    c.sendall(b"x" * n)
got = 0
while got < 66:
    got += len(a.recv(100))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"y" * 44, ("127.0.0.1", 9))
END
$PMSTAP "$tmp/t.stp" -c "python3 $tmp/net.py"
