/*
 * stp_kmod_procfs.h - $value in a module's procfs("NAME").read/.write
 * handlers (tapset/procfs.stp's functions, which pass 2 puts in place of
 * $value): the text of the file that runtime/kmod/procfs.c hands the
 * handler it runs, through this CPU's pointer (the handler runs with
 * preemption off).  As stap's module runtime (tapset-procfs.cxx): `$value =`
 * and `.=` copy into the file's buffer up to its size less one byte, then
 * raise "buffer size exceeded, consider .maxsize(N)."; the reader gets
 * what fitted.
 *
 * Included by stp_context.bpf.h (STP_KMOD): uses struct context.
 */
#ifndef STP_KMOD_PROCFS_H
#define STP_KMOD_PROCFS_H

/* The text of the file whose handler runs on this CPU. */
struct stp_kprocfs_value {
	char *buf;		/* SIZE bytes, NUL-terminated */
	size_t size;		/* .maxsize(N), else MAXSTRINGLEN (stap's STP_PROCFS_BUFSIZE) */
	size_t count;		/* its length */
	bool write;		/* a .write handler's: what a writer wrote */
};

DECLARE_PER_CPU(struct stp_kprocfs_value *, stp_kmod_procfs_value);

/* stap's strlcpy/strlcat into the buffer: cut at size - 1, then the error. */
static void stp_procfs_value_put(struct context *c, const char *v, bool append)
{
	struct stp_kprocfs_value *d = this_cpu_read(stp_kmod_procfs_value);
	size_t have, vlen = strlen(v), room;
	char msg[80];

	if (!d || d->write)
		return;		/* called outside a .read handler: nothing to set */
	have = append ? d->count : 0;
	room = d->size - 1 - have;
	memcpy(d->buf + have, v, min(vlen, room));
	d->count = have + min(vlen, room);
	d->buf[d->count] = '\0';
	if (have + vlen > d->size - 1) {
		snprintf(msg, sizeof(msg), "buffer size exceeded, consider .maxsize(%lu).",
			 (unsigned long)(have + vlen + 1));
		stp_raise_msg(c, msg);
	}
}

static __maybe_unused void stp_procfs_value_set(struct context *c, const char *v)
{
	stp_procfs_value_put(c, v, false);
}

static __maybe_unused void stp_procfs_value_append(struct context *c, const char *v)
{
	stp_procfs_value_put(c, v, true);
}

/* What the writer wrote (at most MAXSTRINGLEN - 1 bytes), or "". */
static __maybe_unused void stp_procfs_value_get(struct context *c, char *out)
{
	struct stp_kprocfs_value *d = this_cpu_read(stp_kmod_procfs_value);
	size_t n = d && d->write ? min_t(size_t, d->count, MAXSTRINGLEN - 1) : 0;

	memcpy(out, d ? d->buf : "", n);
	out[n] = '\0';
}

#endif
