# 399: --runtime=kernel: matched() in a kernel probe, which BPF refuses:
# after '=~' matched, the module runs the expression's NFA for its
# subexpressions (leftmost-longest, groups in alternatives, repetitions,
# anchors); the output is user context's, whose regexec() is glibc's.
. "$REPO/qa/guest/kctx.rc"
_kctx matched '' "$(sed -n '/^	s = /,/^	\tprintln("no match")/p' "$REPO/qa/guest/peer/kctx_matched.stp")"
