/*
 * events.c - a script's printf output as PCP event records.
 *
 * The child writes the script's output to a pipe; the main loop reads it
 * as soon as it is readable, whether or not anyone is fetching, cuts it
 * into lines (a line longer than max_line_bytes is cut there) and appends
 * each line to the script's pmdaEventQueue.  Each client context reads the
 * queue from where it last left off (pmdaEventQueueRecords).  Every line
 * carries its number in the script's output, and each context remembers
 * the last number it was given: a client too slow for output_queue_bytes
 * finds a gap before its next record, and gets a "missed" record saying
 * how many lines it lost.
 * stap.scripts.{output_lines,output_bytes,last_output} mirror the stream
 * for clients that cannot show events (pmproxy's REST API shows them as
 * null), and stap.scripts.output_text carries the lines themselves
 * (outtext.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/time.h>
#include <unistd.h>

#include "pmdastap.h"

static unsigned int queue_serial;

/* Names of queues shut down: libpcp_pmda may still hold them. */
static char **retired;
static int nretired;

/* The last line a client context got from a queue. */
struct seen {
	int ctx;
	const char *queue;		/* the queue's name: unique while it is held */
	uint64_t seq;
};

static struct seen *seen;
static int nseen;

/* What one fetch's records are decoded with. */
struct decoding {
	struct seen *seen;
	bool first;
};

int stap_output_open(struct stap_script *sc)
{
	/*
	 * libpcp_pmda keeps the name's pointer, also after a shutdown it
	 * defers until the last client goes: the name is freed once
	 * libpcp_pmda has let go of the queue (prune_retired).
	 */
	if (asprintf(&sc->queue_name, "stap.%s#%u", sc->name, ++queue_serial) < 0) {
		sc->queue_name = NULL;
		return -1;
	}
	sc->queue = pmdaEventNewQueue(sc->queue_name, stap_config.output_queue_bytes);
	if (sc->queue < 0) {
		pmNotifyErr(LOG_ERR, "script %s: no event queue: %s", sc->name, pmErrStr(sc->queue));
		return -1;
	}
	return 0;
}

/* Free the names of retired queues libpcp_pmda has released (no client held them). */
static void prune_retired(void)
{
	for (int i = 0; i < nretired;)
		if (pmdaEventQueueHandle(retired[i]) < 0) {
			free(retired[i]);
			retired[i] = retired[--nretired];
		} else {
			i++;
		}
}

/* Forget where clients were in a queue that goes: a long-lived client
   (pmlogger) would otherwise keep an entry for every script that came and went. */
static void seen_forget(const char *queue)
{
	for (int i = 0; i < nseen;)
		if (seen[i].queue == queue)
			seen[i] = seen[--nseen];
		else
			i++;
}

void stap_output_close(struct stap_script *sc)
{
	char **more = realloc(retired, (size_t)(nretired + 1) * sizeof(*retired));

	seen_forget(sc->queue_name);
	if (more) {
		retired = more;
		retired[nretired++] = sc->queue_name;
	}
	sc->queue_name = NULL;
	if (sc->queue >= 0)
		pmdaEventQueueShutdown(sc->queue);
	sc->queue = -1;
	prune_retired();
	free(sc->last_output);
	sc->last_output = NULL;
	stap_history_free(sc);
}

/* A line into the queue as {uint64_t number, text, NUL}, read at TV. */
static void emit(struct stap_script *sc, const char *line, size_t len, struct timeval *tv)
{
	static char *rec;
	static size_t size;
	size_t text = strnlen(line, len), need = sizeof(uint64_t) + text + 1;

	if (need > size) {
		char *more = realloc(rec, need);

		if (!more)
			return;
		rec = more;
		size = need;
	}
	sc->output_lines++;
	sc->output_bytes += len + 1;
	memcpy(rec, &sc->output_lines, sizeof(uint64_t));
	memcpy(rec + sizeof(uint64_t), line, text);
	rec[sizeof(uint64_t) + text] = '\0';
	stap_history_append(sc, line, text);
	if (sc->queue >= 0)
		pmdaEventQueueAppend(sc->queue, rec, need, tv);
}

/* last_output: the text of the newest line, copied once a read, not once a line. */
static void keep_last(struct stap_script *sc, const char *line, size_t len)
{
	char *copy = strndup(line, len);

	if (!copy)
		return;
	free(sc->last_output);
	sc->last_output = copy;
}

/* Lines of buf[0..n), the first continuing sc->partial. */
static void cut_lines(struct stap_script *sc, const char *buf, size_t n)
{
	size_t max = stap_config.max_line_bytes;
	const char *last = NULL;
	size_t last_len = 0;
	struct timeval tv;

	gettimeofday(&tv, NULL);
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;

		if (sc->partial.len + take > max)
			take = max - sc->partial.len;
		if (sc->partial.len == 0 && (take < n || take == max)) {
			/* a whole line in buf: no copy into partial */
			last = buf;
			last_len = take;
			emit(sc, buf, take, &tv);
		} else {
			stap_text_append(&sc->partial, buf, take);
			if (take == n && sc->partial.len < max)
				break;		/* the line goes on in the next read */
			last = NULL;
			emit(sc, sc->partial.buf ? sc->partial.buf : "", sc->partial.len, &tv);
			keep_last(sc, sc->partial.buf ? sc->partial.buf : "", sc->partial.len);
			stap_text_reset(&sc->partial);
		}
		buf += take;
		n -= take;
		if (n > 0 && *buf == '\n') {
			buf++;
			n--;
		}
	}
	if (last)
		keep_last(sc, last, last_len);
}

/* One read of the output pipe: > 0 when it read something. */
static ssize_t read_once(struct stap_script *sc)
{
	char buf[65536];
	ssize_t n;

	if (sc->out_fd < 0)
		return 0;
	n = read(sc->out_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		close(sc->out_fd);
		sc->out_fd = -1;
		stap_output_flush(sc);
		return 0;
	}
	cut_lines(sc, buf, (size_t)n);
	return n;
}

/*
 * The main loop polls again between reads, so a script printing as fast
 * as it can does not keep pmcd's requests (and the other scripts' output)
 * waiting: the pipe fills, the child waits, and its ring buffer drops and
 * counts what does not fit.
 */
void stap_output_ready(struct stap_script *sc)
{
	read_once(sc);
}

/* What is left in the pipe of a child that ended, and the line not ended. */
void stap_output_drain(struct stap_script *sc)
{
	while (read_once(sc) > 0)
		;
	stap_output_flush(sc);
}

void stap_output_flush(struct stap_script *sc)
{
	struct timeval tv;

	if (sc->partial.len) {
		gettimeofday(&tv, NULL);
		emit(sc, sc->partial.buf, sc->partial.len, &tv);
		keep_last(sc, sc->partial.buf, sc->partial.len);
		stap_text_reset(&sc->partial);
	}
}

static int decode(int array, void *buf, size_t size, struct timeval *tv, void *data)
{
	struct decoding *d = data;
	pmAtomValue atom;
	uint64_t seq;
	int rc, added = 0;

	if (size <= sizeof(seq))
		return 0;
	memcpy(&seq, buf, sizeof(seq));
	atom.cp = (char *)buf + sizeof(seq);
	if (d->first && d->seen && seq > d->seen->seq + 1) {
		rc = pmdaEventAddMissedRecord(array, tv, (int)(seq - d->seen->seq - 1));
		if (rc < 0)
			return rc;
		added++;
	}
	d->first = false;
	if (d->seen && seq > d->seen->seq)
		d->seen->seq = seq;
	if ((rc = pmdaEventAddRecord(array, tv, PM_EVENT_FLAG_POINT)) < 0 ||
	    (rc = pmdaEventAddParam(array, stap_line_pmid(), PM_TYPE_STRING, &atom)) < 0)
		return rc;
	return added + 1;
}

/* This context's place in sc's output, made at its first fetch. */
static struct seen *seen_get(int ctx, struct stap_script *sc)
{
	struct seen *more;

	for (int i = 0; i < nseen; i++)
		if (seen[i].ctx == ctx && seen[i].queue == sc->queue_name)
			return &seen[i];
	more = realloc(seen, (size_t)(nseen + 1) * sizeof(*seen));
	if (!more)
		return NULL;
	seen = more;
	/* lines before a client's first fetch were never queued for it */
	seen[nseen] = (struct seen){ .ctx = ctx, .queue = sc->queue_name, .seq = sc->output_lines };
	return &seen[nseen++];
}

void stap_output_end_context(int ctx)
{
	stap_outtext_end_context(ctx);
	for (int i = 0; i < nseen;)
		if (seen[i].ctx == ctx)
			seen[i] = seen[--nseen];
		else
			i++;
}

int stap_output_fetch(struct stap_script *sc, pmAtomValue *atom)
{
	int ctx = pmdaGetContext();
	struct decoding d = { .first = true };

	if (sc->queue < 0)
		return PMDA_FETCH_NOVALUES;
	d.seen = seen_get(ctx, sc);
	pmdaEventSetAccess(ctx, sc->queue, 1);
	return pmdaEventQueueRecords(sc->queue, atom, ctx, decode, &d);
}
