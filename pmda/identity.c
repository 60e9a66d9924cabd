/*
 * identity.c - PMIDs and instance ids that survive a restart.
 *
 * pmlogger archives name metrics by PMID and instances by id, so both
 * must mean the same thing after pmdastap (or the machine) restarts.
 * Every mapping is a pmdaCache instance domain saved under
 * $PCP_VAR_DIR/config/pmda/<domain>.<serial>:
 *
 *	STAP_INDOM_SCRIPTS	script name -> instance id; the script's
 *				cluster is STAP_CLUSTER_FIRST_SCRIPT + that id
 *	cluster<<10|1023	"global" and "global.sub" -> item, per script
 *	cluster<<10|item	an array's keys (or histogram buckets) -> ids
 *	STAP_INDOM_PROBES	"script::probe point" -> instance id
 *	STAP_INDOM_LAYOUT	one entry naming the layout above
 *
 * At start the layout cache is loaded and checked: a missing or different
 * layout entry means the files are not ours to trust (an older pmdastap,
 * a damaged directory), so every file of this domain is removed and the
 * ids start afresh, with a message in the log.  An id beyond what a PMID
 * can hold (cluster > 4095, item > 1022) is refused where it is used.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmdastap.h"

#define STAP_IDENTITY_LAYOUT "pmdastap-identity-1"

pmInDom stap_indom(unsigned int serial)
{
	return pmInDom_build((unsigned int)stap_domain, serial);
}

/* Remove every saved cache of this domain. */
static void wipe_files(void)
{
	char dir[MAXPATHLEN], prefix[32], path[MAXPATHLEN * 2];
	struct dirent *d;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/config/pmda", pmGetConfig("PCP_VAR_DIR"));
	snprintf(prefix, sizeof(prefix), "%d.", stap_domain);
	dp = opendir(dir);
	if (!dp)
		return;
	while ((d = readdir(dp)) != NULL) {
		if (strncmp(d->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (unlink(path) < 0)
			pmNotifyErr(LOG_WARNING, "cannot remove %s: %s", path, strerror(errno));
	}
	closedir(dp);
}

static bool layout_ok(pmInDom layout, int loaded)
{
	int inst;

	if (loaded < 0)
		return false;
	return pmdaCacheOp(layout, PMDA_CACHE_SIZE) == 1 &&
	       pmdaCacheLookupName(layout, STAP_IDENTITY_LAYOUT, &inst, NULL) >= 0;
}

void stap_identity_init(void)
{
	pmInDom layout = stap_indom(STAP_INDOM_LAYOUT);
	int loaded = pmdaCacheOp(layout, PMDA_CACHE_LOAD);

	if (!layout_ok(layout, loaded)) {
		if (loaded >= 0)
			pmNotifyErr(LOG_WARNING, "the saved metric and instance ids have an unknown "
				    "layout: they are discarded, new ids are assigned");
		wipe_files();
		pmdaCacheOp(layout, PMDA_CACHE_EMPTY);
		pmdaCacheStore(layout, PMDA_CACHE_ADD, STAP_IDENTITY_LAYOUT, NULL);
		pmdaCacheOp(layout, PMDA_CACHE_SAVE);
	}
	stap_identity_load(stap_indom(STAP_INDOM_SCRIPTS));
	stap_identity_load(stap_indom(STAP_INDOM_PROBES));
}

/* Load a saved cache once per run; a damaged file is logged and dropped. */
void stap_identity_load(pmInDom indom)
{
	int rc;

	if (pmdaCacheOp(indom, PMDA_CACHE_CHECK))
		return;
	rc = pmdaCacheOp(indom, PMDA_CACHE_LOAD);
	if (rc < 0 && rc != -ENOENT && rc != PM_ERR_GENERIC)
		pmNotifyErr(LOG_WARNING, "cannot load the saved ids of indom %s: %s",
			    pmInDomStr(indom), pmErrStr(rc));
}

void stap_identity_save(pmInDom indom)
{
	int rc = pmdaCacheOp(indom, PMDA_CACHE_SAVE);

	if (rc < 0)
		pmNotifyErr(LOG_WARNING, "cannot save the ids of indom %s: %s",
			    pmInDomStr(indom), pmErrStr(rc));
}

int stap_identity_script(const char *name)
{
	pmInDom indom = stap_indom(STAP_INDOM_SCRIPTS);
	int inst = pmdaCacheStore(indom, PMDA_CACHE_ADD, name, NULL);

	if (inst < 0 || inst > STAP_CLUSTER_MAX - STAP_CLUSTER_FIRST_SCRIPT) {
		pmNotifyErr(LOG_ERR, "no cluster left for script '%s'", name);
		return -1;
	}
	stap_identity_save(indom);
	return inst;
}

int stap_identity_item(int cluster, const char *relname)
{
	pmInDom indom = stap_indom((unsigned int)cluster << 10 | STAP_ITEM_CACHE);
	int item;

	stap_identity_load(indom);
	item = pmdaCacheStore(indom, PMDA_CACHE_ADD, relname, NULL);
	if (item < 0 || item > STAP_ITEM_MAX) {
		pmNotifyErr(LOG_ERR, "no item left in cluster %d for '%s'", cluster, relname);
		return -1;
	}
	return item;
}
