/*
 * symbolize.c - names for code addresses: the kernel's from
 * /proc/kallsyms, a process's through libdwfl.  See symbolize.h.
 */
#define _GNU_SOURCE		/* strdup, getline */
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../stp_tapset.h"
#include "symbolize.h"

#define PROC_CACHE 16		/* processes whose reports are kept */

struct ksym {
	uint64_t addr;
	char *name;
	char *module;		/* NULL: the kernel */
};

struct proc {
	int pid;		/* 0: a free slot */
	Dwfl *dwfl;
	dev_t exe_dev;		/* /proc/PID/exe when reported: a change means exec */
	ino_t exe_ino;
	unsigned long used;	/* for eviction */
	bool rereported;	/* reported again for an address outside its modules */
};

struct stp_sym {
	char *kallsyms;
	struct ksym *ksyms;
	size_t nksyms;
	bool kloaded;
	struct proc procs[PROC_CACHE];
	unsigned long clock;
	char *name;		/* the last lookup's name, demangled or copied */
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct stp_sym *stp_sym__new(void)
{
	return calloc(1, sizeof(struct stp_sym));
}

static void drop_ksyms(struct stp_sym *sym)
{
	for (size_t i = 0; i < sym->nksyms; i++) {
		free(sym->ksyms[i].name);
		free(sym->ksyms[i].module);
	}
	free(sym->ksyms);
	sym->ksyms = NULL;
	sym->nksyms = 0;
	sym->kloaded = false;
}

void stp_sym__forget(struct stp_sym *sym, int pid)
{
	for (int i = 0; i < PROC_CACHE; i++) {
		struct proc *p = &sym->procs[i];

		if (p->pid && (pid < 0 || p->pid == pid)) {
			dwfl_end(p->dwfl);
			memset(p, 0, sizeof(*p));
		}
	}
}

void stp_sym__free(struct stp_sym *sym)
{
	if (!sym)
		return;
	drop_ksyms(sym);
	stp_sym__forget(sym, -1);
	free(sym->kallsyms);
	free(sym->name);
	free(sym);
}

void stp_sym__set_kallsyms(struct stp_sym *sym, const char *file)
{
	free(sym->kallsyms);
	sym->kallsyms = file ? strdup(file) : NULL;
	drop_ksyms(sym);
}

/* ---- the kernel ---- */

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Text symbols only: "ffffffff81000000 T _stext [module]". */
static bool parse_kallsyms_line(char *line, struct ksym *k)
{
	char type, name[256], module[128] = "";
	unsigned long long addr;
	int n = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, module);

	if (n < 3 || !addr || (type != 't' && type != 'T' && type != 'w' && type != 'W'))
		return false;
	k->addr = addr;
	k->name = strdup(name);
	k->module = module[0] ? strdup(module) : NULL;
	return k->name != NULL;
}

void *stp_grow(void *arr, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t more = *cap ? *cap * 2 : first;
	void *v;

	if (n < *cap)
		return arr;
	v = realloc(arr, more * size);
	if (v)
		*cap = more;
	return v;
}

static void load_ksyms(struct stp_sym *sym)
{
	FILE *f = fopen(sym->kallsyms ? sym->kallsyms : "/proc/kallsyms", "r");
	size_t cap = 0, n = 0;
	char *line = NULL;
	size_t linecap = 0;
	struct ksym k, *v;

	sym->kloaded = true;
	if (!f)
		return;
	while (getline(&line, &linecap, f) > 0) {
		if (!parse_kallsyms_line(line, &k))
			continue;
		v = stp_grow(sym->ksyms, n, &cap, sizeof(*v), 4096);
		if (!v)
			break;
		sym->ksyms = v;
		sym->ksyms[n++] = k;
	}
	free(line);
	fclose(f);
	sym->nksyms = n;
	qsort(sym->ksyms, n, sizeof(*sym->ksyms), ksym_cmp);
}

/*
 * The last symbol at or below ADDR; its size runs to the next one's
 * address, but a BPF function's is the kernel's word (0: unknown).
 */
static bool kernel_lookup(struct stp_sym *sym, uint64_t addr, struct stp_sym_info *info)
{
	size_t lo = 0, hi;
	const struct ksym *k;

	if (!sym->kloaded)
		load_ksyms(sym);
	hi = sym->nksyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sym->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	k = &sym->ksyms[lo - 1];
	info->name = k->name;
	info->offset = addr - k->addr;
	info->size = 0;
	info->module = k->module ? k->module : "kernel";
	if (strcmp(info->module, "bpf") == 0) {
		/* packed with room between: the next entry is no measure */
		info->size = stp_sym_bpf_len(k->addr);
		return !info->size || info->offset < info->size;
	}
	for (size_t i = lo; i < sym->nksyms && !info->size; i++)
		info->size = sym->ksyms[i].addr - k->addr;
	if (info->size && info->offset >= info->size)
		return false;
	return true;
}

/* ---- processes ---- */

static bool exe_id(int pid, dev_t *dev, ino_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st) != 0)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

static Dwfl *report(int pid)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

static struct proc *proc_slot(struct stp_sym *sym, int pid)
{
	struct proc *victim = &sym->procs[0];

	for (int i = 0; i < PROC_CACHE; i++) {
		struct proc *p = &sym->procs[i];

		if (p->pid == pid)
			return p;
		if (!p->pid || (victim->pid && p->used < victim->used))
			victim = p;
	}
	if (victim->pid)
		dwfl_end(victim->dwfl);
	memset(victim, 0, sizeof(*victim));
	return victim;
}

/*
 * The cached report of PID, made again when its executable changed: an
 * exec, or another process with the same pid.  A process that is gone
 * keeps its report (its last records may still be in flight).
 */
static struct proc *proc_get(struct stp_sym *sym, int pid)
{
	struct proc *p = proc_slot(sym, pid);
	dev_t dev = 0;
	ino_t ino = 0;
	bool alive = exe_id(pid, &dev, &ino);

	if (p->pid && (!alive || (dev == p->exe_dev && ino == p->exe_ino))) {
		p->used = ++sym->clock;
		return p;
	}
	if (p->pid)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
	if (!alive)
		return NULL;
	p->dwfl = report(pid);
	if (!p->dwfl)
		return NULL;
	p->pid = pid;
	p->exe_dev = dev;
	p->exe_ino = ino;
	p->used = ++sym->clock;
	return p;
}

static bool module_lookup(struct stp_sym *sym, Dwfl_Module *mod, uint64_t addr,
			  struct stp_sym_info *info)
{
	GElf_Off off = 0;
	GElf_Sym s;
	const char *name = dwfl_module_addrinfo(mod, addr, &off, &s, NULL, NULL, NULL);
	const char *file = NULL;

	if (!name)
		return false;
	free(sym->name);
	sym->name = strdup(name);
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	info->name = sym->name ? sym->name : "";
	info->offset = off;
	info->size = s.st_size;
	info->module = file ? file : dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL,
						      NULL);
	return true;
}

static bool user_lookup(struct stp_sym *sym, int pid, uint64_t addr, struct stp_sym_info *info)
{
	struct proc *p = proc_get(sym, pid);
	Dwfl_Module *mod;

	if (!p)		/* gone before it was seen: what its stacks left (symbolize_umaps.c) */
		return stp_sym_umaps_lookup(pid, addr, info);
	mod = dwfl_addrmodule(p->dwfl, addr);
	if (!mod && !p->rereported) {
		/* a library mapped since the report (dlopen): report once more */
		Dwfl *again = report(pid);

		p->rereported = true;
		if (again) {
			dwfl_end(p->dwfl);
			p->dwfl = again;
			mod = dwfl_addrmodule(p->dwfl, addr);
		}
	}
	if (mod && module_lookup(sym, mod, addr, info))
		return true;
	return stp_sym_umaps_lookup(pid, addr, info);
}

/* The running kernel's _stext, from kallsyms; 0 when unknown. */
static uint64_t kernel_stext(struct stp_sym *sym)
{
	if (!sym->kloaded)
		load_ksyms(sym);
	for (size_t i = 0; i < sym->nksyms; i++)
		if (!sym->ksyms[i].module && strcmp(sym->ksyms[i].name, "_stext") == 0)
			return sym->ksyms[i].addr;
	return 0;
}

/* The source file and line of ADDR (of the kernel when PID is 0); false when unknown. */
static bool line_lookup(struct stp_sym *sym, int pid, uint64_t addr, const char **file, int *line)
{
	struct proc *p;
	Dwfl_Module *mod;
	Dwfl_Line *l;

	*file = NULL;
	*line = 0;
	if (pid <= 0)
		return stp_sym_kernel_line(kernel_stext(sym), addr, file, line);
	p = proc_get(sym, pid);
	mod = p ? dwfl_addrmodule(p->dwfl, addr) : NULL;
	l = mod ? dwfl_module_getsrc(mod, addr) : NULL;
	*file = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
	/* gone before it was seen: what its stacks left (symbolize_umaps.c) */
	return *file != NULL || stp_sym_umaps_line(pid, addr, file, line);
}

bool stp_sym__lookup(struct stp_sym *sym, int pid, uint64_t addr, struct stp_sym_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!sym)
		return false;
	return pid > 0 ? user_lookup(sym, pid, addr, info) : kernel_lookup(sym, addr, info);
}

/* ---- formats ---- */

/*
 * STP_SYM_FILELINE, as stap's _stp_snprint_addr() writes it: "file:line",
 * "file" when the line is not known, else the address in hex.
 */
static int format_fileline(struct stp_sym *sym, int pid, uint64_t addr, char *buf, size_t len)
{
	const char *file;
	int line;

	if (!line_lookup(sym, pid, addr, &file, &line))
		return snprintf(buf, len, "0x%" PRIx64, addr);
	return line > 0 ? snprintf(buf, len, "%s:%d", file, line) : snprintf(buf, len, "%s", file);
}

size_t stp_sym__format(struct stp_sym *sym, int pid, uint64_t addr, int style, char *buf,
		       size_t len)
{
	struct stp_sym_info si;
	bool known = false;
	int n;

	if (!len)
		return 0;
	if (style != STP_SYM_FILELINE)
		known = stp_sym__lookup(sym, pid, addr, &si);
	if (style == STP_SYM_FILELINE)
		n = format_fileline(sym, pid, addr, buf, len);
	else if (style == STP_SYM_MODULE)
		n = snprintf(buf, len, "%s", known ? si.module : "");
	else if (style == STP_SYM_NAME)
		n = known ? snprintf(buf, len, "%s", si.name) : snprintf(buf, len, "0x%" PRIx64, addr);
	else if (style == STP_SYM_FULL && known && !si.size)	/* stap's form without a size */
		n = snprintf(buf, len, " 0x%" PRIx64 " : %s+0x%" PRIx64 " [%s]\n", addr, si.name,
			     si.offset, si.module);
	else if (style == STP_SYM_FULL && known)
		n = snprintf(buf, len, " 0x%" PRIx64 " : %s+0x%" PRIx64 "/0x%" PRIx64 " [%s]\n", addr,
			     si.name, si.offset, si.size, si.module);
	else if (style == STP_SYM_FULL)
		n = snprintf(buf, len, " 0x%" PRIx64 "\n", addr);
	else if (known && !si.size)
		n = snprintf(buf, len, "%s+0x%" PRIx64 " [%s]", si.name, si.offset, si.module);
	else if (known)
		n = snprintf(buf, len, "%s+0x%" PRIx64 "/0x%" PRIx64 " [%s]", si.name, si.offset,
			     si.size, si.module);
	else
		n = snprintf(buf, len, "0x%" PRIx64, addr);
	if (n < 0)
		n = 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

size_t stp_sym__format_stack(struct stp_sym *sym, int pid, const char *stk, int style, char *buf,
			     size_t len)
{
	size_t at = 0;
	char *end;

	if (!len)
		return 0;
	buf[0] = '\0';
	while (*stk && at + 1 < len) {
		uint64_t addr = strtoull(stk, &end, 16);

		if (end == stk)
			break;
		stk = end + strspn(end, " \t\n");
		if (at && style != STP_SYM_FULL)
			buf[at++] = style == STP_SYM_LINES ? '\n' : ' ';
		at += stp_sym__format(sym, pid, addr, style, buf + at, len - at);
	}
	if (at && style == STP_SYM_LINES && at + 1 < len)
		buf[at++] = '\n';
	buf[at < len ? at : len - 1] = '\0';
	return at < len ? at : len - 1;
}

struct stp_sym *stp_sym_default(void)
{
	static struct stp_sym *sym;

	if (!sym)
		sym = stp_sym__new();
	return sym;
}
