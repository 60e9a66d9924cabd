/*
 * kmod_abi.h - what a module of the kernel runtime and pmstap agree on
 * (runtime/kmod/stp_kmod_main.h, runtime/user/kmod.c, and the translator,
 * which builds the module under STP_KMOD_BUILD_NAME).
 */
#ifndef STP_KMOD_ABI_H
#define STP_KMOD_ABI_H

/* The name a module is built under; pmstap renames its copy when it loads it. */
#define STP_KMOD_BUILD_NAME "pmstap_module_to_be_renamed_xx"
/* The loaded name: this prefix, then the pid of the pmstap that loaded it. */
#define STP_KMOD_PREFIX "pmstap_kmod_"

/* What pmstap writes to the module's device /dev/NAME. */
#define STP_KMOD_CMD_START "start"	/* register the probes */
#define STP_KMOD_CMD_STOP "stop"	/* unregister them */
#define STP_KMOD_CMD_EXISTING "existing"	/* process/thread.begin of the tasks running */

#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * ioctl STP_KMOD_IOC_CALL: one of the script's embedded-C functions
 * (-g), called by a begin, end, error or timer probe, which pmstap runs:
 * the module runs it as a kernel probe would (this CPU's context,
 * preemption off).  FUNC is its number in the module's table
 * (stp_kmod_ucall() of script.kmod.c); argument I is NUMS[I], or the
 * string at user address STRS[I] when that is not 0.  Back come RET (a
 * long result), the string result at RET_STR (MAXSTRINGLEN bytes), and
 * ERROR, the context's enum stp_err, with the message at ERRMSG
 * (MAXSTRINGLEN bytes) when the function raised one.
 */
#define STP_KMOD_CALL_MAXARGS 16

struct stp_kmod_call {
	__u32 func;
	__s32 error;
	__s64 nums[STP_KMOD_CALL_MAXARGS];
	__u64 strs[STP_KMOD_CALL_MAXARGS];
	__s64 ret;
	__u64 ret_str;
	__u64 errmsg;
};

#define STP_KMOD_IOC_CALL _IOWR('S', 0x51, struct stp_kmod_call)

#endif
