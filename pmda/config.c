/*
 * config.c - pmdastap.conf: where things are, who may register scripts,
 * and the limits.
 *
 *	[pmdastap]
 *	pmstap = /usr/local/bin/pmstap
 *	autostart_dir = $PCP_SYSCONF_DIR/stap/scripts
 *	[registration]
 *	enabled = false
 *	allowed_users = root
 *	[handover]
 *	enabled = false
 *	allowed_users =
 *	socket = $PCP_RUN_DIR/pmdastap.socket
 *	max_segment_bytes = 1073741824
 *	[limits]
 *	max_scripts = 32
 *
 * '#' and ';' start comments; a value may start with $PCP_<NAME>, replaced
 * by pmGetConfig's value.  An unknown key or a bad value is logged and
 * ignored: the default stays.  See pmdastap(1) for every key.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmdastap.h"

struct stap_config stap_config;

static char *path_in(const char *var, const char *rest)
{
	char *p;

	if (asprintf(&p, "%s%s", pmGetConfig(var), rest) < 0)
		return NULL;
	return p;
}

static void free_users(struct stap_users *u)
{
	for (int i = 0; i < u->n; i++)
		free(u->names[i]);
	free(u->names);
	u->names = NULL;
	u->n = 0;
}

void stap_config_defaults(void)
{
	struct stap_config *c = &stap_config;

	free(c->pmstap);
	free(c->autostart_dir);
	free(c->cache_dir);
	free(c->state_dir);
	free(c->handover_socket);
	free_users(&c->allowed_users);
	free_users(&c->handover_users);
	c->pmstap = strdup("/usr/local/bin/pmstap");
	c->autostart_dir = path_in("PCP_SYSCONF_DIR", "/stap/scripts");
	c->cache_dir = path_in("PCP_PMDAS_DIR", "/stap/cache");
	c->state_dir = path_in("PCP_PMDAS_DIR", "/stap/state");
	c->registration = false;
	c->allowed_users.names = calloc(1, sizeof(char *));
	if (c->allowed_users.names && (c->allowed_users.names[0] = strdup("root")))
		c->allowed_users.n = 1;
	c->handover = false;
	c->handover_max_bytes = (size_t)1 << 30;
	c->handover_socket = path_in("PCP_RUN_DIR", "/pmdastap.socket");
	c->max_scripts = 32;
	c->max_script_bytes = 256 * 1024;
	c->output_queue_bytes = 1024 * 1024;
	c->max_line_bytes = 4096;
	c->output_text_bytes = 65536;
	c->start_timeout = 300;
	c->ready_timeout = 60;
	c->check_timeout = 3;
	c->backoff_min = 1;
	c->backoff_max = 300;
	c->stop_timeout = 5;
}

/* "$PCP_FOO/rest" -> pmGetConfig("PCP_FOO") + "/rest"; anything else as it is. */
static char *expand(const char *v)
{
	char var[64];
	size_t n = 0;

	if (strncmp(v, "$PCP_", 5) != 0)
		return strdup(v);
	v++;
	while ((isalnum((unsigned char)v[n]) || v[n] == '_') && n < sizeof(var) - 1) {
		var[n] = v[n];
		n++;
	}
	var[n] = '\0';
	return path_in(var, v + n);
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

static int parse_long(const char *v, long lo, long hi, long *out)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

static int set_users(struct stap_users *u, const char *v)
{
	char *copy = strdup(v), *save = NULL, *tok;

	if (!copy)
		return -1;
	free_users(u);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **more = realloc(u->names, (size_t)(u->n + 1) * sizeof(char *));

		tok = trim(tok);
		if (!more)
			break;
		u->names = more;
		if (*tok && (more[u->n] = strdup(tok)))
			u->n++;
	}
	free(copy);
	return 0;
}

static int set_path(char **field, const char *v)
{
	char *p = expand(v);

	if (!p || p[0] != '/') {
		free(p);
		return -1;
	}
	free(*field);
	*field = p;
	return 0;
}

struct limit {
	const char *key;
	long lo, hi;
	int *ival;
	size_t *zval;
};

static int set_limit(const char *key, const char *v)
{
	struct stap_config *c = &stap_config;
	const struct limit limits[] = {
		{ "max_scripts", 1, STAP_CLUSTER_MAX - STAP_CLUSTER_FIRST_SCRIPT, &c->max_scripts, NULL },
		{ "max_script_bytes", 16, 64L << 20, NULL, &c->max_script_bytes },
		{ "output_queue_bytes", 4096, 1L << 30, NULL, &c->output_queue_bytes },
		{ "max_line_bytes", 80, 1L << 20, NULL, &c->max_line_bytes },
		{ "output_text_bytes", 1024, 1L << 28, NULL, &c->output_text_bytes },
		{ "start_timeout", 1, 86400, &c->start_timeout, NULL },
		{ "ready_timeout", 0, 3600, &c->ready_timeout, NULL },
		{ "check_timeout", 1, 600, &c->check_timeout, NULL },
		{ "restart_backoff_min", 1, 86400, &c->backoff_min, NULL },
		{ "restart_backoff_max", 1, 86400, &c->backoff_max, NULL },
		{ "stop_timeout", 1, 600, &c->stop_timeout, NULL },
	};
	long n;

	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		if (strcmp(key, limits[i].key) != 0)
			continue;
		if (parse_long(v, limits[i].lo, limits[i].hi, &n) < 0)
			return -1;
		if (limits[i].ival)
			*limits[i].ival = (int)n;
		else
			*limits[i].zval = (size_t)n;
		return 0;
	}
	return -2;
}

/* 0 set, -1 a bad value, -2 an unknown key. */
static int set_key(const char *section, const char *key, const char *v)
{
	long n;

	if (!strcmp(section, "pmdastap")) {
		if (!strcmp(key, "pmstap"))
			return set_path(&stap_config.pmstap, v);
		if (!strcmp(key, "autostart_dir"))
			return set_path(&stap_config.autostart_dir, v);
		if (!strcmp(key, "cache_dir"))
			return set_path(&stap_config.cache_dir, v);
		if (!strcmp(key, "state_dir"))
			return set_path(&stap_config.state_dir, v);
		return -2;
	}
	if (!strcmp(section, "registration")) {
		if (!strcmp(key, "enabled"))
			return parse_bool(v, &stap_config.registration);
		if (!strcmp(key, "allowed_users"))
			return set_users(&stap_config.allowed_users, v);
		return -2;
	}
	if (!strcmp(section, "handover")) {
		if (!strcmp(key, "enabled"))
			return parse_bool(v, &stap_config.handover);
		if (!strcmp(key, "allowed_users"))
			return set_users(&stap_config.handover_users, v);
		if (!strcmp(key, "socket"))
			return set_path(&stap_config.handover_socket, v);
		if (!strcmp(key, "max_segment_bytes") && parse_long(v, 1L << 16, 1L << 40, &n) == 0) {
			stap_config.handover_max_bytes = (size_t)n;
			return 0;
		}
		return strcmp(key, "max_segment_bytes") ? -2 : -1;
	}
	if (!strcmp(section, "limits"))
		return set_limit(key, v);
	return -2;
}

static void parse_line(const char *path, int lineno, char *line, char *section, size_t secsize)
{
	char *p = trim(line), *eq, *key, *val;
	int rc;

	if (*p == '\0' || *p == '#' || *p == ';')
		return;
	if (*p == '[') {
		char *end = strchr(p, ']');

		if (!end || end[1]) {
			pmNotifyErr(LOG_WARNING, "%s:%d: a section header must be [name]", path, lineno);
			return;
		}
		*end = '\0';
		snprintf(section, secsize, "%s", trim(p + 1));
		return;
	}
	eq = strchr(p, '=');
	if (!eq) {
		pmNotifyErr(LOG_WARNING, "%s:%d: expected key = value", path, lineno);
		return;
	}
	*eq = '\0';
	key = trim(p);
	val = trim(eq + 1);
	rc = set_key(section, key, val);
	if (rc == -2)
		pmNotifyErr(LOG_WARNING, "%s:%d: unknown key '%s' in section [%s]: ignored",
			    path, lineno, key, section);
	else if (rc < 0)
		pmNotifyErr(LOG_WARNING, "%s:%d: bad value '%s' for %s: the default is kept",
			    path, lineno, val, key);
}

int stap_config_load(const char *path)
{
	char line[4096], section[64] = "";
	int lineno = 0;
	FILE *f;

	stap_config_defaults();
	free(stap_config.path);
	stap_config.path = NULL;
	if (!path)
		return 0;
	f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT) {
			pmNotifyErr(LOG_INFO, "no %s: using the defaults", path);
			return 0;
		}
		pmNotifyErr(LOG_ERR, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	stap_config.path = strdup(path);
	while (fgets(line, sizeof(line), f))
		parse_line(path, ++lineno, line, section, sizeof(section));
	fclose(f);
	if (stap_config.backoff_max < stap_config.backoff_min)
		stap_config.backoff_max = stap_config.backoff_min;
	return 0;
}

bool stap_config_user_in(const struct stap_users *u, const char *user)
{
	if (!user)
		return false;
	for (int i = 0; i < u->n; i++)
		if (strcmp(u->names[i], user) == 0)
			return true;
	return false;
}
