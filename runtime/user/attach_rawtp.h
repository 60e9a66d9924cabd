/* attach_rawtp.h - raw tracepoint programs linked with their probe's cookie (attach_rawtp.c). */
#ifndef STP_ATTACH_RAWTP_H
#define STP_ATTACH_RAWTP_H

#include <stdbool.h>
#include <bpf/libbpf.h>

struct stp_script;

/* Does this kernel link raw tracepoint programs with a cookie (Linux 6.10)? */
bool stp_rtp_cookies(void);

/* Link probe I's raw_tp program to its tracepoint with cookie I; 0 or a negative errno. */
int stp_rtp_attach(struct stp_script *s, int i, int prog_fd);

#endif
