/*
 * outtext.c - a script's output as text, for clients that cannot read
 * event records: pmproxy's REST API encodes every PM_TYPE_EVENT value as
 * null, so a web page sees nothing of stap.scripts.output.
 *
 * Each script keeps its newest lines, output_text_bytes of them at most,
 * each ended by a newline, numbered as stap.scripts.output_lines counts
 * them.  For a client context,
 *
 *	stap.scripts.output_text	the lines since its previous fetch of
 *					output_text that are still held, in
 *					order, each ended by '\n' ("" for none);
 *					at its first fetch, all the lines held
 *	stap.scripts.output_missed	the lines its fetches of output_text
 *					skipped: gone from the history before
 *					it asked (a counter, per context)
 *
 * so that after every fetch, for every context and script,
 *
 *	lines it got from output_text + output_missed == output_lines.
 *
 * A fetch takes each script's text once: output_missed in the same fetch
 * counts the lines that this fetch's output_text skipped, whatever order
 * the metrics are asked in.  A fetch of output_missed without output_text
 * moves nothing.  The value points into the history, which nothing
 * changes during a fetch (the PMDA has one thread); libpcp_pmda copies it.
 *
 * The history is a buffer of 2 * cap bytes: lines are appended at end,
 * the oldest dropped from start until the newest fit in cap, and the
 * held lines are moved back to the front only when the end is reached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"

/* A client context's place in a script's history. */
struct place {
	int ctx;
	const struct stap_script *sc;
	uint64_t upto;			/* the last line it got or missed */
	uint64_t missed;
	unsigned int gen;		/* the fetch it last took text in */
	const char *text;		/* what it took then */
};

static struct place *places;
static int nplaces;
static unsigned int fetch_gen;
static bool text_wanted;

/* The number of the oldest line held; output_lines + 1 when none is. */
static uint64_t history_first(const struct stap_script *sc)
{
	const struct stap_history *h = &sc->history;

	return h->start == h->end ? sc->output_lines + 1 : h->first;
}

static bool history_alloc(struct stap_history *h)
{
	size_t cap = stap_config.output_text_bytes;

	if (h->buf)
		return true;
	h->buf = malloc(2 * cap + 1);
	if (!h->buf)
		return false;
	h->cap = cap;
	h->start = h->end = 0;
	h->buf[0] = '\0';
	return true;
}

static void drop_oldest(struct stap_history *h)
{
	const char *nl = memchr(h->buf + h->start, '\n', h->end - h->start);

	h->start = (size_t)(nl - h->buf) + 1;
	h->first++;
}

/*
 * A line too long for the history is cut to fit (max_line_bytes cuts
 * them before, and is usually the smaller).  Without memory, the line is
 * not held: the clients that did not get it count it missed.
 */
void stap_history_append(struct stap_script *sc, const char *line, size_t len)
{
	struct stap_history *h = &sc->history;
	size_t need;

	if (!history_alloc(h))
		return;
	if (len > h->cap - 1)
		len = h->cap - 1;
	need = len + 1;
	while (h->end - h->start + need > h->cap)
		drop_oldest(h);
	if (h->start == h->end) {
		h->start = h->end = 0;
		h->first = sc->output_lines;
	} else if (h->end + need > 2 * h->cap) {
		memmove(h->buf, h->buf + h->start, h->end - h->start);
		h->end -= h->start;
		h->start = 0;
	}
	memcpy(h->buf + h->end, line, len);
	h->buf[h->end + len] = '\n';
	h->end += need;
	h->buf[h->end] = '\0';
}

static void places_forget(const struct stap_script *sc)
{
	for (int i = 0; i < nplaces;)
		if (places[i].sc == sc)
			places[i] = places[--nplaces];
		else
			i++;
}

void stap_history_free(struct stap_script *sc)
{
	places_forget(sc);
	free(sc->history.buf);
	memset(&sc->history, 0, sizeof(sc->history));
}

void stap_outtext_end_context(int ctx)
{
	for (int i = 0; i < nplaces;)
		if (places[i].ctx == ctx)
			places[i] = places[--nplaces];
		else
			i++;
}

void stap_outtext_begin(void)
{
	fetch_gen++;
	text_wanted = false;
}

void stap_outtext_prepare(void)
{
	text_wanted = true;
}

/* CTX's place in SC's history: a new one has got nothing yet. */
static struct place *place_get(int ctx, const struct stap_script *sc)
{
	struct place *more;

	for (int i = 0; i < nplaces; i++)
		if (places[i].ctx == ctx && places[i].sc == sc)
			return &places[i];
	more = realloc(places, (size_t)(nplaces + 1) * sizeof(*places));
	if (!more)
		return NULL;
	places = more;
	places[nplaces] = (struct place){ .ctx = ctx, .sc = sc, .gen = fetch_gen - 1, .text = "" };
	return &places[nplaces++];
}

/* Where line N (held) starts in the history. */
static const char *line_at(const struct stap_history *h, uint64_t n)
{
	const char *p = h->buf + h->start;

	for (uint64_t i = h->first; i < n; i++)
		p = (const char *)memchr(p, '\n', (size_t)(h->buf + h->end - p)) + 1;
	return p;
}

/* The lines after p->upto, once a fetch; those no longer held are missed. */
static void take(const struct stap_script *sc, struct place *p)
{
	uint64_t next = p->upto + 1, first = history_first(sc);

	if (p->gen == fetch_gen)
		return;
	p->gen = fetch_gen;
	p->text = "";
	if (!text_wanted)
		return;
	if (next < first) {
		p->missed += first - next;
		next = first;
	}
	if (next <= sc->output_lines)
		p->text = line_at(&sc->history, next);
	p->upto = sc->output_lines;
}

int stap_outtext_fetch(struct stap_script *sc, int item, pmAtomValue *atom)
{
	struct place *p = place_get(pmdaGetContext(), sc);

	if (!p)
		return -ENOMEM;
	take(sc, p);
	if (item == STAP_SCRIPTS_OUTPUT_TEXT)
		atom->cp = (char *)p->text;
	else
		atom->ull = p->missed;
	return PMDA_FETCH_STATIC;
}
