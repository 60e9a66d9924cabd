/*
 * attach_rawtp.c - raw tracepoint programs, linked with their probe's
 * index as cookie.
 *
 * The translator makes a kernel.trace probe that reads nothing of its
 * record a raw_tp program where the kernel gives such programs their
 * link's cookie (Linux 6.10; translator/emit_bpf.c), so that handlers of
 * the same C are one program, which learns its probe from the cookie
 * (translator/emit_merge.c), and so that detaching is quick: a raw
 * tracepoint link goes in well under a millisecond, a perf event
 * tracepoint waits for RCU under the kernel's event_mutex (about 75 ms
 * each).  libbpf 1.1 (Debian 12's) cannot give the cookie, so the link is
 * made with bpf(BPF_RAW_TRACEPOINT_OPEN), whose attribute has a cookie
 * since 6.10; its descriptor is kept per
 * probe (stp_keep_link_fd()).  On older kernels raw_tp
 * programs are linked by libbpf, without one (runtime/user/attach.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "attach_rawtp.h"
#include "script_int.h"

/* union bpf_attr's raw_tracepoint as Linux 6.10 reads it (newer than the headers here) */
struct rtp_attr {
	uint64_t name;
	uint32_t prog_fd;
	uint32_t pad;
	uint64_t cookie;
};

/* A raw tracepoint link of PROG_FD on NAME with COOKIE: its descriptor, or -errno. */
static int rtp_open(int prog_fd, const char *name, uint64_t cookie)
{
	struct rtp_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.name = (uint64_t)(uintptr_t)name;
	a.prog_fd = (uint32_t)prog_fd;
	a.cookie = cookie;
	fd = (int)syscall(__NR_bpf, BPF_RAW_TRACEPOINT_OPEN, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/*
 * A kernel before 6.10 refuses the attribute's cookie (EINVAL: a field it
 * does not know is set) before it looks for the tracepoint; 6.10 and later
 * look and find no tracepoint of that name (ENOENT).
 */
bool stp_rtp_cookies(void)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static int known = -1;
	int prog, fd;

	if (known >= 0)
		return known;
	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", insns, 2, NULL);
	if (prog < 0)
		return false;
	fd = rtp_open(prog, "stp_no_such_tracepoint", 1);
	known = fd == -ENOENT;
	if (fd >= 0)
		close(fd);
	close(prog);
	return known;
}

int stp_rtp_attach(struct stp_script *s, int i, int prog_fd)
{
	int fd = rtp_open(prog_fd, s->meta->probes[i].tp_name, (uint64_t)i);

	return fd < 0 ? fd : stp_keep_link_fd(s, i, fd);
}
