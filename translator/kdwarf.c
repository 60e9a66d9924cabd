/*
 * kdwarf.c - the kernel's own debuginfo (a vmlinux with DWARF), read with
 * elfutils' libdw: the source file of each kernel function, so that
 * kernel.function("PATTERN@FILE") means the functions of FILE, as in stap;
 * the instances of inline functions, which BTF and kallsyms do not know,
 * each probed at its entry inside the function it is inlined into; and
 * their parameters, as BTF types and as C over the kprobe's registers.
 *
 * The file is found as stap and gdb find it: by the kernel's build-id
 * (the sysroot's /sys/kernel/notes), then by the kernel's release.  It is
 * not a file the build depends on at run time (filedeps.h): the kernel's
 * build-id already names the build, and the machine that runs it need not
 * have its debuginfo.
 */
#include <dwarf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <linux/btf.h>
#include "arena.h"
#include "diag.h"
#include "hmap.h"
#include "filedeps.h"
#include "kmodfile.h"
#include "dwarf_read.h"
#include "dwarf_lines.h"
#include "kdwarf.h"
#include "kdwarf_index.h"
#include "manifest.h"
#include "probes_btf.h"
#include "sysroot.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* ELF's build-id in hex, "" when it has none. */
static const char *build_id_of(Elf *elf)
{
	const unsigned char *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	char *hex;

	if (n <= 0 || n > 64)
		return "";
	hex = arena_alloc(2 * (size_t)n + 1);
	for (ssize_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	return hex;
}

/* The build-id in hex WANT ("" when unknown) is ELF's, or ELF has none. */
static bool same_build(Elf *elf, const char *want)
{
	const char *have = build_id_of(elf);

	return !*want || !*have || strcmp(have, want) == 0;
}

/*
 * One file's DWARF: vmlinux's (kfiles[0]), or a module's .ko, relocated by
 * libdwfl as if loaded (its sections laid out one after another from an
 * address above 0), so that its functions, lines and symbols share one
 * address space as vmlinux's do.  A DIE is named across files by an id:
 * its offset, the file's index above DIE_FILE_SHIFT (vmlinux's ids are
 * its offsets).
 */
struct kfile {
	const char *module;	/* NULL: vmlinux */
	Dwarf *dw;
	Elf *elf;		/* its sections, at the addresses the DWARF uses */
	Dwfl *dwfl;		/* a module's: what relocated it */
	Dwarf_CFI *cfi;
	struct vec ksyms;	/* struct ksym *, by address (in the arena) */
	struct kindex *index;	/* the units that define each function name */
	bool index_tried;
	struct hmap by_name;	/* function symbol name -> struct ksym * (in the arena) */
	struct hmap twice;	/* the names of function symbols it has more than once */
	unsigned generation;	/* the arena's, for the three above */
	const char *path, *want;	/* a module's: its file with DWARF, the one to install */
	const char *ko;		/* a module's .ko under /lib/modules, which the kernel loads */
};

#define DIE_FILE_SHIFT 48
#define KFILES_MAX 256

static struct kfile *kfiles[KFILES_MAX];
static int nfiles = 1;		/* kfiles[0] is vmlinux's, when it is found */

static uint64_t die_id(const struct kfile *kf, Dwarf_Off off)
{
	for (int i = 0; i < nfiles; i++)
		if (kfiles[i] == kf)
			return (uint64_t)i << DIE_FILE_SHIFT | off;
	return 0;
}

static struct kfile *die_file(uint64_t id)
{
	uint64_t i = id >> DIE_FILE_SHIFT;

	return i < (uint64_t)nfiles ? kfiles[i] : NULL;
}

/* The DIE of ID, in its file. */
static bool die_at(uint64_t id, Dwarf_Die *die)
{
	struct kfile *kf = die_file(id);

	return kf && dwarf_offdie(kf->dw, id & (((uint64_t)1 << DIE_FILE_SHIFT) - 1), die);
}

/*
 * KF's tables that live in the arena, emptied for a new translation.  A
 * module's .ko is a file the build depends on (filedeps.h): its offsets
 * and locations are compiled in, and another build of the module under the
 * same release would put them on other instructions.
 */
static struct kfile *fresh(struct kfile *kf)
{
	if (kf && kf->generation != arena_generation()) {
		if (kf->module) {
			int fd = open(kf->ko, O_RDONLY | O_CLOEXEC);

			filedeps_add(kf->ko, fd);
			if (fd >= 0)
				close(fd);
		}
		kf->ksyms = (struct vec){ 0 };
		kf->by_name = (struct hmap){ .str_keys = true };
		kf->twice = (struct hmap){ .str_keys = true };
		kf->generation = arena_generation();
	}
	return kf;
}

/* PATH as the kernel's debuginfo: DWARF, and the kernel's build-id if both have one. */
static bool try_open(const char *path, const char *build_id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	Dwarf *d = NULL;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && same_build(elf, build_id))
		d = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!d) {
		if (elf)
			elf_end(elf);
		close(fd);
		return false;
	}
	kfiles[0] = calloc(1, sizeof(*kfiles[0]));
	kfiles[0]->dw = d;
	kfiles[0]->elf = elf;
	kfiles[0]->path = strdup(path);
	return true;
}

const char *kdwarf_vmlinux(const char **want)
{
	static const char *found, *wanted;
	static bool tried;
	const char *kver = sysroot_kernel_release(), *env = getenv("PMSTAP_VMLINUX");
	const char *id = sysroot_kernel_build_id(), *cand[5];
	int n = 0;

	if (tried) {
		*want = wanted;
		return found;
	}
	tried = true;
	if (strcmp(id, "none") == 0)
		id = "";
	if (env && *env) {
		cand[n++] = env;
	} else {
		if (*id)
			cand[n++] = arena_printf(DEBUG_ROOT "/.build-id/%.2s/%s.debug", id, id + 2);
		cand[n++] = arena_printf(DEBUG_ROOT "/boot/vmlinux-%s", kver);
		cand[n++] = arena_printf(DEBUG_ROOT "/lib/modules/%s/vmlinux", kver);
		cand[n++] = arena_printf("/lib/modules/%s/build/vmlinux", kver);
	}
	for (int i = 0; i < n && !found; i++) {
		manifest_file(cand[i]);	/* missing now, it may come: looked at again */
		if (try_open(cand[i], id))
			found = strdup(cand[i]);
	}
	wanted = strdup(env && *env ? env : arena_printf(DEBUG_ROOT "/boot/vmlinux-%s", kver));
	*want = wanted;
	return found;
}

/* ---- a module's debuginfo ---- */

/* A module's DWARF is in the .ko named: no separate file to look for. */
static int no_separate_file(Dwfl_Module *m, void **user, const char *name, Dwarf_Addr base,
			    const char *file, const char *debuglink, GElf_Word crc, char **path)
{
	(void)m, (void)user, (void)name, (void)base, (void)file, (void)debuglink, (void)crc;
	(void)path;
	return -1;
}

static const Dwfl_Callbacks offline = {
	.find_debuginfo = no_separate_file,
	.section_address = dwfl_offline_section_address,
};

/* The .ko at PATH as MODULE's DWARF, when it has DWARF and is the build BUILD_ID. */
static bool open_ko(struct kfile *kf, const char *path, const char *build_id)
{
	Dwfl *dwfl;
	Dwfl_Module *m;
	Dwarf_Addr bias;
	GElf_Addr ebias;

	if (access(path, R_OK) != 0 || !(dwfl = dwfl_begin(&offline)))
		return false;
	m = dwfl_report_offline(dwfl, kf->module, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	if (m && (kf->elf = dwfl_module_getelf(m, &ebias)) && same_build(kf->elf, build_id) &&
	    (kf->dw = dwfl_module_getdwarf(m, &bias))) {
		kf->dwfl = dwfl;
		return true;
	}
	kf->elf = NULL;
	dwfl_end(dwfl);
	return false;
}

/* The build-id of the .ko at PATH in hex, "" when it has none or cannot be read. */
static const char *ko_build_id(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *id = arena_alloc(2 * STP_BUILD_ID_MAX + 1);

	*id = '\0';
	if (fd >= 0) {
		stp_build_id_of_fd(fd, id);
		close(fd);
	}
	return id;
}

/* MODULE's file, its DWARF opened once (kf->dw NULL: it has none). */
static struct kfile *module_file(const char *module)
{
	const char *ko, *rel, *id, *cand[3];
	const char *dir = arena_printf("/lib/modules/%s/", sysroot_kernel_release());
	struct kfile *kf;
	int n = 0;

	for (int i = 1; i < nfiles; i++)
		if (strcmp(kfiles[i]->module, module) == 0)
			return kfiles[i];
	if (nfiles == KFILES_MAX)
		return NULL;
	kf = calloc(1, sizeof(*kf));
	kf->module = strdup(module);
	kfiles[nfiles++] = kf;
	if (!(ko = kmodfile_path(module)))
		return kf;
	kf->ko = strdup(ko);
	rel = strncmp(ko, dir, strlen(dir)) == 0 ? ko + strlen(dir) : ko;
	id = ko_build_id(ko);
	if (*id)
		cand[n++] = arena_printf(DEBUG_ROOT "/.build-id/%.2s/%s.debug", id, id + 2);
	cand[n++] = arena_printf(DEBUG_ROOT "%s%s", dir, rel);
	cand[n++] = ko;		/* a kernel built with its modules' DWARF kept */
	for (int i = 0; i < n && !kf->dw; i++) {
		manifest_file(cand[i]);
		if (open_ko(kf, cand[i], id))
			kf->path = strdup(cand[i]);
	}
	kf->want = strdup(cand[*id ? 1 : 0]);
	return kf;
}

const char *kdwarf_module(const char *module, const char **want)
{
	struct kfile *kf = module_file(module);

	*want = kf ? kf->want : NULL;
	return kf ? kf->path : NULL;
}

/* MODULE's DWARF (NULL: vmlinux's), or NULL when it has none. */
static struct kfile *kfile_of(const char *module)
{
	const char *want;
	struct kfile *kf = module ? module_file(module) : kdwarf_vmlinux(&want) ? kfiles[0] : NULL;

	return kf && kf->dw ? fresh(kf) : NULL;
}

bool kdwarf_installed(const char *module)
{
	return kfile_of(module) != NULL;
}

/* ---- functions by source file ---- */

struct query {
	struct kfile *kf;
	const char *name_pat, *file_pat, *prefixed;
	struct hmap files;	/* the CU's source files FILE_PAT matches */
	struct hmap seen;	/* entry pcs already taken (aliases) */
	struct hmap inline_seen;	/* "PC NAME" of inline instances taken (in two CUs) */
	struct hmap origins;	/* the CU's inline functions that match: DIE offset -> Dwarf_Die * */
	Dwarf_Die *func;	/* the function being looked at */
	struct vec *out;
};

/*
 * The CU's source files that FILE_PAT matches, as stap's
 * dwflpp::collect_srcfiles_matching picks them; false when none does.
 */
static bool cu_files(Dwarf_Die *cu, struct query *q)
{
	Dwarf_Files *files;
	size_t n;

	q->files = (struct hmap){ .str_keys = true };
	if (dwarf_getsrcfiles(cu, &files, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);

		if (f && (fnmatch(q->file_pat, f, 0) == 0 || fnmatch(q->prefixed, f, 0) == 0))
			hmap_put(&q->files, f, (void *)f);
	}
	return q->files.len > 0;
}

/*
 * Where DIE's code is entered: DW_AT_entry_pc or DW_AT_low_pc, else the
 * start of its first range (a function split into hot and cold parts has
 * only DW_AT_ranges, the hot part first); 0 when it has no code.
 */
static Dwarf_Addr entry_pc(Dwarf_Die *die)
{
	Dwarf_Addr pc, base, end;

	if (dwarf_entrypc(die, &pc) == 0)
		return pc;
	return dwarf_ranges(die, 0, &base, &pc, &end) > 0 ? pc : 0;
}

/*
 * Where DIE is declared: its decl file and line; an assembler function
 * has none (GNU as 2.40 gives it a DIE with its name and code only), and
 * stap names it by the line record at its entry, as here.
 */
static const char *decl_of(Dwarf_Die *die, Dwarf_Addr pc, int *line)
{
	const char *file = dwarf_decl_file(die);
	Dwarf_Line *rec;
	Dwarf_Die cu;

	*line = 0;
	if (file) {
		dwarf_decl_line(die, line);
		return file;
	}
	if (!pc || !dwarf_diecu(die, &cu, NULL, NULL) || !(rec = dwarf_getsrc_die(&cu, pc)))
		return NULL;
	dwarf_lineno(rec, line);
	return dwarf_linesrc(rec, NULL, NULL);
}

static struct kdwarf_func *add(struct query *q, Dwarf_Addr pc, bool inlined)
{
	struct kdwarf_func *f = ARENA_NEW(struct kdwarf_func);

	f->name = arena_strdup(dwarf_diename(q->func));
	f->file = arena_strdup(decl_of(q->func, pc, &f->line));
	f->entry = pc;
	f->inlined = inlined;
	f->module = q->kf->module;
	vec_push(q->out, f);
	return f;
}

/* An instance of the inline function q->func: a probe at its entry pc, once per pc. */
static int take_instance(Dwarf_Die *inst, void *arg)
{
	struct query *q = arg;
	Dwarf_Addr pc = entry_pc(inst);
	const char *key;

	if (!pc)
		return DWARF_CB_OK;
	key = arena_printf("%" PRIx64 " %s", (uint64_t)pc, dwarf_diename(q->func));
	if (!hmap_get(&q->inline_seen, key)) {
		hmap_put(&q->inline_seen, key, (void *)1);
		add(q, pc, true)->die = die_id(q->kf, dwarf_dieoffset(inst));
	}
	return DWARF_CB_OK;
}

/*
 * Whether the code at PC is "F.part.N", the tail GCC split off a function
 * it inlined elsewhere, which DWARF describes as F's code but no caller
 * enters there: stap 4.8 leaves it out of its functions (PR12609).
 */
static bool split_tail(struct kfile *kf, Dwarf_Addr pc)
{
	const char *name = kdwarf_symbol_at(kf->module, pc);

	return name && strstr(name, ".part.");
}

/*
 * One function of the CU whose name and decl file match: its own code, one
 * probe at its entry (once per pc: aliases share it); an inline
 * function's instances, as stap's dwarf_query takes them.
 */
static int take_function(Dwarf_Die *die, void *arg)
{
	struct query *q = arg;
	const char *name = dwarf_diename(die), *file;
	Dwarf_Addr pc;
	int line;

	if (!name || fnmatch(q->name_pat, name, 0) != 0)
		return DWARF_CB_OK;
	q->func = die;
	if (dwarf_func_inline(die)) {	/* its instances: found by walk_instances() */
		if ((file = dwarf_decl_file(die)) && (!q->file_pat || hmap_get(&q->files, file))) {
			Dwarf_Die *copy = ARENA_NEW(Dwarf_Die);

			*copy = *die;
			hmap_put(&q->origins, (void *)(uintptr_t)dwarf_dieoffset(die), copy);
		}
		return DWARF_CB_OK;
	}
	if (!(pc = entry_pc(die)) || !(file = decl_of(die, pc, &line)) ||
	    (q->file_pat && !hmap_get(&q->files, file)) || hmap_get(&q->seen, (void *)(uintptr_t)pc) ||
	    split_tail(q->kf, pc))
		return DWARF_CB_OK;
	hmap_put(&q->seen, (void *)(uintptr_t)pc, (void *)1);
	add(q, pc, false)->die = die_id(q->kf, dwarf_dieoffset(die));
	return DWARF_CB_OK;
}

/*
 * The instances under PARENT of the inline functions in q->origins, in one
 * walk of the CU: dwarf_func_inline_instances() walks the whole CU for
 * each function, which made a wildcard over many inline functions take
 * minutes.
 */
static void walk_instances(Dwarf_Die *parent, struct query *q)
{
	Dwarf_Die child, origin;
	Dwarf_Attribute attr;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		if (dwarf_tag(&child) == DW_TAG_inlined_subroutine &&
		    dwarf_attr(&child, DW_AT_abstract_origin, &attr) &&
		    dwarf_formref_die(&attr, &origin) &&
		    (q->func = hmap_get(&q->origins, (void *)(uintptr_t)dwarf_dieoffset(&origin))))
			take_instance(&child, q);
		if (dwarf_haschildren(&child))
			walk_instances(&child, q);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * KF's index of the units that define each function name, made once per
 * build of the file (kdwarf_index.h): named by its build-id and size, as
 * a stripped copy and its debuginfo share the build-id.
 */
static struct kindex *index_of(struct kfile *kf)
{
	const char *id;
	struct stat st;

	if (!kf->index_tried) {
		kf->index_tried = true;
		id = build_id_of(kf->elf);
		kf->index = kindex_open(kf->dw, *id && stat(kf->path, &st) == 0 ?
					arena_printf("%s-%lld", id, (long long)st.st_size) : "");
	}
	return kf->index;
}

bool kdwarf_functions(const char *module, const char *name_pat, const char *file_pat,
		      struct vec *out)
{
	struct query q = { .kf = kfile_of(module), .name_pat = name_pat, .file_pat = file_pat,
			   .prefixed = file_pat ? arena_printf("*/%s", file_pat) : NULL, .out = out,
			   .inline_seen = { .str_keys = true } };
	struct vec units = { 0 };

	if (!q.kf)
		return false;
	if (index_of(q.kf))
		kindex_units(q.kf->index, name_pat, &units);
	for (int i = 0; i < units.len; i++) {
		Dwarf_Die cu;

		if (dwarf_offdie(q.kf->dw, (uintptr_t)VEC_AT(&units, i), &cu) &&
		    (!file_pat || cu_files(&cu, &q))) {
			q.origins = (struct hmap){ 0 };
			dwarf_getfuncs(&cu, take_function, &q, 0);
			if (q.origins.len)
				walk_instances(&cu, &q);
		}
	}
	return true;
}

void kdwarf_name_points(const struct kdwarf_func *f, struct vec *out)
{
	struct vec all = { 0 };

	kdwarf_functions(f->module, f->name, NULL, &all);
	for (int i = 0; i < all.len; i++) {
		struct kdwarf_func *g = VEC_AT(&all, i);

		if (g->inlined || g->entry != f->entry)
			vec_push(out, g);
	}
}

/* Line L of source SRC is one that FILE_PAT (or, NULL, F's decl file) names. */
static bool line_file(const struct kdwarf_func *f, const char *file_pat, const char *src)
{
	if (!src)
		return false;
	if (!file_pat)
		return strcmp(src, f->file) == 0;
	return fnmatch(file_pat, src, 0) == 0 ||
	       fnmatch(arena_printf("*/%s", file_pat), src, 0) == 0;
}

const char *kdwarf_missing(const char *module)
{
	const char *want, *kver = sysroot_kernel_release();

	if (!module)
		return arena_printf("there is no vmlinux with DWARF for %s", kver);
	if (!kdwarf_module(module, &want) && !want)
		return arena_printf("there is no %s.ko under /lib/modules/%s", module, kver);
	return arena_printf("there is no %s.ko with DWARF for %s", module, kver);
}

void kdwarf_hint_install(const char *module)
{
	const char *want, *kver = sysroot_kernel_release();

	if (module) {
		if (!kdwarf_module(module, &want) && want)
			diag_hint("install %s (Debian's linux-image-%s-dbg has it)", want, kver);
		return;
	}
	kdwarf_vmlinux(&want);
	if (getenv("PMSTAP_VMLINUX") && *getenv("PMSTAP_VMLINUX"))
		diag_hint("PMSTAP_VMLINUX names '%s', which is not this kernel's vmlinux with DWARF",
			  want);
	else
		diag_hint("install %s (Debian's linux-image-%s-dbg has it)", want, kver);
}

/* A line record's file is one that kdwarf_line_pc()'s FILE_PAT names. */
struct line_query {
	const struct kdwarf_func *f;
	const char *pat;
};

static bool line_file_match(const char *src, const void *arg)
{
	const struct line_query *q = arg;

	return line_file(q->f, q->pat, src);
}

void kdwarf_lines_pcs(const struct kdwarf_func *f, const char *file_pat, const int *lines,
		      int nlines, uint64_t *pcs)
{
	struct line_query q = { f, file_pat };
	Dwarf_Die die;

	if (die_at(f->die, &die))
		dwarf_lines_pcs(&die, lines, nlines, line_file_match, &q, pcs);
	else
		memset(pcs, 0, (size_t)nlines * sizeof(*pcs));
}

bool kdwarf_line_pc(const struct kdwarf_func *f, const char *file_pat, int line, uint64_t *pc,
		    int *below, int *above)
{
	struct line_query q = { f, file_pat };
	Dwarf_Die die;

	*below = *above = 0;
	return die_at(f->die, &die) && dwarf_lines_pc(&die, line, line_file_match, &q, pc, below, above);
}

void kdwarf_all_lines(const struct kdwarf_func *f, struct vec *out)
{
	Dwarf_Die die;

	if (die_at(f->die, &die))
		dwarf_lines_all(&die, f->file, f->entry, out);
}

void kdwarf_func_ranges(const struct kdwarf_func *f, struct vec *out)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die die;
	ptrdiff_t off = 0;

	if (!die_at(f->die, &die))
		return;
	while ((off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0) {
		struct kdwarf_range *r = ARENA_NEW(struct kdwarf_range);

		r->lo = lo;
		r->hi = hi;
		vec_push(out, r);
	}
}

void kdwarf_labels(const struct kdwarf_func *f, const char *pat, struct vec *out)
{
	Dwarf_Die die;

	if (die_at(f->die, &die))
		dwarf_lines_labels(&die, pat, out);
}

/* The name of KF's allocated section that holds PC, or "". */
static const char *section_of(struct kfile *kf, uint64_t pc)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!kf || elf_getshdrstrndx(kf->elf, &shstrndx) != 0)
		return "";
	while ((scn = elf_nextscn(kf->elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || pc < sh.sh_addr ||
		    pc - sh.sh_addr >= sh.sh_size)
			continue;
		name = elf_strptr(kf->elf, shstrndx, sh.sh_name);
		return name ? name : "";
	}
	return "";
}

/* ---- the symbol table ---- */

struct ksym {
	uint64_t addr, size;
	const char *name;
	unsigned shndx;		/* its section's index */
	bool global;
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = *(struct ksym *const *)a, *y = *(struct ksym *const *)b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Each function symbol of ELF's .symtab: TAKE(ARG, it, its name). */
static void each_function(Elf *elf, void (*take)(void *arg, const GElf_Sym *sym, const char *name),
			  void *arg)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				take(arg, &sym, elf_strptr(elf, sh.sh_link, sym.st_name));
		}
	}
}

/*
 * A function symbol of KF, at its address: a module's symbol is an offset
 * into its section, which libdwfl placed at the section header's address.
 */
static void take_ksym(void *arg, const GElf_Sym *sym, const char *name)
{
	struct kfile *kf = arg;
	struct ksym *k;
	GElf_Shdr sh;
	uint64_t base = 0;

	if (kf->module) {
		if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
		    !gelf_getshdr(elf_getscn(kf->elf, sym->st_shndx), &sh))
			return;
		base = sh.sh_addr;
	}
	if (!sym->st_value && !base)
		return;
	k = ARENA_NEW(struct ksym);
	k->addr = base + sym->st_value;
	k->size = sym->st_size;
	k->name = name;
	k->shndx = sym->st_shndx;
	k->global = GELF_ST_BIND(sym->st_info) == STB_GLOBAL;
	vec_push(&kf->ksyms, k);
}

/* KF's function symbols, by address; NULL when KF is. */
static struct kfile *symbols(struct kfile *kf)
{
	if (kf && !kf->ksyms.len) {
		each_function(kf->elf, take_ksym, kf);
		qsort(kf->ksyms.items, (size_t)kf->ksyms.len, sizeof(void *), by_addr);
	}
	return kf;
}

struct ko_query {
	Elf *elf;
	size_t shstrndx;
	struct vec *names;
};

/* A function of a module's .text (not .init.text, freed once loaded, nor .exit.text). */
static void take_ko_function(void *arg, const GElf_Sym *sym, const char *name)
{
	struct ko_query *q = arg;
	GElf_Shdr sh;
	const char *sec;

	if (!name || sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE ||
	    !gelf_getshdr(elf_getscn(q->elf, sym->st_shndx), &sh) ||
	    !(sec = elf_strptr(q->elf, q->shstrndx, sh.sh_name)) ||
	    (strcmp(sec, ".text") != 0 && strncmp(sec, ".text.", 6) != 0))
		return;
	vec_push(q->names, arena_strdup(name));
}

bool kdwarf_ko_functions(const char *path, struct vec *names)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct ko_query q = { .names = names };

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	q.elf = elf_begin(fd, ELF_C_READ, NULL);
	if (q.elf && elf_getshdrstrndx(q.elf, &q.shstrndx) == 0)
		each_function(q.elf, take_ko_function, &q);
	if (q.elf)
		elf_end(q.elf);
	close(fd);
	return true;
}

/* The index of KF's last function symbol at or below PC, -1 if none. */
static int symbol_below(struct kfile *kf, uint64_t pc)
{
	int lo = 0, hi = kf->ksyms.len - 1, found = -1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;

		if (((struct ksym *)VEC_AT(&kf->ksyms, mid))->addr <= pc) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

/* KF's function symbol whose code holds PC (the first of aliases), or NULL. */
static const struct ksym *symbol_holding(struct kfile *kf, uint64_t pc)
{
	int found;
	struct vec *ks;

	if (!symbols(kf))
		return NULL;
	ks = &kf->ksyms;
	found = symbol_below(kf, pc);
	while (found > 0 && ((struct ksym *)VEC_AT(ks, found - 1))->addr ==
			    ((struct ksym *)VEC_AT(ks, found))->addr)
		found--;
	for (; found >= 0 && found < ks->len; found++) {
		const struct ksym *k = VEC_AT(ks, found);

		if (k->addr > pc)
			break;
		if (pc < k->addr + (k->size ? k->size : 1))
			return k;
	}
	return NULL;
}

/*
 * KF's function symbol NAME, NULL when it has none; of two, vmlinux's
 * first by address (as kallsyms finds it), a module's global one (what
 * module("M").function("NAME") probes: kmodfile_site()).
 */
static const struct ksym *symbol_named(struct kfile *kf, const char *name)
{
	if (!symbols(kf))
		return NULL;
	if (!kf->by_name.len) {
		hmap_reserve(&kf->by_name, kf->ksyms.len);
		for (int i = 0; i < kf->ksyms.len; i++) {
			const struct ksym *k = VEC_AT(&kf->ksyms, i), *had;

			if (!k->name)
				continue;
			if (!(had = hmap_get(&kf->by_name, k->name)) ||
			    (kf->module && k->global && !had->global))
				hmap_put(&kf->by_name, k->name, (void *)k);
			if (had && !hmap_get(&kf->twice, k->name))
				hmap_put(&kf->twice, k->name, (void *)1);
		}
	}
	return hmap_get(&kf->by_name, name);
}

/* Whether KF has function symbol NAME once. */
static bool unique_in(struct kfile *kf, const char *name)
{
	return symbol_named(kf, name) && !hmap_get(&kf->twice, name);
}

bool kdwarf_symbol_unique(const char *module, const char *name)
{
	return unique_in(kfile_of(module), name);
}

const char *kdwarf_symbol_anchor(const char *module, uint64_t pc, uint64_t *offset)
{
	struct kfile *kf = kfile_of(module);
	const struct ksym *in = symbol_holding(kf, pc);

	if (!in)
		return NULL;
	for (int i = symbol_below(kf, pc); i >= 0; i--) {
		const struct ksym *k = VEC_AT(&kf->ksyms, i);

		if (k->shndx == in->shndx && k->name && unique_in(kf, k->name)) {
			*offset = pc - k->addr;
			return k->name;
		}
	}
	return NULL;
}

struct entered_at {
	const char *name;
	Dwarf_Addr pc;
	Dwarf_Die die;
	bool found;
};

static int take_entered_at(Dwarf_Die *die, void *arg)
{
	struct entered_at *e = arg;
	const char *name = dwarf_diename(die);

	if (!name || strcmp(name, e->name) != 0 || dwarf_func_inline(die) || entry_pc(die) != e->pc)
		return DWARF_CB_OK;
	e->die = *die;
	e->found = true;
	return DWARF_CB_ABORT;
}

/*
 * E's function in KF's DWARF: in the units the index says define its
 * name, else in the unit that holds its address (dwarf_addrdie() reads
 * every unit's address ranges first, a quarter of a one-liner's pass 2).
 */
static bool find_entered(struct kfile *kf, struct entered_at *e)
{
	struct vec units = { 0 };
	Dwarf_Die cu;

	if (index_of(kf))
		kindex_units(kf->index, e->name, &units);
	for (int i = 0; i < units.len && !e->found; i++)
		if (dwarf_offdie(kf->dw, (uintptr_t)VEC_AT(&units, i), &cu))
			dwarf_getfuncs(&cu, take_entered_at, e, 0);
	if (!e->found && dwarf_addrdie(kf->dw, e->pc, &cu))
		dwarf_getfuncs(&cu, take_entered_at, e, 0);
	return e->found;
}

const char *kdwarf_function_point(const char *module, const char *name, struct kdwarf_func *f)
{
	struct kfile *kf = kfile_of(module);
	const struct ksym *k = symbol_named(kf, name);
	struct entered_at e = { .name = name, .pc = k ? k->addr : 0 };
	const char *file;
	int line;

	if (!e.pc || !find_entered(kf, &e) || !(file = decl_of(&e.die, e.pc, &line)))
		return NULL;
	f->module = kf->module;
	f->name = name;
	f->file = file;
	f->line = line;
	f->entry = e.pc;
	f->die = die_id(kf, dwarf_dieoffset(&e.die));
	return arena_printf("%s@%s:%d", name, file, line);
}

const char *kdwarf_symbol_at(const char *module, uint64_t pc)
{
	const struct ksym *k = symbol_holding(kfile_of(module), pc);

	return k && k->addr == pc ? k->name : NULL;
}

const char *kdwarf_symbol_holding(const char *module, uint64_t pc, uint64_t *offset)
{
	const struct ksym *k = symbol_holding(kfile_of(module), pc);

	if (k)
		*offset = pc - k->addr;
	return k ? k->name : NULL;
}

/*
 * Whether symbol K is "F.part.N" where DWARF has F's code entered (the
 * tail split_tail() leaves out of the functions): DWARF's then, not one
 * the symbol table adds.
 */
static bool dwarf_tail(struct kfile *kf, const struct ksym *k)
{
	const char *part = strstr(k->name, ".part.");
	struct entered_at e = { .pc = k->addr };
	Dwarf_Die cu;

	if (!part || !dwarf_addrdie(kf->dw, k->addr, &cu))
		return false;
	e.name = arena_strndup(k->name, (size_t)(part - k->name));
	dwarf_getfuncs(&cu, take_entered_at, &e, 0);
	return e.found;
}

void kdwarf_symtab_functions(const char *module, const char *name_pat, const struct vec *dwarf,
			     struct vec *out)
{
	struct hmap taken = { 0 };	/* addresses a DWARF function's symbol is at */
	struct kfile *kf = symbols(kfile_of(module));

	if (!kf)
		return;
	for (int i = 0; i < dwarf->len; i++) {
		const struct kdwarf_func *f = VEC_AT(dwarf, i);
		Dwarf_Addr pc;
		Dwarf_Die die;

		if (!f->inlined && die_at(f->die, &die) && dwarf_entrypc(&die, &pc) == 0)
			hmap_put(&taken, (void *)(uintptr_t)pc, (void *)1);
	}
	for (int i = 0; i < kf->ksyms.len; i++) {
		const struct ksym *k = VEC_AT(&kf->ksyms, i);

		if (k->name && index_of(kf) && (kindex_has(kf->index, k->name) || dwarf_tail(kf, k)))
			hmap_put(&taken, (void *)(uintptr_t)k->addr, (void *)1);
	}
	for (int i = 0; i < kf->ksyms.len; i++) {
		const struct ksym *k = VEC_AT(&kf->ksyms, i);
		struct kdwarf_func *f;

		if (!k->name || fnmatch(name_pat, k->name, 0) != 0 ||
		    hmap_get(&taken, (void *)(uintptr_t)k->addr))
			continue;
		hmap_put(&taken, (void *)(uintptr_t)k->addr, (void *)1);
		f = ARENA_NEW(struct kdwarf_func);
		f->name = k->name;
		f->file = "";
		f->entry = k->addr;
		f->module = kf->module;
		vec_push(out, f);
	}
}

/* ---- stap's blocklist ---- */

/*
 * stap 4.8's kernel blocklist (dwflpp::build_kernel_blocklist), which it
 * applies to every probe it resolves from DWARF outside guru mode:
 * functions that run where a kprobe must not fire (locks, NMI and fault
 * paths, atomics), files of the same kind, and .return of functions that
 * never return.
 */
static const char bl_func[] =
	"^(atomic_notifier_call_chain|default_do_nmi|__die|die_nmi|do_debug"
	"|do_general_protection|do_int3|do_IRQ|do_page_fault|do_sparc64_fault|do_trap"
	"|dummy_nmi_callback|flush_icache_range|ia64_bad_break|ia64_do_page_fault|ia64_fault"
	"|io_check_error|mem_parity_error|nmi_watchdog_tick|notifier_call_chain|oops_begin"
	"|oops_end|program_check_exception|single_step_exception|sync_regs|unhandled_fault"
	"|unknown_nmi_error|xen_[gs]et_debugreg|xen_irq_.*|xen_.*_fl_direct.*|check_events"
	"|xen_adjust_exception_frame|xen_iret.*|xen_sysret64.*|test_ti_thread_flag.*"
	"|inat_get_opcode_attribute|system_call_after_swapgs|HYPERVISOR_[gs]et_debugreg"
	"|HYPERVISOR_event_channel_op|hash_64|hash_ptr|native_set_pte"
	"|.*raw_.*_lock.*|.*raw_.*_unlock.*|.*raw_.*_trylock.*|.*read_lock.*|.*read_unlock.*"
	"|.*read_trylock.*|.*write_lock.*|.*write_unlock.*|.*write_trylock.*|.*write_seqlock.*"
	"|.*write_sequnlock.*|.*spin_lock.*|.*spin_unlock.*|.*spin_trylock.*|.*spin_is_locked.*"
	"|rwsem_.*lock.*|.*mutex_.*lock.*|atomic_.*|atomic64_.*|get_bh|put_bh"
	"|.*apic.*|.*APIC.*|.*softirq.*|.*IRQ.*|.*_intr.*|__delay|.*kernel_text.*|get_current"
	"|current_.*|.*exception_tables.*|.*setup_rt_frame.*|.*preempt_count.*|preempt_schedule"
	"|__switch_to|special_mapping_.*|.*_pte_.*)$";
static const char bl_section[] =
	"^(\\.init\\.|\\.exit\\.|\\.devinit\\.|\\.devexit\\.|\\.cpuinit\\.|\\.cpuexit\\."
	"|\\.meminit\\.|\\.memexit\\.|\\.kprobes\\.text)";
static const char bl_func_ret[] = "^(do_exit|sys_exit|sys_exit_group)$";
static const char bl_file[] =
	"^(kernel/kprobes\\.c|arch/.*/kernel/kprobes\\.c|.*/include/asm/io\\.h"
	"|.*/include/asm/io-defs\\.h|.*/include/asm/io_64\\.h|.*/include/asm/bitops\\.h"
	"|drivers/ide/ide-iops\\.c|arch/.*/kernel/paravirt\\.c|.*/include/asm/paravirt\\.h"
	"|fs/seq_file\\.c)$";

/* The blocklist's expressions, compiled once: a wildcard checks tens of thousands of points. */
enum { BL_SECTION, BL_FUNC, BL_FUNC_RET, BL_FILE, BL_N };

static bool matches(int which, const char *s)
{
	static const char *const text[BL_N] = { bl_section, bl_func, bl_func_ret, bl_file };
	static regex_t re[BL_N];
	static int compiled[BL_N];	/* 0: not yet, 1: compiled, -1: failed */

	if (!compiled[which])
		compiled[which] = regcomp(&re[which], text[which], REG_NOSUB | REG_EXTENDED) == 0
					  ? 1 : -1;
	return compiled[which] > 0 && regexec(&re[which], s, 0, NULL, 0) == 0;
}

bool kdwarf_init_exit(const struct kdwarf_func *f)
{
	const char *sec = section_of(kfile_of(f->module), f->entry);

	return strncmp(sec, ".init.", 6) == 0 || strncmp(sec, ".exit.", 6) == 0;
}

bool kdwarf_blocklisted(const struct kdwarf_func *f, bool is_return)
{
	return (!f->module && matches(BL_SECTION, section_of(kfile_of(NULL), f->entry))) || matches(BL_FUNC, f->name) ||
	       (is_return && matches(BL_FUNC_RET, f->name)) || matches(BL_FILE, f->file);
}

/* ---- the parameters of an inline instance ---- */

/*
 * Local variable NAME of SCOPE or of a block in it that holds PC (a
 * statement's: kernel.statement), the outermost first.
 */
static bool scope_local(Dwarf_Die *scope, const char *name, uint64_t pc, Dwarf_Die *var)
{
	Dwarf_Die child;

	if (dwarf_child(scope, &child) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&child);

		if (dwarf_tag(&child) == DW_TAG_variable && n && strcmp(n, name) == 0) {
			*var = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	dwarf_child(scope, &child);
	do {
		if (dwarf_tag(&child) == DW_TAG_lexical_block && dwarf_haspc(&child, pc) > 0 &&
		    scope_local(&child, name, pc, var))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * Parameter NAME (or the I-th when NAME is NULL) of inline instance DIE_OFF;
 * by NAME also a local variable in scope at PC (0: the entry, none).
 */
static bool instance_param_at(uint64_t die_off, const char *name, int i, uint64_t pc,
			      Dwarf_Die *param)
{
	Dwarf_Die inst;

	if (!die_at(die_off, &inst) || dwarf_child(&inst, param) != 0)
		return false;
	do {
		const char *n = dwarf_diename(param);

		if (dwarf_tag(param) == DW_TAG_formal_parameter && n &&
		    (name ? strcmp(n, name) == 0 : i-- == 0))
			return true;
	} while (dwarf_siblingof(param, param) == 0);
	return name && pc && scope_local(&inst, name, pc, param);
}

static bool instance_param(uint64_t die_off, const char *name, int i, Dwarf_Die *param)
{
	return instance_param_at(die_off, name, i, 0, param);
}

const char *kdwarf_param_names(uint64_t die)
{
	char *s = "";
	Dwarf_Die p;

	for (int i = 0; instance_param(die, NULL, i, &p); i++)
		s = arena_printf("%s%s%s", s, i ? ", " : "", dwarf_diename(&p));
	return s;
}

/*
 * As stap 4.8's -L (its saveargs()): the variables of the scopes its
 * $$vars lists (dwarf_point_vars()), innermost first, each that has a
 * location at the point (PC, or DIE's entry), typed as declared
 * (typedef names kept, arrays as "int[]").
 */
void kdwarf_param_vars(uint64_t die, uint64_t pc, struct vec *v)
{
	Dwarf_Die fn, type;
	Dwarf_Attribute a;
	Dwarf_Addr at = pc;
	struct vec vars = { 0 };

	if (!die_at(die, &fn) || (!pc && !(at = entry_pc(&fn))))
		return;
	dwarf_point_vars(&fn, pc, "vars", &vars);
	for (int i = 0; i < vars.len; i++) {
		Dwarf_Die *var = VEC_AT(&vars, i);

		if (dwarf_var_has_value(var, at))
			vec_push(v, arena_printf("$%s:%s", dwarf_diename(var),
				 dwarf_attr_integrate(var, DW_AT_type, &a) &&
				 dwarf_formref_die(&a, &type) ? dwarf_type_listed(&type) : "void"));
	}
}

void kdwarf_return_var(uint64_t die, struct vec *v)
{
	Dwarf_Die fn, type;
	Dwarf_Attribute a;

	if (die_at(die, &fn) && dwarf_attr_integrate(&fn, DW_AT_type, &a) &&
	    dwarf_formref_die(&a, &type))
		vec_push(v, arena_printf("$return:%s", dwarf_type_listed(&type)));
}

/* DWARF type TYPE (past typedefs and qualifiers) as a BTF type id; -1 if BTF has none. */
static int btf_of(Dwarf_Die *type)
{
	Dwarf_Die inner;
	const char *name = dwarf_diename(type);

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type:
		if (!dwarf_type_of(type, &inner))
			return btf_find(BTF_KIND_PTR, NULL, 0);		/* void * */
		return btf_of(&inner) < 0 ? -1 : btf_find(BTF_KIND_PTR, NULL, btf_of(&inner));
	case DW_TAG_structure_type:
		return btf_find(BTF_KIND_STRUCT, name, 0);
	case DW_TAG_union_type:
		return btf_find(BTF_KIND_UNION, name, 0);
	case DW_TAG_enumeration_type:
		return btf_find(BTF_KIND_ENUM, name, 0);
	case DW_TAG_base_type:
		return btf_find(BTF_KIND_INT, name, 0);
	default:
		return -1;
	}
}

int kdwarf_var_btf(uint64_t var)
{
	Dwarf_Die v, type;

	if (!die_at(var, &v) || !dwarf_type_of(&v, &type))
		return -1;
	return btf_of(&type);
}

bool kdwarf_param_btf(uint64_t die, uint64_t pc, const char *name, int *btf_id,
		      const char **why)
{
	Dwarf_Die p, type;

	if (!instance_param_at(die, name, 0, pc, &p)) {
		*why = arena_printf("the %s has no parameter '%s'%s (its parameters: %s)",
				    pc ? "function" : "inline instance", name,
				    pc ? " nor a variable of that name in scope there" : "",
				    kdwarf_param_names(die));
		return false;
	}
	if (!dwarf_type_of(&p, &type) || (*btf_id = btf_of(&type)) < 0) {
		*why = arena_printf("the type of parameter '%s' (%s) is not in the kernel's BTF", name,
				    dwarf_type_of(&p, &type) ? dwarf_type_text(&type) : "void");
		return false;
	}
	return true;
}

/*
 * The frame base of the function whose code PC is (an inline instance's
 * is its caller's) and the canonical frame address there, from
 * vmlinux's .debug_frame: what DW_OP_fbreg and DW_OP_call_frame_cfa need.
 */
static void frame_env(struct kfile *kf, uint64_t pc, struct dwarf_loc_env *env)
{
	/* the last point's: a probe's variables (and $$vars's) are all at one pc */
	static struct dwarf_loc_env last;
	static uint64_t last_pc;
	static struct kfile *last_kf;
	Dwarf_Die cu, *scopes = NULL, *fn;
	Dwarf_Op *ops;
	size_t n;
	int nscopes;

	if (pc != last_pc || kf != last_kf) {
		last = (struct dwarf_loc_env){ 0 };
		last_pc = pc;
		last_kf = kf;
		if (!kf->cfi)
			kf->cfi = dwarf_getcfi(kf->dw);
		if (dwarf_cfi_cfa_ops(&kf->cfi, 1, pc, &ops, &n)) {
			last.cfa = ops;
			last.ncfa = n;
		}
		if (dwarf_addrdie(kf->dw, pc, &cu) && (nscopes = dwarf_getscopes(&cu, pc, &scopes)) > 0) {
			fn = dwarf_scopes_function(scopes, nscopes);
			if (fn && dwarf_frame_base_ops(fn, pc, &ops, &n)) {
				last.fb = ops;
				last.nfb = n;
			}
			free(scopes);
		}
	}
	env->cfa = last.cfa;
	env->ncfa = last.ncfa;
	env->fb = last.fb;
	env->nfb = last.nfb;
}

/* Variable P's value at PC: see kdwarf_param_value(). */
static bool var_value(struct kfile *kf, Dwarf_Die *p, uint64_t pc, const char *regs,
		      const char *(*deref)(void *arg, const char *addr, int size), void *arg,
		      bool want_addr, const char **c, const char **why)
{
	struct dwarf_loc_env env = { .regs = regs, .deref = deref, .arg = arg, .bias = "0" };
	struct dwarf_loc loc;
	Dwarf_Op *ops;
	size_t n;
	int64_t k;
	int r = dwarf_var_ops(p, pc, &ops, &n, &k, why);

	if (r == 2 && want_addr)
		*why = "it is a constant, not in memory";
	if (r == 2 && !want_addr)
		*c = arena_printf("%lldLL", (long long)k);
	if (r != 1)
		return r == 2 && !want_addr;
	frame_env(kf, pc, &env);
	if (!dwarf_loc_translate(ops, n, &env, &loc)) {
		*why = arena_strdup(loc.err);
		return false;
	}
	if (want_addr && loc.is_value) {
		*why = "it is kept in registers, not in memory";
		return false;
	}
	*c = want_addr || loc.is_value ? loc.c : deref(arg, loc.c, 8);
	return true;
}

bool kdwarf_param_value(uint64_t die, uint64_t pc, const char *name, const char *regs,
			const char *(*deref)(void *arg, const char *addr, int size), void *arg,
			bool want_addr, const char **c, const char **why)
{
	Dwarf_Die p;

	if (!instance_param_at(die, name, 0, pc, &p)) {
		*why = arena_printf("no parameter '%s'", name);
		return false;
	}
	return var_value(die_file(die), &p, pc, regs, deref, arg, want_addr, c, why);
}

static const char *no_read(void *arg, const char *addr, int size)
{
	(void)arg;
	(void)addr;
	(void)size;
	return "0";
}

bool kdwarf_param_readable(uint64_t die, uint64_t pc, const char *name, const char **why)
{
	const char *c;

	return kdwarf_param_value(die, pc, name, "ctx", no_read, NULL, false, &c, why);
}

void kdwarf_context_vars(uint64_t die, uint64_t pc, const char *which, struct vec *out)
{
	Dwarf_Die fn, type;
	struct vec vars = { 0 };

	if (!die_at(die, &fn))
		return;
	dwarf_point_vars(&fn, pc, which, &vars);
	for (int i = 0; i < vars.len; i++) {
		Dwarf_Die *var = VEC_AT(&vars, i);
		struct kdwarf_var *v = ARENA_NEW(struct kdwarf_var);

		v->name = dwarf_diename(var);
		v->off = die_id(die_file(die), dwarf_dieoffset(var));
		v->shape = 'v';
		v->bytes = 8;
		if (dwarf_type_of(var, &type) && dwarf_type_strip(&type)) {
			int tag = dwarf_tag(&type);

			v->shape = tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
				   tag == DW_TAG_class_type ? '{' : tag == DW_TAG_array_type ? '[' : 'v';
			v->bytes = dwarf_type_bytes(&type);
			v->is_signed = dwarf_type_is_signed(&type);
		}
		vec_push(out, v);
	}
}

bool kdwarf_var_value(uint64_t var, uint64_t pc, const char *regs,
		      const char *(*deref)(void *arg, const char *addr, int size), void *arg,
		      bool want_addr, const char **c, const char **why)
{
	Dwarf_Die p;

	if (!die_at(var, &p)) {
		*why = "no such DIE";
		return false;
	}
	return var_value(die_file(var), &p, pc, regs, deref, arg, want_addr, c, why);
}
