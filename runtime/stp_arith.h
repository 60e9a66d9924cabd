/*
 * stp_arith.h - the script language's integer arithmetic, one copy for
 * both runtimes.
 *
 * runtime/bpf/stp.bpf.h and runtime/user/stp_user.h (through stats.h)
 * both include this file, so `/`, `%`, the shifts and the statistics'
 * sums give the same results in kernel and in user context, and the unit
 * tests exercise the code that the BPF verifier loads.  stap's semantics:
 * 64-bit two's complement that wraps (done on uint64_t, where C calls
 * signed overflow undefined), division truncated toward zero (BPF has no
 * signed division: it is done on magnitudes), shift counts taken modulo
 * 64.  A divisor is never 0 here: the generated code raises stap's
 * "division by 0" before it divides.
 */
#ifndef STP_ARITH_H
#define STP_ARITH_H

#ifdef __bpf__
#define STP_ARITH_FN static __always_inline
#else
#include <stdint.h>
#define STP_ARITH_FN static inline
#endif

STP_ARITH_FN uint64_t stp_abs64(int64_t v)
{
	return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

/* A / B truncated toward 0; B is not 0; INT64_MIN / -1 wraps to INT64_MIN. */
STP_ARITH_FN int64_t stp_div(int64_t a, int64_t b)
{
	uint64_t q = stp_abs64(a) / stp_abs64(b);

	return (int64_t)((a < 0) != (b < 0) ? -q : q);
}

/* A % B with the sign of A; B is not 0. */
STP_ARITH_FN int64_t stp_mod(int64_t a, int64_t b)
{
	uint64_t r = stp_abs64(a) % stp_abs64(b);

	return (int64_t)(a < 0 ? -r : r);
}

/* Wrapping +, -, * */
STP_ARITH_FN int64_t stp_add64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

STP_ARITH_FN int64_t stp_sub64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

STP_ARITH_FN int64_t stp_mul64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

#define stp_shl(a, b) ((int64_t)((uint64_t)(a) << ((b) & 63)))
#define stp_shr(a, b) ((int64_t)(a) >> ((b) & 63))
#define stp_ushr(a, b) ((int64_t)((uint64_t)(a) >> ((b) & 63)))

/* floor(log2(v)) for v > 0, without a count-leading-zeros instruction (BPF has none). */
STP_ARITH_FN int stp_log2(uint64_t v)
{
	int r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) r += 1;
	return r;
}

#endif
