/*
 * kread.c - kernel memory for user-context probes.
 *
 * begin, end and timer probes run in the runner, which cannot read kernel
 * memory.  A BPF program can, and a BPF_PROG_TYPE_SYSCALL program runs on
 * demand (BPF_PROG_TEST_RUN) with a context the caller passes in and gets
 * back.  So the first kernel read of a user-context probe loads one small
 * program, written here as instructions (no compiler at run time, nothing
 * in the script's own object):
 *
 *	value = stp_kread_buf[0]			(an array map, one element)
 *	ret = str ? bpf_probe_read_kernel_str(value, len, addr)
 *		  : bpf_probe_read_kernel(value, len, addr)
 *
 * with addr, len and str from the context and ret written back into it;
 * then the bytes come from the map.  Two system calls a read, which user
 * context can afford.  A kernel that cannot load it (no syscall programs,
 * or no probe_read_kernel in them) is said once, and every kernel read
 * faults as before.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "kread.h"

struct kread_ctx {
	uint64_t addr;
	uint32_t len;
	int32_t ret;
	uint32_t str;
	uint32_t pad;
};

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
						 .off = (o), .imm = (i) })
#define MOV_REG(d, s)	 INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(d, i)	 INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD_IMM(d, i)	 INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) INSN(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) INSN(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST_IMM(sz, d, o, i) INSN(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JGT_IMM(d, i, o) INSN(BPF_JMP | BPF_JGT | BPF_K, d, 0, o, i)
#define JA(o)		 INSN(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f)		 INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT()		 INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP_FD(d, fd) INSN(BPF_LD | BPF_DW | BPF_IMM, d, BPF_PSEUDO_MAP_FD, 0, fd), \
			 INSN(0, 0, 0, 0, 0)

static int prog_fd = -1, map_fd = -1;
static int load_error;		/* the errno loading failed with; 0: not tried or loaded */

static int load(void)
{
	struct bpf_insn insns[] = {
		MOV_REG(BPF_REG_6, BPF_REG_1),			/* r6 = ctx */
		ST_IMM(BPF_W, BPF_REG_10, -4, 0),		/* key 0 */
		MOV_REG(BPF_REG_2, BPF_REG_10),
		ADD_IMM(BPF_REG_2, -4),
		LD_MAP_FD(BPF_REG_1, map_fd),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_IMM(BPF_REG_0, 0, 13),			/* no value: out */
		MOV_REG(BPF_REG_1, BPF_REG_0),			/* dst */
		LDX(BPF_W, BPF_REG_2, BPF_REG_6, offsetof(struct kread_ctx, len)),
		JGT_IMM(BPF_REG_2, STP_KREAD_MAX, 10),		/* too long: out */
		JEQ_IMM(BPF_REG_2, 0, 9),			/* nothing to read: out */
		LDX(BPF_DW, BPF_REG_3, BPF_REG_6, offsetof(struct kread_ctx, addr)),
		LDX(BPF_W, BPF_REG_4, BPF_REG_6, offsetof(struct kread_ctx, str)),
		JEQ_IMM(BPF_REG_4, 0, 2),
		CALL(BPF_FUNC_probe_read_kernel_str),
		JA(1),
		CALL(BPF_FUNC_probe_read_kernel),
		STX(BPF_W, BPF_REG_6, BPF_REG_0, offsetof(struct kread_ctx, ret)),
		MOV_IMM(BPF_REG_0, 0),
		EXIT(),
		MOV_IMM(BPF_REG_0, 0),				/* out */
		EXIT(),
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .prog_flags = BPF_F_SLEEPABLE);

	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "stp_kread_buf", sizeof(uint32_t),
				STP_KREAD_MAX, 1, NULL);
	if (map_fd < 0)
		return -errno;
	insns[4].imm = map_fd;
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_SYSCALL, "stp_kread", "GPL", insns,
				sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog_fd < 0) {
		int err = -errno;

		close(map_fd);
		map_fd = -1;
		return err;
	}
	return 0;
}

const char *stp_kread_unavailable(void)
{
	static char why[160];

	if (!load_error)
		return NULL;
	snprintf(why, sizeof(why), "this kernel cannot read kernel memory for user-context "
		 "probes (loading a BPF syscall program: %s)", strerror(load_error));
	return why;
}

int stp_kread(void *dst, uint64_t addr, size_t len, bool str)
{
	struct kread_ctx ctx = { .addr = addr, .len = (uint32_t)len, .ret = -EFAULT, .str = str };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	static char buf[STP_KREAD_MAX];
	uint32_t key = 0;
	int err;

	if (len == 0 || len > STP_KREAD_MAX)
		return -EINVAL;
	if (load_error)
		return -ENOSYS;
	if (prog_fd < 0 && (err = load()) < 0) {
		load_error = -err;
		return -ENOSYS;
	}
	if (bpf_prog_test_run_opts(prog_fd, &run) < 0)
		return -errno;
	if (ctx.ret < 0)
		return ctx.ret;
	if (bpf_map_lookup_elem(map_fd, &key, buf) < 0)
		return -errno;
	memcpy(dst, buf, (size_t)ctx.ret > len || !str ? len : (size_t)ctx.ret);
	return str ? ctx.ret : (int)len;
}
