/*
 * patch_reloc.c - the instructions a site displaces: decoding them (Zydis,
 * 64-bit mode), deciding whether they can run elsewhere, and writing the
 * copy that does.
 *
 * What changes in the copy:
 *	RIP-relative memory operand	its disp32, recomputed (refused out of reach)
 *	jmp rel8/rel32			jmp rel32, or jmp *0(%rip) with the target after
 *	jcc rel8/rel32			jcc rel32, or the opposite jcc over an absolute jmp
 *	loop*, jrcxz (rel8 only)	the same, taken to a jmp to the target
 *	call rel32			push the original return address, jmp
 *	call r/m64			push the original return address, jmp r/m64
 * A call must be the last displaced instruction (it returns after them);
 * an indirect call through %rsp is refused (the push moves it), as are
 * 16-bit branches, EIP-relative operands and other relative instructions
 * (xbegin).  Every other instruction is copied as is.
 */
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "patch_int.h"

#define RELOC_SLACK 32	/* what one instruction's relocation needs, at most */

static void reloc__decoder(ZydisDecoder *dec)
{
	ZydisDecoderInit(dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void put32(uint8_t *p, int64_t v)
{
	int32_t w = (int32_t)v;

	memcpy(p, &w, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* ---- classifying one instruction ---- */

/* A relative branch: which kind, or -1. */
static int insn__branch(struct patch_insn *i, const ZydisDecodedInstruction *in)
{
	uint8_t op = in->opcode;

	if (in->opcode_map == ZYDIS_OPCODE_MAP_0F && op >= 0x80 && op <= 0x8f) {
		i->cc = op & 15;
		return PATCH_I_JCC;
	}
	if (in->opcode_map != ZYDIS_OPCODE_MAP_DEFAULT)
		return -1;
	if (op == 0xeb || op == 0xe9)
		return PATCH_I_JMP;
	if (op == 0xe8)
		return PATCH_I_CALL;
	if (op >= 0x70 && op <= 0x7f) {
		i->cc = op & 15;
		return PATCH_I_JCC;
	}
	if (op >= 0xe0 && op <= 0xe3 && in->raw.imm[0].size == 8) {
		i->cc = in->raw.imm[0].offset;
		return PATCH_I_JCC8;
	}
	return -1;
}

/* Its explicit memory operand's base, if it has one; ZYDIS_REGISTER_NONE otherwise. */
static ZydisRegister insn__mem_base(const ZydisDecodedInstruction *in,
				    const ZydisDecodedOperand *ops, ZydisRegister *index)
{
	for (int k = 0; k < in->operand_count; k++) {
		if (ops[k].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    ops[k].visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT)
			continue;
		*index = ops[k].mem.index;
		return ops[k].mem.base;
	}
	*index = ZYDIS_REGISTER_NONE;
	return ZYDIS_REGISTER_NONE;
}

static int insn__memory(struct patch_insn *i, const ZydisDecodedInstruction *in,
			const ZydisDecodedOperand *ops, uintptr_t at, char *why, size_t n)
{
	ZydisRegister index, base = insn__mem_base(in, ops, &index);
	bool icall = in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && in->opcode == 0xff &&
		     in->raw.modrm.reg == 2;

	if (base == ZYDIS_REGISTER_EIP) {
		snprintf(why, n, "its operand is EIP-relative");
		return -1;
	}
	if (icall && (base == ZYDIS_REGISTER_RSP || index == ZYDIS_REGISTER_RSP)) {
		snprintf(why, n, "it is an indirect call through the stack pointer");
		return -1;
	}
	if (base == ZYDIS_REGISTER_RIP) {
		if (in->raw.disp.size != 32) {
			snprintf(why, n, "its RIP-relative operand has no 32-bit displacement");
			return -1;
		}
		i->disp_off = in->raw.disp.offset;
		i->target = at + in->length + (int64_t)in->raw.disp.value;
		i->kind = PATCH_I_RIPMEM;
	}
	if (icall) {
		i->kind = PATCH_I_ICALL;
		i->modrm_off = in->raw.modrm.offset;
	}
	return 0;
}

static int insn__classify(struct patch_insn *i, const ZydisDecodedInstruction *in,
			  const ZydisDecodedOperand *ops, uintptr_t at, char *why, size_t n)
{
	int kind;

	i->kind = PATCH_I_COPY;
	if (!in->raw.imm[0].is_relative)
		return insn__memory(i, in, ops, at, why, n);
	kind = insn__branch(i, in);
	if (kind < 0) {
		snprintf(why, n, "%s has a relative operand", ZydisMnemonicGetString(in->mnemonic));
		return -1;
	}
	if (in->attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE) {
		snprintf(why, n, "it is a 16-bit branch");
		return -1;
	}
	i->kind = (uint8_t)kind;
	i->target = at + in->length + (int64_t)in->raw.imm[0].value.s;
	return 0;
}

/* Decode the instruction that follows C's, at CODE + C->len.  0, or -1 with WHY. */
static int code__next(struct patch_code *c, const ZydisDecoder *dec, const uint8_t *code,
		      size_t avail, char *why, size_t whylen)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct patch_insn *i = &c->insn[c->n], *prev = c->n ? i - 1 : NULL;
	uintptr_t at = c->addr + c->len;
	char reason[80];

	if ((size_t)c->len >= avail ||
	    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(dec, code + c->len, avail - c->len, &in, ops))) {
		snprintf(why, whylen, "cannot decode the instruction at 0x%lx", (unsigned long)at);
		return -1;
	}
	if (prev && (prev->kind == PATCH_I_CALL || prev->kind == PATCH_I_ICALL)) {
		snprintf(why, whylen, "the call at 0x%lx is not the last displaced instruction",
			 (unsigned long)(at - prev->len));
		return -1;
	}
	if (insn__classify(i, &in, ops, at, reason, sizeof(reason)) != 0) {
		snprintf(why, whylen, "the instruction at 0x%lx cannot be moved: %s",
			 (unsigned long)at, reason);
		return -1;
	}
	i->off = (uint8_t)c->len;
	i->len = in.length;
	memcpy(c->bytes + c->len, code + c->len, in.length);
	c->len += in.length;
	c->n++;
	return 0;
}

/*
 * Decode the instructions at CODE (AVAIL bytes readable there; ADDR is
 * their address) until MIN bytes are covered, and check that each can run
 * from a copy.  0, or -1 with WHY.
 */
int patch_code__decode(struct patch_code *c, const uint8_t *code, size_t avail, uintptr_t addr,
		       int min, char *why, size_t whylen)
{
	ZydisDecoder dec;

	reloc__decoder(&dec);
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	while (c->len < min && c->n < PATCH_MAX_INSNS)
		if (code__next(c, &dec, code, avail, why, whylen) != 0)
			return -1;
	return 0;
}

/* Where the copy may be placed: within reach of the site and of its RIP-relative operands. */
void patch_code__window(const struct patch_code *c, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t l = c->addr > PATCH_REACH ? c->addr - PATCH_REACH : 0;
	uintptr_t h = c->addr + PATCH_REACH;

	for (int k = 0; k < c->n; k++) {
		const struct patch_insn *i = &c->insn[k];

		if (!i->disp_off)
			continue;
		if (i->target > PATCH_REACH && i->target - PATCH_REACH > l)
			l = i->target - PATCH_REACH;
		if (i->target + PATCH_REACH < h)
			h = i->target + PATCH_REACH;
	}
	*lo = l;
	*hi = h;
}

/* ---- writing the copy ---- */

static int emit_jmp_abs(uint8_t *p, uintptr_t to)
{
	p[0] = 0xff;	/* jmp *0(%rip) */
	p[1] = 0x25;
	put32(p + 2, 0);
	put64(p + 6, to);
	return 14;
}

static int emit_jmp(uint8_t *p, uintptr_t at, uintptr_t to)
{
	int64_t d = (int64_t)(to - (at + 5));

	if (!fits32(d))
		return emit_jmp_abs(p, to);
	p[0] = 0xe9;
	put32(p + 1, d);
	return 5;
}

static int emit_jcc(uint8_t *p, uintptr_t at, int cc, uintptr_t to)
{
	int64_t d = (int64_t)(to - (at + 6));

	if (fits32(d)) {
		p[0] = 0x0f;
		p[1] = (uint8_t)(0x80 | cc);
		put32(p + 2, d);
		return 6;
	}
	p[0] = (uint8_t)(0x70 | (cc ^ 1));	/* the opposite condition skips the jmp */
	p[1] = 14;
	return 2 + emit_jmp_abs(p + 2, to);
}

/* loop*, jrcxz: taken, to a jmp to the target; not taken, over it. */
static int emit_jcc8(uint8_t *p, uintptr_t at, const struct patch_insn *i, const uint8_t *bytes)
{
	int n = i->len, j;

	memcpy(p, bytes, n);
	p[i->cc] = 2;
	j = emit_jmp(p + n + 2, at + n + 2, i->target);
	p[n] = 0xeb;
	p[n + 1] = (uint8_t)j;
	return n + 2 + j;
}

/* Push a 64-bit return address without touching flags or registers. */
static int emit_push64(uint8_t *p, uint64_t v)
{
	p[0] = 0x68;	/* push $lo (sign-extended) */
	put32(p + 1, (int64_t)(uint32_t)v);
	p[5] = 0xc7;	/* movl $hi, 4(%rsp) */
	p[6] = 0x44;
	p[7] = 0x24;
	p[8] = 0x04;
	put32(p + 9, (int64_t)(uint32_t)(v >> 32));
	return 13;
}

/* Copy an instruction; a RIP-relative operand keeps pointing at the same address. */
static int emit_copy(uint8_t *p, uintptr_t at, const struct patch_insn *i, const uint8_t *bytes,
		     char *why, size_t n)
{
	int64_t d = (int64_t)(i->target - (at + i->len));

	memcpy(p, bytes, i->len);
	if (!i->disp_off)
		return i->len;
	if (!fits32(d)) {
		snprintf(why, n, "the RIP-relative operand at 0x%lx is out of reach of its copy",
			 (unsigned long)i->target);
		return -1;
	}
	put32(p + i->disp_off, d);
	return i->len;
}

static int emit_insn(uint8_t *p, uintptr_t at, const struct patch_code *c,
		     const struct patch_insn *i, char *why, size_t n)
{
	const uint8_t *bytes = c->bytes + i->off;
	uintptr_t next = c->addr + i->off + i->len;
	int k;

	switch (i->kind) {
	case PATCH_I_JMP:
		return emit_jmp(p, at, i->target);
	case PATCH_I_JCC:
		return emit_jcc(p, at, i->cc, i->target);
	case PATCH_I_JCC8:
		return emit_jcc8(p, at, i, bytes);
	case PATCH_I_CALL:
		k = emit_push64(p, next);
		return k + emit_jmp(p + k, at + k, i->target);
	case PATCH_I_ICALL:
		k = emit_push64(p, next);
		if (emit_copy(p + k, at + k, i, bytes, why, n) < 0)
			return -1;
		p[k + i->modrm_off] =
			(uint8_t)((p[k + i->modrm_off] & ~0x38) | (4 << 3)); /* /2 -> /4 */
		return k + i->len;
	default:
		return emit_copy(p, at, i, bytes, why, n);
	}
}

/*
 * Write at OUT (OUTLEN bytes) the copy of C's instructions that runs at
 * DST, then a jump back to the instruction after them.  COPIES (unless
 * NULL) gets where each instruction's copy runs: instructions copied as
 * they are (syscall among them) keep their length, so the copy of one
 * ends where the next one's starts.  Its size, or -1 with WHY.
 */
int patch_code__relocate(const struct patch_code *c, uintptr_t dst, uint8_t *out, size_t outlen,
			 uintptr_t *copies, char *why, size_t whylen)
{
	size_t at = 0;

	for (int k = 0; k <= c->n; k++) {
		int n;

		if (at + RELOC_SLACK > outlen) {
			snprintf(why, whylen, "the copy of 0x%lx does not fit",
				 (unsigned long)c->addr);
			return -1;
		}
		if (copies && k < c->n)
			copies[k] = dst + at;
		if (k == c->n)
			n = emit_jmp(out + at, dst + at, c->addr + c->len);
		else
			n = emit_insn(out + at, dst + at, c, &c->insn[k], why, whylen);
		if (n < 0)
			return -1;
		at += n;
	}
	return (int)at;
}

/*
 * Scan the function at FUNC, [LO, HI), for a relative branch landing
 * strictly inside (IN_LO, IN_HI).  Its address, or 0.  *ALIGNED says
 * whether the scan decoded an instruction at IN_LO.  Undecodable bytes are
 * skipped one at a time.
 */
uintptr_t patch_code__branch_into(const uint8_t *func, uintptr_t lo, uintptr_t hi, uintptr_t in_lo,
				  uintptr_t in_hi, bool *aligned)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction in;

	reloc__decoder(&dec);
	*aligned = false;
	for (uintptr_t at = lo; at < hi;) {
		uintptr_t to;

		if (at == in_lo)
			*aligned = true;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, NULL, func + (at - lo),
								hi - at, &in))) {
			at++;
			continue;
		}
		to = at + in.length + (uintptr_t)in.raw.imm[0].value.s;
		if (in.raw.imm[0].is_relative && to > in_lo && to < in_hi)
			return at;
		at += in.length;
	}
	return 0;
}
