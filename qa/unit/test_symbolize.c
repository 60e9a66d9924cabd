/*
 * test_symbolize.c - runtime/user/symbolize.c: kernel symbols from a
 * kallsyms file (sorted, bisected, sizes to the next symbol, modules),
 * this process's own symbols through libdwfl, and stap's formats.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "../../runtime/stp_tapset.h"
#include "../../runtime/user/symbolize.h"

/* Out of order, with data symbols and a module, as kallsyms may list them. */
static const char kallsyms[] =
	"ffffffff81000200 T do_syscall_64\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 d some_data\n"
	"ffffffff81000300 t helper\n"
	"ffffffffc0000000 t mod_fn\t[mymod]\n"
	"ffffffffc0000040 t mod_end\t[mymod]\n";

static struct stp_sym *kernel_syms(void)
{
	char path[] = "/tmp/test_symbolize.XXXXXX";
	struct stp_sym *sym = stp_sym__new();
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT(write(fd, kallsyms, sizeof(kallsyms) - 1) == (ssize_t)sizeof(kallsyms) - 1);
	close(fd);
	stp_sym__set_kallsyms(sym, path);
	stp_sym__lookup(sym, 0, 0, &(struct stp_sym_info){ 0 });	/* loads it */
	unlink(path);
	return sym;
}

static void test_kernel_lookup(void)
{
	struct stp_sym *sym = kernel_syms();
	struct stp_sym_info si;

	CU_ASSERT(stp_sym__lookup(sym, 0, 0xffffffff81000234, &si));
	CU_ASSERT_STRING_EQUAL(si.name, "do_syscall_64");
	CU_ASSERT_EQUAL(si.offset, 0x34);
	CU_ASSERT_EQUAL(si.size, 0x100);
	CU_ASSERT_STRING_EQUAL(si.module, "kernel");
	/* data symbols are not code: _stext covers 0x100 */
	CU_ASSERT(stp_sym__lookup(sym, 0, 0xffffffff81000100, &si));
	CU_ASSERT_STRING_EQUAL(si.name, "_stext");
	CU_ASSERT(stp_sym__lookup(sym, 0, 0xffffffffc0000010, &si));
	CU_ASSERT_STRING_EQUAL(si.name, "mod_fn");
	CU_ASSERT_STRING_EQUAL(si.module, "mymod");
	CU_ASSERT_FALSE(stp_sym__lookup(sym, 0, 0x1000, &si));
	stp_sym__free(sym);
}

static void test_kernel_formats(void)
{
	struct stp_sym *sym = kernel_syms();
	char buf[256];

	stp_sym__format(sym, 0, 0xffffffff81000234, STP_SYM_FULL, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, " 0xffffffff81000234 : do_syscall_64+0x34/0x100 [kernel]\n");
	stp_sym__format(sym, 0, 0xffffffff81000234, STP_SYM_DATA, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "do_syscall_64+0x34/0x100 [kernel]");
	stp_sym__format(sym, 0, 0xffffffff81000234, STP_SYM_NAME, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "do_syscall_64");
	stp_sym__format(sym, 0, 0x10, STP_SYM_NAME, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "0x10");
	stp_sym__format_stack(sym, 0, "0xffffffff81000201 0xffffffff81000000", STP_SYM_LINES, buf,
			      sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "do_syscall_64+0x1/0x100 [kernel]\n_stext+0x0/0x200 [kernel]\n");
	/* a buffer too small is cut, still terminated */
	stp_sym__format(sym, 0, 0xffffffff81000234, STP_SYM_DATA, buf, 8);
	CU_ASSERT_STRING_EQUAL(buf, "do_sysc");
	stp_sym__free(sym);
}

__attribute__((noinline)) int symbolize_probe_fn(int x);
__attribute__((noinline)) int symbolize_probe_fn(int x)
{
	return x * 3 + 1;
}

/* This process's own function, found at its (randomized) load address. */
static void test_user_lookup(void)
{
	struct stp_sym *sym = stp_sym__new();
	struct stp_sym_info si;
	uint64_t addr = (uint64_t)(uintptr_t)symbolize_probe_fn + 2;
	char buf[512];

	CU_ASSERT(symbolize_probe_fn(1) == 4);
	CU_ASSERT_FATAL(stp_sym__lookup(sym, getpid(), addr, &si));
	CU_ASSERT_STRING_EQUAL(si.name, "symbolize_probe_fn");
	CU_ASSERT_EQUAL(si.offset, 2);
	CU_ASSERT(si.size > 2);
	CU_ASSERT(strstr(si.module, "test_symbolize") != NULL);
	/* the cached report answers again; a libc function is in libc */
	CU_ASSERT(stp_sym__lookup(sym, getpid(), (uint64_t)(uintptr_t)getpid, &si));
	CU_ASSERT(strstr(si.module, "libc") != NULL);
	stp_sym__forget(sym, getpid());
	stp_sym__format(sym, getpid(), addr, STP_SYM_NAME, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "symbolize_probe_fn");
	/* no such process */
	CU_ASSERT_FALSE(stp_sym__lookup(sym, 0x3fffffff, addr, &si));
	stp_sym__free(sym);
}

static const struct unit_case symbolize_cases[] = {
	{ "kernel lookup", test_kernel_lookup },
	{ "kernel formats", test_kernel_formats },
	{ "user lookup", test_user_lookup },
	{ NULL, NULL },
};

void unit_register(void)
{
	unit_add_suite("symbolize", symbolize_cases);
}
