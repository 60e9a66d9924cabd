/*
 * tapset_verify.h - what tapset_verify.bpf.c and its loader share: the
 * case the loader writes and what one run of the program gives back
 * (besides the records it sends).
 */
#ifndef TAPSET_VERIFY_H
#define TAPSET_VERIFY_H

#include "../../runtime/stp_tapset.h"

enum tv_op {
	TV_OP_CONTEXT = 1,
	TV_OP_STRLEN,
	TV_OP_SUBSTR,
	TV_OP_CHAR_AT,
	TV_OP_STRPOS,
	TV_OP_STRSPN,
	TV_OP_STRCSPN,
	TV_OP_STRTOL,
	TV_OP_TEXT_STR,
	TV_OP_SCRIPT_ARG,
	TV_OP_CPU_CLOCK,
	TV_OP_READ_USER_INT,
	TV_OP_READ_KERNEL_INT,
	TV_OP_READ_USER_STRING,
	TV_OP_READ_KERNEL_STRING,
	TV_OP_ERROR,
	TV_OP_WARN,
	TV_OP_EXIT,
	TV_OP_ABORT,
	TV_OP_PRINTK,
	TV_OP_SUBSTR_SELF,	/* substr with OUT the same buffer as the string */
	TV_OP_SYSTEM,
	TV_OP_SWITCH_FILE,
};

/* TV_OP_CONTEXT: the values, indexes into tv_result.v */
enum tv_value {
	TV_PID, TV_TID, TV_PPID, TV_PGRP, TV_SID, TV_UID, TV_GID, TV_EUID, TV_EGID,
	TV_CPU, TV_TARGET, TV_IS_RETURN, TV_CMDLINE_START, TV_CMDLINE_END, TV_ARGC,
	TV_TIMEOFDAY, TV_KTIME, TV_LOCAL_CLOCK, TV_CYCLES, TV_JIFFIES, TV_HZ, TV_TZ_GMTOFF,
	TV_COMM_ADDR,		/* the kernel address of the current task's comm */
	TV_NVALUES
};

/* TV_OP_CONTEXT: the strings, indexes into tv_result.s */
enum tv_string {
	TV_S_EXECNAME = 1, TV_S_PEXECNAME, TV_S_PP, TV_S_PROBEFUNC, TV_S_PROBEMOD, TV_S_TZ_NAME,
	TV_NSTRINGS
};

struct tv_input {
	int64_t op;
	int64_t a, b, c;
	uint64_t addr;
	char s1[MAXSTRINGLEN];
	char s2[MAXSTRINGLEN];
};

struct tv_result {
	int64_t runs;			/* how many times the program ran the case */
	int64_t r;			/* a long result */
	int64_t error;			/* context->error after the case (enum stp_err) */
	int64_t v[TV_NVALUES];
	char s[TV_NSTRINGS][MAXSTRINGLEN];	/* s[0]: a string result */
	char err[MAXSTRINGLEN];		/* context->errmsg */
};

#endif
