/*
 * probes_lines.c - a statement's line part (probes_lines.h).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "probes_lines.h"
#include "vec.h"

/* A decimal line number at *P, at least MIN; P moves past it. */
static bool line_number(const char **p, int min, int *out)
{
	long v = 0;

	if (!isdigit((unsigned char)**p))
		return false;
	while (isdigit((unsigned char)**p)) {
		v = v * 10 + (**p - '0');
		if (v > 10000000)
			return false;
		(*p)++;
	}
	*out = (int)v;
	return v >= min;
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* ":N-M,P,...": every line named, ascending, each once. */
static bool line_list(const char *p, struct line_spec *ls)
{
	struct vec v = { 0 };
	int *lines, n = 0;

	for (;;) {
		int lo, hi;

		if (!line_number(&p, 1, &lo))
			return false;
		hi = lo;
		if (*p == '-' && (p++, !line_number(&p, 1, &hi)))
			return false;
		for (int l = lo; l <= hi; l++)	/* as stap's: N-M with M < N names none */
			vec_push(&v, (void *)(intptr_t)l);
		if (v.len > 100000)
			return false;
		if (!*p)
			break;
		if (*p++ != ',')
			return false;
	}
	lines = arena_alloc(sizeof(int) * (size_t)(v.len ? v.len : 1));
	for (int i = 0; i < v.len; i++)
		lines[i] = (int)(intptr_t)VEC_AT(&v, i);
	qsort(lines, (size_t)v.len, sizeof(int), by_value);
	for (int i = 0; i < v.len; i++)
		if (!n || lines[n - 1] != lines[i])
			lines[n++] = lines[i];
	ls->kind = LINES_LIST;
	ls->lines = lines;
	ls->nlines = n;
	return true;
}

int probes_line_of(const struct line_spec *ls, int decl_line)
{
	return ls->kind == LINES_RELATIVE ? decl_line + ls->line : ls->line;
}

bool probes_line_wanted(const struct line_spec *ls, int decl_line, int line)
{
	if (ls->kind == LINES_ONE || ls->kind == LINES_RELATIVE)
		return line == probes_line_of(ls, decl_line);
	if (ls->kind == LINES_LIST)
		return bsearch(&line, ls->lines, (size_t)ls->nlines, sizeof(int), by_value) != NULL;
	return true;
}

int probes_line_nearest(int line, int below, int above)
{
	return below && (!above || line - below < above - line) ? below : above;
}

void probes_line_hint_keep(int *below, int *above, int b, int a)
{
	if (b > *below)
		*below = b;
	if (a && (!*above || a < *above))
		*above = a;
}

const char *probes_line_hint(int below, int above)
{
	if (!below && !above)
		return NULL;
	return arena_printf("try %s%s%s", below ? arena_printf(":%d", below) : "",
			    below && above ? " or " : "", above ? arena_printf(":%d", above) : "");
}

bool probes_line_spec(const char *text, struct line_spec *ls)
{
	const char *p = text + 1;

	*ls = (struct line_spec){ .kind = LINES_NONE };
	if (!*text)
		return true;
	if (*text == '+') {
		ls->kind = LINES_RELATIVE;
		return line_number(&p, 0, &ls->line) && !*p;
	}
	if (*text != ':')
		return false;
	if (!strcmp(p, "*")) {
		ls->kind = LINES_EVERY;
		return true;
	}
	if (strpbrk(p, ",-"))
		return line_list(p, ls);
	ls->kind = LINES_ONE;
	return line_number(&p, 1, &ls->line) && !*p;
}
