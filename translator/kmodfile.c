/*
 * kmodfile.c - a kernel module's .ko, read with libelf (kmodfile.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "arena.h"
#include "hmap.h"
#include "kmodfile.h"
#include "manifest.h"
#include "vec.h"
#include "sysroot.h"

const char *kmodfile_path(const char *module)
{
	const char *dir = arena_printf("/lib/modules/%s", sysroot_kernel_release());
	FILE *f = fopen(arena_printf("%s/modules.dep", dir), "r");
	char line[4096];
	const char *found = NULL;

	manifest_file(arena_printf("%s/modules.dep", dir));	/* where a module is */
	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *end = strstr(line, ".ko:"), *base;
		size_t i;

		if (!end)
			continue;
		*end = '\0';
		base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
		for (i = 0; base[i] && module[i] && (base[i] == module[i] ||
		     (strchr("-_", base[i]) && strchr("-_", module[i]))); i++)
			;
		if (!base[i] && !module[i])
			found = arena_printf("%s/%s.ko", dir, line);
	}
	fclose(f);
	return found;
}

struct ko {
	int fd;
	Elf *elf;
	size_t shstrndx;
};

static bool ko_open(struct ko *k, const char *path)
{
	k->elf = NULL;
	k->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (k->fd < 0)
		return false;
	elf_version(EV_CURRENT);
	k->elf = elf_begin(k->fd, ELF_C_READ, NULL);
	return k->elf && elf_getshdrstrndx(k->elf, &k->shstrndx) == 0;
}

static void ko_close(struct ko *k)
{
	if (k->elf)
		elf_end(k->elf);
	if (k->fd >= 0)
		close(k->fd);
}

char *kmodfile_section(const char *path, const char *name, size_t *len)
{
	struct ko k;
	Elf_Scn *scn = NULL;
	char *out = NULL;

	if (!ko_open(&k, path)) {
		ko_close(&k);
		return NULL;
	}
	while (!out && (scn = elf_nextscn(k.elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(k.elf, k.shstrndx, sh.sh_name)) ||
		    strcmp(n, name) != 0 || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		out = arena_alloc(d->d_size + 1);
		memcpy(out, d->d_buf, d->d_size);
		*len = d->d_size;
	}
	ko_close(&k);
	return out;
}

struct ko_sym {
	const char *name;
	GElf_Sym sym;
};

/* Every named symbol of the .ko into SYMS; COUNT: name -> how many times (intptr_t). */
static void ko_symbols(struct ko *k, struct vec *syms, struct hmap *count)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(k->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			struct ko_sym *s = ARENA_NEW(struct ko_sym);
			const char *n;

			if (!gelf_getsym(d, (int)i, &s->sym) ||
			    !(n = elf_strptr(k->elf, sh.sh_link, s->sym.st_name)) || !*n ||
			    s->sym.st_shndx == SHN_UNDEF)
				continue;
			s->name = arena_strdup(n);
			hmap_put(count, s->name, (void *)((intptr_t)hmap_get(count, s->name) + 1));
			vec_push(syms, s);
		}
	}
}

/* The global function FUNC of SYMS, or NULL. */
static const struct ko_sym *global_function(const struct vec *syms, const char *func)
{
	for (int i = 0; i < syms->len; i++) {
		const struct ko_sym *s = VEC_AT(syms, i);

		if (GELF_ST_TYPE(s->sym.st_info) == STT_FUNC && GELF_ST_BIND(s->sym.st_info) !=
		    STB_LOCAL && !strcmp(s->name, func))
			return s;
	}
	return NULL;
}

/* The function nearest below T in its section whose name the module has once, or NULL. */
static const struct ko_sym *anchor_for(const struct vec *syms, struct hmap *count,
				       const struct ko_sym *t)
{
	const struct ko_sym *best = NULL;

	for (int i = 0; i < syms->len; i++) {
		const struct ko_sym *s = VEC_AT(syms, i);

		if (GELF_ST_TYPE(s->sym.st_info) != STT_FUNC || s->sym.st_shndx != t->sym.st_shndx ||
		    s->sym.st_value > t->sym.st_value || (intptr_t)hmap_get(count, s->name) != 1)
			continue;
		if (!best || s->sym.st_value > best->sym.st_value)
			best = s;
	}
	return best;
}

bool kmodfile_site(const char *path, const char *func, const char **anchor, uint64_t *offset)
{
	struct ko k;
	struct vec syms = { 0 };
	struct hmap count = { .str_keys = true };
	const struct ko_sym *t = NULL, *a = NULL;
	intptr_t n;

	if (ko_open(&k, path))
		ko_symbols(&k, &syms, &count);
	ko_close(&k);
	n = (intptr_t)hmap_get(&count, func);
	*anchor = func;
	*offset = 0;
	if (n == 1)
		return true;
	if (n < 1 || !(t = global_function(&syms, func)) || !(a = anchor_for(&syms, &count, t)))
		return false;
	*anchor = a->name;
	*offset = t->sym.st_value - a->sym.st_value;
	return true;
}
