/*
 * stp_native.h - the BPF helpers that kernel-context code calls, in a
 * probed process (--runtime=dyninst).
 *
 * The dyninst runtime runs the handlers the kernel-context emitter
 * writes (script.dyn.c: the script.bpf.c of BPF, with STP_DYNINST
 * defined), compiled natively into script.dyn.so, which libstapdyn.so
 * loads into the probed process.  runtime/bpf/stp.bpf.h includes this
 * file in place of vmlinux.h and libbpf's headers, so the handlers and
 * the runtime headers they include keep one copy of every rule:
 *
 *  - maps: STP_MAP/STP_QUEUE/STP_RINGBUF declare a struct stp_dmap_ref
 *    (a name, the map's shape, and the map in the shared segment, filled
 *    by the loader) and list it in section stp_dmaps; stp_dyn_maps()
 *    gives the list.  The helpers act on the segment (dmap.h).
 *  - "per CPU" is per thread slot: bpf_get_smp_processor_id() is the
 *    calling thread's slot (dmap.h), claimed at its first hit; a thread
 *    that finds no free slot gets STP_NCPUS, so its hits are skipped.
 *  - reads of the probed program's memory (bpf_probe_read_user*) cannot
 *    fault: they go through process_vm_readv() on the process itself and
 *    fail with -EFAULT where the memory is not readable; "kernel" reads
 *    are the handlers' own copies between their buffers (plain copies).
 *  - struct pt_regs has the kernel's x86-64 layout: the trampolines fill
 *    it (patch.h's struct stp_regs).
 */
#ifndef STP_NATIVE_H
#define STP_NATIVE_H

#define _GNU_SOURCE
#include <errno.h>
#include <linux/types.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "stp_dyn.h"

#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define SEC(name)
#define STP_SERVICE static __always_inline __attribute__((unused))

/* ---- maps ---- */

#define STP_DMAP_REF(name_, type_, ksize_, vsize_, entries_, flags_)			\
	struct stp_dmap_ref name_ = { { #name_, (type_), (ksize_), (vsize_),		\
					(entries_), (flags_) }, NULL, NULL, 0, 0 };	\
	static struct stp_dmap_ref *name_##_ref_					\
		__attribute__((section("stp_dmaps"), used)) = &name_

#define STP_MAP(name_, type_, key_, value_, entries_, flags_)				\
	STP_DMAP_REF(name_, type_, sizeof(key_), sizeof(value_), entries_, flags_)
#define STP_QUEUE(name_, value_, entries_)						\
	STP_DMAP_REF(name_, BPF_MAP_TYPE_QUEUE, 0, sizeof(value_), entries_, 0)
#define STP_RINGBUF(name_, bytes_)							\
	STP_DMAP_REF(name_, BPF_MAP_TYPE_RINGBUF, 0, 0, bytes_, 0)

#define stp__dmap(map) (((struct stp_dmap_ref *)(map))->m)

/* The maps this file declared, for the loader (section stp_dmaps). */
extern struct stp_dmap_ref *__start_stp_dmaps[], *__stop_stp_dmaps[];

__attribute__((visibility("default"))) struct stp_dmap_ref **stp_dyn_maps(int *n)
{
	*n = (int)(__stop_stp_dmaps - __start_stp_dmaps);
	return __start_stp_dmaps;
}

/* An array's element is addressed here; other maps ask the segment. */
static inline void *bpf_map_lookup_elem(void *map, const void *key)
{
	struct stp_dmap_ref *r = map;
	uint32_t i, slot = 0;

	if (!r->base)
		return stp_dmap__lookup(r->m, key);
	memcpy(&i, key, sizeof(i));
	if (i >= r->def.max_entries)
		return NULL;
	if (r->def.type == BPF_MAP_TYPE_PERCPU_ARRAY && (slot = stp_dyn_slot()) == UINT32_MAX)
		return NULL;
	return r->base + i * r->vsize + slot * r->stride;
}

static inline void *bpf_map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu)
{
	return stp_dmap__lookup_slot(stp__dmap(map), key, (int)cpu);
}

static inline long bpf_map_update_elem(void *map, const void *key, const void *val,
				       uint64_t flags)
{
	return stp_dmap__update(stp__dmap(map), key, val, flags);
}

static inline long bpf_map_delete_elem(void *map, const void *key)
{
	return stp_dmap__delete(stp__dmap(map), key);
}

static inline long bpf_map_push_elem(void *map, const void *val, uint64_t flags)
{
	return stp_dmap__push(stp__dmap(map), val, flags);
}

static inline long bpf_map_pop_elem(void *map, void *val)
{
	return stp_dmap__pop(stp__dmap(map), val);
}

/* bpf_for_each_map_elem(): its callback gets the map as the handlers name it. */
struct stp__each {
	void *map;
	void *ctx;
	long (*cb)(void *map, const void *key, void *value, void *ctx);
};

static inline long stp__each_step(struct stp_dmap *m, void *key, void *value, void *ctx)
{
	struct stp__each *e = ctx;

	(void)m;
	return e->cb(e->map, key, value, e->ctx);
}

#define bpf_for_each_map_elem(map, cb, ctx, flags)						\
	({											\
		struct stp__each stp_each_ = { (map), (ctx), (void *)(cb) };			\
		(void)(flags);									\
		stp_dmap__for_each(stp__dmap(map), stp__each_step, &stp_each_);			\
	})

static inline long bpf_ringbuf_output(void *map, void *data, uint64_t size, uint64_t flags)
{
	(void)flags;
	return stp_dmap__output(stp__dmap(map), data, (uint32_t)size);
}

/* ---- loops ---- */

static inline long bpf_loop(uint32_t n, long (*cb)(uint64_t i, void *ctx), void *ctx,
			    uint64_t flags)
{
	uint32_t i;

	(void)flags;
	for (i = 0; i < n; i++)
		if (cb(i, ctx))
			return i + 1;
	return n;
}

/* ---- memory ---- */

/* The handlers' own copies: between their buffers, strings and literals. */
static inline long bpf_probe_read_kernel(void *dst, uint32_t n, const void *src)
{
	memcpy(dst, src, n);
	return 0;
}

static inline long bpf_probe_read_kernel_str(void *dst, uint32_t n, const void *src)
{
	size_t len;

	if (n == 0)
		return -EINVAL;
	len = strnlen(src, n - 1);
	memmove(dst, src, len);
	((char *)dst)[len] = '\0';
	return (long)len + 1;
}

/* N bytes of the probed program at SRC, or -EFAULT: never a fault of the program. */
static inline long bpf_probe_read_user(void *dst, uint32_t n, const void *src)
{
	struct iovec local = { dst, n }, remote = { (void *)src, n };

	if (n == 0)
		return 0;
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n)
		return 0;
	memset(dst, 0, n);
	return -EFAULT;
}

/* A string of the probed program: read page by page, so that its end may lie before an unmapped page. */
static inline long bpf_probe_read_user_str(void *dst, uint32_t n, const void *src)
{
	uint32_t done = 0;

	if (!n)
		return -EINVAL;
	while (done < n - 1) {
		uintptr_t at = (uintptr_t)src + done;
		uint32_t chunk = 4096 - (uint32_t)(at & 4095);
		char *end;

		if (chunk > n - 1 - done)
			chunk = n - 1 - done;
		if (bpf_probe_read_user((char *)dst + done, chunk, (const void *)at) != 0) {
			if (done == 0)
				return -EFAULT;
			break;
		}
		end = memchr((char *)dst + done, '\0', chunk);
		if (end)
			return end - (char *)dst + 1;
		done += chunk;
	}
	((char *)dst)[done] = '\0';
	return (long)done + 1;
}

static inline long bpf_probe_write_user(void *dst, const void *src, uint32_t n)
{
	struct iovec local = { (void *)src, n }, remote = { dst, n };

	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static inline long bpf_strncmp(const char *s1, uint32_t n, const char *s2)
{
	return strncmp(s1, s2, n);
}

/* ---- the thread ---- */

/* the calling thread's slot; STP_NCPUS (no context there) when none is free */
static inline uint32_t bpf_get_smp_processor_id(void)
{
	return stp_dyn_slot();
}

static inline uint64_t bpf_get_current_pid_tgid(void)
{
	return stp_dyn_pid_tgid();
}

/* the probed address (a .return probe's: its function's), as for a uprobe */
static inline uint64_t bpf_get_func_ip(void *ctx)
{
	(void)ctx;
	return stp_dyn_func_ip();
}

static inline uint64_t bpf_get_current_uid_gid(void)
{
	return (uint64_t)getgid() << 32 | getuid();
}

static inline long bpf_get_current_comm(void *out, uint32_t n)
{
	stp_dyn_comm(out, n);
	return 0;
}

static inline uint64_t stp__clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t bpf_ktime_get_ns(void)
{
	return stp__clock(CLOCK_MONOTONIC);
}

static inline uint64_t bpf_ktime_get_tai_ns(void)
{
	return stp__clock(CLOCK_TAI);
}

/* The tapset services' scratch words (the stp_tapset_vars map of BPF): per thread. */
struct stp__vars_mem {
	uint64_t words[16];
};

static __thread struct stp__vars_mem stp__vars_buf;

static inline void *stp__vars(void)
{
	memset(&stp__vars_buf, 0, sizeof(stp__vars_buf));
	return &stp__vars_buf;
}

/* ---- formatting ---- */

#define bpf_snprintf(out, size, fmt, data, len)						\
	stp_dyn_snprintf((out), (size), (fmt), (const uint64_t *)(data), (len))
#define BPF_SNPRINTF(out, size, fmt, args...)						\
	({										\
		unsigned long long stp_args_[] = { args };				\
		stp_dyn_snprintf((out), (size), (fmt), (const uint64_t *)stp_args_,	\
				 sizeof(stp_args_));					\
	})

#endif
