/*
 * symbolize_bpf.c - the sizes of BPF programs' functions, for kernel
 * stacks (symbolize.c).
 *
 * /proc/kallsyms lists a JIT-compiled BPF function ("bpf_prog_TAG_NAME
 * [bpf]") with its address only, and the next entry may be far away
 * (programs sit in packs with free room between them).  The kernel gives
 * each function's length with the program's info (jited_ksyms,
 * jited_func_lens); the table of them is made on first use and again
 * when an address is not in it (a program loaded since), at most once a
 * second.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "symbolize.h"

#define MAX_FUNCS 256		/* functions (a program and its subprograms) per program */

struct bpf_func {
	uint64_t addr;
	uint32_t len;
};

static struct bpf_func *funcs;
static size_t nfuncs, capfuncs;
static time_t built;

static void add_func(uint64_t addr, uint32_t len)
{
	struct bpf_func *v;

	v = stp_grow(funcs, nfuncs, &capfuncs, sizeof(*v), 256);
	if (!v)
		return;
	funcs = v;
	funcs[nfuncs].addr = addr;
	funcs[nfuncs++].len = len;
}

/* The functions of program FD: their start addresses and lengths. */
static void add_prog(int fd)
{
	uint64_t addrs[MAX_FUNCS];
	uint32_t lens[MAX_FUNCS], n, size;
	struct bpf_prog_info info;

	memset(&info, 0, sizeof(info));
	size = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &size) != 0 || !info.nr_jited_ksyms)
		return;
	n = info.nr_jited_ksyms < MAX_FUNCS ? info.nr_jited_ksyms : MAX_FUNCS;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = n;
	info.jited_ksyms = (uint64_t)(uintptr_t)addrs;
	info.nr_jited_func_lens = n;
	info.jited_func_lens = (uint64_t)(uintptr_t)lens;
	size = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &size) != 0)
		return;
	for (uint32_t i = 0; i < n && i < info.nr_jited_func_lens; i++)
		add_func(addrs[i], lens[i]);
}

static void build(void)
{
	uint32_t id = 0;
	int fd;

	nfuncs = 0;
	built = time(NULL);
	while (bpf_prog_get_next_id(id, &id) == 0) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		add_prog(fd);
		close(fd);
	}
}

static uint32_t find(uint64_t addr)
{
	for (size_t i = 0; i < nfuncs; i++)
		if (funcs[i].addr == addr)
			return funcs[i].len;
	return 0;
}

uint64_t stp_sym_bpf_len(uint64_t addr)
{
	uint32_t len = find(addr);

	if (!len && time(NULL) != built) {
		build();
		len = find(addr);
	}
	return len;
}
