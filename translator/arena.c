/* arena.c - bump allocation in large chunks, released all at once. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "arena.h"

#define ARENA_CHUNK (4 << 20)
#define HUGE_PAGE (2 << 20)

struct chunk {
	struct chunk *prev;
	size_t used;
	size_t size;		/* of data[] */
	size_t mapped;		/* the whole mapping, this header included */
	max_align_t data[];
};

static struct chunk *arena_top;
static unsigned arena_gen = 1;

/*
 * A chunk is its own anonymous mapping, 2 MB aligned and offered huge
 * pages: the kernel hands it over zeroed, so arena_alloc() need not clear
 * it, and an elaboration that touches tens of MB (a syscall-wide script
 * reads the kernel's BTF and a dozen tapsets) takes one page fault per
 * 2 MB instead of one per 4 KB, which was a third of its pass 2.
 */
static struct chunk *chunk_new(size_t want)
{
	size_t size = want > ARENA_CHUNK ? want : ARENA_CHUNK;
	size_t whole = (sizeof(struct chunk) + size + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
	char *map = mmap(NULL, whole + HUGE_PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *start, *end;
	struct chunk *c;

	if (map == MAP_FAILED) {
		fputs("pmstap: out of memory\n", stderr);
		exit(1);
	}
	start = (char *)(((uintptr_t)map + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
	end = map + whole + HUGE_PAGE;
	if (start > map)
		munmap(map, (size_t)(start - map));
	if (end > start + whole)
		munmap(start + whole, (size_t)(end - start - whole));
	madvise(start, whole, MADV_HUGEPAGE);	/* a hint: no THP, no harm */
	c = (struct chunk *)start;
	c->prev = arena_top;
	c->size = whole - sizeof(*c);
	c->mapped = whole;
	arena_top = c;
	return c;
}

/* Zeroed without a memset: chunks start zeroed and nothing is handed out twice. */
void *arena_alloc(size_t size)
{
	struct chunk *c = arena_top;
	size_t align = sizeof(max_align_t);
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (!c || c->size - c->used < size)
		c = chunk_new(size);
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

char *arena_strndup(const char *s, size_t n)
{
	char *p = arena_alloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(const char *s)
{
	return arena_strndup(s, strlen(s));
}

char *arena_vprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *p;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	p = arena_alloc((size_t)n + 1);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	return p;
}

char *arena_printf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = arena_vprintf(fmt, ap);
	va_end(ap);
	return p;
}

/*
 * A regular file whose size fstat() tells (BTF's 6 MB among them: read on
 * every compile) read straight into the arena; NULL with errno 0 when
 * its size is not known or it grew meanwhile, for the loop below.
 */
static char *read_sized(FILE *f, size_t *len)
{
	struct stat st;
	char *p;
	size_t n;
	int c;

	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
		return NULL;
	p = arena_alloc((size_t)st.st_size + 1);
	n = fread(p, 1, (size_t)st.st_size, f);
	if (ferror(f))
		return NULL;
	if (n == (size_t)st.st_size && (c = getc(f)) != EOF) {
		ungetc(c, f);	/* it grew: read again from the start */
		rewind(f);
		return NULL;
	}
	p[n] = '\0';
	*len = n;
	return p;
}

char *arena_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, used = 0, n;
	char *buf, *copy = NULL;
	int err = 0;

	if (!f)
		return NULL;
	if ((copy = read_sized(f, &used))) {
		fclose(f);
		if (len)
			*len = used;
		errno = 0;
		return copy;
	}
	if (ferror(f)) {
		err = errno ? errno : EIO;
		fclose(f);
		errno = err;
		return NULL;
	}
	rewind(f);
	buf = malloc(cap);
	while (buf && (n = fread(buf + used, 1, cap - used, f)) > 0) {
		used += n;
		if (used == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				buf = NULL;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (!buf)
		err = ENOMEM;
	else if (ferror(f))
		err = errno ? errno : EIO;
	else
		copy = arena_strndup(buf, used);
	free(buf);
	fclose(f);
	if (copy && len)
		*len = used;
	errno = err;
	return copy;
}

unsigned arena_generation(void)
{
	return arena_gen;
}

void arena_free_all(void)
{
	arena_gen++;
	while (arena_top) {
		struct chunk *prev = arena_top->prev;

		munmap(arena_top, arena_top->mapped);
		arena_top = prev;
	}
}
