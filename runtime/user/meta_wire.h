/*
 * meta_wire.h - a compiled script's struct stp_meta as bytes, and back.
 *
 * An unprivileged pmstap (--runtime=dyninst) hands its running script to
 * pmdastap over a Unix socket.  The PMDA never dlopen()s a user's code, so
 * the script's metadata travels as data: stp_meta__encode() writes it,
 * stp_meta__decode() reads it back into one block.  The bytes come from a
 * user and are read by root: decode never reads past them, caps every
 * count and length, and refuses any meta that stp_meta__check() refuses,
 * so that no decoded meta can make the PMDA's readers (data.c, stats.c,
 * autoprint.c, pmda/metrics.c, pmda/fetch.c) read out of bounds.
 *
 * The format (STP_META_WIRE_VERSION), little-endian, packed:
 *	header	u32 magic "STPM", u32 wire version, u32 bytes in all (header
 *		included), u32 counts of globals, probes, formats, errors, files
 *		and autoprint entries
 *	body	i32 version, str script, str source, i64 x 6 limits; then the
 *		records, each field by field in struct order: the globals (the
 *		keys as i32 nkeys, then nkeys pairs of u32 type, u32 offset),
 *		probes, formats, errors, files, the autoprint indexes (i32)
 *	str	u32 byte count and the bytes, no NUL among them; 0xffffffff: NULL
 *	other	bool u8 (0 or 1), enum u32, int i32, (u)int64_t 8 bytes
 * A probe's handler does not travel: decoded, it is NULL.
 */
#ifndef STP_META_WIRE_H
#define STP_META_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "../stp_meta.h"

#define STP_META_WIRE_MAGIC	0x4d505453u	/* "STPM" */
#define STP_META_WIRE_VERSION	1
#define STP_META_WIRE_NULL	0xffffffffu	/* a str's count: NULL */

/* What decode takes at most. */
#define STP_META_WIRE_MAX_BYTES	(64u << 20)	/* an encoding */
#define STP_META_WIRE_MAX_STR	(1u << 20)	/* a string */
#define STP_META_MAX_COUNT	65536		/* of each: globals, probes, ... autoprint */

/* What check takes at most. */
#define STP_META_MAX_NAME	128		/* a global's or the script's name */
#define STP_META_MAX_ENTRIES	(1u << 24)	/* a map's max_entries, and MAXMAPENTRIES */
#define STP_META_MAX_SIZE	(1u << 20)	/* a map's key_size */
#define STP_META_MIN_STRINGLEN	16		/* MAXSTRINGLEN, as translator allows */
#define STP_META_MAX_STRINGLEN	65536
#define STP_META_MAX_ACTION	(1 << 22)

/*
 * M as a malloc'd buffer of *LEN bytes.  NULL with errno ENOMEM, or EINVAL
 * when no encoding can carry M (a negative count, a string of 4 GiB).  M
 * need not pass stp_meta__check: decode judges.
 */
void *stp_meta__encode(const struct stp_meta *m, size_t *len);

/*
 * The meta BUF (LEN bytes) encodes, in one block that stp_meta__free()
 * frees: its arrays end with a zeroed entry (autoprint with -1), as the
 * translator emits them, and its strings are inside the block.  NULL when
 * refused or out of memory, with one reason in ERR:
 *	meta: global 3 'x': a value of 4096 bytes, not 8 (a long)
 */
struct stp_meta *stp_meta__decode(const void *buf, size_t len, char *err, size_t errlen);
void stp_meta__free(struct stp_meta *m);

/*
 * Does M hold together?  0, or -EINVAL with the reason in ERR (or -ENOMEM).
 * The version; names (globals: identifiers, unique; maps: unique, none the
 * runtime's own); every count, enum and limit in range; each global's
 * layout: a scalar long or string in stp_globals, anything else a map of
 * its own with max_entries, key columns inside key_size (a long column 8
 * bytes), a value of 8 bytes (long), MAXSTRINGLEN (string) or a per-CPU
 * partial with its histogram's buckets (statistic), slotted values only
 * for arrays of longs or strings without '%'; probes' kinds, contexts,
 * programs and uprobe files (an index in files, or -1); autoprint indexes
 * of globals; files' build-ids in hex.
 */
int stp_meta__check(const struct stp_meta *m, char *err, size_t errlen);

#endif
