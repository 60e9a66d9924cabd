/*
 * handover.h - an unprivileged pmstap hands its running script to
 * pmdastap, which serves its globals as stap.NAME.* until it ends
 * (pmstap --runtime=dyninst --pmda[=NAME]).
 *
 * The PMDA runs as root and the script as its user, so nothing of the
 * user's is run or trusted by the PMDA: it gets the script's description
 * as data (meta_wire.h), its shared segment (runtime/dyninst/dmap.h),
 * which it maps and reads as an untrusting reader, and a pipe of the
 * script's output.  On the SOCK_SEQPACKET socket (msg.h), pmstap says
 *	HELLO	"VERSION NAME"			answered ACCEPT or REFUSE
 *	META	a memfd: the encoded stp_meta
 *	SEGMENT	the segment's memfd
 *	OUTPUT	the read end of the output pipe
 *	READY	one byte a probe, 1: attached	answered ACCEPT or REFUSE
 * and keeps the socket open while the script runs: its end (pmstap's
 * exit, or its death) ends stap.NAME.*.  The PMDA says who may in
 * pmdastap.conf ([handover], off by default), by the socket peer's uid.
 */
#ifndef STP_HANDOVER_H
#define STP_HANDOVER_H

#define STP_HANDOVER_VERSION 1
/* Where pmdastap listens unless PMSTAP_PMDA_SOCKET says otherwise ($PCP_RUN_DIR). */
#define STP_HANDOVER_SOCKET "/run/pcp/pmdastap.socket"
#define STP_HANDOVER_SOCKET_ENV "PMSTAP_PMDA_SOCKET"
#define STP_HANDOVER_META_MAX (64u << 20)	/* the encoded meta's bytes at most */

enum stp_handover_msg {
	STP_HO_HELLO = 'H',
	STP_HO_META = 'T',
	STP_HO_SEGMENT = 'S',
	STP_HO_OUTPUT = 'O',
	STP_HO_READY = 'R',
	STP_HO_ACCEPT = 'K',	/* pmdastap's answers; REFUSE carries the reason */
	STP_HO_REFUSE = 'E',
};

struct stp_script;

/* Connect and ask for NAME (opts.pmda_name): 0, or -errno after saying why. */
int stp_handover_hello(struct stp_script *s);
/* Give the PMDA what it reads, once the probes are attached: 0, or -errno after saying why. */
int stp_handover_ready(struct stp_script *s);
/* Copy of output for the PMDA: never blocks; what does not fit is counted. */
void stp_handover_output(struct stp_script *s, const char *buf, size_t len);
/* The end: the PMDA stops serving the script; bytes it missed are reported. */
void stp_handover_close(struct stp_script *s);

#endif
