# 376: the socket tapset (socket.send, .receive, .create, .close and the
# function-specific aliases, and the name tables) on the BPF runtime:
# socket_work's UDP and TCP messages on the loopback, counted per alias,
# size and socket names (qa/guest/socket_tapset.stp), sorted.
[ -n "${GUEST_COMPILE_ONLY:-}" ] || ip link set lo up 2>/dev/null || ifconfig lo up
$PMSTAP "$REPO/qa/guest/socket_tapset.stp" -c "$QA_BIN/socket_work" >"$tmp/out"
echo "status $?"
sort "$tmp/out"
