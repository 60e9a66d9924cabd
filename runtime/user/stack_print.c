/*
 * stack_print.c - print_stack() and friends from kernel context: the
 * STP_REC_STACK records, symbolized into the script's output in the order
 * they came, between the printf records around them; and the deferred
 * string arguments of printf records (STP_REC_SYMS): symname(a),
 * sprint_ubacktrace() and the like printed from kernel context.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../stp_meta.h"
#include "../stp_tapset.h"
#include "maps.h"
#include "script_int.h"
#include "symbolize.h"
#include "format.h"

#define DEFER_RING 32	/* deferred arguments alive at once: of one record */

#define LINE_MAX_BYTES 1024

/*
 * Where a kernel stack starts to be the probed task's: past the frames of
 * the BPF program and the helper that took the stack (the last frame in
 * module "bpf" among the first few), so that it starts where stap's does.
 */
static size_t kernel_start(const char *p, size_t n)
{
	struct stp_sym_info si;
	size_t start = 0;

	for (size_t i = 0; i + 8 <= n && i < 8 * 8; i += 8) {
		uint64_t addr;

		memcpy(&addr, p + i, 8);
		if (stp_sym__lookup(stp_sym_default(), 0, addr, &si) && strcmp(si.module, "bpf") == 0)
			start = i + 8;
	}
	return start;
}

static void print_addrs(struct stp_script *s, int pid, const char *p, size_t n)
{
	char line[LINE_MAX_BYTES];

	for (size_t i = pid ? 0 : kernel_start(p, n); i + 8 <= n; i += 8) {
		uint64_t addr;
		size_t len;

		memcpy(&addr, p + i, 8);
		len = stp_sym__format(stp_sym_default(), pid, addr, STP_SYM_FULL, line, sizeof(line));
		stp_script__output(s, line, len);
	}
}

static int print_string(struct stp_script *s, int pid, const char *p, size_t n)
{
	uint16_t len;
	char *stk, *buf;
	size_t size;

	if (n < 2)
		return -1;
	memcpy(&len, p, 2);
	if (len > n - 2)
		return -1;
	stk = strndup(p + 2, len);
	size = ((size_t)len / 3 + 1) * LINE_MAX_BYTES;
	buf = malloc(size);
	if (stk && buf) {
		size = stp_sym__format_stack(stp_sym_default(), pid, stk, STP_SYM_FULL, buf, size);
		stp_script__output(s, buf, size);
	}
	free(stk);
	free(buf);
	return 0;
}

int stp_sym_print_record(struct stp_script *s, unsigned id, const char *payload, size_t len)
{
	int64_t pid;

	if (len < 8)
		return -1;
	memcpy(&pid, payload, 8);
	pid = id & STP_STACK_USER ? pid : 0;
	if (id & STP_REC_STACK_ADDRS) {
		print_addrs(s, (int)pid, payload + 8, len - 8);
		return 0;
	}
	return print_string(s, (int)pid, payload + 8, len - 8);
}

/* Addresses P (N bytes) as backtrace() gives them: "0x.. 0x..". */
static char *hex_stack(const char *p, size_t n)
{
	char *stk = malloc(n / 8 * 19 + 1), *w = stk;

	if (!stk)
		return NULL;
	*w = '\0';
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t addr;

		memcpy(&addr, p + i, 8);
		w += sprintf(w, "%s0x%" PRIx64, i ? " " : "", addr);
	}
	return stk;
}

int stp_sym_read_deferred(const char **p, const char *end, uint16_t n, struct stp_value *v)
{
	static char *ring[DEFER_RING];
	static unsigned next;
	size_t len = n & ~STP_REC_SYMS, size, skip = 0;
	int style, flags;
	int64_t pid;
	char *stk, **out = &ring[next++ % DEFER_RING];

	if ((size_t)(end - *p) < len || len < 10)
		return -1;
	style = (unsigned char)(*p)[0];
	flags = (unsigned char)(*p)[1];
	memcpy(&pid, *p + 2, 8);
	pid = flags & STP_STACK_USER ? pid : 0;
	if (!pid && style == STP_SYM_LINES)	/* a kernel stack starts where stap's does */
		skip = kernel_start(*p + 10, len - 10);
	stk = hex_stack(*p + 10 + skip, len - 10 - skip);
	*p += len;
	size = stk ? (strlen(stk) / 3 + 1) * LINE_MAX_BYTES : 0;
	free(*out);
	*out = size ? malloc(size) : NULL;
	if (!*out) {
		free(stk);
		*v = stp_value_string("", 0);
		return 0;
	}
	size = stp_sym__format_stack(stp_sym_default(), (int)pid, stk, style, *out, size);
	free(stk);
	*v = stp_value_string(*out, size);
	return 0;
}

/* The file -c's command runs, CMD's first word looked up in PATH as execvp does. */
static void add_command(const char *cmd)
{
	char word[256], path[PATH_MAX + 258];
	const char *dirs = getenv("PATH"), *end;
	size_t n = strcspn(cmd, " \t\n;|&<>");

	if (!n || n >= sizeof(word))
		return;
	memcpy(word, cmd, n);
	word[n] = '\0';
	if (strchr(word, '/')) {
		if (realpath(word, path))
			stp_sym_umaps_add_file(path);
		return;
	}
	for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d; d = *end ? end + 1 : end) {
		end = d + strcspn(d, ":");
		if (end - d >= PATH_MAX)
			continue;
		snprintf(path, sizeof(path), "%.*s/%s", (int)(end - d), d, word);
		if (access(path, X_OK) == 0) {
			stp_sym_umaps_add_file(path);
			return;
		}
	}
}

void stp_sym_use_script(struct stp_script *s)
{
	stp_sym_umaps_use(stp_maps__find(s->maps, "stp_umaps", NULL));	/* BPF's or the segment's */
	for (int i = 0; i < s->meta->nprobes; i++)
		stp_sym_umaps_add_file(s->meta->probes[i].uprobe_path);
	if (s->opts.target_cmd)
		add_command(s->opts.target_cmd);
}
