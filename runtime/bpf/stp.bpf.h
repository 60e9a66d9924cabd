/*
 * stp.bpf.h - the kernel side of the BPF runtime: what a generated
 * script.bpf.c includes (compiled with clang -target bpf -I<runtime dir>
 * -I<dir of vmlinux.h>).  The generated file is laid out as
 *
 *	#define MAXSTRINGLEN ...	stap's limits (-D overrides), and
 *	#define STP_NPROBES ...	derived probes (the size of stp_probe_stats)
 *	#define STP_NCPUS ...		possible CPUs (entries of stp_ctx)
 *	#define STP_REC_SIZE ...	the largest record a handler builds
 *	#define STP_ZERO_SIZE ...	the largest statistics value
 *	#define STP_RINGBUF_BYTES ...	size of the stp_events ring buffer
 *	#include "bpf/stp.bpf.h"	this file: no struct context yet
 *	the globals' structs and maps, the frames, STP_FRAMES_SIZE
 *	#include "bpf/stp_context.bpf.h"	struct context and what uses it
 *	#include "bpf/tapset.bpf.h"	the stp_tapset.h services
 *	functions, loop bodies, probe programs
 *
 * The per-CPU context (struct context) holds everything a handler needs
 * that does not fit BPF's 512-byte stack: the frames of the running
 * handler and the functions it calls (locals, string temporaries and key
 * structs, at offsets fixed at translation: kernel context has no
 * recursion), the record being built, and the error state.  A handler
 * that finds its CPU's context busy (an NMI or a probe inside a probe) is
 * skipped and counted in stp_counters.skipped.
 *
 * Soft errors: stp_raise() and stp_raise_msg() set c->error and the
 * message; generated code checks c->error after each call that may fail
 * and jumps to the innermost catch, or to the end of the handler, where
 * stp_leave() sends the STP_REC_ERROR record.  For runtime/bpf/tapset.bpf.h
 * (the stp_tapset.h services): raise errors with stp_raise_msg(c, msg),
 * ask for the end with stp_request_exit(c) / stp_request_abort(c), warn
 * with stp_send_warn(c, msg), reach the control map with stp_control_get().
 */
#ifndef STP_BPF_H
#define STP_BPF_H

#if defined(STP_DYNINST)
/* the same handlers, native, in the probed process (--runtime=dyninst) */
#include "../dyninst/stp_native.h"
#elif defined(STP_KMOD)
/* the same handlers, native, in a kernel module (--runtime=kernel) */
#include "../kmod/stp_kmod.h"
#else
/* vmlinux.h has a struct context of its own: keep the name for ours */
#define context stp_vmlinux_context
#include "vmlinux.h"
#undef context

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/* vmlinux.h has the fixed-width types and bool: skip the host's headers */
#ifndef __CLANG_STDINT_H
#define __CLANG_STDINT_H
#endif
#ifndef __STDBOOL_H
#define __STDBOOL_H
#endif

#endif

/*
 * A netfilter program's context (Linux 6.4's struct bpf_nf_ctx, spelled
 * here so that a vmlinux.h of an older kernel compiles; the module's
 * hook makes one), and the verdicts such a program may return.
 */
struct stp_nf_ctx {
	const struct nf_hook_state *state;
	struct sk_buff *skb;
};
#define STP_NF_DROP 0
#define STP_NF_ACCEPT 1

/* @entry's key of a return probe, K; merged programs read it from a table (emit_merge.c) */
#define STP_EKEY(k) ((int64_t)(k))

/*
 * Row M of such a table of N keys.  clang may read M again from
 * stp_member[] (constant) rather than keep the value the program checked:
 * the barrier makes it check here, where the verifier needs the bound.
 */
static __always_inline int64_t stp_mkey(const int64_t *keys, uint32_t m, uint32_t n)
{
	asm volatile("" : "+r"(m));
	return m < n ? keys[m] : 0;
}

#include "../stp_meta.h"
#include "../stp_stats.h"
#include "../stp_tapset.h"
#include "stp_control.bpf.h"

#ifndef MAXACTION
#define MAXACTION 1000
#endif
#ifndef MAXMAPENTRIES
#define MAXMAPENTRIES 2048
#endif
#ifndef STP_NPROBES
#define STP_NPROBES 1
#endif
#ifndef STP_NCPUS
#define STP_NCPUS 128
#endif
#ifndef STP_REC_SIZE
#define STP_REC_SIZE 64
#endif
/* an error or warning record carries a whole message: header, length, text */
#if STP_REC_SIZE < 8 + 2 + MAXSTRINGLEN
#undef STP_REC_SIZE
#define STP_REC_SIZE (8 + 2 + MAXSTRINGLEN)
#endif
#ifndef STP_ZERO_SIZE
#define STP_ZERO_SIZE 8
#endif
#ifndef STP_RINGBUF_BYTES
#define STP_RINGBUF_BYTES (1 << 20)
#endif

#define STP_MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * A slice of an array, as `in`, `delete` and foreach with '*' keys walk
 * it: WANT the key with the columns given (MASK: bit 0 the first);
 * FOUND for `in`.
 */
struct stp_slice {
	const void *want;
	uint32_t mask;
	int found;
};
/* a module's function frame, as stp_kmod_push() places it */
#define STP_KMOD_FRAME(type) ((sizeof(type) + 7) & ~(size_t)7)

char LICENSE[] SEC("license") = "GPL";

/*
 * Map declarations.  Generated code and these headers declare every map
 * through these three, so that a runtime that is not BPF (dyninst: maps
 * in a shared segment) can define them first, its own way.
 */
#ifndef STP_MAP
#define STP_MAP(name_, type_, key_, value_, entries_, flags_)		\
	struct {							\
		__uint(type, type_);					\
		__uint(max_entries, entries_);				\
		__uint(map_flags, flags_);				\
		__type(key, key_);					\
		__type(value, value_);					\
	} name_ SEC(".maps")
#define STP_QUEUE(name_, value_, entries_)				\
	struct {							\
		__uint(type, BPF_MAP_TYPE_QUEUE);			\
		__uint(max_entries, entries_);				\
		__type(value, value_);					\
	} name_ SEC(".maps")
#define STP_RINGBUF(name_, bytes_)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_RINGBUF);			\
		__uint(max_entries, bytes_);				\
	} name_ SEC(".maps")
#endif


STP_MAP(stp_control, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_control, 1, 0);

STP_MAP(stp_counters, BPF_MAP_TYPE_PERCPU_ARRAY, uint32_t, struct stp_counters, 1, 0);

STP_MAP(stp_probe_stats, BPF_MAP_TYPE_PERCPU_ARRAY, uint32_t, struct stp_probe_stats, STP_NPROBES, 0);

STP_RINGBUF(stp_events, STP_RINGBUF_BYTES);

/* A zeroed value to insert new statistics with. */
static const char stp_zero_value[STP_ZERO_SIZE];

/*
 * Zero key temporary K before its columns go in (emit_key): a string
 * column's bytes past its NUL are part of the hash key.  A key's columns
 * are char arrays, aligned to a byte, so clang writes __builtin_memset()'s
 * zeros one byte at a time: 512 stores, each one verified, for a string
 * key, in every handler that indexes an array by a string.  A copy from a
 * zeroed key is one helper call (which zeroes K should it ever fail).
 * Natively (module, dyninst) memset() is the cheaper.
 */
#if defined(STP_DYNINST) || defined(STP_KMOD)
#define stp_key_zero(k) __builtin_memset((k), 0, sizeof(*(k)))
#else
static const char stp_zero_key[512];	/* a key's most: emit_data.c, key_string_size() */

#define stp_key_zero(k)								\
	do {									\
		_Static_assert(sizeof(*(k)) <= sizeof(stp_zero_key), "a key over 512 bytes"); \
		bpf_probe_read_kernel((k), sizeof(*(k)), stp_zero_key);	\
	} while (0)
#endif

/* ---- counters and control ---------------------------------------------- */

static __always_inline struct stp_counters *stp_counters_get(void)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(&stp_counters, &zero);
}

#ifndef STP_DYNINST
#define stp_count(field)					\
	do {							\
		struct stp_counters *stp_cnt_ = stp_counters_get();	\
		if (stp_cnt_)					\
			stp_cnt_->field++;			\
	} while (0)
#else
/*
 * The dyninst runtime: a thread with no slot of its own (more threads than
 * slots) counts into one shared entry, atomically.
 */
STP_MAP(STP_COUNTERS_SHARED_MAP_C, BPF_MAP_TYPE_ARRAY, uint32_t, struct stp_counters, 1, 0);

#define stp_count(field)							\
	do {									\
		struct stp_counters *stp_cnt_ = stp_counters_get();		\
		uint32_t stp_zero_ = 0;						\
		if (stp_cnt_)							\
			stp_cnt_->field++;					\
		else if ((stp_cnt_ = bpf_map_lookup_elem(&STP_COUNTERS_SHARED_MAP_C,	\
							 &stp_zero_)))		\
			__atomic_fetch_add(&stp_cnt_->field, 1, __ATOMIC_RELAXED);	\
	} while (0)
#endif

static __always_inline struct stp_control *stp_control_get(void)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(&stp_control, &zero);
}

/* ---- strings ------------------------------------------------------------ */

/* What a kernel loop body (a bpf_loop callback) gets from its handler. */
struct stp_env {
	struct context *c;
	void *ctx;		/* the program's context: the tracepoint record, ... */
	char *ret;		/* a string function's result */
	void *frame;		/* a module's function: its pushed frame (stp_kmod_push) */
};

#define STP_KEY0 (&stp_key0)
static const uint32_t stp_key0;	/* the key of a scalar statistic */

/* Copy the string SRC (any kernel address) into DST, a MAXSTRINGLEN buffer; its length. */
static __always_inline int64_t stp_strcpy(char *dst, const char *src)
{
	long n = bpf_probe_read_kernel_str(dst, MAXSTRINGLEN, src);

	if (n <= 0) {
		dst[0] = '\0';
		return 0;
	}
	return n - 1;
}

/*
 * At most N - 1 bytes of SRC into DST (N bytes), NUL-terminated (a key
 * column).  A column narrower than a string (what the key's other columns
 * leave of its 512 bytes) that cuts SRC counts it.
 */
static __always_inline void stp_strlcpy(char *dst, const char *src, int n)
{
	long r = bpf_probe_read_kernel_str(dst, n, src);

	if (r <= 0)
		dst[0] = '\0';
	else if (n < MAXSTRINGLEN && r == n && src[n - 1] != '\0')
		stp_count(keys_cut);
}

/* DST = A . B, truncated to MAXSTRINGLEN - 1 bytes; DST is a frame buffer. */
static __always_inline void stp_concat(char *dst, const char *a, const char *b)
{
	int64_t n = stp_strcpy(dst, a);

	if (n < 0 || n > MAXSTRINGLEN - 2)
		return;
	bpf_probe_read_kernel_str(dst + n, MAXSTRINGLEN - n, b);
}

/* bpf_snprintf() at OFF of DST (a frame buffer); the new length of DST. */
static __always_inline int64_t stp_snprintf_at(char *dst, int64_t off, const char *fmt,
					       uint64_t *data, uint32_t len)
{
	long n;

	if (off < 0 || off > MAXSTRINGLEN - 2)
		return off;
	n = bpf_snprintf(dst + off, MAXSTRINGLEN - off, fmt, data, len);
	if (n <= 1)
		return off;
	off += n - 1;
	return off > MAXSTRINGLEN - 1 ? MAXSTRINGLEN - 1 : off;
}

/*
 * V in octal into DST (a frame buffer), as "%o" writes it (two's
 * complement for a negative V: 22 digits at most), with a leading "0"
 * when ALT, as stap's "%#o" writes it (0 too: "00"); bpf_snprintf has no
 * octal.
 */
static __always_inline void stp_octal(char *dst, int64_t v, int alt)
{
	uint64_t u = (uint64_t)v, x = u | 1;
	uint64_t n, skip, off = alt ? 1 : 0;
	char digits[22];

	/*
	 * Without a branch on V: a digit count the verifier knew exactly on
	 * each of 22 paths made it verify everything after once per path
	 * (27,000 instructions for syscall.mq_open's argstr instead of 4,000).
	 * The bit length of V|1 (smeared, then counted), then digits.
	 */
	x |= x >> 1;
	x |= x >> 2;
	x |= x >> 4;
	x |= x >> 8;
	x |= x >> 16;
	x |= x >> 32;
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	x = (x * 0x0101010101010101ULL) >> 56;		/* 1 ... 64 */
	n = ((x & 127) + 2) * 43 >> 7;			/* (bits + 2) / 3: 1 ... 22 */
	for (int i = 0; i < 22; i++)
		digits[i] = '0' + ((u >> (3 * (21 - i))) & 7);
	dst[0] = '0';
	if (n < 1 || n > 22)
		n = 22;
	skip = 22 - n;		/* the leading zeros */
	asm volatile("" : "+r"(skip));	/* added to the stack pointer, never n subtracted */
	bpf_probe_read_kernel(dst + off, n, digits + skip);
	dst[(off + n) & 31] = '\0';
}

/* MAXSTRINGLEN spaces, to pad '*' widths with. */
static const char stp_spaces[MAXSTRINGLEN] SEC(".rodata") = { [0 ... MAXSTRINGLEN - 1] = ' ' };

/* Spaces at OFF of DST (a frame buffer) until WIDTH bytes follow START; the new length. */
static __always_inline int64_t stp_pad(char *dst, int64_t start, int64_t off, int64_t width)
{
	int64_t n = start + width - off;

	if (off < 0 || off > MAXSTRINGLEN - 1 || n <= 0)
		return off;
	if (n > MAXSTRINGLEN - 1 - off)
		n = MAXSTRINGLEN - 1 - off;
	if (n <= 0 || n > MAXSTRINGLEN)
		return off;
	bpf_probe_read_kernel(dst + off, n, stp_spaces);
	off += n;
	if (off >= 0 && off < MAXSTRINGLEN)
		dst[off] = '\0';
	return off;
}

struct stp_cmp {
	const char *a, *b;
	int64_t result;
};

static long stp_strcmp_step(uint64_t i, void *data)
{
	struct stp_cmp *s = data;
	unsigned char x, y;

	if (i >= MAXSTRINGLEN)
		return 1;
	x = s->a[i];
	y = s->b[i];
	if (x != y) {
		s->result = x < y ? -1 : 1;
		return 1;
	}
	return x == 0;
}

/* strcmp of two MAXSTRINGLEN buffers in map memory: <0, 0, >0. */
static __always_inline int64_t stp_strcmp(const char *a, const char *b)
{
	struct stp_cmp s = { a, b, 0 };

	bpf_loop(MAXSTRINGLEN, stp_strcmp_step, &s, 0);
	return s.result;
}

/* strcmp of a buffer and a string literal (read-only data). */
#define stp_strcmp_lit(a, lit) bpf_strncmp((a), MAXSTRINGLEN, (lit))

/* ---- arithmetic and statistics: ../stp_arith.h, ../stp_stats.h ---- */

/* *P += D, atomically; the new value (read after the add without BPF_FETCH). */
#if defined(__BPF_CPU_VERSION__) && __BPF_CPU_VERSION__ >= 3
#define stp_atomic_add(p, d) __sync_add_and_fetch((p), (d))
#else
static __always_inline int64_t stp_atomic_add_(int64_t *p, int64_t d)
{
	__sync_fetch_and_add(p, d);
	return *p;
}
#define stp_atomic_add(p, d) stp_atomic_add_((p), (d))
#endif

/* ---- tracepoint records ----------------------------------------------------- */

/*
 * A field of the tracepoint record a program reads directly: the verifier
 * wants the offset in the load instruction itself, which clang does not
 * always keep (it may add it to the pointer first), so the load is
 * written in assembly.  OFF is a literal number.
 */
#ifdef STP_KMOD	/* the record the module built (a syscall's): plain memory */
#define stp_ctx_load(ctx, off, bits) ((uint64_t)*(const uint##bits##_t *)((const char *)(ctx) + (off)))
#else
#define stp_ctx_load(ctx, off, bits)						\
	({									\
		uint64_t stp_v_;						\
		asm volatile("%0 = *(u" #bits " *)(%1 + " #off ")"		\
			     : "=r"(stp_v_) : "r"(ctx));			\
		stp_v_;								\
	})
#endif

/* A field of a tracepoint record the program cannot read directly. */
static __always_inline int64_t stp_tp_read(const void *rec, int off, int size, int is_signed)
{
	union {
		int8_t s8; uint8_t u8; int16_t s16; uint16_t u16;
		int32_t s32; uint32_t u32; int64_t s64;
	} v = { .s64 = 0 };

	if (size > 8)
		size = 8;
	bpf_probe_read_kernel(&v, size & 15, (const char *)rec + off);
	switch (size) {
	case 1: return is_signed ? v.s8 : v.u8;
	case 2: return is_signed ? v.s16 : v.u16;
	case 4: return is_signed ? v.s32 : v.u32;
	default: return v.s64;
	}
}

/* The integer of SIZE bytes at kernel address ADDR (0 when unreadable). */
#define stp_kread_int(addr, size, is_signed) stp_tp_read((addr), 0, (size), (is_signed))

/* The string at kernel address ADDR into BUF ("" when unreadable). */
static __always_inline char *stp_kread_str(const void *addr, char *buf)
{
	if (bpf_probe_read_kernel_str(buf, MAXSTRINGLEN, addr) <= 0)
		buf[0] = '\0';
	return buf;
}

/* A char[N] field (N bytes at most) into BUF. */
static __always_inline char *stp_tp_str(const void *rec, int off, int n, char *buf)
{
	if (n > MAXSTRINGLEN - 1)
		n = MAXSTRINGLEN - 1;
	if (n < 0)
		n = 0;
	if (bpf_probe_read_kernel_str(buf, n + 1, (const char *)rec + off) <= 0)
		buf[0] = '\0';
	return buf;
}

/* A __data_loc char[] field: a u32 of (length << 16 | offset) at OFF. */
static __always_inline char *stp_tp_dstr(const void *rec, int off, char *buf)
{
	uint32_t loc = 0;

	bpf_probe_read_kernel(&loc, 4, (const char *)rec + off);
	if (bpf_probe_read_kernel_str(buf, MAXSTRINGLEN, (const char *)rec + (loc & 0xffff)) <= 0)
		buf[0] = '\0';
	return buf;
}

#endif
