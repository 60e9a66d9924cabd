/*
 * data.h - a running script's data, read the same way whatever its
 * runtime keeps it in: the scalar globals, arrays and statistics that
 * stp_meta.globals describes, the script's health counters and its
 * probes' statistics.  pmdastap (pmda/fetch.c) and the runner's exit
 * print (autoprint.c) read through these functions only.
 *
 * The runtime hands its pieces over by name (stp_data__adopt): today the
 * BPF maps of script.bpf.o (the PMDA gets their descriptors from the
 * script's child; the runner dups its own) and "prog:N", probe N's
 * program, for the runs the kernel skipped.  A kernel module's mapped
 * region or a shared-memory segment would be other sources behind the
 * same functions, laid out as stp_meta says.
 *
 * Values are in the layouts stp_meta gives: a long is an int64_t, a
 * string value_size bytes (NUL-terminated within them), a statistic one
 * struct stp_stat_partial per CPU (stp_data__value_size() bytes in all,
 * merged with stats.h's stp_stat_merge).
 */
#ifndef STP_DATA_H
#define STP_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../stp_meta.h"

struct stp_data;
struct stp_script;

/* Bytes between the CPUs' copies of a per-CPU value of SIZE bytes (BPF rounds to 8). */
static inline size_t stp_percpu_stride(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

/* SUM += C, field by field (the health counters of one CPU or map entry). */
void stp_counters_add(struct stp_counters *sum, const struct stp_counters *c);

struct stp_data *stp_data__new(const struct stp_meta *m, int ncpus);
void stp_data__free(struct stp_data *d);

/*
 * A piece of the data, NAME (a map's name, or "prog:N"), as descriptor
 * FD.  True when the data keeps it (and then owns FD); false when it is
 * none of the script's data or does not match the metadata (said on
 * stderr, or through the PMDA's log hook below), and the caller closes FD.
 */
bool stp_data__adopt(struct stp_data *d, const char *name, int fd);
/* The runner: every piece of a loaded script (duplicated descriptors). */
void stp_data__adopt_script(struct stp_data *d, const struct stp_script *s);
struct stp_dseg;
/* A dyninst segment's maps (SEG, mapped from SEG_FD, which stays the caller's). */
void stp_data__adopt_dseg(struct stp_data *d, struct stp_dseg *seg, int seg_fd);
/* Where adopt reports what it refused (default: stderr). */
void stp_data__set_log(struct stp_data *d, void (*log)(void *arg, const char *msg), void *arg);

/* Can global G be read? */
bool stp_data__has(const struct stp_data *d, int g);
/* The bytes of one of G's values (all CPUs' for a per-CPU statistic). */
size_t stp_data__value_size(const struct stp_data *d, int g);
int stp_data__ncpus(const struct stp_data *d);

/* The scalar globals: the whole stp_globals value into BUF (scalars_size bytes). */
size_t stp_data__scalars_size(const struct stp_data *d);
int stp_data__read_scalars(struct stp_data *d, void *buf);

/*
 * Global G's elements now: N keys (key_size bytes each) and their values
 * (VSTRIDE bytes each, at least stp_data__value_size(); a string is
 * NUL-terminated within it), both malloc'd, the caller's to free.  A
 * scalar statistic is one element with an empty key.  -1 (errno EBUSY),
 * nothing read, when a reader segment's map (a module's, read in place)
 * was changed by its writers for longer than the reader's patience.
 */
struct stp_data_elems {
	char *keys, *vals;
	size_t vstride;
	int n;
};

int stp_data__read(struct stp_data *d, int g, struct stp_data_elems *out);

/*
 * Arrays whose values stay in place (stp_meta's values_map): reading the
 * keys is needed only when the generation moved (a key came or went);
 * stp_data__read_slots gives each key's slot (a uint32_t in vals), and
 * stp_data__slot_value the value there as it is now.
 */
bool stp_data__in_place(const struct stp_data *d, int g);
int64_t stp_data__generation(const struct stp_data *d, int g);
int stp_data__read_slots(struct stp_data *d, int g, struct stp_data_elems *out);
const char *stp_data__slot_value(const struct stp_data *d, int g, uint32_t slot);

/* The health counters and probe I's statistics, summed over CPUs; 0 or -1. */
int stp_data__counters(struct stp_data *d, struct stp_counters *sum);
int stp_data__probe_stats(struct stp_data *d, int probe, struct stp_probe_stats *sum);
/* Runs of probe I the kernel skipped (0 when unknown). */
uint64_t stp_data__probe_misses(const struct stp_data *d, int probe);

#endif
