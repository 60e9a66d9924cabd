/*
 * emit_flavour.c - the kernel's structs as BPF handlers read them through
 * $var->member chains: CO-RE flavours with only the members read.
 *
 * A chain on a task_struct could cast to vmlinux.h's struct task_struct,
 * but a handler that names it makes clang emit debug info for the ~2,500
 * kernel types that struct reaches (0.1 s of CPU in every compile that
 * does, most of a small script's).  Instead the chain casts to
 * struct task_struct___pmstap (the runtime's services have their own
 * task_struct___stp), written here with the members the script reads and
 * their types spelled from BTF (ints by size, pointers to other
 * flavours, arrays, embedded structs): libbpf relocates a flavour's
 * members by name against the kernel's struct task_struct, as it does
 * vmlinux.h's, and looks through the kernel's anonymous members, so the
 * members of an anonymous struct or union are the flavour's own.  Only
 * vmlinux's named structs and unions, in BPF programs: the module runtime
 * compiles against the kernel's headers, and a chain that starts at an
 * anonymous type keeps vmlinux.h's.  PMSTAP_NO_FLAVOURS=1 turns them off.
 */
#include <stdlib.h>
#include <string.h>
#include <linux/btf.h>
#include "emit_int.h"
#include "probes_btf.h"

struct flavour {
	uint32_t id;		/* the struct or union, stripped */
	struct vec members;	/* struct fmember * */
	struct hmap named;	/* name -> struct fmember * */
	int state;		/* emit_flavour_defs(): 0, 1 being written, 2 written */
};

struct fmember {
	const char *name;
	uint32_t type;
};

static const char *name_of(uint32_t id)
{
	return btf_name_of(btf_type_at(id)->name_off);
}

/* "struct NAME___pmstap" (or union): the flavour of record ID, as C names it */
static const char *flavour_name(uint32_t id)
{
	return arena_printf("%s %s___pmstap", btf_kind(id) == BTF_KIND_UNION ? "union" : "struct",
			    name_of(id));
}

bool emit_flavour_on(const struct emitter *E)
{
	static int off = -1;

	if (off < 0)
		off = getenv("PMSTAP_NO_FLAVOURS") != NULL;
	return !off && E->ctx == ECTX_KERNEL && !E->kmod && !E->dyninst;
}

static struct flavour *flavour_of(struct emitter *E, uint32_t id)
{
	struct flavour *f = hmap_get(&E->flavour_of, (void *)(uintptr_t)id);

	if (!f) {
		f = ARENA_NEW(struct flavour);
		f->id = id;
		f->named.str_keys = true;
		hmap_put(&E->flavour_of, (void *)(uintptr_t)id, f);
		vec_push(&E->flavours, f);
	}
	return f;
}

/* A record a flavour may stand for: vmlinux's, named. */
static bool flavourable(uint32_t id)
{
	return btf_is_record(id) && *name_of(id) && !btf_module_of(id);
}

const char *emit_flavour_ptr(struct emitter *E, uint32_t id)
{
	id = btf_strip(id);
	if (!emit_flavour_on(E) || !flavourable(id))
		return NULL;
	flavour_of(E, id);
	return arena_printf("%s *", flavour_name(id));
}

void emit_flavour_member(struct emitter *E, uint32_t owner, const char *name, uint32_t type)
{
	struct flavour *f;
	struct fmember *m;

	owner = btf_strip(owner);
	if (!emit_flavour_on(E) || !btf_is_record(owner) || !name || !*name)
		return;
	f = flavour_of(E, owner);
	if (hmap_get(&f->named, name))
		return;
	m = ARENA_NEW(struct fmember);
	m->name = name;
	m->type = type;
	hmap_put(&f->named, name, m);
	vec_push(&f->members, m);
}

/* ---- writing them ---- */

static void define(struct emitter *E, struct flavour *f, FILE *out);

static const char *int_of(uint32_t size, const char *fallback)
{
	switch (size) {
	case 1: return "char";
	case 2: return "int16_t";
	case 4: return "int32_t";
	case 8: return "int64_t";
	default: return fallback;
	}
}

static const char *members(struct emitter *E, struct flavour *f, FILE *out);

/*
 * TYPE's C declaration of NAME, the flavours it needs written to OUT
 * first (a struct it embeds; one it points to needs only its forward
 * declaration, which every flavour has).
 */
static const char *declare(struct emitter *E, uint32_t type, const char *name, FILE *out)
{
	const struct btf_type *t;
	uint32_t id = btf_strip(type);
	int k = btf_kind(id);

	t = btf_type_at(id);
	switch (k) {
	case BTF_KIND_INT:
		if (t->size == 16)
			return arena_printf("unsigned __int128 %s", name);
		return arena_printf("%s %s", int_of(t->size, "int64_t"), name);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: {
		/* libbpf matches an enum member by the enum's name; packed, the value sets its size */
		static const char *const at_least[] = { "0", "0x100", "0x10000", "0x100000000ULL" };
		const char *v = at_least[t->size >= 8 ? 3 : t->size >= 4 ? 2 : t->size >= 2 ? 1 : 0];

		if (!*name_of(id))
			return arena_printf("enum __attribute__((packed)) { stp_anon_enum_%u = %s } %s",
					    id, v, name);
		E->flavour_enums.str_keys = true;
		if (!hmap_get(&E->flavour_enums, name_of(id))) {
			hmap_put(&E->flavour_enums, name_of(id), (void *)1);
			fprintf(out, "enum __attribute__((packed)) %s___pmstap { %s___pmstap_ = %s };\n\n",
				name_of(id), name_of(id), v);
		}
		return arena_printf("enum %s___pmstap %s", name_of(id), name);
	}
	case BTF_KIND_FLOAT:
		return arena_printf("%s %s", t->size == 4 ? "float" : "double", name);
	case BTF_KIND_PTR: {
		uint32_t to = btf_strip(t->type);
		int tk = btf_kind(to);

		if (flavourable(to)) {	/* its forward declaration is enough */
			flavour_of(E, to);
			return arena_printf("%s *%s", flavour_name(to), name);
		}
		if (tk == BTF_KIND_INT || tk == BTF_KIND_ENUM || tk == BTF_KIND_ENUM64 ||
		    tk == BTF_KIND_FLOAT || tk == BTF_KIND_PTR || btf_is_record(to))
			return declare(E, to, arena_printf("*%s", name), out);
		if (tk == BTF_KIND_ARRAY)
			return declare(E, to, arena_printf("(*%s)", name), out);
		return arena_printf("void *%s", name);	/* void, a function, a declared struct */
	}
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = (const struct btf_array *)(t + 1);

		return declare(E, a->type, arena_printf("%s[%u]", name, a->nelems), out);
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		if (flavourable(id)) {
			define(E, flavour_of(E, id), out);
			return arena_printf("%s %s", flavour_name(id), name);
		}
		return arena_printf("%s %s %s", k == BTF_KIND_UNION ? "union" : "struct",
				    members(E, flavour_of(E, id), out), name);
	default:
		return arena_printf("void *%s", name);
	}
}

/* "{ ...; }": F's members, the flavours they need written to OUT first */
static const char *members(struct emitter *E, struct flavour *f, FILE *out)
{
	const char *body = "{";

	for (int i = 0; i < f->members.len; i++) {
		struct fmember *m = VEC_AT(&f->members, i);

		body = arena_printf("%s %s;", body, declare(E, m->type, m->name, out));
	}
	return arena_printf("%s }", body);
}

static void define(struct emitter *E, struct flavour *f, FILE *out)
{
	const char *body, *name = flavour_name(f->id);

	if (f->state)
		return;	/* written, or being written (a pointer back to it needs no more) */
	f->state = 1;
	body = members(E, f, out);
	fprintf(out, "%s %s __attribute__((preserve_access_index));\n\n", name, body);
	f->state = 2;
}

void emit_flavour_defs(struct emitter *E, FILE *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *defs;

	if (!E->flavours.len)
		return;
	defs = open_memstream(&buf, &len);
	/*
	 * A definition may add flavours (what its members point to), at the
	 * end of the list.  Each is defined, if only as { }: clang 14's BPF
	 * member-access pass crashed on a pointer to a pointer to one that
	 * was only declared (indexed in __builtin_preserve_access_index()).
	 */
	for (int i = 0; i < E->flavours.len; i++) {
		struct flavour *f = VEC_AT(&E->flavours, i);

		if (flavourable(f->id))
			define(E, f, defs);
	}
	fclose(defs);
	fprintf(out, "/* the kernel's structs as the handlers read them: CO-RE flavours (emit_flavour.c) */\n");
	for (int i = 0; i < E->flavours.len; i++) {
		struct flavour *f = VEC_AT(&E->flavours, i);

		if (flavourable(f->id))
			fprintf(out, "%s;\n", flavour_name(f->id));
	}
	fprintf(out, "\n%s", buf);
	free(buf);
}
