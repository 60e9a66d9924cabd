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

#endif
