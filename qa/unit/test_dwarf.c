/*
 * test_dwarf.c - dwarf_read.c: DWARF location expressions translated into C,
 * on hand-built op arrays (registers, the frame base through the CFA,
 * static addresses with and without a load bias, dereferences, values,
 * pieces), and the ops it refuses, with their messages.
 */
#include <dwarf.h>
#include <string.h>
#include "unit.h"
#include "../../translator/arena.h"
#include "../../translator/dwarf_read.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char reads[512];

/* The deref callback: records each read, returns a made-up temporary. */
static const char *fake_deref(void *arg, const char *addr, int size)
{
	int *count = arg;

	snprintf(reads + strlen(reads), sizeof(reads) - strlen(reads), "[%d:%s]", size, addr);
	return arena_printf("t%d", ++*count);
}

static int nreads;

static struct dwarf_loc_env env(void)
{
	struct dwarf_loc_env e = { "ctx", NULL, 0, NULL, 0, "0", fake_deref, &nreads };

	reads[0] = '\0';
	nreads = 0;
	return e;
}

static void test_reg(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_reg5 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_TRUE(l.is_value);
	CU_ASSERT_TRUE(l.in_reg);
	CU_ASSERT_STRING_EQUAL(l.c, "(int64_t)ctx->di");
}

static void test_regx_piece(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_regx, .number = 14 }, { .atom = DW_OP_piece, .number = 8 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.c, "(int64_t)ctx->r14");
}

static void test_breg(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_breg7, .number = (Dwarf_Word)-24 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_FALSE(l.is_value);
	CU_ASSERT_STRING_EQUAL(l.c, "((int64_t)ctx->sp - 24)");
}

/* DW_OP_fbreg -20 with the frame base DW_OP_call_frame_cfa and the CFA rbp+16. */
static void test_fbreg_cfa(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_fbreg, .number = (Dwarf_Word)-20 } };
	Dwarf_Op fb[] = { { .atom = DW_OP_call_frame_cfa } };
	Dwarf_Op cfa[] = { { .atom = DW_OP_bregx, .number = 6, .number2 = 16 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	e.fb = fb;
	e.nfb = N(fb);
	e.cfa = cfa;
	e.ncfa = N(cfa);
	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_FALSE(l.is_value);
	CU_ASSERT_STRING_EQUAL(l.c, "(((int64_t)ctx->bp + 16) - 20)");
}

static void test_fbreg_no_frame_base(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_fbreg, .number = 8 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_FALSE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "the frame base is not known at this address");
}

static void test_addr_bias(void)
{
	Dwarf_Op ops[] = { { .atom = DW_OP_addr, .number = 0x4010 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.c, "0x4010LL");
	e.bias = "(ctx->ip - 0x1139LL)";
	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.c, "(0x4010LL + (ctx->ip - 0x1139LL))");
	e.bias = NULL;
	CU_ASSERT_FALSE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "it is at a static address, and this probe does not know "
			       "where the program was loaded");
}

/* A pointer kept in memory, read, then an offset: breg6 -8; deref; plus_uconst 16. */
static void test_deref(void)
{
	Dwarf_Op ops[] = {
		{ .atom = DW_OP_breg6, .number = (Dwarf_Word)-8 },
		{ .atom = DW_OP_deref },
		{ .atom = DW_OP_plus_uconst, .number = 16 },
		{ .atom = DW_OP_deref_size, .number = 4 },
	};
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(reads, "[8:((int64_t)ctx->bp - 8)][4:(t1 + 16)]");
	CU_ASSERT_STRING_EQUAL(l.c, "t2");
	CU_ASSERT_EQUAL(nreads, 2);
}

/* A computed value: (rdi + 3) * 2 as DW_OP_stack_value. */
static void test_stack_value(void)
{
	Dwarf_Op ops[] = {
		{ .atom = DW_OP_breg5, .number = 3 },
		{ .atom = DW_OP_lit2 },
		{ .atom = DW_OP_mul },
		{ .atom = DW_OP_stack_value },
	};
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_TRUE(l.is_value);
	CU_ASSERT_FALSE(l.in_reg);
	CU_ASSERT_STRING_EQUAL(l.c, "(((int64_t)ctx->di + 3) * 2LL)");
}

static void test_consts(void)
{
	Dwarf_Op ops[] = {
		{ .atom = DW_OP_consts, .number = (Dwarf_Word)-5 },
		{ .atom = DW_OP_const1u, .number = 200 },
		{ .atom = DW_OP_minus },
		{ .atom = DW_OP_stack_value },
	};
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.c, "(-5LL - 0xc8ULL)");
}

static void test_refused(void)
{
	Dwarf_Op entry[] = { { .atom = DW_OP_entry_value, .number = 1 }, { .atom = DW_OP_stack_value } };
	Dwarf_Op pieces[] = {
		{ .atom = DW_OP_reg5 }, { .atom = DW_OP_piece, .number = 8 },
		{ .atom = DW_OP_reg4 }, { .atom = DW_OP_piece, .number = 8 },
	};
	Dwarf_Op xmm[] = { { .atom = DW_OP_regx, .number = 17 } };
	Dwarf_Op under[] = { { .atom = DW_OP_plus } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_FALSE(dwarf_loc_translate(entry, N(entry), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "it is only described by a value on entry to the function "
			       "(DW_OP_entry_value), and that is gone by then");
	CU_ASSERT_FALSE(dwarf_loc_translate(pieces, N(pieces), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "it is split into pieces (DW_OP_piece) of more than 8 bytes "
			       "in all, which cannot be put together");
	CU_ASSERT_FALSE(dwarf_loc_translate(xmm, N(xmm), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "it is in a register pt_regs does not have (DWARF register 17)");
	CU_ASSERT_FALSE(dwarf_loc_translate(under, N(under), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "its location expression underflows the stack");
}

/* A struct {int x; int y;} in rdi and rsi: one 8-byte value, both bytes known. */
static void test_pieces(void)
{
	Dwarf_Op ops[] = {
		{ .atom = DW_OP_reg5 }, { .atom = DW_OP_piece, .number = 4 },
		{ .atom = DW_OP_reg4 }, { .atom = DW_OP_piece, .number = 4 },
	};
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_TRUE(l.is_value);
	CU_ASSERT_EQUAL(l.avail, 0xff);
	CU_ASSERT_STRING_EQUAL(l.c, "(int64_t)(((uint64_t)(int64_t)ctx->di & 0xffffffffULL) | "
			       "(((uint64_t)(int64_t)ctx->si & 0xffffffffULL) << 32))");
}

/* The first half in memory, the second optimized out (an empty piece). */
static void test_pieces_partial(void)
{
	Dwarf_Op ops[] = {
		{ .atom = DW_OP_breg7, .number = 8 }, { .atom = DW_OP_piece, .number = 4 },
		{ .atom = DW_OP_piece, .number = 4 },
	};
	Dwarf_Op bits[] = { { .atom = DW_OP_reg0 }, { .atom = DW_OP_bit_piece, .number = 3 } };
	struct dwarf_loc_env e = env();
	struct dwarf_loc l;

	CU_ASSERT_TRUE(dwarf_loc_translate(ops, N(ops), &e, &l));
	CU_ASSERT_EQUAL(l.avail, 0x0f);
	CU_ASSERT_STRING_EQUAL(reads, "[4:((int64_t)ctx->sp + 8)]");
	CU_ASSERT_STRING_EQUAL(l.c, "(int64_t)((uint64_t)t1 & 0xffffffffULL)");
	CU_ASSERT_FALSE(dwarf_loc_translate(bits, N(bits), &e, &l));
	CU_ASSERT_STRING_EQUAL(l.err, "it is split into bit pieces (DW_OP_bit_piece), which cannot "
			       "be read");
}

static void test_names(void)
{
	CU_ASSERT_STRING_EQUAL(dwarf_reg_field(0), "ax");
	CU_ASSERT_STRING_EQUAL(dwarf_reg_field(7), "sp");
	CU_ASSERT_STRING_EQUAL(dwarf_reg_field(15), "r15");
	CU_ASSERT_PTR_NULL(dwarf_reg_field(17));
	CU_ASSERT_STRING_EQUAL(dwarf_op_name(DW_OP_fbreg), "DW_OP_fbreg");
	CU_ASSERT_STRING_EQUAL(dwarf_op_name(0x01), "DW_OP_0x1");
}

/* The workload's own DWARF: this test binary is built with -g. */
static void test_own_debuginfo(void)
{
	const char *why = NULL;
	struct dwarf_file *f = dwarf_file_get("/proc/self/exe", &why);
	Dwarf_Die var, type;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_TRUE(dwarf_find_global(f, "reads", "test_dwarf.c", &var));
	CU_ASSERT_PTR_NOT_NULL_FATAL(dwarf_type_of(&var, &type));
	CU_ASSERT_STRING_EQUAL(dwarf_type_text(&type), "char[512]");
	CU_ASSERT_EQUAL(dwarf_array_count(&type), 512);
	CU_ASSERT_TRUE(dwarf_find_type(f, "struct dwarf_loc_env", &type));
	CU_ASSERT_EQUAL(dwarf_type_bytes(&type), (int)sizeof(struct dwarf_loc_env));
	CU_ASSERT_FALSE(dwarf_find_global(f, "no_such_global_here", NULL, &var));
}

void unit_register(void)
{
	static const struct unit_case cases[] = {
		{ "DW_OP_reg5 is rdi's value", test_reg },
		{ "DW_OP_regx with one DW_OP_piece", test_regx_piece },
		{ "DW_OP_breg7 is an address off rsp", test_breg },
		{ "DW_OP_fbreg through DW_OP_call_frame_cfa", test_fbreg_cfa },
		{ "DW_OP_fbreg without a frame base", test_fbreg_no_frame_base },
		{ "DW_OP_addr with and without a load bias", test_addr_bias },
		{ "DW_OP_deref and DW_OP_deref_size read memory", test_deref },
		{ "DW_OP_stack_value of arithmetic", test_stack_value },
		{ "constants", test_consts },
		{ "refused ops and their messages", test_refused },
		{ "DW_OP_piece: two registers into one value", test_pieces },
		{ "DW_OP_piece: memory and a part optimized out", test_pieces_partial },
		{ "register and op names", test_names },
		{ "globals and types of this binary", test_own_debuginfo },
		{ NULL, NULL },
	};

	unit_add_suite("dwarf", cases);
}
