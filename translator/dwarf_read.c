/*
 * dwarf_read.c - debuginfo of user-space programs through elfutils' libdw, for
 * target variables in process(...).function/.statement probes: the scopes
 * at the probe's address, variables, types and members, and DWARF
 * location expressions translated into C that reads the probe's
 * registers (struct pt_regs) and the process's memory.
 *
 * Locations are translated at compile time into C expressions: a stack of
 * C texts stands for the DWARF stack; DW_OP_deref and the reads a caller
 * does past the location become calls of env->deref, which writes the C
 * that reads user memory (and raises the soft error on a fault).
 */
#include <dwarf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <gelf.h>
#include "arena.h"
#include "debuginfo.h"
#include "dwarf_read.h"
#include "compile_int.h"
#include "filedeps.h"
#include "probes_sys.h"

struct dwarf_file {
	char *path;
	int fd;
	Elf *elf;
	Dwarf *dw;
	Dwarf_CFI *eh_cfi;		/* .eh_frame */
	Dwarf_CFI *dbg_cfi;		/* .debug_frame */
	int main_fd;			/* a separate debug file's program, for its .eh_frame; or -1 */
	Elf *main_elf;
	bool dyn;
	struct dwarf_file *next;
};

static struct dwarf_file *files;
static unsigned files_gen;

/* ---- files ---- */

/*
 * A separate debug file has no .eh_frame: the program it belongs to has
 * (debuginfo.c).  Kept open in F while F is.
 */
static Dwarf_CFI *main_eh_cfi(struct dwarf_file *f, const char *debug_path)
{
	const char *main = debuginfo_main_file(debug_path);

	f->main_fd = main ? open(main, O_RDONLY | O_CLOEXEC) : -1;
	filedeps_add(main, f->main_fd);
	f->main_elf = f->main_fd >= 0 ? elf_begin(f->main_fd, ELF_C_READ_MMAP, NULL) : NULL;
	return f->main_elf ? dwarf_getcfi_elf(f->main_elf) : NULL;
}

static void file_close(struct dwarf_file *f)
{
	if (f->eh_cfi)		/* dwarf_getcfi_elf's is the caller's to end */
		dwarf_cfi_end(f->eh_cfi);
	dwarf_end(f->dw);
	elf_end(f->elf);
	close(f->fd);
	if (f->main_elf)
		elf_end(f->main_elf);
	if (f->main_fd >= 0)
		close(f->main_fd);
	free(f->path);
	free(f);
}

static struct dwarf_file *file_open(const char *path, int dep, const char **why)
{
	struct dwarf_file *f = calloc(1, sizeof(*f));
	GElf_Ehdr eh;

	if (!f) {
		*why = "out of memory";
		return NULL;
	}
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		*why = arena_printf("cannot open '%s'", path);
		free(f);
		return NULL;
	}
	if (dep)
		filedeps_add(path, f->fd);
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	f->dw = f->elf ? dwarf_begin_elf(f->elf, DWARF_C_READ, NULL) : NULL;
	if (!f->dw) {
		*why = arena_printf("'%s' has no debuginfo (DWARF)", path);
		if (f->elf)
			elf_end(f->elf);
		close(f->fd);
		free(f);
		return NULL;
	}
	f->path = strdup(path);
	f->eh_cfi = main_eh_cfi(f, path);
	if (!f->eh_cfi)
		f->eh_cfi = dwarf_getcfi_elf(f->elf);
	f->dbg_cfi = dwarf_getcfi(f->dw);
	f->dyn = gelf_getehdr(f->elf, &eh) && eh.e_type == ET_DYN;
	return f;
}

/* The file opened as KEY in this translation, or NULL. */
static struct dwarf_file *file_find(const char *key)
{
	if (files_gen != arena_generation()) {	/* a new translation: the old one's files go */
		while (files) {
			struct dwarf_file *next = files->next;

			file_close(files);
			files = next;
		}
		files_gen = arena_generation();
	}
	for (struct dwarf_file *f = files; f; f = f->next)
		if (strcmp(f->path, key) == 0)
			return f;
	return NULL;
}

static struct dwarf_file *file_keep(struct dwarf_file *f)
{
	if (f) {
		f->next = files;
		files = f;
	}
	return f;
}

struct dwarf_file *dwarf_file_get(const char *path, const char **why)
{
	struct dwarf_file *f = file_find(path);

	return f ? f : file_keep(file_open(path, 1, why));
}

/* The names in MODULE "<a.h><b/c.h>", as #include lines; NULL if it is not that. */
static const char *includes(const char *module)
{
	const char *p = module, *end;
	char *lines = arena_strdup("");

	while (*p == '<' && (end = strchr(p, '>')) && end > p + 1) {
		for (const char *q = p + 1; q < end; q++)
			if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./+-", *q))
				return NULL;
		lines = arena_printf("%s#include <%.*s>\n", lines, (int)(end - p - 1), p + 1);
		p = end + 1;
	}
	return *p || !*lines ? NULL : lines;
}

/*
 * The headers' types: their #include lines compiled with cc -g into a
 * shared object (as stap's typequery module is), opened, then removed.
 * Not a file dependency of the build: what counts is the headers' text.
 */
static struct dwarf_file *compile_headers(const char *module, const char **why)
{
	const char *inc = includes(module), *cc = getenv("PMSTAP_CC"), *tmp = getenv("TMPDIR");
	struct tool t = { .name = "cc" };
	struct dwarf_file *f = NULL;
	const char *src, *obj;
	char *dir;
	FILE *out;

	*why = "not a list of headers such as \"<stdio.h>\"";
	if (!inc)
		return NULL;
	*why = "no C compiler (cc) to compile the headers with";
	cc = sys_find_executable(cc && *cc ? cc : "cc");
	dir = arena_printf("%s/pmstap-types-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!cc || !mkdtemp(dir))
		return NULL;
	src = arena_printf("%s/types.c", dir);
	obj = arena_printf("%s/types.so", dir);
	t.out = t.err = arena_printf("%s/cc.log", dir);
	*why = "cc cannot compile the headers";
	if ((out = fopen(src, "w"))) {
		fputs(inc, out);
		fclose(out);
		compile_tool_arg(&t, cc);
		compile_tool_arg(&t, "-g");
		compile_tool_arg(&t, "-fno-eliminate-unused-debug-types");
		compile_tool_arg(&t, "-shared");	/* linked: an object's DWARF needs relocating */
		compile_tool_arg(&t, "-o");
		compile_tool_arg(&t, obj);
		compile_tool_arg(&t, src);
		if (compile_tool_start(&t) && compile_tool_finish(&t))
			f = file_open(obj, 0, why);	/* open: the files can go */
	}
	unlink(src);
	unlink(obj);
	unlink(t.out);
	rmdir(dir);
	if (f) {
		free(f->path);
		f->path = strdup(module);	/* found again by the headers' names */
	}
	return f;
}

struct dwarf_file *dwarf_header_file(const char *module, const char **why)
{
	struct dwarf_file *f = file_find(module);

	return f ? f : file_keep(compile_headers(module, why));
}

bool dwarf_file_is_dyn(const struct dwarf_file *f)
{
	return f->dyn;
}

/* ---- scopes and names ---- */

static bool cu_at(struct dwarf_file *f, uint64_t pc, Dwarf_Die *cu)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (dwarf_addrdie(f->dw, pc, cu))
		return true;
	/* no .debug_aranges: look at every unit's ranges */
	while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(f->dw, off + hsize, cu) && dwarf_haspc(cu, pc) == 1)
			return true;
		off = next;
	}
	return false;
}

int dwarf_scopes_at(struct dwarf_file *f, uint64_t pc, Dwarf_Die **scopes)
{
	Dwarf_Die cu;
	int n;

	*scopes = NULL;
	if (!cu_at(f, pc, &cu))
		return 0;
	n = dwarf_getscopes(&cu, pc, scopes);
	return n > 0 ? n : 0;
}

/* Whether DIE is a function (out of line or an inline instance) NAME entered at ENTRY. */
static bool is_function_at(Dwarf_Die *die, const char *name, uint64_t entry)
{
	int tag = dwarf_tag(die);
	const char *n;
	Dwarf_Addr pc;

	if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
		return false;
	n = dwarf_diename(die);
	return n && strcmp(n, name) == 0 && dwarf_entrypc(die, &pc) == 0 && pc == entry;
}

static bool function_in(Dwarf_Die *parent, const char *name, uint64_t entry, Dwarf_Die *out,
			int depth)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);

		if (is_function_at(&c, name, entry)) {
			*out = c;
			return true;
		}
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
		     tag == DW_TAG_lexical_block) && function_in(&c, name, entry, out, depth + 1))
			return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * The scopes of function NAME entered at ENTRY, at PC.  When an inline
 * instance starts at PC, libdw's scopes at PC go on from it into the
 * inlined function's abstract definition and miss NAME's own: then the
 * chain is NAME's DIE and its parents.
 */
int dwarf_function_scopes(struct dwarf_file *f, uint64_t pc, const char *name, uint64_t entry,
			  Dwarf_Die **scopes)
{
	int n = dwarf_scopes_at(f, pc, scopes);
	Dwarf_Die cu, die;

	for (int i = 0; i < n; i++)
		if (is_function_at(&(*scopes)[i], name, entry))
			return n;
	if (!name || !cu_at(f, pc, &cu) || !function_in(&cu, name, entry, &die, 0))
		return n;
	free(*scopes);
	n = dwarf_getscopes_die(&die, scopes);
	return n > 0 ? n : 0;
}

bool dwarf_point_function(Dwarf_Die *scopes, int n, const char *name, uint64_t entry,
			  bool statement, Dwarf_Die *fn)
{
	for (int i = 0; i < n; i++)
		if (name && is_function_at(&scopes[i], name, entry)) {
			*fn = scopes[i];
			return true;
		}
	for (int i = 0; i < n && statement; i++)	/* its real function */
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*fn = scopes[i];
			return true;
		}
	return false;
}

void dwarf_point_vars(Dwarf_Die *fn, uint64_t pc, const char *which, struct vec *out)
{
	Dwarf_Die child, path[32];
	int n = 0;

	path[n++] = *fn;
	while (pc && n < 32 && dwarf_child(&path[n - 1], &child) == 0) {
		bool in = false;

		do {
			in = dwarf_tag(&child) == DW_TAG_lexical_block && dwarf_haspc(&child, pc) > 0;
		} while (!in && dwarf_siblingof(&child, &child) == 0);
		if (!in)
			break;
		path[n++] = child;
	}
	while (n-- > 0) {	/* the innermost block first */
		if (dwarf_child(&path[n], &child) != 0)
			continue;
		do {
			int tag = dwarf_tag(&child);
			Dwarf_Die *v;

			if ((tag != DW_TAG_variable && tag != DW_TAG_formal_parameter) ||
			    !dwarf_diename(&child) ||
			    (tag == DW_TAG_variable && !strcmp(which, "parms")) ||
			    (tag == DW_TAG_formal_parameter && !strcmp(which, "locals")))
				continue;
			v = ARENA_NEW(Dwarf_Die);
			*v = child;
			vec_push(out, v);
		} while (dwarf_siblingof(&child, &child) == 0);
	}
}

bool dwarf_var_has_value(Dwarf_Die *var, uint64_t pc)
{
	Dwarf_Op *ops;
	size_t n;
	int64_t k;
	const char *why;
	int rc = dwarf_var_ops(var, pc, &ops, &n, &k, &why);

	return rc == 1 || rc == 2;
}

Dwarf_Die *dwarf_scopes_function(Dwarf_Die *scopes, int n)
{
	for (int i = 0; i < n; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			return &scopes[i];
	return NULL;
}

bool dwarf_find_var(Dwarf_Die *scopes, int n, const char *name, Dwarf_Die *var)
{
	return n > 0 && dwarf_getscopevar(scopes, n, name, 0, NULL, 0, 0, var) >= 0;
}

static bool cu_matches(Dwarf_Die *cu, const char *cu_file)
{
	const char *n = dwarf_diename(cu);
	size_t ln, lf;

	if (!cu_file)
		return true;
	if (!n)
		return false;
	ln = strlen(n);
	lf = strlen(cu_file);
	return strcmp(n, cu_file) == 0 ||
	       (ln > lf && n[ln - lf - 1] == '/' && strcmp(n + ln - lf, cu_file) == 0) ||
	       fnmatch(cu_file, n, 0) == 0;
}

/* A child of CU with TAG and NAME that is a definition, into *OUT. */
static bool cu_child(Dwarf_Die *cu, int tag, const char *name, Dwarf_Die *out)
{
	Dwarf_Die c;

	if (dwarf_child(cu, &c) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&c);

		if (dwarf_tag(&c) == tag && n && strcmp(n, name) == 0 &&
		    !dwarf_hasattr(&c, DW_AT_declaration)) {
			*out = c;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

bool dwarf_find_global(struct dwarf_file *f, const char *name, const char *cu_file,
		       Dwarf_Die *var)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Die cu;

	while (dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(f->dw, off + hsize, &cu) && cu_matches(&cu, cu_file) &&
		    cu_child(&cu, DW_TAG_variable, name, var))
			return true;
		off = next;
	}
	return false;
}

bool dwarf_find_type(struct dwarf_file *f, const char *name, Dwarf_Die *type)
{
	static const struct {
		const char *prefix;
		int tag;
	} kinds[] = {
		{ "struct ", DW_TAG_structure_type }, { "union ", DW_TAG_union_type },
		{ "enum ", DW_TAG_enumeration_type }, { "class ", DW_TAG_class_type },
	};
	int tags[3] = { DW_TAG_structure_type, DW_TAG_typedef, DW_TAG_base_type };
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Die cu;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strncmp(name, kinds[i].prefix, strlen(kinds[i].prefix)) == 0) {
			name += strlen(kinds[i].prefix);
			tags[0] = kinds[i].tag;
			tags[1] = tags[2] = -1;
			break;
		}
	}
	for (int t = 0; t < 3 && tags[t] >= 0; t++) {
		for (off = 0; dwarf_nextcu(f->dw, off, &next, &hsize, NULL, NULL, NULL) == 0;
		     off = next)
			if (dwarf_offdie(f->dw, off + hsize, &cu) &&
			    cu_child(&cu, tags[t], name, type))
				return true;
	}
	return false;
}

/* ---- types ---- */

bool dwarf_type_strip(Dwarf_Die *type)
{
	for (int guard = 0; guard < 32; guard++) {
		Dwarf_Attribute a;

		switch (dwarf_tag(type)) {
		case DW_TAG_typedef:
		case DW_TAG_const_type:
		case DW_TAG_volatile_type:
		case DW_TAG_restrict_type:
		case DW_TAG_atomic_type:
			if (!dwarf_attr_integrate(type, DW_AT_type, &a) || !dwarf_formref_die(&a, type))
				return false;	/* const void */
			break;
		default:
			return true;
		}
	}
	return true;
}

Dwarf_Die *dwarf_type_of(Dwarf_Die *die, Dwarf_Die *mem)
{
	Dwarf_Attribute a;

	if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, mem))
		return NULL;
	return dwarf_type_strip(mem) ? mem : NULL;
}

int dwarf_type_bytes(Dwarf_Die *type)
{
	Dwarf_Word w;
	int n;

	if (dwarf_tag(type) == DW_TAG_pointer_type)
		return 8;
	n = dwarf_bytesize(type);
	if (n > 0)
		return n;
	return dwarf_aggregate_size(type, &w) == 0 ? (int)w : 8;
}

static int encoding_of(Dwarf_Die *type)
{
	Dwarf_Attribute a;
	Dwarf_Word enc;

	if (!dwarf_attr_integrate(type, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc) != 0)
		return -1;
	return (int)enc;
}

bool dwarf_type_is_signed(Dwarf_Die *type)
{
	int enc = encoding_of(type);

	if (dwarf_tag(type) == DW_TAG_enumeration_type) {
		Dwarf_Die under;

		return dwarf_type_of(type, &under) ? dwarf_type_is_signed(&under) : false;
	}
	return enc == DW_ATE_signed || enc == DW_ATE_signed_char;
}

bool dwarf_type_is_char(Dwarf_Die *type)
{
	int enc = encoding_of(type);

	return dwarf_tag(type) == DW_TAG_base_type && dwarf_bytesize(type) == 1 &&
	       (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char);
}

const char *dwarf_type_text(Dwarf_Die *type)
{
	Dwarf_Die in;
	Dwarf_Attribute a;
	const char *name = dwarf_diename(type);
	bool has_in = dwarf_attr_integrate(type, DW_AT_type, &a) && dwarf_formref_die(&a, &in);
	const char *inner = has_in ? dwarf_type_text(&in) : "void";

	switch (dwarf_tag(type)) {
	case DW_TAG_pointer_type: return arena_printf("%s*", inner);
	case DW_TAG_const_type: return arena_printf("%s const", inner);
	case DW_TAG_volatile_type: return arena_printf("%s volatile", inner);
	case DW_TAG_restrict_type: return arena_printf("%s restrict", inner);
	case DW_TAG_structure_type: return arena_printf("struct %s", name ? name : "{...}");
	case DW_TAG_union_type: return arena_printf("union %s", name ? name : "{...}");
	case DW_TAG_enumeration_type: return arena_printf("enum %s", name ? name : "{...}");
	case DW_TAG_array_type: {
		int64_t n = dwarf_array_count(type);

		return n >= 0 ? arena_printf("%s[%lld]", inner, (long long)n)
			      : arena_printf("%s[]", inner);
	}
	case DW_TAG_subroutine_type: return arena_printf("%s(*)()", inner);
	default: return name ? name : "?";
	}
}

/* DIE's DW_AT_type as declared (typedefs kept), into *OUT; false when it has none (void). */
static bool referent(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, out);
}

/*
 * TYPE's name as stap 4.8's dwarf_type_name() writes it: a function
 * pointer's modifiers ("*") alone, the function type into *SUB (*IS_SUB),
 * for dwarf_type_listed() to put between its return and its parameters.
 * NULL for a type stap cannot name.
 */
static const char *listed_name(Dwarf_Die *type, Dwarf_Die *sub, bool *is_sub)
{
	const char *name = dwarf_diename(type), *inner;
	int tag = dwarf_tag(type);
	Dwarf_Die in;
	bool has_in;

	switch (tag) {
	case DW_TAG_enumeration_type: return arena_printf("enum %s", name ? name : "{...}");
	case DW_TAG_structure_type: return arena_printf("struct %s", name ? name : "{...}");
	case DW_TAG_union_type: return arena_printf("union %s", name ? name : "{...}");
	case DW_TAG_class_type: return arena_printf("class %s", name ? name : "{...}");
	case DW_TAG_typedef:
	case DW_TAG_base_type: return name ? name : "{...}";
	case DW_TAG_subroutine_type:
		*sub = *type;
		*is_sub = true;
		return "";
	case DW_TAG_pointer_type: case DW_TAG_array_type: case DW_TAG_const_type:
	case DW_TAG_volatile_type: case DW_TAG_restrict_type: case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		break;
	default:
		return NULL;
	}
	has_in = referent(type, &in);
	if (has_in && tag == DW_TAG_pointer_type && dwarf_tag(&in) == DW_TAG_structure_type &&
	    dwarf_diename(&in) && strcmp(dwarf_diename(&in), "__va_list_tag") == 0)
		return "va_list";
	inner = has_in ? listed_name(&in, sub, is_sub) : NULL;
	if (!inner)
		inner = "void";
	switch (tag) {
	case DW_TAG_pointer_type: return arena_printf("%s*", inner);
	case DW_TAG_array_type: return arena_printf("%s[]", inner);
	case DW_TAG_reference_type: return arena_printf("%s&", inner);
	case DW_TAG_rvalue_reference_type: return arena_printf("%s&&", inner);
	case DW_TAG_volatile_type: return arena_printf("%s volatile", inner);
	case DW_TAG_restrict_type: return arena_printf("%s restrict", inner);
	default:	/* const: not on a reference, which the DWARF may mark const too */
		return has_in && (dwarf_tag(&in) == DW_TAG_reference_type ||
				  dwarf_tag(&in) == DW_TAG_rvalue_reference_type)
		       ? inner : arena_printf("%s const", inner);
	}
}

/* "int (*) (struct super_block*, struct fs_context*)": stap 4.8's dwarf_subroutine_name(). */
static const char *listed_subroutine(Dwarf_Die *sub, const char *mods)
{
	Dwarf_Die child, t;
	const char *params = NULL;

	if (dwarf_child(sub, &child) == 0) {
		do {
			int tag = dwarf_tag(&child);
			const char *p;

			if (tag == DW_TAG_unspecified_parameters)
				p = "...";
			else if (tag == DW_TAG_formal_parameter)
				p = referent(&child, &t) ? dwarf_type_listed(&t) : "void";
			else
				continue;
			params = params ? arena_printf("%s, %s", params, p) : p;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	return arena_printf("%s (%s) (%s)", referent(sub, &t) ? dwarf_type_listed(&t) : "void", mods,
			    params ? params : "void");
}

const char *dwarf_type_listed(Dwarf_Die *type)
{
	Dwarf_Die sub;
	bool is_sub = false;
	const char *mods = listed_name(type, &sub, &is_sub);

	if (!mods)
		return "void";
	return is_sub ? listed_subroutine(&sub, mods) : mods;
}

static bool member_in(Dwarf_Die *type, const char *name, Dwarf_Die *member, int64_t *offset,
		      int depth)
{
	Dwarf_Die c, sub;

	if (depth > 8 || dwarf_child(type, &c) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&c);
		Dwarf_Attribute a;
		Dwarf_Word off = 0;

		if (dwarf_tag(&c) != DW_TAG_member)
			continue;
		if (dwarf_attr_integrate(&c, DW_AT_data_member_location, &a))
			dwarf_formudata(&a, &off);
		if (n && strcmp(n, name) == 0) {
			*member = c;
			*offset = (int64_t)off;
			return true;
		}
		if (!n && dwarf_type_of(&c, &sub) && member_in(&sub, name, member, offset, depth + 1)) {
			*offset += (int64_t)off;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

bool dwarf_member(Dwarf_Die *type, const char *name, Dwarf_Die *member, int64_t *offset)
{
	int tag = dwarf_tag(type);

	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type)
		return false;
	*offset = 0;
	return member_in(type, name, member, offset, 0);
}

bool dwarf_member_is_bitfield(Dwarf_Die *member)
{
	return dwarf_hasattr_integrate(member, DW_AT_bit_size) ||
	       dwarf_hasattr_integrate(member, DW_AT_bit_offset);
}

static bool attr_udata(Dwarf_Die *die, unsigned name, Dwarf_Word *w)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, w) == 0;
}

/*
 * DWARF 4 and later give DW_AT_data_bit_offset from the start of the
 * struct; DWARF 2 and 3 give DW_AT_bit_offset from the most significant
 * bit of a storage unit of DW_AT_byte_size bytes at DW_AT_data_member_location
 * (counted here from the least significant bit: x86-64 is little-endian).
 */
bool dwarf_member_bits(Dwarf_Die *member, int64_t *bit_pos, int *bit_size)
{
	Dwarf_Word size, off, unit;
	Dwarf_Die type;

	if (!attr_udata(member, DW_AT_bit_size, &size) || size == 0 || size > 64)
		return false;
	*bit_size = (int)size;
	if (attr_udata(member, DW_AT_data_bit_offset, &off)) {
		*bit_pos = (int64_t)off;
		return true;
	}
	if (!attr_udata(member, DW_AT_bit_offset, &off))
		off = 0;
	if (!attr_udata(member, DW_AT_byte_size, &unit))
		unit = dwarf_type_of(member, &type) ? (Dwarf_Word)dwarf_type_bytes(&type) : 4;
	*bit_pos = (int64_t)(unit * 8 - off - size);
	return true;
}

int64_t dwarf_array_count(Dwarf_Die *type)
{
	Dwarf_Die sub;
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_child(type, &sub) != 0 || dwarf_tag(&sub) != DW_TAG_subrange_type)
		return -1;
	if (dwarf_attr_integrate(&sub, DW_AT_count, &a) && dwarf_formudata(&a, &w) == 0)
		return (int64_t)w;
	if (dwarf_attr_integrate(&sub, DW_AT_upper_bound, &a) && dwarf_formudata(&a, &w) == 0)
		return (int64_t)w + 1;
	return -1;
}

/* ---- locations: from DWARF ---- */

static const char *ranges_text(Dwarf_Attribute *a)
{
	Dwarf_Addr base, start, end;
	Dwarf_Op *ops;
	size_t n;
	ptrdiff_t off = 0;
	const char *s = "";
	int count = 0;

	while ((off = dwarf_getlocations(a, off, &base, &start, &end, &ops, &n)) > 0) {
		if (count++ < 6)
			s = arena_printf("%s%s0x%llx-0x%llx", s, *s ? ", " : "",
					 (unsigned long long)start, (unsigned long long)end);
	}
	if (count > 6)
		s = arena_printf("%s and %d more", s, count - 6);
	return count ? arena_printf("its location list covers %s", s)
		     : "its location list is empty (optimized out)";
}

static int entered_at(Dwarf_Die *func, void *arg)
{
	Dwarf_Addr pc;

	return dwarf_entrypc(func, &pc) == 0 && pc == *(uint64_t *)arg ? DWARF_CB_ABORT
								      : DWARF_CB_OK;
}

/*
 * Whether VAR's unit was compiled by GCC with -mfentry (a kernel's) and
 * PC is where one of its functions is entered: GCC's location lists there
 * start after the 5-byte call of __fentry__ though the values are in
 * place, so stap 4.8 looks a location up 5 bytes on (its PR15123), and so
 * does this.
 */
static bool fentry_call_at(Dwarf_Die *var, uint64_t pc)
{
	Dwarf_Die cu;
	Dwarf_Attribute a;
	const char *producer;

	return dwarf_diecu(var, &cu, NULL, NULL) && dwarf_attr(&cu, DW_AT_producer, &a) &&
	       (producer = dwarf_formstring(&a)) && strncmp(producer, "GNU ", 4) == 0 &&
	       strstr(producer, "-mfentry") && dwarf_getfuncs(&cu, entered_at, &pc, 0) > 0;
}

int dwarf_var_ops(Dwarf_Die *var, uint64_t pc, Dwarf_Op **ops, size_t *n,
		  int64_t *const_value, const char **why)
{
	Dwarf_Attribute a;
	Dwarf_Sword sv;
	int r;

	if (dwarf_attr_integrate(var, DW_AT_const_value, &a)) {
		if (dwarf_formsdata(&a, &sv) != 0) {
			*why = "its constant value is not a number";
			return -1;
		}
		*const_value = sv;
		return 2;
	}
	if (!dwarf_attr_integrate(var, DW_AT_location, &a)) {
		*why = "it has no location: the compiler optimized it out";
		return -1;
	}
	r = dwarf_getlocation_addr(&a, pc, ops, n, 1);
	if (!(r > 0 && *n > 0) && fentry_call_at(var, pc))
		r = dwarf_getlocation_addr(&a, pc + 5, ops, n, 1);
	if (r > 0 && *n > 0)
		return 1;
	*why = ranges_text(&a);
	return 0;
}

bool dwarf_frame_base_ops(Dwarf_Die *func, uint64_t pc, Dwarf_Op **ops, size_t *n)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(func, DW_AT_frame_base, &a) &&
	       dwarf_getlocation_addr(&a, pc, ops, n, 1) > 0;
}

bool dwarf_cfi_cfa_ops(Dwarf_CFI *const *cfis, int ncfis, uint64_t pc, Dwarf_Op **ops,
		       size_t *n)
{
	for (int i = 0; i < ncfis; i++) {
		Dwarf_Frame *fr;

		if (cfis[i] && dwarf_cfi_addrframe(cfis[i], pc, &fr) == 0) {
			bool ok = dwarf_frame_cfa(fr, ops, n) == 0 && *n > 0;

			/* the ops live in the frame, which stays allocated */
			if (ok)
				return true;
			free(fr);
		}
	}
	return false;
}

bool dwarf_cfa_ops(struct dwarf_file *f, uint64_t pc, Dwarf_Op **ops, size_t *n)
{
	Dwarf_CFI *cfis[2] = { f->eh_cfi, f->dbg_cfi };

	return dwarf_cfi_cfa_ops(cfis, 2, pc, ops, n);
}

/* ---- locations: into C ---- */

const char *dwarf_reg_field(unsigned reg)
{
	static const char *const fields[] = {
		"ax", "dx", "cx", "bx", "si", "di", "bp", "sp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ip",
	};

	return reg < sizeof(fields) / sizeof(fields[0]) ? fields[reg] : NULL;
}

const char *dwarf_op_name(unsigned op)
{
	static const struct {
		unsigned op;
		const char *name;
	} names[] = {
		{ DW_OP_addr, "DW_OP_addr" }, { DW_OP_deref, "DW_OP_deref" },
		{ DW_OP_fbreg, "DW_OP_fbreg" }, { DW_OP_bregx, "DW_OP_bregx" },
		{ DW_OP_regx, "DW_OP_regx" }, { DW_OP_piece, "DW_OP_piece" },
		{ DW_OP_bit_piece, "DW_OP_bit_piece" }, { DW_OP_stack_value, "DW_OP_stack_value" },
		{ DW_OP_implicit_value, "DW_OP_implicit_value" },
		{ DW_OP_entry_value, "DW_OP_entry_value" },
		{ DW_OP_GNU_entry_value, "DW_OP_GNU_entry_value" },
		{ DW_OP_call_frame_cfa, "DW_OP_call_frame_cfa" },
		{ DW_OP_implicit_pointer, "DW_OP_implicit_pointer" },
		{ DW_OP_GNU_implicit_pointer, "DW_OP_GNU_implicit_pointer" },
		{ DW_OP_form_tls_address, "DW_OP_form_tls_address" },
		{ DW_OP_GNU_push_tls_address, "DW_OP_GNU_push_tls_address" },
		{ DW_OP_GNU_parameter_ref, "DW_OP_GNU_parameter_ref" },
		{ DW_OP_convert, "DW_OP_convert" }, { DW_OP_GNU_convert, "DW_OP_GNU_convert" },
		{ DW_OP_regval_type, "DW_OP_regval_type" },
		{ DW_OP_deref_type, "DW_OP_deref_type" }, { DW_OP_call2, "DW_OP_call2" },
		{ DW_OP_call4, "DW_OP_call4" }, { DW_OP_skip, "DW_OP_skip" }, { DW_OP_bra, "DW_OP_bra" },
		{ DW_OP_xderef, "DW_OP_xderef" }, { DW_OP_push_object_address,
						    "DW_OP_push_object_address" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].op == op)
			return names[i].name;
	return arena_printf("DW_OP_0x%x", op);
}

#define STACK_MAX 16

struct machine {
	const struct dwarf_loc_env *env;
	struct dwarf_loc *loc;
	const char *stack[STACK_MAX];
	int sp;
	bool is_value, in_reg;
	int depth;
};

static bool fail(struct machine *m, const char *fmt, const char *arg)
{
	snprintf(m->loc->err, sizeof(m->loc->err), fmt, arg);
	return false;
}

static bool push(struct machine *m, const char *c)
{
	if (m->sp == STACK_MAX)
		return fail(m, "%s", "its location expression is too deep");
	m->stack[m->sp++] = c;
	return true;
}

static const char *pop(struct machine *m)
{
	return m->sp ? m->stack[--m->sp] : NULL;
}

static const char *reg_c(struct machine *m, unsigned reg)
{
	const char *f = dwarf_reg_field(reg);

	return f ? arena_printf("(int64_t)%s->%s", m->env->regs, f) : NULL;
}

static const char *plus(const char *a, int64_t k)
{
	if (k == 0)
		return a;
	return arena_printf("(%s %c %lld)", a, k < 0 ? '-' : '+', (long long)(k < 0 ? -k : k));
}

static bool run(struct machine *m, const Dwarf_Op *ops, size_t n);

/* A sub-expression (the frame base, the CFA) whose result is an address. */
static const char *sub_address(struct machine *m, const Dwarf_Op *ops, size_t n, const char *what)
{
	struct machine sub = { m->env, m->loc, { 0 }, 0, false, false, m->depth + 1 };

	if (!ops)
		return fail(m, "%s is not known at this address", what), NULL;
	if (m->depth > 3)
		return fail(m, "%s refers to itself", what), NULL;
	if (!run(&sub, ops, n))
		return NULL;
	return sub.sp ? sub.stack[sub.sp - 1] : (fail(m, "%s is empty", what), NULL);
}

static bool binop(struct machine *m, const char *op)
{
	const char *b = pop(m), *a = pop(m);

	if (!a || !b)
		return fail(m, "%s", "its location expression underflows the stack");
	return push(m, arena_printf("(%s %s %s)", a, op, b));
}

static bool op_reg(struct machine *m, unsigned reg, size_t i, size_t n, const Dwarf_Op *ops)
{
	const char *r = reg_c(m, reg);

	if (!r)
		return fail(m, "it is in a register pt_regs does not have (DWARF register %s)",
			    arena_printf("%u", reg));
	if (i + 1 < n && ops[i + 1].atom != DW_OP_piece)
		return fail(m, "%s", "its location uses a register in the middle of an expression");
	m->is_value = m->in_reg = true;
	if (!m->depth)
		m->loc->reg = arena_printf("%s->%s", m->env->regs, dwarf_reg_field(reg));
	return push(m, r);
}

static bool op_const(struct machine *m, const Dwarf_Op *op)
{
	switch (op->atom) {
	case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
	case DW_OP_consts:
		return push(m, arena_printf("%lldLL", (long long)(int64_t)op->number));
	default:
		return push(m, arena_printf("0x%llxULL", (unsigned long long)op->number));
	}
}

static bool op_deref(struct machine *m, int size)
{
	const char *a = pop(m);

	if (!a)
		return fail(m, "%s", "its location expression underflows the stack");
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return fail(m, "%s", "it is read with DW_OP_deref_size of an odd size");
	return push(m, m->env->deref(m->env->arg, a, size));
}

static bool op_addr(struct machine *m, uint64_t addr)
{
	if (!m->env->bias)
		return fail(m, "%s", "it is at a static address, and this probe does not know where "
			    "the program was loaded");
	if (strcmp(m->env->bias, "0") == 0)
		return push(m, arena_printf("0x%llxLL", (unsigned long long)addr));
	return push(m, arena_printf("(0x%llxLL + %s)", (unsigned long long)addr, m->env->bias));
}

static bool op_stack(struct machine *m, const Dwarf_Op *op)
{
	const char *a, *b;

	switch (op->atom) {
	case DW_OP_dup:
		return m->sp ? push(m, m->stack[m->sp - 1]) : fail(m, "%s", "DW_OP_dup on nothing");
	case DW_OP_drop:
		return pop(m) != NULL;
	case DW_OP_over:
		return m->sp > 1 ? push(m, m->stack[m->sp - 2]) : fail(m, "%s", "DW_OP_over on one");
	case DW_OP_swap:
		if (m->sp < 2)
			return fail(m, "%s", "DW_OP_swap on one");
		a = m->stack[m->sp - 1];
		m->stack[m->sp - 1] = m->stack[m->sp - 2];
		m->stack[m->sp - 2] = a;
		return true;
	case DW_OP_neg:
	case DW_OP_not:
		b = pop(m);
		return b && push(m, arena_printf("(%s%s)", op->atom == DW_OP_neg ? "-" : "~", b));
	case DW_OP_plus_uconst:
		b = pop(m);
		return b && push(m, plus(b, (int64_t)op->number));
	}
	return false;
}

static bool step(struct machine *m, const Dwarf_Op *ops, size_t i, size_t n)
{
	const Dwarf_Op *op = &ops[i];
	const char *base;

	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31)
		return push(m, arena_printf("%dLL", op->atom - DW_OP_lit0));
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31)
		return op_reg(m, op->atom - DW_OP_reg0, i, n, ops);
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		base = reg_c(m, op->atom - DW_OP_breg0);
		return base ? push(m, plus(base, (int64_t)op->number))
			    : fail(m, "%s", "it is based on a register pt_regs does not have");
	}
	switch (op->atom) {
	case DW_OP_regx: return op_reg(m, (unsigned)op->number, i, n, ops);
	case DW_OP_bregx:
		base = reg_c(m, (unsigned)op->number);
		return base ? push(m, plus(base, (int64_t)op->number2))
			    : fail(m, "%s", "it is based on a register pt_regs does not have");
	case DW_OP_fbreg:
		base = sub_address(m, m->env->fb, m->env->nfb, "the frame base");
		return base && push(m, plus(base, (int64_t)op->number));
	case DW_OP_call_frame_cfa:
		base = sub_address(m, m->env->cfa, m->env->ncfa, "the canonical frame address");
		return base && push(m, base);
	case DW_OP_addr: return op_addr(m, op->number);
	case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
	case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
	case DW_OP_constu: case DW_OP_consts:
		return op_const(m, op);
	case DW_OP_deref: return op_deref(m, 8);
	case DW_OP_deref_size: return op_deref(m, (int)op->number);
	case DW_OP_plus: return binop(m, "+");
	case DW_OP_minus: return binop(m, "-");
	case DW_OP_mul: return binop(m, "*");
	case DW_OP_and: return binop(m, "&");
	case DW_OP_or: return binop(m, "|");
	case DW_OP_xor: return binop(m, "^");
	case DW_OP_shl: return binop(m, "<<");
	case DW_OP_shra: return binop(m, ">>");
	case DW_OP_shr: {
		const char *b = pop(m), *a = pop(m);

		return a && b && push(m, arena_printf("(int64_t)((uint64_t)%s >> %s)", a, b));
	}
	case DW_OP_dup: case DW_OP_drop: case DW_OP_over: case DW_OP_swap:
	case DW_OP_neg: case DW_OP_not: case DW_OP_plus_uconst:
		return op_stack(m, op) || fail(m, "%s", "its location expression underflows the stack");
	case DW_OP_stack_value:
		m->is_value = true;
		return true;
	case DW_OP_piece:
		if (i + 1 == n && i > 0)
			return true;	/* one piece: the whole object */
		return fail(m, "%s", "its location has a DW_OP_piece out of place");
	case DW_OP_bit_piece:
		return fail(m, "%s", "it is split into bit pieces (DW_OP_bit_piece), which cannot be "
			    "read");
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		return fail(m, "%s", "it is only described by a value on entry to the function "
			    "(DW_OP_entry_value), and that is gone by then");
	case DW_OP_nop:
		return true;
	default:
		return fail(m, "its location uses %s, which cannot be translated", dwarf_op_name(op->atom));
	}
}

static bool run(struct machine *m, const Dwarf_Op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (m->is_value && ops[i].atom != DW_OP_piece)
			return fail(m, "%s", "its location goes on after its value");
		if (!step(m, ops, i, n))
			return false;
	}
	return true;
}

/* ---- locations in pieces ---- */

static bool loc_fail(struct dwarf_loc *loc, const char *msg)
{
	snprintf(loc->err, sizeof(loc->err), "%s", msg);
	return false;
}

/* The value of one piece of SIZE bytes, described by OPS[0..N), masked to its size. */
static const char *piece_value(const Dwarf_Op *ops, size_t n, int size,
			       const struct dwarf_loc_env *env, struct dwarf_loc *loc)
{
	struct machine m = { env, loc, { 0 }, 0, false, false, 0 };
	const char *v;

	if (!run(&m, ops, n))
		return NULL;
	if (!m.sp)
		return loc_fail(loc, "one of its pieces is empty"), NULL;
	v = m.stack[m.sp - 1];
	if (!m.is_value) {
		if (size != 1 && size != 2 && size != 4 && size != 8)
			return loc_fail(loc, "one of its pieces in memory has an odd size"), NULL;
		v = env->deref(env->arg, v, size);
	}
	if (size == 8)
		return arena_printf("(uint64_t)%s", v);
	return arena_printf("((uint64_t)%s & 0x%llxULL)", v, (1ULL << (size * 8)) - 1);
}

/*
 * An object split by DW_OP_piece into parts (registers, memory, values,
 * parts optimized out), put back together as one value when it has at
 * most 8 bytes; loc->avail says which of its bytes are known.
 */
static bool translate_pieces(const Dwarf_Op *ops, size_t n, const struct dwarf_loc_env *env,
			     struct dwarf_loc *loc)
{
	const char *sum = NULL, *part;
	size_t start = 0;
	unsigned at = 0, avail = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned size = (unsigned)ops[i].number;

		if (ops[i].atom == DW_OP_bit_piece)
			return loc_fail(loc, "it is split into bit pieces (DW_OP_bit_piece), which "
					"cannot be read");
		if (ops[i].atom != DW_OP_piece)
			continue;
		if (size == 0 || at + size > 8)
			return loc_fail(loc, "it is split into pieces (DW_OP_piece) of more than 8 "
					"bytes in all, which cannot be put together");
		if (i > start) {
			part = piece_value(ops + start, i - start, (int)size, env, loc);
			if (!part)
				return false;
			if (at)
				part = arena_printf("(%s << %u)", part, at * 8);
			sum = sum ? arena_printf("(%s | %s)", sum, part) : part;
			avail |= ((1u << size) - 1) << at;
		}
		at += size;
		start = i + 1;
	}
	if (start != n)
		return loc_fail(loc, "its location goes on after its last piece");
	if (!sum)
		return loc_fail(loc, "all its pieces are optimized out");
	loc->is_value = true;
	loc->c = arena_printf("(int64_t)%s", sum);
	loc->avail = (uint8_t)avail;
	return true;
}

static bool is_pieced(const Dwarf_Op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((ops[i].atom == DW_OP_piece && i + 1 < n) || ops[i].atom == DW_OP_bit_piece)
			return true;
	return false;
}

bool dwarf_loc_translate(const Dwarf_Op *ops, size_t n, const struct dwarf_loc_env *env,
			 struct dwarf_loc *loc)
{
	struct machine m = { env, loc, { 0 }, 0, false, false, 0 };

	memset(loc, 0, sizeof(*loc));
	loc->avail = 0xff;
	if (is_pieced(ops, n)) {
		bool ok = translate_pieces(ops, n, env, loc);

		loc->reg = NULL;
		return ok;
	}
	if (!run(&m, ops, n))
		return false;
	if (!m.sp)
		return fail(&m, "%s", "its location expression is empty");
	loc->is_value = m.is_value;
	loc->in_reg = m.in_reg;
	loc->c = m.stack[m.sp - 1];
	if (!m.in_reg)
		loc->reg = NULL;
	return true;
}
