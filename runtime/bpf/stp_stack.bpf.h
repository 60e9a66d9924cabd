/*
 * stp_stack.bpf.h - backtraces in kernel context: the stp_tapset.h
 * services stp_backtrace(), stp_print_stack(), stp_sym_sprint() and
 * stp_uaddr().
 *
 * printf("%s", symname(a)) and its kin send the addresses to be named in
 * user space (stp_rec_syms()); other uses of a name in kernel context
 * get a kernel address's name from the kernel, and raise an error that
 * says why for the rest (stp_sym_sprint()).
 *
 * Addresses come from bpf_get_task_stack() on the current task (it needs
 * no program context, so that tapset functions can call it): its kernel
 * stack, or with BPF_F_USER_STACK the user one, walked from the registers
 * the task entered the kernel with (frame pointers).  They go to user
 * space in STP_REC_STACK records, built in a per-CPU buffer of their own
 * (records of the print path are sized for printf), and user space names
 * them (runtime/user/symbolize.c).
 *
 * A process may be gone by the time its addresses are named (a short
 * command, `pmstap -c ls`).  So each capture of a user stack also takes
 * it with BPF_F_USER_BUILD_ID: for every frame the kernel gives the
 * mapped file's build id and the frame's offset in that file, and the
 * mapping's place in the process (address minus file offset) goes with
 * the build id into stp_umaps, keyed by process.  The runner reads it
 * when it cannot ask the process itself (runtime/user/symbolize_umaps.c).
 *
 * Included by tapset.bpf.h, and for the dyninst runtime by
 * runtime/dyninst/tapset_task.dyn.h: the same services in the probed
 * process, where bpf_get_task_stack() walks the user stack itself
 * (runtime/dyninst/stp_native.h) and STP_KSTACK_REFUSED(c) refuses the
 * kernel stack a process does not have.
 */
#ifndef STP_STACK_BPF_H
#define STP_STACK_BPF_H

#define STP_STACK_MAX 64	/* frames captured */

/* Whether a kernel stack is refused (an error raised in C): never in the kernel. */
#ifndef STP_KSTACK_REFUSED
#define STP_KSTACK_REFUSED(c) false
#endif

struct stp_stack_buf {
	uint64_t addrs[STP_STACK_MAX];
	struct bpf_stack_build_id ids[STP_STACK_MAX];
	char rec[sizeof(struct stp_rec_hdr) + 8 + 8 * STP_STACK_MAX + 2 + MAXSTRINGLEN];
};

STP_MAP(stp_stack_bufs, BPF_MAP_TYPE_PERCPU_ARRAY, uint32_t, struct stp_stack_buf, 1, 0);

/* The mappings of user stacks' files: see the top of this file. */
#ifndef STP_UMAPS_ENTRIES
#define STP_UMAPS_ENTRIES 4096
#endif

struct stp_umap_key {
	uint32_t pid;		/* the process (tgid) */
	uint32_t pad;
	uint64_t bias;		/* an address minus its offset in the file */
};

struct stp_umap {
	unsigned char build_id[20];	/* BPF_BUILD_ID_SIZE */
};

STP_MAP(stp_umaps, BPF_MAP_TYPE_LRU_HASH, struct stp_umap_key, struct stp_umap, STP_UMAPS_ENTRIES, 0);

static __always_inline struct stp_stack_buf *stp__stack_buf(void)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(&stp_stack_bufs, &zero);
}

/* The files of the N user frames in B->addrs, by build id, into stp_umaps. */
static __noinline int stp__umaps_note(struct stp_stack_buf *b, int n)
{
	struct stp_umap_key key = { .pid = (uint32_t)(bpf_get_current_pid_tgid() >> 32) };
	struct stp_umap val;
	uint64_t last = 0;
	long m;

	if (!b)
		return 0;
	m = bpf_get_task_stack(bpf_get_current_task_btf(), b->ids, sizeof(b->ids),
			       BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	m = m > 0 ? (long)((uint64_t)m / sizeof(b->ids[0])) : 0;
	for (int i = 0; i < STP_STACK_MAX && i < n && i < m; i++) {
		if (b->ids[i].status != BPF_STACK_BUILD_ID_VALID)
			continue;
		key.bias = b->addrs[i] - b->ids[i].offset;
		if (key.bias == last)
			continue;
		last = key.bias;
		__builtin_memcpy(val.build_id, b->ids[i].build_id, sizeof(val.build_id));
		bpf_map_update_elem(&stp_umaps, &key, &val, BPF_ANY);
	}
	return 0;
}

/* Capture the current stack into B->addrs; returns the number of frames. */
static __always_inline int stp__stack_capture(struct stp_stack_buf *b, int64_t user)
{
	long n = bpf_get_task_stack(bpf_get_current_task_btf(), b->addrs, sizeof(b->addrs),
				    user ? BPF_F_USER_STACK : 0);

	n = n > 0 ? (long)((uint64_t)n / 8) : 0;
	if (user && n > 0)
		stp__umaps_note(b, (int)n);
	return (int)n;
}

STP_SERVICE void stp_backtrace(struct context *c, char *out, int64_t user)
{
	static const char first[] = "0x%lx", next[] = " 0x%lx";
	struct stp_stack_buf *b = stp__stack_buf();
	uint32_t pos = 0;
	long r;
	int n;

	out[0] = '\0';
	if (!b || (!user && STP_KSTACK_REFUSED(c)))
		return;
	n = stp__stack_capture(b, user);
	for (int i = 0; i < STP_STACK_MAX && i < n; i++) {
		if (pos > MAXSTRINGLEN - 20)
			break;
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, pos ? next : first,
				 &b->addrs[i], 8);
		if (r <= 1 || r > 20)
			break;
		pos += (uint32_t)r - 1;
	}
}

static __always_inline void stp__stack_send(struct stp_stack_buf *b, uint32_t size, uint16_t id)
{
	struct stp_rec_hdr *h = (void *)b->rec;
	int64_t pid = (int64_t)(bpf_get_current_pid_tgid() >> 32);

	h->kind = STP_REC_STACK;
	h->id = id;
	h->size = size;
	__builtin_memcpy(b->rec + sizeof(*h), &pid, 8);
	if (size > sizeof(b->rec))
		return;
	if (bpf_ringbuf_output(&stp_events, b->rec, size, 0))
		stp_count(dropped);
}

STP_SERVICE void stp_print_stack(struct context *c, const char *stk, int64_t flags)
{
	struct stp_stack_buf *b = stp__stack_buf();
	uint32_t at = sizeof(struct stp_rec_hdr) + 8;
	long len;
	int n;

	if (!b || (!(flags & STP_STACK_USER) && STP_KSTACK_REFUSED(c)))
		return;
	if (stk[0]) {
		len = bpf_probe_read_kernel_str(b->rec + at + 2, MAXSTRINGLEN, stk);
		len = len > 0 ? len - 1 : 0;
		b->rec[at] = len & 0xff;
		b->rec[at + 1] = (len >> 8) & 0xff;
		stp__stack_send(b, at + 2 + (uint32_t)len, flags & 0xff);
		return;
	}
	n = stp__stack_capture(b, flags & STP_STACK_USER);
	if (n <= 0)
		return;
	if (n > STP_STACK_MAX)
		n = STP_STACK_MAX;
	bpf_probe_read_kernel(b->rec + at, (uint32_t)n * 8, b->addrs);
	stp__stack_send(b, at + (uint32_t)n * 8, (flags & 0xff) | STP_REC_STACK_ADDRS);
}

/*
 * A symbol's name as a string in kernel context.  printf/print of the
 * tapset calls never get here (the record carries the addresses:
 * translator/emit_symdefer.c).  A kernel address's symbol, offset and
 * module the kernel itself can give (stp__ksym()); the names of user
 * addresses and the other styles (source lines, stacks) only user space
 * knows: an error.
 */
#define STP_SYM_HINT ": names are known only in user space; print the call directly " \
	"(printf/print/println), or keep the address for an end or timer probe"

#ifndef STP_DYNINST
/*
 * A kernel address named in the kernel, by its own vsprintf: "%ps" gives
 * "sym", "sym [module]" for a module's, or "0xADDR" when the address is
 * in no symbol; "%pS" adds "+0xOFF/0xSIZE" after the symbol.  Written in
 * STYLE (symname(), symdata(), modname()) into OUT; false for another
 * style.
 */
static __always_inline bool stp__ksym(char *out, const char *stk, int64_t style)
{
	static const char name_fmt[] = "%ps", data_fmt[] = "%pS";
	uint64_t addr = (uint64_t)stp__strtol(stk, 16);
	int64_t sp, end;

	if (style != STP_SYM_NAME && style != STP_SYM_DATA && style != STP_SYM_MODULE)
		return false;
#ifdef STP_KMOD
	snprintf(out, MAXSTRINGLEN, style == STP_SYM_DATA ? data_fmt : name_fmt,
		 (void *)(uintptr_t)addr);
#else
	if (style == STP_SYM_DATA)
		bpf_snprintf(out, MAXSTRINGLEN, data_fmt, &addr, 8);
	else
		bpf_snprintf(out, MAXSTRINGLEN, name_fmt, &addr, 8);
#endif
	sp = stp__upto(out, 0, ' ', ']');
	if (!STP_IN_STR(sp))
		return true;
	if (style == STP_SYM_NAME) {
		out[sp] = '\0';
	} else if (out[0] == '0' && out[1] == 'x') {
		if (style == STP_SYM_MODULE)
			out[0] = '\0';		/* unknown */
	} else if (style == STP_SYM_DATA) {
		if (!out[sp] && sp < MAXSTRINGLEN - 10)
			__builtin_memcpy(out + sp, " [kernel]", 10);
	} else if (!out[sp]) {
		__builtin_memcpy(out, "kernel", 7);
	} else {
		/* "sym [module]": the module */
		end = stp__upto(out, sp + 2, ' ', ']');
		if (end > sp + 2)
			stp__copy(out, out + sp + 2, end - sp - 2);
		else
			out[0] = '\0';
	}
	return true;
}
#endif

STP_SERVICE void stp_sym_sprint(struct context *c, char *out, const char *stk, int64_t style,
				int64_t flags)
{
	bool user = flags & STP_STACK_USER;

	out[0] = '\0';
#ifndef STP_DYNINST
	if (!user && stp__ksym(out, stk, style))
		return;
#endif
	if (style == STP_SYM_NAME)
		stp_raise_msg(c, user ? "usymname() cannot return a name in a kernel-context probe" STP_SYM_HINT
				      : "symname() cannot return a name in a kernel-context probe" STP_SYM_HINT);
	else if (style == STP_SYM_DATA)
		stp_raise_msg(c, user ? "usymdata() cannot return a name in a kernel-context probe" STP_SYM_HINT
				      : "symdata() cannot return a name in a kernel-context probe" STP_SYM_HINT);
	else if (style == STP_SYM_FILELINE)
		stp_raise_msg(c, user ? "usymfileline() cannot return a name in a kernel-context probe" STP_SYM_HINT
				      : "symfileline() cannot return a name in a kernel-context probe" STP_SYM_HINT);
	else if (style == STP_SYM_MODULE)
		stp_raise_msg(c, user ? "umodname() cannot return a name in a kernel-context probe" STP_SYM_HINT
				      : "modname() cannot return a name in a kernel-context probe" STP_SYM_HINT);
	else if (style == STP_SYM_FULL)
		stp_raise_msg(c, user ? "sprint_usyms() cannot return names in a kernel-context probe: "
					"names are known only in user space; print them with print_usyms()"
				      : "sprint_syms() cannot return names in a kernel-context probe: "
					"names are known only in user space; print them with print_syms()");
	else
		stp_raise_msg(c, user ? "sprint_ustack() and sprint_ubacktrace() cannot return "
					"names in a kernel-context probe" STP_SYM_HINT
				      : "sprint_stack() and sprint_backtrace() cannot return "
					"names in a kernel-context probe" STP_SYM_HINT);
}

/*
 * printf("%s", symname(a)) and the like in kernel context: a deferred
 * string argument (STP_REC_SYMS of stp_meta.h) with the address ADDR,
 * or with STK set the current stack (kernel, or user with
 * STP_STACK_USER in FLAGS), for the runner to name in STYLE.
 */
#define STP_REC_SYMS_HEAD (2 + 1 + 1 + 8)

static __always_inline uint32_t stp_rec_syms(struct context *c, uint32_t off, int64_t addr,
					     int style, int flags, bool stk)
{
	int64_t pid = (int64_t)(bpf_get_current_pid_tgid() >> 32);
	uint32_t addrs = 8, payload;
	long n;

	if (off > STP_REC_SIZE - STP_REC_SYMS_HEAD - (stk ? 8 * STP_STACK_MAX : 8))
		return off;
	c->rec[off + 2] = (char)style;
	c->rec[off + 3] = (char)flags;
	__builtin_memcpy(c->rec + off + 4, &pid, 8);
	if (stk && (flags & STP_STACK_USER)) {	/* for stp_umaps */
		struct stp_stack_buf *b = stp__stack_buf();

		if (b)
			stp__stack_capture(b, 1);
	}
	if (stk) {
		n = !(flags & STP_STACK_USER) && STP_KSTACK_REFUSED(c) ? 0 :
		    bpf_get_task_stack(bpf_get_current_task_btf(), c->rec + off + STP_REC_SYMS_HEAD,
				       8 * STP_STACK_MAX, flags & STP_STACK_USER ? BPF_F_USER_STACK : 0);
		addrs = n > 0 && n <= 8 * STP_STACK_MAX ? (uint32_t)n : 0;
	} else {
		__builtin_memcpy(c->rec + off + STP_REC_SYMS_HEAD, &addr, 8);
	}
	payload = STP_REC_SYMS_HEAD - 2 + addrs;
	c->rec[off] = payload & 0xff;
	c->rec[off + 1] = ((payload >> 8) & 0x7f) | (STP_REC_SYMS >> 8);
	return off + 2 + payload;
}

STP_SERVICE uint64_t stp_uaddr(struct context *c)
{
	struct stp_stack_buf *b = stp__stack_buf();

	if (!b || stp__stack_capture(b, 1) < 1)
		return 0;
	return b->addrs[0];
}

#endif
