/* stdint.h in a module of the kernel runtime: the shared runtime headers include it. */
#ifndef STP_KMOD_STDINT_H
#define STP_KMOD_STDINT_H
#include <linux/types.h>
#include <linux/limits.h>
#define UINT8_MAX U8_MAX
#define UINT16_MAX U16_MAX
#define UINT32_MAX U32_MAX
#define UINT64_MAX U64_MAX
#define INT32_MAX S32_MAX
#define INT32_MIN S32_MIN
#define INT64_MAX S64_MAX
#define INT64_MIN S64_MIN
#endif
