/*
 * got.c - -x: events.c's wrappers put in the GOTs of a process that runs
 * already.
 *
 * Preloaded (-c), libstapdyn.so comes first in every symbol look-up, so
 * the program's calls to pthread_create(), _exit(), the exec functions,
 * vfork() and the unwinder's entry points reach events.c's wrappers.
 * Loaded into a running process (-x), it comes last and those calls are
 * bound already.  So the attach rewrites the bindings: in each loaded
 * object but this one, every GOT slot (JUMP_SLOT, GLOB_DAT) of one of
 * those symbols gets the wrapper's address, and the detach puts back what
 * was there.  A slot made read-only after start-up (RELRO) is made
 * writable for the store and read-only again.  Calls through a pointer
 * taken before (dlsym, a function pointer kept) still reach the original,
 * and libc's calls to itself never went through a GOT.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>

#include "native.h"

struct got_slot {
	void **slot;
	void *old;
	bool relro;
};

static struct {
	struct got_slot *v;
	int n, cap;
} hooked;

/* The wrappers (events.c), under the names the program calls. */
static const struct {
	const char *name;
	void *wrapper;
} wrapped[] = {
	{ "pthread_create", (void *)pthread_create },
	{ "_exit", (void *)_exit },
	{ "_Exit", (void *)_Exit },
	{ "execve", (void *)execve },
	{ "execvpe", (void *)execvpe },
	{ "execv", (void *)execv },
	{ "execvp", (void *)execvp },
	{ "execl", (void *)execl },
	{ "execlp", (void *)execlp },
	{ "execle", (void *)execle },
	{ "vfork", (void *)vfork },
	{ "_Unwind_RaiseException", (void *)_Unwind_RaiseException },
	{ "_Unwind_ForcedUnwind", (void *)_Unwind_ForcedUnwind },
};

static void *wrapper_of(const char *name)
{
	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++)
		if (strcmp(name, wrapped[i].name) == 0)
			return wrapped[i].wrapper;
	return NULL;
}

/* Store VAL in SLOT, making its page writable for the time of it when RELRO. */
static bool store(void **slot, void *val, bool relro)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *at = (void *)((uintptr_t)slot & ~(page - 1));

	if (relro && mprotect(at, page, PROT_READ | PROT_WRITE) != 0)
		return false;
	__atomic_store_n(slot, val, __ATOMIC_RELEASE);
	if (relro)
		mprotect(at, page, PROT_READ);
	return true;
}

static void remember(void **slot, void *old, bool relro)
{
	if (hooked.n == hooked.cap) {
		int cap = hooked.cap ? hooked.cap * 2 : 32;
		struct got_slot *v = realloc(hooked.v, (size_t)cap * sizeof(*v));

		if (!v)
			return;
		hooked.v = v;
		hooked.cap = cap;
	}
	hooked.v[hooked.n++] = (struct got_slot){ slot, old, relro };
}

/* Is ADDR in one of the object's loaded segments? */
static bool object_has(const struct dl_phdr_info *info, uintptr_t addr)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= lo && addr - lo < ph->p_memsz)
			return true;
	}
	return false;
}

struct dyn {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Rela) *rela[2];
	size_t relasz[2];
	uintptr_t relro_lo, relro_hi;
};

/* ld.so leaves the dynamic section's addresses relocated; a bare offset is made one. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static bool read_dynamic(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			d->relro_lo = info->dlpi_addr + ph->p_vaddr;
			d->relro_hi = d->relro_lo + ph->p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: d->symtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_STRTAB: d->strtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_JMPREL: d->rela[0] = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_PLTRELSZ: d->relasz[0] = dyn->d_un.d_val; break;
		case DT_RELA: d->rela[1] = (const void *)dyn_addr(info, dyn->d_un.d_ptr); break;
		case DT_RELASZ: d->relasz[1] = dyn->d_un.d_val; break;
		}
	}
	return d->symtab && d->strtab;
}

static int hook_object(struct dl_phdr_info *info, size_t size, void *unused)
{
	struct dyn d;

	(void)size;
	(void)unused;
	if (object_has(info, (uintptr_t)hook_object) || !read_dynamic(info, &d))
		return 0;	/* this library's own calls are its own */
	for (int t = 0; t < 2; t++) {
		for (size_t i = 0; d.rela[t] && i < d.relasz[t] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &d.rela[t][i];
			uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
			void **slot = (void **)(info->dlpi_addr + r->r_offset), *wrapper;
			bool relro;

			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !sym)
				continue;
			wrapper = wrapper_of(d.strtab + d.symtab[sym].st_name);
			if (!wrapper || *slot == wrapper)
				continue;
			relro = (uintptr_t)slot >= d.relro_lo && (uintptr_t)slot < d.relro_hi;
			remember(slot, *slot, relro);
			if (!store(slot, wrapper, relro))
				hooked.n--;
		}
	}
	return 0;
}

void stp_dyn_got_hook(void)
{
	dl_iterate_phdr(hook_object, NULL);
}

void stp_dyn_got_unhook(void)
{
	for (int i = hooked.n - 1; i >= 0; i--)
		store(hooked.v[i].slot, hooked.v[i].old, hooked.v[i].relro);
	hooked.n = 0;
}
