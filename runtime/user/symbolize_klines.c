/*
 * symbolize_klines.c - source lines of kernel addresses (symfileline()):
 * from the DWARF of the running kernel's vmlinux, when one with the same
 * build id as /sys/kernel/notes is installed (Debian's linux-image-*-dbg
 * puts it in /usr/lib/debug/boot/).  Kernel modules' lines are not read.
 * The kernel runs where KASLR put it: an address is moved back by the
 * distance between the running _stext (kallsyms) and vmlinux's.
 */
#define _GNU_SOURCE
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "symbolize.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The running kernel's build id from /sys/kernel/notes (its ELF notes) into ID; its length. */
static size_t kernel_build_id(unsigned char *id, size_t size)
{
	unsigned char buf[4096];
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	size_t at = 0;

	if (fd >= 0)
		close(fd);
	while (n > 0 && at + 12 <= (size_t)n) {
		uint32_t h[3];	/* namesz, descsz, type */
		size_t name, desc;

		memcpy(h, buf + at, sizeof(h));
		name = at + 12;
		desc = name + ((h[0] + 3) & ~3u);
		if (desc + h[1] > (size_t)n)
			break;
		if (h[2] == 3 /* NT_GNU_BUILD_ID */ && h[0] == 4 && memcmp(buf + name, "GNU", 4) == 0 &&
		    h[1] <= size) {
			memcpy(id, buf + desc, h[1]);
			return h[1];
		}
		at = desc + ((h[1] + 3) & ~3u);
	}
	return 0;
}

/* vmlinux's module, if a file of the running kernel's build id is there; else NULL. */
static Dwfl_Module *vmlinux_open(Dwfl **dwfl)
{
	static const char *const where[] = {
		"/usr/lib/debug/boot/vmlinux-%s", "/usr/lib/debug/lib/modules/%s/vmlinux",
		"/boot/vmlinux-%s", "/lib/modules/%s/build/vmlinux",
	};
	unsigned char want[64];
	size_t nwant = kernel_build_id(want, sizeof(want));
	struct utsname u;

	if (!nwant || uname(&u) != 0)
		return NULL;
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		char path[512];
		const unsigned char *id;
		GElf_Addr vaddr;
		Dwfl_Module *mod;

		snprintf(path, sizeof(path), where[i], u.release);
		if (access(path, R_OK) != 0)
			continue;
		*dwfl = dwfl_begin(&offline_callbacks);
		mod = *dwfl ? dwfl_report_offline(*dwfl, "kernel", path, -1) : NULL;
		if (mod && dwfl_report_end(*dwfl, NULL, NULL) == 0 &&
		    dwfl_module_build_id(mod, &id, &vaddr) == (int)nwant && memcmp(id, want, nwant) == 0)
			return mod;
		dwfl_end(*dwfl);
		*dwfl = NULL;
	}
	return NULL;
}

/* The value of symbol NAME in MOD, 0 when it has none. */
static uint64_t module_symbol(Dwfl_Module *mod, const char *name)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		const char *nm = dwfl_module_getsym(mod, i, &s, NULL);

		if (nm && strcmp(nm, name) == 0)
			return s.st_value;
	}
	return 0;
}

bool stp_sym_kernel_line(uint64_t stext, uint64_t addr, const char **file, int *line)
{
	static Dwfl *dwfl;
	static Dwfl_Module *mod;
	static uint64_t slide;
	static bool tried;
	Dwfl_Line *l;

	if (!tried) {
		uint64_t linked;

		tried = true;
		mod = vmlinux_open(&dwfl);
		linked = mod ? module_symbol(mod, "_stext") : 0;
		if (!linked || !stext)
			mod = NULL;
		slide = stext - linked;
	}
	l = mod ? dwfl_module_getsrc(mod, addr - slide) : NULL;
	*line = 0;
	*file = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
	return *file != NULL;
}
