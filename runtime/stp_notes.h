/*
 * stp_notes.h - the GNU build id among a PT_NOTE segment's notes, one copy
 * for the runtimes that read it from a process's memory: the kernel
 * module (runtime/kmod/stp_kmod.h, with copy_from_user_nofault()) and
 * dyninst (runtime/dyninst/stp_native.h, from dl_iterate_phdr()'s
 * headers).  Each copies the segment's first STP_NOTES_MAX bytes, then
 * walks them here: 32-bit name size, descriptor size and type, then the
 * name and the descriptor, each padded to 4 bytes.
 */
#ifndef STP_NOTES_H
#define STP_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STP_NOTES_MAX 512	/* a segment's bytes read: build id, ABI tag, properties */
#define STP_NOTE_GNU_BUILD_ID 3	/* <elf.h>'s NT_GNU_BUILD_ID */

/*
 * The GNU build id among the LEN bytes of NOTES, into ID (SIZE bytes,
 * zero-padded); false where there is none, or none that fits.
 */
static inline bool stp_notes_build_id(const unsigned char *notes, size_t len,
				      unsigned char *id, size_t size)
{
	size_t at = 0;

	while (at + 12 <= len) {
		uint32_t head[3];	/* n_namesz, n_descsz, n_type */
		size_t name = at + 12, desc;

		memcpy(head, notes + at, sizeof(head));
		desc = name + ((head[0] + (size_t)3) & ~(size_t)3);
		if (desc > len || head[1] > len - desc)
			return false;
		if (head[2] == STP_NOTE_GNU_BUILD_ID && head[0] == 4 &&
		    memcmp(notes + name, "GNU", 4) == 0 && head[1] > 0 && head[1] <= size) {
			memset(id, 0, size);
			memcpy(id, notes + desc, head[1]);
			return true;
		}
		at = desc + ((head[1] + (size_t)3) & ~(size_t)3);
	}
	return false;
}

#endif
