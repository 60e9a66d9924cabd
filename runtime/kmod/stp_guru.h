/*
 * stp_guru.h - what a script's embedded C (guru mode, -g) finds in a
 * module (--runtime=kernel), as in stap's module runtime.  Included by
 * script.kmod.c after the runtime's services and before the script's
 * top-level %{ %} blocks, only with -g.
 *
 * Inside an embedded-C function the generated code defines, as stap 4.8
 * does (see emit_func.c):
 *
 *   THIS             the function's locals: THIS->__retvalue (int64_t, or
 *                    char * to MAXSTRINGLEN bytes in a string function),
 *                    THIS->l_NAME for parameter NAME
 *   STAP_ARG_NAME    THIS->l_NAME
 *   STAP_RETVALUE    THIS->__retvalue
 *   STAP_RETURN(v)   set the result, leave the function
 *   STAP_ERROR(...)  a soft error whose message is the printf-style
 *                    arguments, raised at the call's location; leaves
 *   STAP_COMPAT_VERSION  STAP_VERSION(4, 8), or --compatible's
 *   CONTEXT          pmstap's struct context (not stap's: no regs,
 *                    last_error or probe_point members)
 *
 * and here, for any embedded C of a module:
 *
 *   kderef(size, addr), kread(ptr), kwrite(ptr, v), store_kderef(size,
 *   addr, v), kderef_string(dst, addr, n)
 *                    fault-safe reads and writes of kernel memory: a
 *                    fault raises stap's "read fault [man error::fault]
 *                    at 0x..." (or write) and jumps to the function's
 *                    deref_fault label, which ends it; CATCH_DEREF_FAULT()
 *                    places that label where the code wants it, as
 *                    stap's does.
 */
#ifndef STP_GURU_H
#define STP_GURU_H

#include <linux/kernel.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/version.h>	/* LINUX_VERSION_CODE, KERNEL_VERSION(): stap's embedded C tests them */

/* A soft error with a formatted message, as stap's STAP_ERROR() raises. */
static __printf(2, 3) void stp_guru_raise(struct context *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	c->error = STP_ERR_RAISED;
	c->err_site = -1;
	if (!c->errmsg[0])
		strscpy(c->errmsg, "unknown error", sizeof(c->errmsg));
}

/* At most N - 1 bytes of the string at SRC, NUL-terminated; -EFAULT on a fault. */
static inline int stp_guru_read_string(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++) {
		if (copy_from_kernel_nofault(&dst[i], &src[i], 1)) {
			dst[i] = '\0';
			return -EFAULT;
		}
		if (!dst[i])
			return 0;
	}
	if (n)
		dst[i] = '\0';
	return 0;
}

/* stap 4.8's messages (its STAP_MSG_LOC2C_0N) */
/* stap's version test for embedded C: #if STAP_COMPAT_VERSION >= STAP_VERSION(1, 8) */
#define STAP_VERSION(a, b) (((a) << 8) + (b))

#define STP_GURU_READ_FAULT "read fault [man error::fault] at 0x%llx"
#define STP_GURU_WRITE_FAULT "write fault [man error::fault] at 0x%llx"
#define STP_GURU_STRING_FAULT "kernel string copy fault at 0x%llx [man error::fault]"

#define STP_GURU_FAULT(fmt, addr)							\
	({										\
		stp_guru_raise(CONTEXT, fmt, (unsigned long long)(uintptr_t)(addr));	\
		goto deref_fault;							\
	})

/* SIZE bytes (1, 2, 4 or 8) at kernel address ADDR, zero-extended. */
#define kderef(size, addr)								\
	({										\
		uint64_t stp_kv_ = 0;							\
		if ((size) > sizeof(stp_kv_) ||						\
		    copy_from_kernel_nofault(&stp_kv_, (const void *)(uintptr_t)(addr),	\
					     (size)))					\
			STP_GURU_FAULT(STP_GURU_READ_FAULT, addr);				\
		(long)((size) == 1 ? (uint8_t)stp_kv_ : (size) == 2 ? (uint16_t)stp_kv_ :	\
			   (size) == 4 ? (uint32_t)stp_kv_ : stp_kv_);			\
	})

#define kread(ptr)									\
	({										\
		typeof(*(ptr)) stp_kr_;							\
		if (copy_from_kernel_nofault(&stp_kr_, (ptr), sizeof(stp_kr_)))		\
			STP_GURU_FAULT(STP_GURU_READ_FAULT, ptr);				\
		stp_kr_;								\
	})

#define kwrite(ptr, value)								\
	({										\
		typeof(*(ptr)) stp_kw_ = (value);					\
		if (stp_kmod_write_kernel((ptr), &stp_kw_, sizeof(stp_kw_)))		\
			STP_GURU_FAULT(STP_GURU_WRITE_FAULT, ptr);				\
	})

#define store_kderef(size, addr, value)							\
	({										\
		uint64_t stp_ks_ = (uint64_t)(value);					\
		if ((size) > sizeof(stp_ks_) ||						\
		    stp_kmod_write_kernel((void *)(uintptr_t)(addr), &stp_ks_, (size)))	\
			STP_GURU_FAULT(STP_GURU_WRITE_FAULT, addr);				\
	})

/* A string of at most N - 1 bytes at kernel address ADDR into DST. */
#define kderef_string(dst, addr, n)							\
	({										\
		if (stp_guru_read_string((dst), (const char *)(uintptr_t)(addr), (n)))	\
			STP_GURU_FAULT(STP_GURU_STRING_FAULT, addr);			\
		(dst);									\
	})

#define deref(size, addr) kderef(size, addr)
#define store_deref(size, addr, value) store_kderef(size, addr, value)

#define CATCH_DEREF_FAULT()								\
	if (0) {									\
deref_fault: __attribute__((unused));							\
	}

#endif /* STP_GURU_H */
