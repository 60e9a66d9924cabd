/*
 * probes_btf.c - the kernel's BTF (/sys/kernel/btf/vmlinux), read once:
 * function names, the arguments of raw tracepoints (the parameters of
 * __probestub_NAME or __bpf_trace_NAME), and the types of $var->member
 * chains on them; the parameters of kernel functions and the types of
 * $param, $return and $$parms in kernel.function probes.
 *
 * A module's BTF (the .BTF section of its .ko, split against vmlinux's:
 * its type ids and string offsets go on where vmlinux's end) is appended
 * to the same index when a module("M") probe or a @cast to a "kernel:M"
 * type needs it, so every reader of a type id reads the module's types
 * too.  Each module's ids and strings would start at the same numbers, so
 * a module read after another has its types copied with their ids and
 * names moved past the modules before it (module_relocate()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "diag.h"
#include "kdwarf.h"
#include "kmodfile.h"
#include "probe_kinds.h"
#include "probes_btf.h"
#include "sysroot.h"

struct btf {
	bool tried;
	char *data;
	const char *strs;
	uint32_t str_len;
	const struct btf_type **types;	/* by id; 0 is void */
	int n;
	struct hmap tp_protos;		/* "__probestub_sched_switch" -> func id (as intptr_t),
					   "btf_trace_sched_switch" -> typedef id */
	struct vec tp_wrappers;		/* ids of the __bpf_trace_* functions */
	bool tp_indexed;
	unsigned generation;		/* of the arena holding all of this */
	/* the modules' split BTF, appended one after another */
	int base_n;			/* vmlinux's types: ids below it */
	struct vec modules;		/* struct btf_module */
};

/* A module's types: ids FIRST to END - 1, strings from STR_AT in name_of()'s numbering. */
struct btf_module {
	const char *name;
	int first, end;
	uint32_t str_at, str_len;
	const char *strs;
};

static struct btf btf;

static size_t type_extra(const struct btf_type *t)
{
	unsigned vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT: return sizeof(uint32_t);
	case BTF_KIND_ARRAY: return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: return vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO: return vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(struct btf_decl_tag);
	case BTF_KIND_ENUM64: return vlen * sizeof(struct btf_enum64);
	default: return 0;
	}
}


/* Index the types of the kernel's BTF; false when there is none. */
static bool btf_load(void)
{
	struct btf_header h;
	const char *types;
	size_t len, off = 0;
	struct vec ids = { 0 };

	if (btf.generation != arena_generation())
		btf = (struct btf){ .generation = arena_generation() };
	if (btf.tried)
		return btf.types != NULL;
	btf.tried = true;
	btf.data = arena_read_file(sysroot_path("/sys/kernel/btf/vmlinux"), &len);
	if (!btf.data || len < sizeof(h))
		return false;
	memcpy(&h, btf.data, sizeof(h));
	if (h.magic != BTF_MAGIC || (size_t)h.hdr_len + h.str_off + h.str_len > len ||
	    (size_t)h.hdr_len + h.type_off + h.type_len > len)
		return false;
	types = btf.data + h.hdr_len + h.type_off;
	btf.strs = btf.data + h.hdr_len + h.str_off;
	btf.str_len = h.str_len;
	vec_push(&ids, NULL);
	while (off + sizeof(struct btf_type) <= h.type_len) {
		const struct btf_type *t = (const void *)(types + off);

		vec_push(&ids, (void *)t);
		off += sizeof(struct btf_type) + type_extra(t);
	}
	btf.types = (const struct btf_type **)ids.items;
	btf.n = btf.base_n = ids.len;
	return true;
}

static struct btf_module *module_named(const char *name)
{
	for (int i = 0; i < btf.modules.len; i++) {
		struct btf_module *m = VEC_AT(&btf.modules, i);

		if (strcmp(m->name, name) == 0)
			return m;
	}
	return NULL;
}

/* The module whose types ID is one of, or NULL (vmlinux's, or none). */
static struct btf_module *module_of_id(uint32_t id)
{
	for (int i = 0; i < btf.modules.len; i++) {
		struct btf_module *m = VEC_AT(&btf.modules, i);

		if ((int)id >= m->first && (int)id < m->end)
			return m;
	}
	return NULL;
}

/*
 * A split BTF's type T, read as if its ids and strings started where the
 * modules read before it end: each id of its own (at or past vmlinux's
 * count) moved by ID_SHIFT, each string of its own by STR_SHIFT.  T is a
 * copy (the .ko's data is read-only).
 */
static void module_relocate(struct btf_type *t, int id_shift, uint32_t str_shift)
{
	unsigned vlen = BTF_INFO_VLEN(t->info);
#define STR(off) ((off) = (off) >= btf.str_len ? (off) + str_shift : (off))
#define ID(id) ((id) = (int)(id) >= btf.base_n ? (id) + (uint32_t)id_shift : (id))

	STR(t->name_off);
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC:
	case BTF_KIND_VAR: case BTF_KIND_DECL_TAG: case BTF_KIND_TYPE_TAG:
		ID(t->type);
		break;
	case BTF_KIND_FUNC_PROTO: {
		struct btf_param *p = (struct btf_param *)(t + 1);

		ID(t->type);
		for (unsigned i = 0; i < vlen; i++) {
			STR(p[i].name_off);
			ID(p[i].type);
		}
		break;
	}
	case BTF_KIND_ARRAY: {
		struct btf_array *a = (struct btf_array *)(t + 1);

		ID(a->type);
		ID(a->index_type);
		break;
	}
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: {
		struct btf_member *m = (struct btf_member *)(t + 1);

		for (unsigned i = 0; i < vlen; i++) {
			STR(m[i].name_off);
			ID(m[i].type);
		}
		break;
	}
	case BTF_KIND_ENUM: {
		struct btf_enum *e = (struct btf_enum *)(t + 1);

		for (unsigned i = 0; i < vlen; i++)
			STR(e[i].name_off);
		break;
	}
	case BTF_KIND_ENUM64: {
		struct btf_enum64 *e = (struct btf_enum64 *)(t + 1);

		for (unsigned i = 0; i < vlen; i++)
			STR(e[i].name_off);
		break;
	}
	case BTF_KIND_DATASEC: {
		struct btf_var_secinfo *v = (struct btf_var_secinfo *)(t + 1);

		for (unsigned i = 0; i < vlen; i++)
			ID(v[i].type);
		break;
	}
	default:
		break;
	}
#undef STR
#undef ID
}

/* Module MODULE's BTF appended to the index; *WHY and false when it cannot be. */
bool btf_module_load(const char *module, const char **why)
{
	struct btf_header h;
	struct btf_module *m, *last;
	const char *path;
	char *data, *types;
	size_t len, off = 0;
	struct vec ids = { 0 };

	*why = NULL;
	if (!btf_load()) {
		*why = "the kernel has no BTF, which a module's BTF is split against";
		return false;
	}
	if (module_named(module))
		return true;
	if (!(path = kmodfile_path(module))) {
		*why = arena_printf("there is no module %s under /lib/modules/%s", module,
				    sysroot_kernel_release());
		return false;
	}
	data = kmodfile_section(path, ".BTF", &len);
	if (data && len >= sizeof(h))
		memcpy(&h, data, sizeof(h));
	if (!data || len < sizeof(h) || h.magic != BTF_MAGIC ||
	    (size_t)h.hdr_len + h.str_off + h.str_len > len ||
	    (size_t)h.hdr_len + h.type_off + h.type_len > len) {
		*why = arena_printf("%s has no BTF section", path);
		return false;
	}
	last = btf.modules.len ? VEC_AT(&btf.modules, btf.modules.len - 1) : NULL;
	m = ARENA_NEW(struct btf_module);
	m->name = arena_strdup(module);
	m->first = btf.n;
	m->str_at = last ? last->str_at + last->str_len : btf.str_len;
	m->strs = data + h.hdr_len + h.str_off;
	m->str_len = h.str_len;
	for (int i = 0; i < btf.n; i++)
		vec_push(&ids, (void *)btf.types[i]);
	types = arena_alloc(h.type_len);
	memcpy(types, data + h.hdr_len + h.type_off, h.type_len);
	while (off + sizeof(struct btf_type) <= h.type_len) {
		struct btf_type *t = (void *)(types + off);

		off += sizeof(struct btf_type) + type_extra(t);
		if (off > h.type_len)
			break;
		if (last)
			module_relocate(t, m->first - btf.base_n, m->str_at - btf.str_len);
		vec_push(&ids, t);
	}
	btf.types = (const struct btf_type **)ids.items;
	btf.n = ids.len;
	m->end = btf.n;
	vec_push(&btf.modules, m);
	return true;
}

static const char *name_of(uint32_t off)
{
	if (off < btf.str_len)
		return btf.strs + off;
	for (int i = 0; i < btf.modules.len; i++) {
		struct btf_module *m = VEC_AT(&btf.modules, i);

		if (off >= m->str_at && off - m->str_at < m->str_len)
			return m->strs + (off - m->str_at);
	}
	return "";
}

static const struct btf_type *type_at(uint32_t id)
{
	return id > 0 && (int)id < btf.n ? btf.types[id] : NULL;
}

/* The index for other passes (pass 3's member chains): one load per run. */
bool btf_index_load(void)
{
	return btf_load();
}

const struct btf_type *btf_type_at(uint32_t id)
{
	return type_at(id);
}

const char *btf_name_of(uint32_t off)
{
	return name_of(off);
}

int btf_type_count(void)
{
	return btf.n;
}

static int kind_of(const struct btf_type *t)
{
	return t ? (int)BTF_INFO_KIND(t->info) : BTF_KIND_UNKN;
}

int btf_kind(uint32_t id)
{
	return kind_of(type_at(id));
}

bool btf_is_signed(uint32_t id)
{
	const struct btf_type *t = type_at(id);

	if (btf_kind(id) == BTF_KIND_INT)
		return BTF_INT_ENCODING(*(const uint32_t *)(t + 1)) & BTF_INT_SIGNED;
	if (btf_kind(id) == BTF_KIND_ENUM || btf_kind(id) == BTF_KIND_ENUM64)
		return BTF_INFO_KFLAG(t->info);
	return false;
}

bool btf_is_record(uint32_t id)
{
	int k = btf_kind(id);

	return k == BTF_KIND_STRUCT || k == BTF_KIND_UNION;
}

uint32_t btf_strip(uint32_t id)
{
	for (int guard = 0; guard < 32; guard++) {
		int k = kind_of(type_at(id));

		if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST &&
		    k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG)
			return id;
		id = type_at(id)->type;
	}
	return id;
}

int btf_find(int kind, const char *name, int pointee)
{
	if (!btf_load())
		return -1;
	for (int i = 1; i < btf.n; i++) {
		const struct btf_type *t = btf.types[i];

		if (kind_of(t) != kind)
			continue;
		if (kind == BTF_KIND_PTR ? (int)t->type == pointee
					 : name && strcmp(name_of(t->name_off), name) == 0)
			return i;
	}
	return -1;
}

/* Every BTF function name, into SET (name -> name) and NAMES. */
void btf_function_names(struct vec *names, struct hmap *set)
{
	if (!btf_load())
		return;
	for (int i = 1; i < btf.base_n; i++) {
		if (kind_of(btf.types[i]) != BTF_KIND_FUNC)
			continue;
		{
			const char *n = name_of(btf.types[i]->name_off);

			if (!hmap_get(set, n)) {
				hmap_put(set, n, (void *)n);
				vec_push(names, (void *)n);
			}
		}
	}
}

/* ---- raw tracepoint arguments ---- */

/* Functions whose parameters are a tracepoint's, with their names; the tracepoints' typedefs. */
static void index_tp_protos(void)
{
	btf.tp_protos.str_keys = true;
	btf.tp_indexed = true;
	for (int i = 1; i < btf.base_n; i++) {
		const char *n = name_of(btf.types[i]->name_off);

		if (kind_of(btf.types[i]) == BTF_KIND_TYPEDEF && strncmp(n, "btf_trace_", 10) == 0) {
			hmap_put(&btf.tp_protos, n, (void *)(intptr_t)i);
			continue;
		}
		if (kind_of(btf.types[i]) != BTF_KIND_FUNC)
			continue;
		if (strncmp(n, "__probestub_", 12) == 0 || strncmp(n, "__bpf_trace_", 12) == 0)
			hmap_put(&btf.tp_protos, n, (void *)(intptr_t)i);
		if (strncmp(n, "__bpf_trace_", 12) == 0)
			vec_push(&btf.tp_wrappers, (void *)(intptr_t)i);
	}
}

/* The FUNC_PROTO a FUNC or a typedef of a function pointer ID stands for, or NULL. */
static const struct btf_type *proto_of(uint32_t id)
{
	const struct btf_type *t = type_at(id);

	if (t && kind_of(t) == BTF_KIND_TYPEDEF)
		t = type_at(t->type);
	if (t && kind_of(t) == BTF_KIND_PTR)
		t = type_at(t->type);
	else if (t && kind_of(t) == BTF_KIND_FUNC)
		t = type_at(t->type);
	return t && kind_of(t) == BTF_KIND_FUNC_PROTO ? t : NULL;
}

static bool same_param_types(const struct btf_type *a, const struct btf_type *b)
{
	const struct btf_param *pa = (const void *)(a + 1), *pb = (const void *)(b + 1);

	if (BTF_INFO_VLEN(a->info) != BTF_INFO_VLEN(b->info))
		return false;
	for (unsigned i = 0; i < BTF_INFO_VLEN(a->info); i++)
		if (pa[i].type != pb[i].type)
			return false;
	return true;
}

/*
 * A tracepoint of a DEFINE_EVENT class on a kernel without probe stubs
 * (before 6.5; Debian 12's 6.1): its wrapper is the class's,
 * __bpf_trace_CLASS, and its btf_trace_NAME typedef gives the parameters'
 * types without their names.  The wrapper of the same types that is a
 * class's (no tracepoint of that name) and whose name shares the most with
 * the tracepoint's gives the names (sched_process_exit:
 * __bpf_trace_sched_process_template, not sched_process_hang's).
 */
static intptr_t class_wrapper(const char *name)
{
	intptr_t td = (intptr_t)hmap_get(&btf.tp_protos, arena_printf("btf_trace_%s", name));
	const struct btf_type *want = td ? proto_of((uint32_t)td) : NULL;
	intptr_t best = 0;
	bool best_class = false;
	size_t best_len = 0;

	for (int i = 0; want && i < btf.tp_wrappers.len; i++) {
		intptr_t id = (intptr_t)VEC_AT(&btf.tp_wrappers, i);
		const struct btf_type *p = proto_of((uint32_t)id);
		const char *cls = name_of(type_at((uint32_t)id)->name_off) + 12;
		bool is_class;
		size_t n = 0;

		if (!p || !same_param_types(p, want))
			continue;
		while (cls[n] && cls[n] == name[n])
			n++;
		/* a pure class first, then the longer shared prefix */
		is_class = !hmap_get(&btf.tp_protos, arena_printf("btf_trace_%s", cls));
		if (!best || is_class > best_class || (is_class == best_class && n > best_len))
			best = id, best_class = is_class, best_len = n;
	}
	return best;
}

static const char *type_text(uint32_t id, int depth);

/*
 * The arguments the kernel passes tracepoint NAME (its TP_PROTO): the
 * parameters after the first (void *__data) of __probestub_NAME, or of
 * __bpf_trace_NAME on kernels without probe stubs, or of its class's
 * (class_wrapper()).
 */
void btf_tracepoint_args(const char *name, struct vec *args)
{
	const struct btf_type *proto;
	const struct btf_param *params;
	intptr_t id;

	if (!btf_load())
		return;
	if (!btf.tp_indexed)
		index_tp_protos();
	id = (intptr_t)hmap_get(&btf.tp_protos, arena_printf("__probestub_%s", name));
	if (!id)
		id = (intptr_t)hmap_get(&btf.tp_protos, arena_printf("__bpf_trace_%s", name));
	if (!id)
		id = class_wrapper(name);
	if (!id)
		return;
	proto = type_at(type_at((uint32_t)id)->type);
	if (kind_of(proto) != BTF_KIND_FUNC_PROTO)
		return;
	params = (const struct btf_param *)(proto + 1);
	for (unsigned i = 1; i < BTF_INFO_VLEN(proto->info); i++) {
		struct tp_arg *a = ARENA_NEW(struct tp_arg);

		a->name = name_of(params[i].name_off);
		a->btf_id = (int)params[i].type;
		a->ctype = type_text(params[i].type, 0);
		if (*a->name)
			vec_push(args, a);
	}
}

/* ---- $var->member chains ---- */

static const char *type_text(uint32_t id, int depth)
{
	const struct btf_type *t = type_at(id);

	if (!t)
		return "void";
	if (depth > 8)
		return "...";
	switch (kind_of(t)) {
	case BTF_KIND_PTR: return arena_printf("%s *", type_text(t->type, depth + 1));
	case BTF_KIND_STRUCT: return arena_printf("struct %s", name_of(t->name_off));
	case BTF_KIND_UNION: return arena_printf("union %s", name_of(t->name_off));
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: return arena_printf("enum %s", name_of(t->name_off));
	case BTF_KIND_ARRAY: return arena_printf("%s[]",
			type_text(((const struct btf_array *)(t + 1))->type, depth + 1));
	case BTF_KIND_CONST:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG: return type_text(t->type, depth + 1);
	case BTF_KIND_FUNC_PROTO: return "a function";
	default: return name_of(t->name_off);
	}
}

/*
 * Member NAME of struct/union ID (looking into anonymous members): its
 * type, or 0; its offset in bits from the start of ID in *BITS, and its
 * bit field width (0: not a bit field) in *WIDTH.
 */
static uint32_t member(uint32_t id, const char *name, uint64_t *bits, uint32_t *width, int depth)
{
	const struct btf_type *t = type_at(id);
	const struct btf_member *m;

	if (depth > 8 || (kind_of(t) != BTF_KIND_STRUCT && kind_of(t) != BTF_KIND_UNION))
		return 0;
	m = (const struct btf_member *)(t + 1);
	for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		bool kflag = BTF_INFO_KFLAG(t->info);
		uint64_t at = kflag ? BTF_MEMBER_BIT_OFFSET(m[i].offset) : m[i].offset;
		uint32_t found;

		if (m[i].name_off && strcmp(name_of(m[i].name_off), name) == 0) {
			*bits += at;
			*width = kflag ? BTF_MEMBER_BITFIELD_SIZE(m[i].offset) : 0;
			return m[i].type;
		}
		if (!m[i].name_off &&
		    (found = member(btf_strip(m[i].type), name, bits, width, depth + 1))) {
			*bits += at;
			return found;
		}
	}
	return 0;
}

static void member_names(uint32_t id, struct vec *out, int depth)
{
	const struct btf_type *t = type_at(id);
	const struct btf_member *m;

	if (depth > 8 || (kind_of(t) != BTF_KIND_STRUCT && kind_of(t) != BTF_KIND_UNION))
		return;
	m = (const struct btf_member *)(t + 1);
	for (unsigned i = 0; i < BTF_INFO_VLEN(t->info); i++) {
		if (m[i].name_off)
			vec_push(out, (void *)name_of(m[i].name_off));
		else
			member_names(btf_strip(m[i].type), out, depth + 1);
	}
}

uint32_t btf_member_type(uint32_t id, const char *name)
{
	uint64_t bits = 0;
	uint32_t width;

	return btf_load() ? member(id, name, &bits, &width, 0) : 0;
}

uint32_t btf_member_at(uint32_t id, const char *name, uint64_t *bits, uint32_t *width)
{
	*bits = 0;
	*width = 0;
	return btf_load() ? member(id, name, bits, width, 0) : 0;
}

void btf_member_names(uint32_t id, struct vec *out)
{
	if (btf_load())
		member_names(id, out, 0);
}

/* The BTF struct, union or typedef named NAME ("struct sock", "sock"); its C name in *C. */
uint32_t btf_find_named(const char *name, const char **c)
{
	int want = BTF_KIND_UNKN;

	if (!btf_load())
		return 0;
	if (strncmp(name, "struct ", 7) == 0) {
		want = BTF_KIND_STRUCT;
		name += 7;
	} else if (strncmp(name, "union ", 6) == 0) {
		want = BTF_KIND_UNION;
		name += 6;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 1; i < btf.n; i++) {
			int k = kind_of(btf.types[i]);

			if (strcmp(name_of(btf.types[i]->name_off), name) != 0)
				continue;
			if (pass == 0 ? (want ? k != want : k != BTF_KIND_STRUCT && k != BTF_KIND_UNION)
				      : k != BTF_KIND_TYPEDEF)
				continue;
			*c = k == BTF_KIND_TYPEDEF ? name
				: arena_printf("%s %s", k == BTF_KIND_UNION ? "union" : "struct", name);
			return (uint32_t)i;
		}
		if (want)
			break;
	}
	return 0;
}

const char *btf_module_of(uint32_t id)
{
	struct btf_module *m = module_of_id(id);

	return m ? m->name : NULL;
}

uint32_t btf_find_cast(const char *name, const char *module, const char **c)
{
	uint32_t id = btf_find_named(name, c);
	const char *m = module && !strncmp(module, "kernel", 6) ? strchr(module, ':') : NULL;

	while (!id && m) {	/* "kernel:nfs:nfsd": each module's BTF, while one can be read */
		const char *end = strchr(m + 1, ':'), *why;

		if (!btf_module_load(end ? arena_strndup(m + 1, (size_t)(end - m - 1)) : m + 1, &why))
			break;
		id = btf_find_named(name, c);
		m = end;
	}
	return id;
}

/* One step: ->NAME or [i] from type ID; 0 and *WHY on failure. */
static uint32_t step(uint32_t id, const struct target_comp *c, char **why, const char **near)
{
	const struct btf_type *t = type_at(id);

	if (c->kind == COMP_MEMBER) {
		uint32_t m, sid = kind_of(t) == BTF_KIND_PTR ? btf_strip(t->type) : id;
		struct vec names = { 0 };

		if (kind_of(type_at(sid)) != BTF_KIND_STRUCT && kind_of(type_at(sid)) != BTF_KIND_UNION) {
			*why = arena_printf("'->%s' needs a struct or union, but this is %s",
					    c->member, type_text(id, 0));
			return 0;
		}
		m = btf_member_type(sid, c->member);
		if (!m) {
			*why = arena_printf("%s has no member '%s'", type_text(sid, 0), c->member);
			member_names(sid, &names, 0);
			*near = diag_similar(c->member, (const char *const *)names.items, names.len);
		}
		return m;
	}
	if (kind_of(t) == BTF_KIND_PTR)
		return t->type;
	if (kind_of(t) == BTF_KIND_ARRAY)
		return ((const struct btf_array *)(t + 1))->type;
	*why = arena_printf("'[...]' needs a pointer or an array, but this is %s", type_text(id, 0));
	return 0;
}

/*
 * The script type of BTF type ID followed through COMPS: a long for
 * numbers and pointers, a string for char arrays (or PRETTY printing).
 * TYPE_UNKNOWN with *WHY (and maybe *NEAR) when the chain does not fit.
 */
enum type btf_chain_type(int id, const struct vec *comps, bool pretty, char **why,
			 const char **near, int *failed_at)
{
	uint32_t cur = (uint32_t)id;
	const struct btf_type *t;

	*why = NULL;
	*near = NULL;
	*failed_at = comps->len;
	if (!btf_load())
		return TYPE_LONG;
	for (int i = 0; i < comps->len; i++) {
		cur = step(btf_strip(cur), VEC_AT(comps, i), why, near);
		if (!cur) {
			*failed_at = i;
			return TYPE_UNKNOWN;
		}
	}
	if (pretty)
		return TYPE_STRING;
	t = type_at(btf_strip(cur));
	switch (kind_of(t)) {
	case BTF_KIND_ARRAY:	/* its address, as stap: kernel_string($p->comm) */
	case BTF_KIND_INT:
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
	case BTF_KIND_PTR:
		return TYPE_LONG;
	default:
		break;
	}
	*why = arena_printf("it is %s, not a number or a string", type_text(btf_strip(cur), 0));
	return TYPE_UNKNOWN;
}

/* ---- kernel functions ---- */

struct kfunc_proto {
	bool found;
	struct vec params;	/* struct tp_arg * */
	int ret;		/* BTF type of the return value; 0: void */
};

/*
 * Function F of module M ("M:F") in M's BTF, or 0.  A module may define F
 * twice (nfsd: stats.c's static nfsd_open, a file_operations .open,
 * beside vfs.c's global one), and BTF does not say which FUNC is whose:
 * the one whose prototype is the module's own type is taken over one that
 * shares a vmlinux prototype (a callback's), as the probe is on the global
 * F (kmodfile_site()).
 */
static intptr_t module_func(const char *name)
{
	const char *f = strchr(name, ':') + 1, *why, *mod = arena_strndup(name, (size_t)(f - 1 - name));
	struct btf_module *m;
	intptr_t found = 0;

	if (!btf_module_load(mod, &why) || !(m = module_named(mod)))
		return 0;
	for (int i = m->first; i < m->end; i++) {
		const struct btf_type *t = btf.types[i];

		if (kind_of(t) != BTF_KIND_FUNC || strcmp(name_of(t->name_off), f) != 0)
			continue;
		if (!found || ((int)type_at((uint32_t)found)->type < m->first &&
			       (int)t->type >= m->first))
			found = i;
	}
	return found;
}

static struct kfunc_proto *kfunc_lookup(const char *name)
{
	static struct hmap funcs, protos;
	static unsigned generation;
	struct kfunc_proto *kp;
	const struct btf_type *proto;
	const struct btf_param *params;
	intptr_t id;

	if (generation != arena_generation()) {
		funcs = (struct hmap){ .str_keys = true };
		protos = (struct hmap){ .str_keys = true };
		generation = arena_generation();
	}
	if ((kp = hmap_get(&protos, name)))
		return kp;
	kp = ARENA_NEW(struct kfunc_proto);
	hmap_put(&protos, arena_strdup(name), kp);
	if (!btf_load())
		return kp;
	if (!funcs.len)
		for (int i = btf.base_n - 1; i > 0; i--)	/* the first of a name wins */
			if (kind_of(btf.types[i]) == BTF_KIND_FUNC)
				hmap_put(&funcs, name_of(btf.types[i]->name_off), (void *)(intptr_t)i);
	id = strchr(name, ':') ? module_func(name) : (intptr_t)hmap_get(&funcs, name);
	proto = id ? type_at(type_at((uint32_t)id)->type) : NULL;
	if (kind_of(proto) != BTF_KIND_FUNC_PROTO)
		return kp;
	kp->found = true;
	kp->ret = (int)proto->type;
	params = (const struct btf_param *)(proto + 1);
	for (unsigned i = 0; i < BTF_INFO_VLEN(proto->info); i++) {
		struct tp_arg *a = ARENA_NEW(struct tp_arg);

		if (!params[i].type)	/* a variadic function's "..." */
			break;
		a->name = *name_of(params[i].name_off) ? name_of(params[i].name_off)
						       : arena_printf("arg%u", i + 1);
		a->btf_id = (int)params[i].type;
		a->ctype = type_text(params[i].type, 0);
		vec_push(&kp->params, a);
	}
	return kp;
}

bool btf_kfunc(const char *name, struct vec **params, int *ret)
{
	struct kfunc_proto *kp = kfunc_lookup(name);

	*params = &kp->params;
	*ret = kp->ret;
	return kp->found;
}

const char *btf_type_c(int id)
{
	return btf_load() ? type_text((uint32_t)id, 0) : "long";
}

bool kfunc_targets_checkable(const struct derived_probe *dp)
{
	return probe_class(dp) == PCLASS_KPROBE && dp->kfunc;
}

static char *param_list(const struct vec *params)
{
	char *list = NULL;

	for (int i = 0; i < params->len; i++) {
		const struct tp_arg *a = VEC_AT(params, i);

		list = list ? arena_printf("%s, $%s", list, a->name) : arena_printf("$%s", a->name);
	}
	return list ? list : arena_strdup("none");
}

/* $$parms, $$vars, $$locals, $$return. */
static bool kfunc_dollars(const struct derived_probe *dp, struct expr *e, char **why)
{
	const char *n = e->name + 2;

	if (!strcmp(n, "parms") || !strcmp(n, "vars") || !strcmp(n, "locals") ||
	    (!strcmp(n, "return") && dp->is_return)) {
		e->type = TYPE_STRING;
		return true;
	}
	*why = arena_printf("'%s' is not available at '%s'", e->name, dp->point);
	return false;
}

static bool chain_type(int id, struct expr *e, char **why, const char **near)
{
	char *text = arena_strdup(e->name);
	int at;

	e->type = btf_chain_type(id, &e->comps, e->pretty, why, near, &at);
	if (e->addr_of && at == e->comps.len)
		e->type = TYPE_LONG;	/* &$p->member: the address of any member */
	if (e->type)
		return true;
	for (int i = 0; i <= at && i < e->comps.len; i++) {
		const struct target_comp *c = VEC_AT(&e->comps, i);

		text = c->kind == COMP_MEMBER ? arena_printf("%s->%s", text, c->member)
					      : arena_printf("%s[...]", text);
	}
	*why = arena_printf("cannot read '%s': %s", text, *why);
	return false;
}

/*
 * $param... at an inline instance, or at the entry of a function BTF does
 * not describe that DWARF found (a clone: "foo.isra.0"): its DWARF
 * parameter, typed with BTF (kdwarf.h); $$vars, $$parms and $$locals as
 * stap lists them, formatted too; not $return (stap has no .return of an
 * inline either).
 */
static bool inline_target_type(const struct derived_probe *dp, struct expr *e, char **why,
			       const char **near)
{
	const char *w = NULL;
	int id;

	if (e->name[1] == '$' && (!strcmp(e->name, "$$vars") ||
	    !strcmp(e->name, "$$parms") || !strcmp(e->name, "$$locals"))) {
		e->type = TYPE_STRING;
		return true;
	}
	if (e->name[1] == '$' || !strcmp(e->name, "$return")) {
		*why = arena_printf("'%s' is not available at '%s'%s: only its parameters "
				    "are (%s)", e->name, dp->point, dp->kfunc_inline
				    ? arena_printf(", an inline instance of '%s'", dp->function) : "",
				    kdwarf_param_names(dp->kfunc_die));
		return false;
	}
	if (!kdwarf_param_btf(dp->kfunc_die, dp->kind == PROBE_KSTATEMENT ? dp->addr : 0,
			      e->name + 1, &id, &w) ||
	    !kdwarf_param_readable(dp->kfunc_die, dp->addr, e->name + 1, &w)) {
		*why = arena_printf("'%s' is not available at '%s': %s", e->name, dp->point, w);
		return false;
	}
	return chain_type(id, e, why, near);
}

/* Why module function DP->kfunc ("M:F") has no BTF prototype. */
static const char *module_btf_gap(const struct derived_probe *dp)
{
	const char *why;

	if (!btf_module_load(dp->module, &why))
		return why;
	return arena_printf("module %s's BTF does not describe '%s'", dp->module,
			    strchr(dp->kfunc, ':') + 1);
}

bool kfunc_target_type(const struct derived_probe *dp, struct expr *e, char **why,
		       const char **near)
{
	struct vec *params = NULL;
	int ret = 0;
	bool btf_ok = !dp->kfunc_kprobe && btf_kfunc(dp->kfunc, &params, &ret);

	*near = NULL;
	if (dp->kfunc_die)
		return inline_target_type(dp, e, why, near);
	if (e->name[1] == '$')
		return kfunc_dollars(dp, e, why);
	if (!strcmp(e->name, "$return")) {
		if (!dp->is_return) {
			*why = arena_printf("'$return' is only available in a .return probe");
			return false;
		}
		if (!btf_ok) {
			e->type = e->pretty ? TYPE_STRING : TYPE_LONG;
			if (e->comps.len)
				*why = arena_printf("'%s' has no members here: the type of what '%s' "
						    "returns is unknown (no BTF)", e->name, dp->kfunc);
			return !e->comps.len;
		}
		if (!ret) {
			*why = arena_printf("'%s' returns nothing (void)", dp->kfunc);
			return false;
		}
		return chain_type(ret, e, why, near);
	}
	if (!btf_ok && dp->module && dp->kind == PROBE_KFUNC) {
		*why = arena_printf("'%s' is not available at '%s': %s (int_arg(), pointer_arg() and "
				    "the like read the arguments)", e->name, dp->point,
				    dp->kfunc_untyped ? dp->kfunc_untyped : module_btf_gap(dp));
		return false;
	}
	if (!btf_ok) {
		*why = dp->module
		       ? arena_printf("'%s' is not available at '%s': a statement's variables come "
				      "from the module's debuginfo, and %s", e->name, dp->point,
				      kdwarf_missing(dp->module))
		       : dp->kind == PROBE_KSTATEMENT
		       ? arena_printf("'%s' is not available at '%s': the kernel's debuginfo "
				      "gives a statement's variables, and there is none", e->name,
				      dp->point)
		       : dp->kfunc_kprobe && !dp->module
		       ? arena_printf("'%s' is not available at '%s': kprobe.function probes "
				      "have no target variables but $return", e->name, dp->point)
		       : arena_printf("'%s' is not available at '%s': the kernel's BTF does not "
				      "describe '%s'", e->name, dp->point, dp->kfunc);
		return false;
	}
	for (int i = 0; i < params->len; i++) {
		struct tp_arg *a = VEC_AT(params, i);

		if (!strcmp(a->name, e->name + 1))
			return chain_type(a->btf_id, e, why, near);
	}
	*why = arena_printf("function '%s' has no parameter '%s' (its parameters: %s)",
			    dp->kfunc, e->name, param_list(params));
	{
		const char **names = arena_alloc(sizeof(char *) * (size_t)(params->len + 1));

		for (int i = 0; i < params->len; i++)
			names[i] = ((struct tp_arg *)VEC_AT(params, i))->name;
		*near = diag_similar(e->name + 1, names, params->len);
		if (*near)
			*near = arena_printf("$%s", *near);
	}
	return false;
}
