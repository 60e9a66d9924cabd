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
 *  - stacks (bpf_get_task_stack): the calling thread's user stack, walked
 *    by frame pointers from those registers as the kernel walks a
 *    uprobe's; there is no kernel stack.
 */
#ifndef STP_NATIVE_H
#define STP_NATIVE_H

#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/types.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "patch.h"	/* stp_patch_return_address() */
#include "stp_dyn.h"

#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __noinline __attribute__((noinline))
#define SEC(name)
#define STP_SERVICE static __always_inline __attribute__((unused))

/* ---- maps ---- */

#define STP_DMAP_REF(name_, type_, ksize_, vsize_, entries_, flags_)			\
	struct stp_dmap_ref name_ = { { #name_, (type_), (ksize_), (vsize_),		\
					(entries_), (flags_) }, NULL, NULL, 0, 0 };	\
	static struct stp_dmap_ref *name_##_ref_					\
		__attribute__((section("stp_dmaps"), used)) = &name_

/* The maps this file declared, for the loader (section stp_dmaps). */
extern struct stp_dmap_ref *__start_stp_dmaps[], *__stop_stp_dmaps[];

__attribute__((visibility("default"))) struct stp_dmap_ref **stp_dyn_maps(int *n)
{
	*n = (int)(__stop_stp_dmaps - __start_stp_dmaps);
	return __start_stp_dmaps;
}

#define STP_SLOT() stp_dyn_slot()
#include "../stp_bpf_native.h"
#include "../stp_notes.h"

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

/* A string of the probed program: its end may lie before an unmapped page. */
static inline long bpf_probe_read_user_str(void *dst, uint32_t n, const void *src)
{
	return stp__read_str(dst, n, src, bpf_probe_read_user);
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

/* bpf_get_prandom_u32(): xorshift64, per thread, seeded by the clock and the thread. */
static inline uint32_t bpf_get_prandom_u32(void)
{
	static __thread uint64_t state;

	if (!state)
		state = (stp__clock(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)&state) | 1;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return (uint32_t)(state >> 32);
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

/* ---- stacks ---- */

/* bpf_get_task_stack()'s flags and build-id records, as <linux/bpf.h> has them. */
#define BPF_F_USER_STACK	(1ULL << 8)
#define BPF_F_USER_BUILD_ID	(1ULL << 11)
#define BPF_BUILD_ID_SIZE	20

enum bpf_stack_build_id_status {
	BPF_STACK_BUILD_ID_EMPTY = 0,
	BPF_STACK_BUILD_ID_VALID = 1,	/* build_id and offset */
	BPF_STACK_BUILD_ID_IP = 2,	/* no file, or no build id: ip */
};

struct bpf_stack_build_id {
	int32_t status;
	unsigned char build_id[BPF_BUILD_ID_SIZE];
	union {
		uint64_t offset;
		uint64_t ip;
	};
};

/* The task whose stack bpf_get_task_stack() takes: always the calling thread. */
struct task_struct;

static inline struct task_struct *bpf_get_current_task_btf(void)
{
	return NULL;
}

#define STP__USTACK_MAX 127	/* frames at most: the kernel's perf_event_max_stack */

/* The vDSO is no file: the kernel gives its frames as addresses. */
static inline bool stp__is_vdso(const struct dl_phdr_info *info)
{
	return (uintptr_t)info->dlpi_phdr - getauxval(AT_SYSINFO_EHDR) < 4096;
}

/* The loaded segment of INFO's file that holds code address IP, or NULL. */
static inline const ElfW(Phdr) *stp__load_of(const struct dl_phdr_info *info, uint64_t ip)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && ip >= lo && ip - lo < ph->p_memsz)
			return ph;
	}
	return NULL;
}

/* IP's offset in the file of INFO whose segment PH holds it. */
static inline uint64_t stp__file_off(const struct dl_phdr_info *info, const ElfW(Phdr) *ph,
				     uint64_t ip)
{
	return ip - info->dlpi_addr - ph->p_vaddr + ph->p_offset;
}

/* ---- stacks: the instruction a probe displaced ---- */

/* The first byte of probed instructions, read from their files once (STP__SITES kept). */
#define STP__SITES 64

struct stp__site_insn {
	uint64_t ip;		/* 0: free, 1: being written; set last */
	uint8_t byte;
};

static struct stp__site_insn stp__site_insns[STP__SITES];

/* The Ith place where IP's entry may be (open addressing). */
static inline struct stp__site_insn *stp__site_at(uint64_t ip, uint32_t i)
{
	return &stp__site_insns[((ip * 0x9e3779b97f4a7c15ULL >> 58) + i) % STP__SITES];
}

static inline bool stp__site_cached(uint64_t ip, uint8_t *byte)
{
	for (uint32_t i = 0; i < STP__SITES; i++) {
		struct stp__site_insn *e = stp__site_at(ip, i);
		uint64_t at = __atomic_load_n(&e->ip, __ATOMIC_ACQUIRE);

		if (at == ip)
			*byte = e->byte;
		if (at == ip || at == 0)
			return at == ip;
	}
	return false;
}

/* Keep IP's BYTE where a free place is; not at all when there is none. */
static inline void stp__site_keep(uint64_t ip, uint8_t byte)
{
	for (uint32_t i = 0; i < STP__SITES; i++) {
		struct stp__site_insn *e = stp__site_at(ip, i);
		uint64_t free_ = 0;

		if (__atomic_compare_exchange_n(&e->ip, &free_, 1, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			e->byte = byte;
			__atomic_store_n(&e->ip, ip, __ATOMIC_RELEASE);
			return;
		}
	}
}

struct stp__insn_find {
	uint64_t ip;
	uint8_t byte;
	bool found;
};

/* dl_iterate_phdr(): the file that maps F->ip, read there (the code itself is patched). */
static inline int stp__insn_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct stp__insn_find *f = arg;
	const ElfW(Phdr) *ph = stp__load_of(info, f->ip);
	int fd;

	(void)size;
	if (!ph)
		return 0;
	fd = open(info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		f->found = pread(fd, &f->byte, 1, (off_t)stp__file_off(info, ph, f->ip)) == 1;
		close(fd);
	}
	return 1;
}

/* The first byte of the instruction probed at IP, as its file has it; false: unknown. */
static inline bool stp__site_byte(uint64_t ip, uint8_t *byte)
{
	struct stp__insn_find f = { ip, 0, false };

	if (stp__site_cached(ip, byte))
		return true;
	dl_iterate_phdr(stp__insn_object, &f);
	if (f.found)
		stp__site_keep(ip, f.byte);
	*byte = f.byte;
	return f.found;
}

/*
 * Whether the hit is at an instruction that starts a function, push %rbp,
 * where the frame pointer is still the caller's: the kernel (6.12, and
 * some stable kernels before) then takes a uprobe's caller from the stack
 * pointer first.  (It takes endbr64 for a start too when built with
 * X86_KERNEL_IBT, which Debian 12's kernel and the test machine's are
 * not.)  Not in a .return hit, a uretprobe's, where IP is the return
 * address.
 */
static inline bool stp__at_func_start(const struct pt_regs *r)
{
	uint8_t b;

	return r->ip == stp_dyn_func_ip() && stp__site_byte(r->ip, &b) && b == 0x55;
}

/* ---- stacks: the walk ---- */

/*
 * The calling thread's user stack into IPS (MAX at most), as the kernel
 * walks a uprobe's (perf_callchain_user(), arch/x86/events/core.c): the
 * probed instruction; at a function's start, the return address at the
 * stack pointer; then from the frame pointer, the return address of each
 * frame ({next frame, return address} at it) until a read fails.  A
 * return that a .return probe hooked is given as the real one, as the
 * kernel does for a pending uretprobe's.
 */
static inline uint32_t stp__ustack(const struct pt_regs *r, uint64_t *ips, uint32_t max)
{
	uint64_t fp = r->bp, frame[2];
	uint32_t n = 0;

	if (!max)
		return 0;
	ips[n++] = r->ip;
	if (n < max && stp__at_func_start(r) && bpf_probe_read_user(frame, 8, (void *)r->sp) == 0)
		ips[n++] = stp_patch_return_address(frame[0], r->sp);
	while (n < max && bpf_probe_read_user(frame, sizeof(frame), (void *)fp) == 0) {
		ips[n++] = stp_patch_return_address(frame[1], fp + 8);
		fp = frame[0];
	}
	return n;
}

/* ---- stacks: build ids ---- */

/* INFO's GNU build id, from its notes in memory, into ID (zero-padded); false: none. */
static inline bool stp__build_id(const struct dl_phdr_info *info, unsigned char *id)
{
	unsigned char notes[STP_NOTES_MAX];

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t len = ph->p_filesz < sizeof(notes) ? ph->p_filesz : sizeof(notes);

		if (ph->p_type == PT_NOTE &&
		    bpf_probe_read_user(notes, len, (void *)(info->dlpi_addr + ph->p_vaddr)) == 0 &&
		    stp_notes_build_id(notes, len, id, BPF_BUILD_ID_SIZE))
			return true;
	}
	return false;
}

struct stp__ids {
	struct bpf_stack_build_id *ids;
	uint32_t n;
};

/* dl_iterate_phdr(): the frames in INFO's file get its build id and their offsets in it. */
static inline int stp__ids_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct stp__ids *w = arg;
	unsigned char id[BPF_BUILD_ID_SIZE];
	int known = 0;		/* 1: ID is read; -1: the file has none */

	(void)size;
	if (stp__is_vdso(info))
		return 0;
	for (uint32_t i = 0; i < w->n; i++) {
		struct bpf_stack_build_id *b = &w->ids[i];
		const ElfW(Phdr) *ph = b->status == BPF_STACK_BUILD_ID_IP ?
					       stp__load_of(info, b->ip) : NULL;

		if (ph && !known)
			known = stp__build_id(info, id) ? 1 : -1;
		if (!ph || known < 0)
			continue;
		b->offset = stp__file_off(info, ph, b->ip);
		memcpy(b->build_id, id, sizeof(id));
		b->status = BPF_STACK_BUILD_ID_VALID;
	}
	return 0;
}

/* The N frames of IPS as the kernel's build-id records: a file's build id and offset, else the address. */
static inline void stp__build_ids(struct bpf_stack_build_id *ids, const uint64_t *ips, uint32_t n)
{
	struct stp__ids w = { ids, n };

	for (uint32_t i = 0; i < n; i++) {
		memset(&ids[i], 0, sizeof(ids[i]));
		ids[i].status = BPF_STACK_BUILD_ID_IP;
		ids[i].ip = ips[i];
	}
	dl_iterate_phdr(stp__ids_object, &w);
}

/*
 * The calling thread's user stack (BPF_F_USER_STACK; TASK is that thread)
 * into BUF: addresses or, with BPF_F_USER_BUILD_ID, build-id records, as
 * many as fit; the rest of BUF zeroed.  Returns the bytes written.  A
 * process has no kernel stack to give (-EOPNOTSUPP), and a hit that is no
 * probed instruction has no registers to walk from (-EFAULT).
 */
static inline long bpf_get_task_stack(struct task_struct *task, void *buf, uint32_t size,
				      uint64_t flags)
{
	uint32_t elem = flags & BPF_F_USER_BUILD_ID ? sizeof(struct bpf_stack_build_id) : 8;
	uint32_t max = size / elem, n;
	struct pt_regs *r = stp_dyn_regs();
	uint64_t ips[STP__USTACK_MAX];

	(void)task;
	if (!(flags & BPF_F_USER_STACK))
		return -EOPNOTSUPP;
	if (!r)
		return -EFAULT;
	n = stp__ustack(r, ips, max < STP__USTACK_MAX ? max : STP__USTACK_MAX);
	if (flags & BPF_F_USER_BUILD_ID)
		stp__build_ids(buf, ips, n);
	else
		memcpy(buf, ips, (size_t)n * 8);
	memset((char *)buf + (size_t)n * elem, 0, size - n * elem);
	return (long)(n * elem);
}

#endif
