/*
 * stp_bpf_native.h - BPF's map, loop and formatting helpers as plain C,
 * for the runtimes that compile the BPF handlers natively: dyninst (in
 * the probed process, dyninst/stp_native.h) and kernel (in a module,
 * kmod/stp_kmod.h).  Both keep their maps in a segment (dyninst/dmap.h)
 * and declare each as a struct stp_dmap_ref, their own way; the includer
 * defines STP_DMAP_REF(name, type, key size, value size, entries, flags)
 * and STP_SLOT() (the calling thread's or CPU's slot, UINT32_MAX: none),
 * and gives snprintf, strspn, strcspn and memchr.
 */
#ifndef STP_BPF_NATIVE_H
#define STP_BPF_NATIVE_H

/* ---- maps ---- */

#define STP_MAP(name_, type_, key_, value_, entries_, flags_)				\
	STP_DMAP_REF(name_, type_, sizeof(key_), sizeof(value_), entries_, flags_)
#define STP_QUEUE(name_, value_, entries_)						\
	STP_DMAP_REF(name_, BPF_MAP_TYPE_QUEUE, 0, sizeof(value_), entries_, 0)
#define STP_RINGBUF(name_, bytes_)							\
	STP_DMAP_REF(name_, BPF_MAP_TYPE_RINGBUF, 0, 0, bytes_, 0)

#define stp__dmap(map) (((struct stp_dmap_ref *)(map))->m)

/* An array's element is addressed here; other maps ask the segment. */
static inline void *bpf_map_lookup_elem(void *map, const void *key)
{
	struct stp_dmap_ref *r = map;
	uint32_t i, slot = 0;

	if (!r->base)
		return stp_dmap__lookup(r->m, key);
	memcpy(&i, key, sizeof(i));
	if (i >= r->def.max_entries)
		return NULL;
	if (r->def.type == BPF_MAP_TYPE_PERCPU_ARRAY && (slot = STP_SLOT()) == UINT32_MAX)
		return NULL;
	return r->base + i * r->vsize + slot * r->stride;
}

static inline void *bpf_map_lookup_percpu_elem(void *map, const void *key, uint32_t cpu)
{
	return stp_dmap__lookup_slot(stp__dmap(map), key, (int)cpu);
}

static inline long bpf_map_update_elem(void *map, const void *key, const void *val,
				       uint64_t flags)
{
	return stp_dmap__update(stp__dmap(map), key, val, flags);
}

static inline long bpf_map_delete_elem(void *map, const void *key)
{
	return stp_dmap__delete(stp__dmap(map), key);
}

static inline long bpf_map_push_elem(void *map, const void *val, uint64_t flags)
{
	return stp_dmap__push(stp__dmap(map), val, flags);
}

static inline long bpf_map_pop_elem(void *map, void *val)
{
	return stp_dmap__pop(stp__dmap(map), val);
}

/* bpf_for_each_map_elem(): its callback gets the map as the handlers name it. */
struct stp__each {
	void *map;
	void *ctx;
	long (*cb)(void *map, const void *key, void *value, void *ctx);
};

static inline long stp__each_step(struct stp_dmap *m, void *key, void *value, void *ctx)
{
	struct stp__each *e = ctx;

	(void)m;
	return e->cb(e->map, key, value, e->ctx);
}

#define bpf_for_each_map_elem(map, cb, ctx, flags)						\
	({											\
		struct stp__each stp_each_ = { (map), (ctx), (void *)(cb) };			\
		(void)(flags);									\
		stp_dmap__for_each(stp__dmap(map), stp__each_step, &stp_each_);			\
	})

static inline long bpf_ringbuf_output(void *map, void *data, uint64_t size, uint64_t flags)
{
	(void)flags;
	return stp_dmap__output(stp__dmap(map), data, (uint32_t)size);
}

/* ---- loops ---- */

static inline long bpf_loop(uint32_t n, long (*cb)(uint64_t i, void *ctx), void *ctx,
			    uint64_t flags)
{
	uint32_t i;

	(void)flags;
	for (i = 0; i < n; i++)
		if (cb(i, ctx))
			return i + 1;
	return n;
}

/* ---- memory ---- */

/*
 * A string at SRC, read by READ (a fault-safe copy) page by page, so that
 * its end may lie before a page that faults; the length with the NUL,
 * as bpf_probe_read_*_str() give it, or -EFAULT.  Bytes of DST past the
 * NUL are zero or as they were, never the source's: a key column is
 * compared and hashed whole (a literal "x" read a page chunk of the
 * literals after it into the key, and user context never found it).
 */
static inline long stp__read_str(char *dst, uint32_t n, const void *src,
				 long (*read)(void *, uint32_t, const void *))
{
	uint32_t done = 0;

	if (n == 0)
		return -EINVAL;
	while (done < n - 1) {
		uintptr_t at = (uintptr_t)src + done;
		uint32_t chunk = 4096 - (uint32_t)(at & 4095);
		char *end;

		if (chunk > n - 1 - done)
			chunk = n - 1 - done;
		if (read(dst + done, chunk, (const void *)at) != 0) {
			if (done == 0)
				return -EFAULT;
			break;
		}
		end = memchr(dst + done, '\0', chunk);
		if (end) {
			/* what the chunk read past the NUL is the source's, not the string's */
			memset(end + 1, 0, dst + done + chunk - (end + 1));
			return end - dst + 1;
		}
		done += chunk;
	}
	dst[done] = '\0';
	return (long)done + 1;
}

/* ---- formatting: bpf_snprintf() ---- */

/* The conversion at FMT (after its '%'): its length, and its letter in *CONV. */
static inline size_t stp__spec_len(const char *fmt, char *conv)
{
	size_t i = strspn(fmt, "-+ #0");

	i += strspn(fmt + i, "0123456789");
	if (fmt[i] == '.')
		i += 1 + strspn(fmt + i + 1, "0123456789");
	i += strspn(fmt + i, "hlzjt");
	*conv = fmt[i];
	return fmt[i] ? i + 1 : i;
}

/* One conversion SPEC (from '%', LEN bytes) of ARG into OUT; what snprintf returns. */
static inline int stp__format_one(char *out, size_t size, const char *spec, size_t len,
				  char conv, uint64_t arg)
{
	char f[40];
	size_t flags = 1 + strcspn(spec + 1, "hlzjt" "diuxXcsp");
	bool wide = memchr(spec, 'l', len) != NULL;	/* %ld, %lld: 64 bits; else 32 */

	if (len >= sizeof(f) - 4)
		return 0;
	memcpy(f, spec, flags);	/* '%', flags, width, precision: no length modifier */
	switch (conv) {
	case 's':
		snprintf(f + flags, sizeof(f) - flags, "s");
		return snprintf(out, size, f, arg ? (const char *)(uintptr_t)arg : "(null)");
	case 'c':
		snprintf(f + flags, sizeof(f) - flags, "c");
		return snprintf(out, size, f, (int)arg);
	case 'p':
		return snprintf(out, size, "0x%llx", (unsigned long long)arg);
	case 'd':
	case 'i':
		snprintf(f + flags, sizeof(f) - flags, "ll%c", conv);
		return snprintf(out, size, f, wide ? (long long)arg : (long long)(int32_t)arg);
	default:
		snprintf(f + flags, sizeof(f) - flags, "ll%c", conv);
		return snprintf(out, size, f, wide ? (unsigned long long)arg :
						   (unsigned long long)(uint32_t)arg);
	}
}

/* bpf_snprintf(): FMT with LEN bytes of 64-bit DATA into OUT; the length it needs, with the NUL. */
static inline long stp_bpf_snprintf(char *out, uint32_t size, const char *fmt,
				    const uint64_t *data, uint32_t len)
{
	uint32_t nargs = len / 8, argi = 0;
	size_t pos = 0;

	if (!size)
		return -22;
	out[0] = '\0';
	for (const char *p = fmt; *p; p++) {
		char conv;
		size_t n;
		int w;

		if (*p != '%' || p[1] == '%') {
			if (pos + 1 < size)
				out[pos] = *p;
			pos++;
			p += *p == '%';
			continue;
		}
		n = stp__spec_len(p + 1, &conv);
		w = stp__format_one(pos < size ? out + pos : NULL, pos < size ? size - pos : 0, p,
				    n + 1, conv, argi < nargs ? data[argi] : 0);
		argi++;
		pos += w > 0 ? (size_t)w : 0;
		p += n;
	}
	out[pos < size ? pos : size - 1] = '\0';
	return (long)pos + 1;
}

#define bpf_snprintf(out, size, fmt, data, len)						\
	stp_bpf_snprintf((out), (size), (fmt), (const uint64_t *)(data), (len))
#define BPF_SNPRINTF(out, size, fmt, args...)						\
	({										\
		unsigned long long stp_args_[] = { args };				\
		stp_bpf_snprintf((out), (size), (fmt), (const uint64_t *)stp_args_,	\
				 sizeof(stp_args_));					\
	})

#endif
