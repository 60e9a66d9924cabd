/*
 * stp_stack.bpf.h - backtraces in kernel context: the stp_tapset.h
 * services stp_backtrace(), stp_print_stack(), stp_sym_sprint() and
 * stp_uaddr().
 *
 * printf("%s", symname(a)) and its kin send the addresses to be named in
 * user space (stp_rec_syms()); other uses of a name in kernel context
 * (stp_sym_sprint()) get a kernel address's name and stacks' from the
 * kernel, and a user address's from the symbols of the probed files the
 * script carries (translator/emit_usyms.c), elsewhere as stap's module
 * gives them for a file it has no symbols for: the file mapped there
 * (bpf_find_vma()), the offset in it, else hex.
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
	uint64_t at;		/* the names' length in OUT (stp__kstack_names() ...) */
	uint64_t first;		/* the first address they name */
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
struct stp__umaps_state {
	struct stp_stack_buf *b;
	int64_t n;		/* frames with an address and a build id */
	uint64_t last;		/* the last mapping noted */
	uint32_t pid;
};

STP_STR_STEP stp__umaps_step(uint64_t i, void *state)
{
	struct stp__umaps_state *st = state;
	struct stp_stack_buf *b = st->b;
	struct stp_umap_key key = { .pid = st->pid };
	struct stp_umap val;

	if ((int64_t)i >= st->n)
		return 1;
	if (b->ids[i & (STP_STACK_MAX - 1)].status != BPF_STACK_BUILD_ID_VALID)
		return 0;
	key.bias = b->addrs[i & (STP_STACK_MAX - 1)] - b->ids[i & (STP_STACK_MAX - 1)].offset;
	if (key.bias == st->last)
		return 0;
	st->last = key.bias;
	__builtin_memcpy(val.build_id, b->ids[i & (STP_STACK_MAX - 1)].build_id,
			 sizeof(val.build_id));
	bpf_map_update_elem(&stp_umaps, &key, &val, BPF_ANY);
	return 0;
}

static __noinline int stp__umaps_note(struct stp_stack_buf *b, int n)
{
	struct stp__umaps_state st = { b, 0, 0, (uint32_t)(bpf_get_current_pid_tgid() >> 32) };
	long m;

	if (!b)
		return 0;
	m = bpf_get_task_stack(bpf_get_current_task_btf(), b->ids, sizeof(b->ids),
			       BPF_F_USER_STACK | BPF_F_USER_BUILD_ID);
	m = m > 0 ? (long)((uint64_t)m / sizeof(b->ids[0])) : 0;
	st.n = n < m ? n : m;
	stp__loop(STP_STACK_MAX, stp__umaps_step, &st);
	return 0;
}

/*
 * Capture the current stack into B->addrs; returns the number of frames.
 * A user stack's files are noted (stp_umaps) unless STP_STACK_UNNOTED is
 * in USER: the note takes the mm's lock, and in interrupt context lets it
 * go from this CPU's one irq_work, which a file lookup in the same
 * handler (stp__umod_find()) would then find busy.
 */
static __always_inline int stp__stack_capture(struct stp_stack_buf *b, int64_t user)
{
	long n = bpf_get_task_stack(bpf_get_current_task_btf(), b->addrs, sizeof(b->addrs),
				    user & STP_STACK_USER ? BPF_F_USER_STACK : 0);

	n = n > 0 ? (long)((uint64_t)n / 8) : 0;
	if ((user & STP_STACK_USER) && !(user & STP_STACK_UNNOTED) && n > 0)
		stp__umaps_note(b, (int)n);
	return (int)n;
}

/* The Ith address of stp_backtrace(), after the others (B->at: OUT's length). */
struct stp__bt_state {
	char *out;
	struct stp_stack_buf *b;
	int64_t n;
};

STP_STR_STEP stp__bt_step(uint64_t i, void *state)
{
	static const char first[] = "0x%lx", next[] = " 0x%lx";
	struct stp__bt_state *st = state;
	struct stp_stack_buf *b = st->b;
	uint64_t pos = b->at;
	long r;

	if ((int64_t)i >= st->n || pos > MAXSTRINGLEN - 20)
		return 1;
	r = bpf_snprintf(st->out + pos, MAXSTRINGLEN - pos, pos ? next : first,
			 &b->addrs[i & (STP_STACK_MAX - 1)], 8);
	if (r <= 1 || r > 20)
		return 1;
	b->at = pos + (uint64_t)r - 1;
	return 0;
}

STP_SERVICE void stp_backtrace(struct context *c, char *out, int64_t user)
{
	struct stp_stack_buf *b = stp__stack_buf();
	struct stp__bt_state st = { out, b, 0 };

	out[0] = '\0';
	if (!b || (!(user & STP_STACK_USER) && STP_KSTACK_REFUSED(c)))
		return;
	st.n = stp__stack_capture(b, user);
	b->at = 0;
	stp__loop(STP_STACK_MAX, stp__bt_step, &st);
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
 * module, and a kernel stack's names, the kernel itself can give
 * (stp__ksym(), stp__kstack_names()); a user address from the symbols
 * of the probed files (and -d's) the script carries, elsewhere as stap's
 * module names one in a file it has no symbols for (stp__usym_names()).
 * Source lines of kernel addresses only user space knows: an error.
 */
#define STP_SYM_HINT ": names are known only in user space; print the call directly " \
	"(printf/print/println), or keep the address for an end or timer probe"

#ifndef STP_DYNINST
/*
 * A kernel address named in the kernel, by its own vsprintf: "%ps" gives
 * "sym", "sym [module]" for a module's, or "0xADDR" when the address is
 * in no symbol; "%pS" adds "+0xOFF/0xSIZE" after the symbol.  ADDR
 * written in STYLE (symname(), symdata(), modname()) into OUT; false for
 * another style, or when the kernel would not format it.
 */
static __always_inline bool stp__ksym_at(char *out, uint64_t addr, int64_t style)
{
	static const char name_fmt[] = "%ps", data_fmt[] = "%pS";
	int64_t sp, end;

	if (style != STP_SYM_NAME && style != STP_SYM_DATA && style != STP_SYM_MODULE)
		return false;
#ifdef STP_KMOD
	snprintf(out, MAXSTRINGLEN, style == STP_SYM_DATA ? data_fmt : name_fmt,
		 (void *)(uintptr_t)addr);
#else
	/* one call per format: the verifier wants a constant format string */
	if ((style == STP_SYM_DATA ? bpf_snprintf(out, MAXSTRINGLEN, data_fmt, &addr, 8) :
	     bpf_snprintf(out, MAXSTRINGLEN, name_fmt, &addr, 8)) < 0)
		return false;
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

/* The address of STK ("0x...", as symname() and the like take it) named as stp__ksym_at(). */
static __always_inline bool stp__ksym(char *out, const char *stk, int64_t style)
{
	return stp__ksym_at(out, (uint64_t)stp__strtol(stk, 16), style);
}
#endif

/*
 * The addresses of STK (hex numbers as stp_backtrace() writes them, or one
 * "0x..." of symname() and the like) into B->addrs; how many.  The count
 * and the number being read live in STP_VARS memory (stp_strings.h).
 */
struct stp__addrs_vars {
	uint64_t cur;		/* the number being read */
	uint64_t digits;	/* whether CUR has a digit */
	uint64_t n;		/* numbers stored */
};

struct stp__addrs_state {
	const char *s;
	struct stp_stack_buf *b;
	struct stp__addrs_vars *v;
};

STP_STR_STEP stp__addrs_step(uint64_t i, void *state)
{
	struct stp__addrs_state *st = state;
	struct stp__addrs_vars *v = st->v;
	char ch;
	int d;

	if (!STP_IN_STR((int64_t)i))
		return 1;
	ch = st->s[i];
	d = stp__digit(ch);
	if (ch == 'x' || ch == 'X') {		/* the "0" of "0x" was no address */
		v->cur = 0;
		return 0;
	}
	if (d < 16) {
		v->cur = v->cur * 16 + (uint64_t)d;
		v->digits = 1;
		return 0;
	}
	if (v->digits) {
		if (v->n >= STP_STACK_MAX)
			return 1;
		st->b->addrs[v->n & (STP_STACK_MAX - 1)] = v->cur;
		v->n++;
	}
	v->cur = 0;
	v->digits = 0;
	return ch == '\0';
}

static __always_inline int stp__addrs(struct stp_stack_buf *b, const char *stk)
{
	STP_VARS(struct stp__addrs_vars, v);
	struct stp__addrs_state st = { stk, b, v };

	if (!v)
		return 0;
	stp__loop(MAXSTRINGLEN, stp__addrs_step, &st);
	return (int)(v->n & (2 * STP_STACK_MAX - 1));
}

#ifdef STP_USYMS
/*
 * The probed files' symbols (stp_usyms, translator/emit_usyms.c), as
 * stap's module searches those it carries: the last symbol at or below
 * the address, its size the distance to the next (0 for a file's last).
 * The kernel's runtimes know a file by its inode where the script runs
 * (stp__usym_same_file()), else by its path and size (stp__usym_file()),
 * the dyninst runtime by its build id
 * (stp__usym_dyn()).
 */
struct stp__usym_find {
	uint64_t off;		/* in the file */
	uint64_t lo, hi;	/* the symbol is in [lo, hi) */
};

STP_STR_STEP stp__usym_halve(uint64_t i, void *state)
{
	struct stp__usym_find *f = state;
	uint64_t mid = f->lo + (f->hi - f->lo) / 2;

	if (f->hi < f->lo + 2 || mid >= STP_USYMS)
		return 1;
	if (stp_usyms[mid].off <= f->off)
		f->lo = mid;
	else
		f->hi = mid;
	return 0;
}

/* The symbol of file K (of stp_usym_files) at offset OFF and its size (*SIZE), or -1. */
static __always_inline int64_t stp__usym_in(int64_t k, uint64_t off, uint64_t *size)
{
	struct stp__usym_find f = { off, 0, 0 };
	uint64_t end;

	if (k < 0 || k >= STP_USYM_FILES)
		return -1;
	f.lo = (uint32_t)stp_usym_files[k].first;
	end = f.hi = f.lo + (uint32_t)stp_usym_files[k].count;
	if (f.lo >= STP_USYMS || stp_usyms[f.lo].off > off)
		return -1;
	stp__loop(32, stp__usym_halve, &f);
	if (f.lo >= STP_USYMS)
		return -1;
	*size = f.lo + 1 < end && f.lo + 1 < STP_USYMS
			? stp_usyms[f.lo + 1].off - stp_usyms[f.lo].off : 0;
	return (int64_t)f.lo;
}

#ifdef STP_DYNINST
/* The probed file with ID's build id (of a frame stp__build_ids() read), or -1. */
static inline int64_t stp__usym_dyn_file(const struct bpf_stack_build_id *id)
{
	for (int i = 0; id->status == BPF_STACK_BUILD_ID_VALID && i < STP_USYM_FILES; i++)
		if (!memcmp(stp_usym_files[i].build_id, id->build_id, sizeof(id->build_id)))
			return i;
	return -1;
}

/* A frame's file as the process maps it (dl_iterate_phdr()): its path, the frame's offset, the file's extent. */
struct stp__dyn_where {
	uint64_t ip, off, extent;
	const char *path;	/* NULL: in no file */
};

/* The probed process's own path (the main program's dlpi_name is ""). */
static inline const char *stp__dyn_exe(void)
{
	static char exe[4096];

	if (!exe[0] && readlink("/proc/self/exe", exe, sizeof(exe) - 1) < 0)
		exe[0] = '\0';
	return exe;
}

static inline int stp__dyn_where_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct stp__dyn_where *w = arg;
	const ElfW(Phdr) *ph = stp__is_vdso(info) ? NULL : stp__load_of(info, w->ip);
	uint64_t base = 0, end = 0;
	bool first = true;

	(void)size;
	if (!ph)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {	/* as stap's: mapped end less offset 0's address */
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];

		if (p->p_type != PT_LOAD)
			continue;
		if (first)
			base = p->p_vaddr - p->p_offset;
		first = false;
		if (p->p_vaddr + p->p_filesz > end)	/* mapped from the file: no bss */
			end = p->p_vaddr + p->p_filesz;
	}
	w->off = stp__file_off(info, ph, w->ip);
	w->extent = ((end + 4095) & ~4095ull) - base;
	w->path = info->dlpi_name[0] ? info->dlpi_name : stp__dyn_exe();
	return 1;
}

/*
 * User address ADDR, whose file and offset stp__build_ids() read into ID,
 * named in the probed process in STYLE into OUT (LEN bytes): from the
 * probed files' symbols, its file found by its build id, as
 * stp__usym_step() names it in the kernel: usymname() "sym", usymdata()
 * "sym+0xOFF/0xSIZE [path]", sprint_ustack()'s line "sym+0xOFF [file]\n",
 * sprint_usyms()' " 0xADDR : sym+0xOFF/0xSIZE [path]\n"; in another file
 * as stap's runtime names an address of a file it has no symbols for,
 * from dl_iterate_phdr(): "0xADDR", "0xADDR [path+0xOFF/0xSIZE]",
 * "0xADDR [file+0xOFF]\n", " 0xADDR : 0xADDR [path+0xOFF/0xSIZE]\n"
 * ("0xADDR" in each form where no file maps it).  Returns snprintf()'s
 * count, or -1 for a stack's frame in no file: the walk went astray.
 */
static inline int stp__usym_dyn_frame(char *out, size_t len, uint64_t addr,
				       const struct bpf_stack_build_id *id, int64_t style, bool first)
{
	struct stp__dyn_where w = { addr, 0, 0, NULL };
	int64_t k = stp__usym_dyn_file(id), sym = -1;
	unsigned long a = (unsigned long)addr;
	const char *name, *path, *leaf;
	uint64_t size = 0;
	char real[4096];

	if (k >= 0)
		sym = stp__usym_in(k, id->offset, &size);
	if (sym >= 0) {
		unsigned long off = (unsigned long)(id->offset - stp_usyms[sym].off);

		name = stp_usym_names + stp_usyms[sym].name;
		path = stp_usym_names + stp_usym_files[k].path;
		leaf = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		if (style == STP_SYM_NAME)
			return snprintf(out, len, "%s", name);
		if (style == STP_SYM_LINES)
			return snprintf(out, len, "%s+0x%lx [%s]\n", name, off, leaf);
		if (style == STP_SYM_FULL)
			return snprintf(out, len, " 0x%lx : %s+0x%lx/0x%lx [%s]\n", a, name, off,
					(unsigned long)size, path);
		return snprintf(out, len, "%s+0x%lx/0x%lx [%s]", name, off, (unsigned long)size,
				path);
	}
	if (style != STP_SYM_NAME)
		dl_iterate_phdr(stp__dyn_where_cb, &w);
	if (!w.path && !first)
		return -1;
	if (!w.path || style == STP_SYM_NAME)
		return snprintf(out, len, style == STP_SYM_LINES ? "0x%lx\n" :
					  style == STP_SYM_FULL ? " 0x%lx\n" : "0x%lx", a);
	if (realpath(w.path, real))	/* as the kernel's d_path() spells it */
		w.path = real;
	leaf = strrchr(w.path, '/') ? strrchr(w.path, '/') + 1 : w.path;
	if (style == STP_SYM_LINES)
		return snprintf(out, len, "0x%lx [%s+0x%lx]\n", a, leaf, (unsigned long)w.off);
	if (style == STP_SYM_FULL)
		return snprintf(out, len, " 0x%lx : 0x%lx [%s+0x%lx/0x%lx]\n", a, a, w.path,
				(unsigned long)w.off, (unsigned long)w.extent);
	return snprintf(out, len, "0x%lx [%s+0x%lx/0x%lx]", a, w.path, (unsigned long)w.off,
			(unsigned long)w.extent);
}

/* User address ADDR named in the probed process in STYLE (usymname(), usymdata()): stp__usym_dyn_frame(). */
static inline void stp__usym_dyn(char *out, uint64_t addr, int64_t style)
{
	struct bpf_stack_build_id id;

	stp__build_ids(&id, &addr, 1);
	stp__usym_dyn_frame(out, MAXSTRINGLEN, addr, &id, style, true);
}

/*
 * A user stack (STK: stp_backtrace()'s hex) named in the probed process
 * in STYLE (sprint_ustack(), sprint_usyms()), a line per frame
 * (stp__usym_dyn_frame()); whole lines, as many as fit.
 */
static inline void stp__usym_dyn_stack(char *out, const char *stk, int64_t style)
{
	struct stp_stack_buf *b = stp__stack_buf();
	char line[MAXSTRINGLEN];
	size_t at = 0;
	int n, len;

	out[0] = '\0';
	if (!b)
		return;
	n = stp__addrs(b, stk);
	stp__build_ids(b->ids, b->addrs, (uint32_t)n);
	for (int i = 0; i < n; i++) {
		len = stp__usym_dyn_frame(line, sizeof(line), b->addrs[i], &b->ids[i], style, !i);
		if (len <= 0 || at + (size_t)len > STP_STR_MAX)
			break;
		memcpy(out + at, line, (size_t)len + 1);
		at += (size_t)len;
	}
}

/* probefunc() in the probed process: its usymname(uaddr()), in a .return the caller. */
static __always_inline bool stp__probe_usym(struct context *c, char *out)
{
	uint64_t addr = stp_user_mode(c) ? stp_uaddr(c) : 0;

	if (!addr)
		return false;
	stp__usym_dyn(out, addr, STP_SYM_NAME);
	return true;
}
#endif
#endif

#ifndef STP_DYNINST
/*
 * A line of a stack's names, R bytes with its NUL (bpf_snprintf()'s count)
 * written at B->at of OUT: kept, B->at past it, or, cut short, left out;
 * the step's answer (1: no more lines).
 */
static __always_inline long stp__line_placed(char *out, struct stp_stack_buf *b, uint64_t pos,
					     long r)
{
	if (r <= 1 || (uint64_t)r > MAXSTRINGLEN - pos) {
		out[pos] = '\0';
		return 1;
	}
	b->at = pos + (uint64_t)r - 1;
	return 0;
}

struct stp__kstack_state {
	char *out;
	struct stp_stack_buf *b;
	int64_t style;
	int64_t n;
};

/* The name of kernel address ADDR as %pS gives it, into NAME. */
static __always_inline void stp__kname(char *name, uint64_t addr)
{
	static const char sym_fmt[] = "%pS";

#ifdef STP_KMOD
	snprintf(name, MAXSTRINGLEN, sym_fmt, (void *)(uintptr_t)addr);
#else
	bpf_snprintf(name, MAXSTRINGLEN, sym_fmt, &addr, 8);
#endif
}

/* Whether the Ith address is the probe's own (its BPF program), as user space skips them. */
STP_STR_STEP stp__kstack_own_step(uint64_t i, void *state)
{
	struct stp__kstack_state *st = state;

	if ((int64_t)i >= st->n)
		return 1;
	stp__kname(st->b->rec, st->b->addrs[i & (STP_STACK_MAX - 1)]);
	if (bpf_strncmp(st->b->rec, 9, "bpf_prog_") == 0)
		st->b->first = i + 1;
	return 0;
}

/* The Ith address's line. */
STP_STR_STEP stp__kstack_step(uint64_t i, void *state)
{
	static const char line_fmt[] = "%s%s\n", full_fmt[] = " 0x%lx : %s%s\n",
			  bare_fmt[] = " 0x%lx\n";
	struct stp__kstack_state *st = state;
	struct stp_stack_buf *b = st->b;
	char *name = b->rec, *out = st->out;	/* the frame's name, before it is placed */
	uint64_t args[3], pos = b->at, k = i + b->first;
	bool bare;
	int64_t sp;
	long r;

	if ((int64_t)k >= st->n || pos > MAXSTRINGLEN - 2)
		return 1;
	args[0] = b->addrs[k & (STP_STACK_MAX - 1)];
	stp__kname(name, args[0]);
	bare = name[0] == '0' && name[1] == 'x';
	sp = stp__upto(name, 0, ' ', ' ');
	args[1] = (uint64_t)(uintptr_t)name;
	args[2] = (uint64_t)(uintptr_t)(bare || (STP_IN_STR(sp) && name[sp]) ? "" : " [kernel]");
	if (st->style == STP_SYM_FULL && bare)
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, bare_fmt, args, 8);
	else if (st->style == STP_SYM_FULL)
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, full_fmt, args, 24);
	else
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, line_fmt, args + 1, 16);
	return stp__line_placed(out, b, pos, r);
}

/*
 * Kernel stacks named in the kernel (sprint_stack(), sprint_syms()): each
 * of B's N addresses as %pS gives it ("sym+0xOFF/0xSIZE", " [module]"
 * after a module's), in the forms of user space's runtime/user/
 * symbolize.c: "sym+0xOFF/0xSIZE [kernel]" a line each (STP_SYM_LINES),
 * or " 0xADDR : sym+0xOFF/0xSIZE [kernel]\n" (STP_SYM_FULL); an address
 * in no symbol is "0xADDR" (" 0xADDR\n").  As many whole lines as fit OUT.
 */
static __always_inline void stp__kstack_names(char *out, struct stp_stack_buf *b, int n,
					      int64_t style)
{
	struct stp__kstack_state st = { out, b, style, n };

	b->at = 0;
	b->first = 0;
	stp__loop(8, stp__kstack_own_step, &st);
	stp__loop(STP_STACK_MAX, stp__kstack_step, &st);
}

/*
 * A user address's file, in kernel context: what stap's module knows of
 * a module it has no symbols for (no -d): the path of the file mapped
 * there, where the file's mappings begin (BASE: the address of its
 * offset 0) and end.  LEAF indexes PATH's last component.
 */
#define STP_UPATH_WALK 1024	/* a path built from its end: a power of 2 */

/*
 * Where a path's walk is (stp__path_step()): a dentry, its struct mount,
 * where the path begins in walk[] and where its last component does; the
 * dentry and mount it ends at.
 */
struct stp__path_vars {
	uint64_t dentry, mnt;
	uint64_t pos, leaf;
	uint64_t root, root_mnt;	/* the task's root (chroot), where the path starts */
};

struct stp__umod {
	uint64_t base, end;
	uint64_t size;		/* the file's */
	uint64_t dev, ino;	/* its inode's, as stp_usym_file has them */
	int64_t leaf;
	int64_t file;		/* its index in stp_usym_files when found by its inode, else -1 */
	struct stp__path_vars pv;	/* in map memory, as STP_VARS (stp_strings.h) */
	char path[MAXSTRINGLEN];
	char walk[STP_UPATH_WALK + 256];	/* room for a 255-byte name at its end */
};

STP_MAP(stp_umod_bufs, BPF_MAP_TYPE_PERCPU_ARRAY, uint32_t, struct stp__umod, 1, 0);

#ifdef STP_USYMS
/*
 * M's file, by its inode, among the probed ones (their inodes found as
 * the script loaded): a process in another root, a container's, maps a
 * file under another path than the script names it by.  M's path is then
 * the script's, as stap's module names a file it carries: whether found.
 */
static __always_inline bool stp__usym_same_file(struct stp__umod *m)
{
	for (int i = 0; i < STP_USYM_FILES; i++) {
		const struct stp_usym_file *f = &stp_usym_files[i];

		if (!f->ino || f->ino != m->ino || f->dev != m->dev || f->size != m->size)
			continue;
		bpf_probe_read_kernel_str(m->path, MAXSTRINGLEN, stp_usym_names + f->path);
		m->leaf = f->leaf;
		m->file = i;
		return true;
	}
	return false;
}
#else
static __always_inline bool stp__usym_same_file(struct stp__umod *m)
{
	return false;
}
#endif

#ifdef STP_KMOD
/*
 * The module looks the address up under the mm's lock, taken only if
 * free (mmap_read_trylock()).  With interrupts off (a timer.profile
 * hrtimer, a probe in the scheduler) the lock is let go later, from this
 * CPU's irq_work, as bpf_find_vma() does: releasing it may wake a task,
 * which takes locks the probed code may hold.  In interrupt context the
 * path is read from the dentries up, under RCU and without d_path()'s
 * rename_lock (the probe may have interrupted its holder), for a file
 * on the task's root mount only (no struct mount to cross another);
 * elsewhere d_path() gives it.  NMI: not known.
 */
struct stp__mm_unlock {
	struct irq_work work;
	struct mm_struct *mm;
};

static void stp__mm_unlock_fn(struct irq_work *w)
{
	mmap_read_unlock_non_owner(container_of(w, struct stp__mm_unlock, work)->mm);
}

static DEFINE_PER_CPU(struct stp__mm_unlock, stp_mm_unlock);

/*
 * The probed files' inodes where the module runs (stp__usym_same_file()):
 * on overlayfs the file underneath, which a mapping of it holds.
 */
static void stp__usym_identify(void)
{
#ifdef STP_USYMS
	for (int i = 0; i < STP_USYM_FILES; i++) {
		struct stp_usym_file *f = &stp_usym_files[i];
		struct inode *in;
		struct path p;

		if (kern_path(stp_usym_names + f->path, LOOKUP_FOLLOW, &p))
			continue;
		in = d_real_inode(p.dentry);
		f->ino = in->i_ino;
		f->dev = in->i_sb->s_dev;
		path_put(&p);
	}
#endif
}

/* At load, before any probe. */
static void stp__umod_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(stp_mm_unlock, cpu).work =
			(struct irq_work)IRQ_WORK_INIT_HARD(stp__mm_unlock_fn);
	stp__usym_identify();
}

/* At unload: no unlock left to run in this module's code. */
static void stp__umod_sync(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu(stp_mm_unlock, cpu).work);
}

/* F's path from its dentries up to the task's root, as the top says. */
static bool stp__umod_walk(struct stp__umod *m, struct file *f)
{
	struct fs_struct *fs = READ_ONCE(current->fs);
	struct dentry *d = f->f_path.dentry, *root;
	uint32_t pos = STP_UPATH_WALK - 1, leaf = 0, len;
	bool ok = false;

	if (!fs || READ_ONCE(fs->root.mnt) != f->f_path.mnt)
		return false;
	root = READ_ONCE(fs->root.dentry);
	m->walk[pos] = '\0';
	rcu_read_lock();
	for (int i = 0; i < 64; i++) {
		struct dentry *up = READ_ONCE(d->d_parent);
		const unsigned char *name = READ_ONCE(d->d_name.name);

		if (d == root || d == f->f_path.mnt->mnt_root) {
			ok = pos < STP_UPATH_WALK - 1;
			break;
		}
		len = READ_ONCE(d->d_name.len);
		if (up == d || !len || len > 255 || pos < len + 1)
			break;
		pos -= len;
		if (copy_from_kernel_nofault(m->walk + pos, name, len))
			break;
		if (!leaf)
			leaf = pos;
		m->walk[--pos] = '/';
		d = up;
	}
	rcu_read_unlock();
	if (!ok)
		return false;
	strscpy(m->path, m->walk + pos, MAXSTRINGLEN);
	m->leaf = leaf - pos;
	return true;
}

static __always_inline bool stp__umod_find(struct stp__umod *m, uint64_t addr)
{
	struct mm_struct *mm = current->mm;
	struct stp__mm_unlock *later = NULL;
	struct vm_area_struct *vma, *next;
	bool found = false;
	char *p;

	m->file = -1;
	if (!mm || in_nmi())
		return false;
	if (irqs_disabled()) {
		later = this_cpu_ptr(&stp_mm_unlock);
		if (irq_work_is_busy(&later->work))
			return false;
	}
	if (!mmap_read_trylock(mm))
		return false;
	vma = vma_lookup(mm, addr);
	if (vma && vma->vm_file) {
		struct inode *in = file_inode(vma->vm_file);

		m->base = vma->vm_start - (vma->vm_pgoff << PAGE_SHIFT);
		m->size = (uint64_t)i_size_read(in);
		m->ino = in->i_ino;
		m->dev = in->i_sb->s_dev;
		m->end = vma->vm_end;
		for (int i = 0; i < 8; i++) {	/* the file's later mappings */
			next = vma_lookup(mm, m->end);
			if (!next || !next->vm_file ||
			    file_inode(next->vm_file) != in)
				break;
			m->end = next->vm_end;
		}
		if (stp__usym_same_file(m)) {
			found = true;
		} else if (in_interrupt() || irqs_disabled()) {
			found = stp__umod_walk(m, vma->vm_file);
		} else {
			p = d_path(&vma->vm_file->f_path, m->walk, sizeof(m->walk));
			if (!IS_ERR(p)) {
				strscpy(m->path, p, MAXSTRINGLEN);
				p = strrchr(m->path, '/');
				m->leaf = p ? p + 1 - m->path : 0;
				found = true;
			}
		}
	}
	if (later) {
		later->mm = mm;
		irq_work_queue(&later->work);
	} else {
		mmap_read_unlock(mm);
	}
	return found;
}
#else
/* What bpf_find_vma() saw of a mapping. */
struct stp__vma_seen {
	uint64_t start, end, pgoff;
	uint64_t file, inode;
};

static long stp__vma_seen_cb(struct task_struct *t, struct vm_area_struct *vma, void *data)
{
	struct stp__vma_seen *v = data;
	struct file *f = BPF_CORE_READ(vma, vm_file);

	v->start = BPF_CORE_READ(vma, vm_start);
	v->end = BPF_CORE_READ(vma, vm_end);
	v->pgoff = BPF_CORE_READ(vma, vm_pgoff);
	v->file = (uint64_t)(uintptr_t)f;
	v->inode = f ? (uint64_t)(uintptr_t)BPF_CORE_READ(f, f_inode) : 0;
	return 0;
}

/*
 * A file's path, from its dentry up: a name per step, and at a mount's
 * root on to where it is mounted, up to the task's root, as d_path()
 * walks (without its locks: a rename under way may give a path that
 * never was).
 */
/* bpf_loop()'s context is on the stack (the verifier wants fp there): the buffer's pointer */
struct stp__path_state {
	struct stp__umod *m;
};

STP_STR_STEP stp__path_step(uint64_t i, void *state)
{
	struct stp__umod *m = ((struct stp__path_state *)state)->m;
	struct stp__path_vars *v = &m->pv;
	struct dentry *d = (void *)(uintptr_t)v->dentry, *up;
	struct mount *mnt = (void *)(uintptr_t)v->mnt, *parent;
	const unsigned char *name;
	uint32_t len;

	if (v->dentry == v->root && v->mnt == v->root_mnt)
		return 1;
	if (d == BPF_CORE_READ(mnt, mnt.mnt_root)) {
		parent = BPF_CORE_READ(mnt, mnt_parent);
		if (!parent || parent == mnt)
			return 1;	/* the root */
		v->dentry = (uint64_t)(uintptr_t)BPF_CORE_READ(mnt, mnt_mountpoint);
		v->mnt = (uint64_t)(uintptr_t)parent;
		return 0;
	}
	up = BPF_CORE_READ(d, d_parent);
	len = BPF_CORE_READ(d, d_name.len);
	name = BPF_CORE_READ(d, d_name.name);
	if (!up || up == d || !len || len > 255 || v->pos < len + 1)
		return 1;
	v->pos -= len;
	bpf_probe_read_kernel(m->walk + (v->pos & (STP_UPATH_WALK - 1)), len & 255, name);
	if (!v->leaf)
		v->leaf = v->pos;
	v->pos--;
	m->walk[v->pos & (STP_UPATH_WALK - 1)] = '/';
	v->dentry = (uint64_t)(uintptr_t)up;
	return 0;
}

static __always_inline bool stp__umod_find(struct stp__umod *m, uint64_t addr)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct stp__vma_seen v = {}, w;
	struct stp__path_state st = { m };
	struct stp__path_vars *pv = &m->pv;
	struct file *f = NULL;
	struct inode *ino;
	uint64_t len;

	m->file = -1;
	if (bpf_find_vma(t, addr, stp__vma_seen_cb, &v, 0) || !v.file)
		return false;
	m->base = v.start - (v.pgoff << 12);
	m->end = v.end;
	ino = (void *)(uintptr_t)v.inode;
	m->size = (uint64_t)BPF_CORE_READ(ino, i_size);
	m->ino = BPF_CORE_READ(ino, i_ino);
	m->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	for (int i = 0; i < 8; i++) {	/* the file's later mappings */
		w.inode = 0;
		if (bpf_find_vma(t, m->end, stp__vma_seen_cb, &w, 0) || w.inode != v.inode)
			break;
		m->end = w.end;
	}
	if (stp__usym_same_file(m))
		return true;
	f = (void *)(uintptr_t)v.file;
	pv->dentry = (uint64_t)(uintptr_t)BPF_CORE_READ(f, f_path.dentry);
	pv->mnt = (uint64_t)(uintptr_t)BPF_CORE_READ(f, f_path.mnt) -
		  bpf_core_field_offset(struct mount, mnt);
	pv->root = (uint64_t)(uintptr_t)BPF_CORE_READ(t, fs, root.dentry);
	pv->root_mnt = (uint64_t)(uintptr_t)BPF_CORE_READ(t, fs, root.mnt) -
		       bpf_core_field_offset(struct mount, mnt);
	pv->pos = STP_UPATH_WALK - 1;
	pv->leaf = 0;
	m->walk[STP_UPATH_WALK - 1] = '\0';
	stp__loop(64, stp__path_step, &st);
	len = STP_UPATH_WALK - 1 - pv->pos;
	if (!len || !pv->leaf)
		return false;
	stp__copy(m->path, m->walk + (pv->pos & (STP_UPATH_WALK - 1)), (int64_t)len);
	m->leaf = (int64_t)(pv->leaf - pv->pos);
	return true;
}
#endif

#ifdef STP_USYMS
/*
 * M's file among the probed ones, or -1: the one its inode matched, else
 * by path and size (M->walk is scratch here).
 */
static __always_inline int64_t stp__usym_file(struct stp__umod *m)
{
	if (m->file >= 0 && m->file < STP_USYM_FILES)
		return m->file;
	for (int i = 0; i < STP_USYM_FILES; i++) {
		if (stp_usym_files[i].size != m->size)
			continue;
		bpf_probe_read_kernel_str(m->walk, MAXSTRINGLEN,
					  stp_usym_names + stp_usym_files[i].path);
		if (stp_strcmp(m->path, m->walk) == 0)
			return i;
	}
	return -1;
}

/* The symbol at file offset OFF of M's file and its size (*SIZE), or -1. */
static __always_inline int64_t stp__usym_lookup(struct stp__umod *m, uint64_t off,
						uint64_t *size)
{
	return stp__usym_in(stp__usym_file(m), off, size);
}

/*
 * ADDR (in M's file) named in STYLE from the probed files' symbols, as
 * stap's module names an address it has symbols for, at OUT's end (B->at)
 * for a stack's styles: as stp__usym_step() returns, or -1 where M's file
 * is not among them or no symbol holds ADDR.
 */
static __always_inline long stp__usym_named(char *out, struct stp_stack_buf *b,
					     struct stp__umod *m, int64_t style, uint64_t addr)
{
	static const char data_fmt[] = "%s+0x%lx/0x%lx [%s]",
			  line_fmt[] = "%s+0x%lx [%s]\n",
			  full_fmt[] = " 0x%lx : %s+0x%lx/0x%lx [%s]\n";
	uint64_t args[5], size = 0, pos = b->at;
	int64_t k = stp__usym_lookup(m, addr - m->base, &size);
	const char *name;
	long r;

	if (k < 0 || k >= STP_USYMS)
		return -1;
	if (pos > MAXSTRINGLEN - 2)
		return 1;
	name = stp_usym_names + stp_usyms[k].name;
	if (style == STP_SYM_NAME) {
		bpf_probe_read_kernel_str(out, MAXSTRINGLEN, name);
		return 1;
	}
	if (style == STP_SYM_DATA || style == STP_SYM_FULL) {
		args[0] = addr;
		args[1] = (uint64_t)(uintptr_t)name;
		args[2] = addr - m->base - stp_usyms[k].off;
		args[3] = size;
		args[4] = (uint64_t)(uintptr_t)m->path;
		if (style == STP_SYM_DATA) {
			bpf_snprintf(out, MAXSTRINGLEN, data_fmt, args + 1, 32);
			return 1;
		}
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, full_fmt, args, 40);
	} else {
		args[0] = (uint64_t)(uintptr_t)name;
		args[1] = addr - m->base - stp_usyms[k].off;
		args[2] = (uint64_t)(uintptr_t)(STP_IN_STR(m->leaf) ? m->path + m->leaf : m->path);
		r = bpf_snprintf(out + pos, MAXSTRINGLEN - pos, line_fmt, args, 24);
	}
	return stp__line_placed(out, b, pos, r);
}
#endif

/* Whether the probed files' symbols name user addresses (else usymname() is hex at once). */
#ifdef STP_USYMS
#define STP_USYM_NAMED 1
#else
#define STP_USYM_NAMED 0
#endif

/*
 * User addresses named in kernel context.  In a file whose symbols the
 * script carries (stp__usym_named()) as stap's module names them;
 * elsewhere as it names those of a module it has no symbols for:
 * usymname(), usymfileline() "0xADDR";
 * umodname() the file's path ("" for none, its error); usymdata()
 * "0xADDR [PATH+0xOFF/0xSIZE]"; sprint_ustack() "0xADDR [FILE+0xOFF]" a
 * line each, FILE the path's last component; sprint_usyms()
 * " 0xADDR : 0xADDR [PATH+0xOFF/0xSIZE]\n" each.  Where no file is
 * known, "0xADDR" in each form.  B's N addresses (one but for stacks).
 */
struct stp__usym_state {
	char *out;
	struct stp_stack_buf *b;
	struct stp__umod *m;
	int64_t style;
	int64_t n;
};

/* One address, the Ith, of stp__usym_names() */
STP_STR_STEP stp__usym_step(uint64_t i, void *state)
{
	static const char hex_fmt[] = "0x%lx", data_fmt[] = "0x%lx [%s+0x%lx/0x%lx]",
			  line_fmt[] = "0x%lx [%s+0x%lx]\n", bare_line_fmt[] = "0x%lx\n",
			  full_fmt[] = " 0x%lx : 0x%lx [%s+0x%lx/0x%lx]\n",
			  bare_full_fmt[] = " 0x%lx : 0x%lx\n";
	struct stp__usym_state *st = state;
	struct stp__umod *m = st->m;
	char *out = st->out;
	uint64_t args[5], pos = st->b->at;
	bool known;
	long r;

	if ((int64_t)i >= st->n || pos > MAXSTRINGLEN - 2)
		return 1;
	args[0] = st->b->addrs[i & (STP_STACK_MAX - 1)];
	if (st->style == STP_SYM_FILELINE ||
	    (st->style == STP_SYM_NAME && !STP_USYM_NAMED)) {
		bpf_snprintf(out, MAXSTRINGLEN, hex_fmt, args, 8);
		return 1;
	}
	known = stp__umod_find(m, args[0]);
	if (!known && i > 0)
		return 1;	/* frame pointers followed through code without them */
#ifdef STP_USYMS
	r = known && st->style != STP_SYM_MODULE
		    ? stp__usym_named(out, st->b, m, st->style, args[0]) : -1;
	if (r >= 0)
		return r;
#endif
	if (st->style == STP_SYM_NAME) {
		bpf_snprintf(out, MAXSTRINGLEN, hex_fmt, args, 8);
		return 1;
	}
	if (st->style == STP_SYM_MODULE) {
		if (known)
			stp__copy(out, m->path, stp__strlen(m->path));
		return 1;
	}
	args[1] = (uint64_t)(uintptr_t)m->path;
	args[2] = args[0] - m->base;
	args[3] = m->end - m->base;
	if (st->style == STP_SYM_DATA) {
		if (known)
			bpf_snprintf(out, MAXSTRINGLEN, data_fmt, args, 32);
		else
			bpf_snprintf(out, MAXSTRINGLEN, hex_fmt, args, 8);
		return 1;
	}
	if (st->style == STP_SYM_FULL) {
		args[4] = args[3];
		args[3] = args[2];
		args[2] = args[1];
		args[1] = args[0];
		r = known ? bpf_snprintf(out + pos, MAXSTRINGLEN - pos, full_fmt, args, 40)
			  : bpf_snprintf(out + pos, MAXSTRINGLEN - pos, bare_full_fmt, args, 16);
	} else {
		if (STP_IN_STR(m->leaf))
			args[1] = (uint64_t)(uintptr_t)(m->path + m->leaf);
		r = known ? bpf_snprintf(out + pos, MAXSTRINGLEN - pos, line_fmt, args, 24)
			  : bpf_snprintf(out + pos, MAXSTRINGLEN - pos, bare_line_fmt, args, 8);
	}
	return stp__line_placed(out, st->b, pos, r);
}

static __always_inline void stp__usym_names(char *out, struct stp_stack_buf *b, int n,
					    int64_t style)
{
	uint32_t zero = 0;
	struct stp__usym_state st = { out, b, bpf_map_lookup_elem(&stp_umod_bufs, &zero), style,
				      n };

	if (!st.m)
		return;
	b->at = 0;
	stp__loop(STP_STACK_MAX, stp__usym_step, &st);
}
#endif

#ifndef STP_DYNINST
/*
 * probefunc() where the probe interrupted user code (a uprobe, a sample
 * of user mode): stap's usymname(uaddr()), in a .return the caller;
 * false elsewhere.
 */
static __always_inline bool stp__probe_usym(struct context *c, char *out)
{
	struct stp_stack_buf *b;

	if (!stp_user_mode(c) || !stp_uaddr(c) || !(b = stp__stack_buf()))
		return false;
	out[0] = '\0';
	stp__usym_names(out, b, 1, STP_SYM_NAME);
	return true;
}
#endif

STP_SERVICE void stp_sym_sprint(struct context *c, char *out, const char *stk, int64_t style,
				int64_t flags)
{
	bool user = flags & STP_STACK_USER;
#ifndef STP_DYNINST
	struct stp_stack_buf *b;
	int n;
#endif

	out[0] = '\0';
#ifndef STP_DYNINST
	if (!user && stp__ksym(out, stk, style))
		return;
	if (user || style == STP_SYM_LINES || style == STP_SYM_FULL) {
		b = stp__stack_buf();
		if (!b)
			return;
		n = stp__addrs(b, stk);
		if (user)
			stp__usym_names(out, b, n, style);
		else if (!STP_KSTACK_REFUSED(c))
			stp__kstack_names(out, b, n, style);
		return;
	}
#endif
#if defined(STP_DYNINST) && defined(STP_USYMS)
	if (user && (style == STP_SYM_NAME || style == STP_SYM_DATA)) {
		stp__usym_dyn(out, (uint64_t)stp__strtol(stk, 16), style);
		return;
	}
	if (user && (style == STP_SYM_LINES || style == STP_SYM_FULL)) {
		stp__usym_dyn_stack(out, stk, style);
		return;
	}
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
	if (flags & STP_STACK_USER) {	/* for stp_umaps (uaddr() may have noted nothing) */
		struct stp_stack_buf *b = stp__stack_buf();

		if (b)
			stp__stack_capture(b, STP_STACK_USER);
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

/*
 * uaddr(): the frame's file is noted for naming the address after its
 * process is gone, but not in interrupt context, where the note would keep
 * the handler's own file lookups (umodname(uaddr()) in timer.profile) from
 * taking the mm's lock: see stp__stack_capture().
 */
STP_SERVICE uint64_t stp_uaddr(struct context *c)
{
	struct stp_stack_buf *b = stp__stack_buf();
	int64_t how = STP_STACK_USER;

#ifdef STP_CTX_UREGS
	if (stp_ctx_in_irq(c))
		how |= STP_STACK_UNNOTED;
#endif
	if (!b || stp__stack_capture(b, how) < 1)
		return 0;
	return b->addrs[0];
}

#endif
