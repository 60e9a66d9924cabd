/*
 * pmda.c - pmdastap: SystemTap-language scripts as live PCP metrics.
 *
 * main() reads the options and pmdastap.conf, sets up the dispatch table,
 * connects to pmcd, starts the autostart scripts and runs the main loop:
 * one poll() over pmcd's pipe, a signalfd (children ending, SIGTERM), an
 * inotify fd on the autostart directory, the handover socket and its
 * connections, and every child's control socket, output pipe and stderr pipe, with a time-out for the next
 * restart, kill or rescan of the autostart directory that is due.  A script's output is
 * thus drained as it comes, whether or not a client is fetching.
 *
 * pmcd.conf marks the agent "notready" (Install's ipc_prot): pmcd sends no
 * requests until pmdastap says PM_ERR_PMDAREADY, which it does once every
 * autostart script has either started or failed, or after ready_timeout
 * seconds.  Scripts compile in their children, so the PMDA answers pmcd at
 * once at any time after that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "domain.h"
#include "pmdastap.h"
#include "result.h"

pmdaInterface stap_dispatch;
int stap_domain = STAP;

static bool send_ready = true;		/* -R: pmcd.conf does not say notready */
static bool ready_sent;
static double ready_deadline;
static int sigfd = -1;
static bool quit;

static pmLongOptions long_options[] = {
	PMDA_OPTIONS_HEADER("Options"),
	PMDAOPT_DEBUG,
	PMDAOPT_DOMAIN,
	PMDAOPT_LOGFILE,
	{ "config", 1, 'c', "FILE", "configuration file [default $PCP_SYSCONF_DIR/stap/pmdastap.conf]" },
	{ "pmstap", 1, 'P', "PATH", "the pmstap translator to compile scripts with" },
	{ "no-notready", 0, 'R', NULL, "pmcd.conf does not say notready: do not send the ready PDU" },
	PMOPT_HELP,
	PMDA_OPTIONS_END
};

static pmdaOptions opts = {
	.short_options = "c:D:d:l:P:R?",
	.long_options = long_options,
};

void stap_names_changed(void)
{
	pmdaExt *ext = stap_dispatch.version.any.ext;

	if (ext)
		pmdaExtSetFlags(ext, PMDA_EXT_NAMES_CHANGE);
}

/* ---- dispatch ---- */

static int stap_fetch(int n, pmID *pmids, pmResult **resp, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	stap_fetch_begin();
	for (int i = 0; i < n; i++)
		stap_fetch_prepare(pmids[i]);
	return stap_result_fetch(n, pmids, resp, pmda);
}

static int stap_instance(pmInDom indom, int inst, char *name, pmInResult **result, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	stap_fetch_begin();
	stap_fetch_prepare_indom(indom);
	return pmdaInstance(indom, inst, name, result, pmda);
}

static int stap_profile(pmProfile *prof, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	return pmdaProfile(prof, pmda);
}

static int stap_desc(pmID pmid, pmDesc *desc, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	return pmdaDesc(pmid, desc, pmda);
}

static int stap_label(int ident, int type, pmLabelSet **lp, pmdaExt *pmda)
{
	pmdaEventNewClient(pmda->e_context);
	if (type & (PM_LABEL_INDOM | PM_LABEL_INSTANCES)) {
		stap_fetch_begin();
		stap_fetch_prepare_indom((pmInDom)ident);
	}
	return pmdaLabel(ident, type, lp, pmda);
}

/*
 * libpcp 6.0.3 (Debian 12's pcp; upstream's libpcp_pmda/src/mainloop.c is
 * unchanged through 7.2.0) leaks a PDU buffer on every store, refused or
 * not, in every daemon PMDA.  __pmdaMainPDU decodes a PDU_RESULT with
 * __pmDecodeResult, which puts the value sets in a PDU buffer of their own
 * and pins it; the next PDU_RESULT frees that result after setting its
 * numpmid to 0, so __pmFreeResult never unpins the buffer: about 100 bytes
 * a store, held for good (qa/118).  Free the values here as __pmFreeResult
 * would (unpin their buffer, or free them if they are not in one) and leave
 * numpmid 0: libpcp, this one or one that frees the values itself, then has
 * nothing left to free.  Only __pmdaMainPDU calls a daemon's store.
 */
extern void __pmFreeResultValues(pmResult *result);	/* libpcp's, not in its headers */

static int stap_store_release(pmResult *result, pmdaExt *pmda)
{
	int rc = stap_store(result, pmda);

	__pmFreeResultValues(result);
	result->numpmid = 0;
	return rc;
}

static void setup_dispatch(pmdaInterface *d)
{
	d->version.seven.fetch = stap_fetch;
	d->version.seven.instance = stap_instance;
	d->version.seven.profile = stap_profile;
	d->version.seven.desc = stap_desc;
	d->version.seven.text = stap_text;
	d->version.seven.store = stap_store_release;
	d->version.seven.pmid = stap_pmid;
	d->version.seven.name = stap_name;
	d->version.seven.children = stap_children;
	d->version.seven.attribute = stap_attribute;
	d->version.seven.label = stap_label;
	pmdaSetFetchCallBack(d, stap_fetch_callback);
	stap_result_init(d);
	pmdaSetLabelCallBack(d, stap_label_callback);
	pmdaSetEndContextCallBack(d, stap_end_context);
}

/* ---- the main loop ---- */

static int open_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return sigfd < 0 ? -1 : 0;
}

static void on_signals(void)
{
	struct signalfd_siginfo si;

	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			stap_scripts_reap();
		else
			quit = true;
	}
	stap_scripts_reap();	/* signals coalesce: look at every child */
}

/* Tell pmcd we are ready once autostart scripts settle; ms until the deadline. */
static int check_ready(void)
{
	double left;

	if (ready_sent || !send_ready)
		return -1;
	left = ready_deadline - stap_now();
	if (stap_scripts_starting() && left > 0)
		return (int)(left * 1000) + 1;
	pmdaSendError(&stap_dispatch, PM_ERR_PMDAREADY);
	ready_sent = true;
	pmNotifyErr(LOG_INFO, "ready%s", left <= 0 ? " (ready_timeout: scripts still starting)" : "");
	return -1;
}

struct fdmap {
	struct pollfd *pfds;
	struct stap_script **who;	/* NULL: pmcd or the signalfd */
	int n, cap;
};

static void watch(struct fdmap *m, int fd, struct stap_script *sc)
{
	if (fd < 0)
		return;
	if (m->n == m->cap) {
		int cap = m->cap ? m->cap * 2 : 16;
		struct pollfd *p = realloc(m->pfds, (size_t)cap * sizeof(*p));
		struct stap_script **w = p ? realloc(m->who, (size_t)cap * sizeof(*w)) : NULL;

		if (p)
			m->pfds = p;
		if (!p || !w)
			return;
		m->who = w;
		m->cap = cap;
	}
	m->pfds[m->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	m->who[m->n++] = sc;
}

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static void dispatch_fd(struct stap_script *sc, int fd)
{
	if (fd == sc->ctl_fd)
		stap_script_ctl_ready(sc);
	else if (fd == sc->out_fd)
		stap_output_ready(sc);
	else if (fd == sc->err_fd)
		stap_script_err_ready(sc);
}

/* One round: returns -1 when pmcd is gone. */
static int loop_once(struct fdmap *m, int pmcd_fd)
{
	int timeout = min_timeout(stap_scripts_tick(), check_ready()), n;

	m->n = 0;
	watch(m, pmcd_fd, NULL);
	watch(m, sigfd, NULL);
	watch(m, stap_autostart_fd(), NULL);
	for (int i = 0; i < stap_handover_nfds(); i++)
		watch(m, stap_handover_fd(i), NULL);
	for (int i = 0; i < stap_nscripts; i++) {
		watch(m, stap_scripts[i]->ctl_fd, stap_scripts[i]);
		watch(m, stap_scripts[i]->out_fd, stap_scripts[i]);
		watch(m, stap_scripts[i]->err_fd, stap_scripts[i]);
	}
	n = poll(m->pfds, (nfds_t)m->n, timeout);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	/* children first: their fds are only valid until a script is freed */
	for (int i = 2; i < m->n; i++)
		if (m->pfds[i].revents && m->who[i])
			dispatch_fd(m->who[i], m->pfds[i].fd);
		else if (m->pfds[i].revents && m->pfds[i].fd == stap_autostart_fd())
			stap_autostart_event();	/* the autostart directory changed */
		else if (m->pfds[i].revents)
			stap_handover_event(m->pfds[i].fd);	/* a user's pmstap */
	if (m->pfds[1].revents)
		on_signals();
	if (m->pfds[0].revents && __pmdaMainPDU(&stap_dispatch) < 0)
		return -1;
	return 0;
}

static void main_loop(void)
{
	struct fdmap m = { 0 };
	int pmcd_fd = __pmdaInFd(&stap_dispatch);

	while (!quit && loop_once(&m, pmcd_fd) == 0)
		;
	free(m.pfds);
	free(m.who);
}

/* ---- start ---- */

static void usage_exit(void)
{
	pmdaUsageMessage(&opts);
	exit(1);
}

int main(int argc, char **argv)
{
	char helppath[MAXPATHLEN], confpath[MAXPATHLEN];
	const char *config = NULL, *pmstap = NULL;
	int c;

	pmSetProgname(argv[0]);
	snprintf(helppath, sizeof(helppath), "%s/stap/help", pmGetConfig("PCP_PMDAS_DIR"));
	snprintf(confpath, sizeof(confpath), "%s/stap/pmdastap.conf", pmGetConfig("PCP_SYSCONF_DIR"));
	pmdaDaemon(&stap_dispatch, PMDA_INTERFACE_7, pmGetProgname(), STAP, "stap.log", helppath);
	while ((c = pmdaGetOptions(argc, argv, &opts, &stap_dispatch)) != EOF) {
		switch (c) {
		case 'c': config = opts.optarg; break;
		case 'P': pmstap = opts.optarg; break;
		case 'R': send_ready = false; break;
		default: opts.errors++;
		}
	}
	if (opts.errors || opts.optind != argc)
		usage_exit();
	stap_domain = stap_dispatch.domain;
	pmdaOpenLog(&stap_dispatch);
	stap_config_load(config ? config : confpath);
	if (pmstap) {
		free(stap_config.pmstap);
		stap_config.pmstap = strdup(pmstap);
	}
	if (open_signals() < 0) {
		pmNotifyErr(LOG_ERR, "cannot receive signals: %s", strerror(errno));
		exit(1);
	}
	setup_dispatch(&stap_dispatch);
	pmdaSetFlags(&stap_dispatch, PMDA_EXT_FLAG_HASHED);
	pmdaSetCommFlags(&stap_dispatch, PMDA_FLAG_AUTHORIZE);
	stap_identity_init();
	stap_metrics_init(&stap_dispatch);
	if (stap_dispatch.status != 0) {
		pmNotifyErr(LOG_ERR, "cannot initialise: %s", pmErrStr(stap_dispatch.status));
		exit(1);
	}
	pmdaConnect(&stap_dispatch);
	ready_deadline = stap_now() + stap_config.ready_timeout;
	stap_scripts_autostart();
	stap_handover_open();
	main_loop();
	stap_handover_shutdown();
	stap_scripts_shutdown();
	pmNotifyErr(LOG_INFO, "exiting");
	return 0;
}
