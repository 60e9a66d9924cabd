/*
 * emit_usyms.c - the symbols of the probed programs, for naming their
 * addresses in kernel context.
 *
 * stap's module carries the symbol tables of the files its process
 * probes name, so that usymname(), usymdata(), probefunc() (stap's
 * usymname(uaddr()) in a user probe: in a .return the caller),
 * sprint_ustack() and its kin give names there, where the string itself
 * is needed: an array's key, a comparison.  (Printed straight away, a
 * name is given in user space: translator/emit_symdefer.c.)  A script
 * that calls them gets the same: for each file its uprobes are in, each
 * -d FILE and with --ldd the libraries they load, the
 * functions and objects of its .symtab (else its separate debug file's,
 * else its .dynsym), as file offsets, sorted, in read-only data the
 * handlers search (runtime/bpf/stp_stack.bpf.h: stp__usym_in()).  stap's
 * rule: the last symbol at or below the address, its size the distance
 * to the next.  The kernel's runtimes know a file by its path and size,
 * or by the inode the path leads to where the script runs (a process in
 * a container maps the file under another path); the dyninst runtime by
 * its build id.  The
 * files are dependencies of the build (filedeps.c), so a cached object
 * never carries a changed file's symbols.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <elfutils/libdwelf.h>
#include "emit_int.h"
#include "emit_uprobe.h"
#include "probe_kinds.h"
#include "probes_user.h"

/* What read-only data may hold: the BPF runtime's .rodata is one map value. */
#define USYMS_MAX 65536
#define USYM_NAMES_MAX (1u << 20)

struct usym_ent {
	uint64_t off;		/* in the file */
	const char *name;
	int rank;		/* among symbols at one offset, the higher kept */
	size_t index;		/* then the first in the table, as libdwfl keeps */
};

/* Whether the program calls a tapset function that names user addresses. */
static bool calls_any(const struct emitter *E)
{
	static const char *const names[] = { "usymname", "usymdata", "probefunc", "sprint_ustack",
					     "sprint_ubacktrace", "sprint_usyms" };

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const struct func *f = emit_called(E, names[k]);

		if (f && f->file && f->file->is_tapset)
			return true;
	}
	return false;
}

/* ELF's symbol table of TYPE (its header into *SH), or NULL. */
static Elf_Scn *symtab_of(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = probes_user_section_of_type(elf, type);

	return scn && gelf_getshdr(scn, sh) && sh->sh_entsize ? scn : NULL;
}

static int by_offset(const void *a, const void *b)
{
	const struct usym_ent *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;	/* the preferred first */
	return x->index < y->index ? -1 : x->index > y->index;
}

/* A global function before a weak one before a local one, then objects. */
static int rank_of(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);

	return (GELF_ST_TYPE(s->st_info) == STT_FUNC ? 4 : 0) +
	       (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0);
}

/* UE's symbols as stap's module keeps them, sorted, one per offset; how many. */
static int file_syms(struct uelf *ue, struct usym_ent **out)
{
	Elf *elf = ue->elf;
	GElf_Shdr sh, secsh;
	Elf_Scn *scn = symtab_of(elf, SHT_SYMTAB, &sh);
	Elf_Data *data;
	struct usym_ent *v;
	int n = 0, kept = 0;

	if (!scn && ue->dw && dwarf_getelf(ue->dw) != elf) {	/* a separate debug file's */
		elf = dwarf_getelf(ue->dw);
		scn = symtab_of(elf, SHT_SYMTAB, &sh);
	}
	if (!scn) {
		elf = ue->elf;
		scn = symtab_of(elf, SHT_DYNSYM, &sh);
	}
	*out = NULL;
	if (!scn || !(data = elf_getdata(scn, NULL)))
		return 0;
	v = arena_alloc(sizeof(*v) * (sh.sh_size / sh.sh_entsize + 1));
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym s;
		const char *name;
		uint64_t off;
		Elf_Scn *sec;

		if (!gelf_getsym(data, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE)
			continue;
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC && GELF_ST_TYPE(s.st_info) != STT_OBJECT)
			continue;
		sec = elf_getscn(elf, s.st_shndx);
		if (!sec || !gelf_getshdr(sec, &secsh) || !(secsh.sh_flags & SHF_ALLOC))
			continue;
		name = elf_strptr(elf, sh.sh_link, s.st_name);
		if (!name || !*name || !probes_user_file_offset(ue, s.st_value, &off))
			continue;
		if (name[0] == '.')	/* stap drops a leading dot (ppc64's function entries) */
			name++;
		v[n++] = (struct usym_ent){ off, name, rank_of(&s), i };
	}
	qsort(v, (size_t)n, sizeof(*v), by_offset);
	for (int i = 0; i < n; i++)
		if (!kept || v[kept - 1].off != v[i].off)
			v[kept++] = v[i];
	*out = v;
	return kept;
}

/* A string into the names blob; its offset there. */
static uint32_t blob_add(FILE *names, uint32_t *len, const char *s)
{
	uint32_t at = *len;
	size_t n = strlen(s);

	fprintf(names, "\n\t%s \"\\0\"", emit_c_string(s, n));
	*len += (uint32_t)n + 1;
	return at;
}

/* PATH onto PATHS once. */
static void add_path(struct vec *paths, const char *path)
{
	for (int i = 0; i < paths->len; i++)
		if (!strcmp(VEC_AT(paths, i), path))
			return;
	vec_push(paths, (void *)path);
}

/*
 * The files named: those the uprobes are in, then stap's -d FILEs (a
 * kernel module's name, which the kernel names itself, is left out), and
 * with --ldd the libraries all of them load, and theirs.
 */
static void named_files(struct emitter *E, struct vec *paths)
{
	for (int i = 0; i < E->prog->probes.len; i++) {
		struct derived_probe *dp = VEC_AT(&E->prog->probes, i);

		if (dp->elf_path && probe_class(dp) == PCLASS_UPROBE)
			add_path(paths, dp->elf_path);
	}
	for (int i = 0; i < E->s->sym_files.len; i++) {
		const char *f = VEC_AT(&E->s->sym_files, i), *why = NULL;

		if (!strchr(f, '/'))
			continue;
		if (probes_user_elf(f, &why))
			add_path(paths, f);
		else
			diag_warning((struct srcloc){ 0 }, "-d %s: cannot read it: %s", f, why);
	}
	for (int i = 0; E->s->ldd && i < paths->len; i++) {
		const char *why = NULL;
		struct uelf *ue = probes_user_elf(VEC_AT(paths, i), &why);
		struct vec libs = { 0 };

		if (ue)
			probes_user_needed(ue, &libs);
		for (int k = 0; k < libs.len; k++)
			add_path(paths, VEC_AT(&libs, k));
	}
}

void emit_usym_tables(struct emitter *E, FILE *out)
{
	struct vec paths = { 0 };
	int total = 0, nfiles = 0;
	uint32_t names_len = 0;
	char *names_buf = NULL, *syms_buf = NULL, *files_buf = NULL;
	size_t names_size = 0, syms_size = 0, files_size = 0;
	FILE *names, *syms, *files;

	if (!calls_any(E))
		return;
	named_files(E, &paths);
	if (!paths.len)
		return;
	names = open_memstream(&names_buf, &names_size);
	syms = open_memstream(&syms_buf, &syms_size);
	files = open_memstream(&files_buf, &files_size);
	for (int k = 0; k < paths.len; k++) {
		const char *why = NULL, *path = VEC_AT(&paths, k);
		struct uelf *ue = probes_user_elf(path, &why);
		struct usym_ent *v;
		struct stat st;
		const unsigned char *id = NULL;
		const char *spelt;
		char *real;
		ssize_t idlen;
		uint32_t path_at, leaf;
		int n;

		if (!ue || fstat(ue->fd, &st) != 0)
			continue;
		n = file_syms(ue, &v);
		if (!n)
			continue;
		if (total + n > USYMS_MAX || names_len > USYM_NAMES_MAX) {
			diag_warning((struct srcloc){ 0 },
				     "the symbols of '%s' do not fit beside the others (%d, at most "
				     "%d in all): in kernel context its addresses are named as "
				     "a file offset", path, n, USYMS_MAX);
			continue;
		}
		real = realpath(path, NULL);	/* as the kernel's d_path() spells it */
		spelt = real ? real : path;
		path_at = blob_add(names, &names_len, spelt);
		leaf = strrchr(spelt, '/') ? (uint32_t)(strrchr(spelt, '/') + 1 - spelt) : 0;
		free(real);
		fprintf(files, "%s\n\t{ %u, %u, %d, %d, %lluULL, {", nfiles ? "," : "", path_at, leaf,
			total, n, (unsigned long long)st.st_size);
		idlen = dwelf_elf_gnu_build_id(ue->elf, (const void **)&id);
		for (ssize_t i = 0; id && i < idlen && i < 20; i++)
			fprintf(files, "%s0x%02x", i ? ", " : " ", id[i]);
		fprintf(files, " } }");
		for (int i = 0; i < n; i++)
			fprintf(syms, "%s\n\t{ %#llxULL, %u }", total + i ? "," : "",
				(unsigned long long)v[i].off, blob_add(names, &names_len, v[i].name));
		total += n;
		nfiles++;
	}
	fclose(names);
	fclose(syms);
	fclose(files);
	if (nfiles) {
		fprintf(out, "/* the probed files' symbols, for names in kernel context "
			"(translator/emit_usyms.c) */\n");
		fprintf(out, "#define STP_USYMS %d\n#define STP_USYM_FILES %d\n", total, nfiles);
		fprintf(out, "static const char stp_usym_names[] SEC(\".rodata\") =%s;\n", names_buf);
		/*
		 * writable data: the verifier knows the values of read-only
		 * data, and would follow the search down every branch
		 */
		fprintf(out, "static struct stp_usym stp_usyms[STP_USYMS] SEC(\".data\") = {"
			"%s\n};\n", syms_buf);
		fprintf(out, "static struct stp_usym_file stp_usym_files[STP_USYM_FILES] "
			"SEC(\".data\") = {%s\n};\n\n", files_buf);
	}
	free(names_buf);
	free(syms_buf);
	free(files_buf);
}
