/*
 * procfs.c - procfs("NAME").read/.write probes in a module
 * (--runtime=kernel), served as stap 4.8's module runtime serves them
 * (its runtime/procfs-probes.c, tapset-procfs.cxx): the module makes
 * /proc/systemtap/MODULE/NAME when pmstap says start and removes it at
 * stop (or when it unloads).  MODULE is the folder the runner of the
 * other runtimes uses (-m NAME, else the script's name), given by pmstap
 * as the parameter procfs_dir; /proc/systemtap is made when missing and
 * left, as stap leaves it.
 *
 *   open		one at a time: another opener waits (O_NONBLOCK:
 *			EAGAIN); a reader (O_RDONLY) of a file with a .read
 *			probe gets a fresh answer
 *   read		the first read runs the .read handler, whose $value
 *			is the answer (EIO when it could not run); the rest
 *			read on in it
 *   write		at most min(MAXSTRINGLEN, buffer) - 1 bytes of it go
 *			to each .write handler in turn, in $value; the count
 *			taken, or 0 when the last handler raised an error or
 *			could not run (stap's return)
 *
 * The mode is stap's: 0444 with a .read probe, 0222 with a .write probe,
 * less the .read probe's .umask(N) and the first .write probe's.  The
 * handlers run in the reader's or writer's task with preemption off, on
 * the CPU's context, as the module's other handlers.
 *
 * Included by stp_kmod_main.h, after the probe table.
 */
#include <linux/proc_fs.h>
#include <linux/wait.h>

static char stp_kprocfs_dir[64];
module_param_string(procfs_dir, stp_kprocfs_dir, sizeof(stp_kprocfs_dir), 0);
MODULE_PARM_DESC(procfs_dir, "the folder of the script's procfs files in /proc/systemtap");

DEFINE_PER_CPU(struct stp_kprocfs_value *, stp_kmod_procfs_value);

struct stp_kprocfs_file {
	const struct stp_ksite *site;	/* its first site: name, mode, size */
	const struct stp_ksite *read;	/* its .read probe's, or NULL */
	bool writes;			/* it has .write probes */
	char *buf;			/* site->procfs_size bytes: an answer, or a piece written */
	size_t count;
	bool fill;			/* the next read runs the .read handler */
	struct mutex lock;
	int opens;
	bool gone;			/* being removed: openers waiting give up */
	wait_queue_head_t waitq;
};

static struct {
	struct stp_kprocfs_file files[STP_KMOD_NSITES + 1];
	int n;
	struct proc_dir_entry *dir;	/* /proc/systemtap/MODULE */
} stp_kpf;

static bool stp_kprocfs_site(const struct stp_ksite *site)
{
	return site->kind == STP_KSITE_PROCFS_READ || site->kind == STP_KSITE_PROCFS_WRITE;
}

/*
 * SITE's handler on F's buffer (COUNT bytes written, for a .write), with
 * preemption off: 0 when it ran, 1 when it raised an error, -EIO when it
 * did not run (the script is not running, or re-entry: skipped).
 */
static int stp_kprocfs_run(struct stp_kprocfs_file *f, const struct stp_ksite *site, size_t count)
{
	struct stp_kprocfs_value v = { f->buf, f->site->procfs_size, count,
				       site->kind == STP_KSITE_PROCFS_WRITE };
	uint32_t cpu;
	struct context *c;
	int rc = -EIO;

	preempt_disable();
	cpu = smp_processor_id();
	c = stp_ctx_at(cpu, stp_ctx_free_level(cpu));	/* the one the handler will hold */
	if (c && !c->busy) {
		c->probe = U32_MAX;	/* stp_enter() sets it when the handler runs */
		this_cpu_write(stp_kmod_procfs_value, &v);
		stp_kmod_hit(site, NULL, NULL, NULL);
		this_cpu_write(stp_kmod_procfs_value, NULL);
		if (c->probe == (uint32_t)site->probe)
			rc = c->error == STP_ERR_RAISED || c->error == STP_ERR_FATAL;
	}
	preempt_enable();
	if (!v.write)
		f->count = v.count;
	return rc;
}

static int stp_kprocfs_open(struct inode *inode, struct file *filp)
{
	struct stp_kprocfs_file *f = pde_data(inode);
	int err = 0;

	mutex_lock(&f->lock);
	while (f->opens && !f->gone && !err) {
		if (filp->f_flags & O_NONBLOCK) {
			err = -EAGAIN;
			break;
		}
		mutex_unlock(&f->lock);
		err = wait_event_interruptible(f->waitq, !READ_ONCE(f->opens) || READ_ONCE(f->gone));
		mutex_lock(&f->lock);
	}
	if (!err && f->gone)
		err = -ENOENT;
	if (!err) {
		f->opens++;
		filp->private_data = f;
		if ((filp->f_flags & O_ACCMODE) == O_RDONLY && f->read) {
			f->buf[0] = '\0';
			f->count = 0;
			f->fill = true;
		}
	}
	mutex_unlock(&f->lock);
	return err;
}

static int stp_kprocfs_release(struct inode *inode, struct file *filp)
{
	struct stp_kprocfs_file *f = filp->private_data;

	mutex_lock(&f->lock);
	f->opens--;
	mutex_unlock(&f->lock);
	wake_up(&f->waitq);
	return 0;
}

static ssize_t stp_kprocfs_read(struct file *filp, char __user *ubuf, size_t n, loff_t *pos)
{
	struct stp_kprocfs_file *f = filp->private_data;
	ssize_t rc = 0;

	mutex_lock(&f->lock);
	if (f->fill) {
		f->fill = false;
		if (stp_kprocfs_run(f, f->read, 0) < 0)
			rc = -EIO;
	}
	if (rc == 0)
		rc = simple_read_from_buffer(ubuf, n, pos, f->buf, f->count);
	mutex_unlock(&f->lock);
	return rc;
}

static ssize_t stp_kprocfs_write(struct file *filp, const char __user *ubuf, size_t n,
				 loff_t *pos)
{
	struct stp_kprocfs_file *f = filp->private_data;
	size_t count = min3(n, (size_t)MAXSTRINGLEN - 1, (size_t)f->site->procfs_size - 1);
	ssize_t rc = 0;

	if (!f->writes)
		return -EIO;
	mutex_lock(&f->lock);
	if (copy_from_user(f->buf, ubuf, count)) {
		mutex_unlock(&f->lock);
		return -EFAULT;
	}
	f->buf[count] = '\0';
	for (int i = 0; i < (int)STP_KMOD_NSITES; i++) {
		const struct stp_ksite *s = &stp_kmod_sites[i];

		if (s->kind == STP_KSITE_PROCFS_WRITE && !strcmp(s->name, f->site->name))
			rc = stp_kprocfs_run(f, s, count) == 0 ? (ssize_t)count : 0;
	}
	mutex_unlock(&f->lock);
	if (rc > 0)
		*pos += rc;
	return rc;
}

static const struct proc_ops stp_kprocfs_ops = {
	.proc_open = stp_kprocfs_open,
	.proc_read = stp_kprocfs_read,
	.proc_write = stp_kprocfs_write,
	.proc_lseek = generic_file_llseek,
	.proc_release = stp_kprocfs_release,
};

/* SITE's file: found, or added for the first site that names it. */
static struct stp_kprocfs_file *stp_kprocfs_file_of(const struct stp_ksite *site)
{
	struct stp_kprocfs_file *f;

	for (int i = 0; i < stp_kpf.n; i++)
		if (!strcmp(stp_kpf.files[i].site->name, site->name))
			return &stp_kpf.files[i];
	f = &stp_kpf.files[stp_kpf.n++];
	memset(f, 0, sizeof(*f));
	f->site = site;
	mutex_init(&f->lock);
	init_waitqueue_head(&f->waitq);
	return f;
}

static void stp_kprocfs_stop(void)
{
	for (int i = 0; i < stp_kpf.n; i++) {
		struct stp_kprocfs_file *f = &stp_kpf.files[i];

		mutex_lock(&f->lock);
		f->gone = true;
		mutex_unlock(&f->lock);
		wake_up_all(&f->waitq);
	}
	/* waits for the handlers running, closes what is open */
	proc_remove(stp_kpf.dir);
	stp_kpf.dir = NULL;
	for (int i = 0; i < stp_kpf.n; i++)
		kvfree(stp_kpf.files[i].buf);
	stp_kpf.n = 0;
}

/* /proc/systemtap/MODULE, made when missing (left at the end, as stap leaves it). */
static struct proc_dir_entry *stp_kprocfs_mkdir(void)
{
	char path[sizeof("systemtap/") + sizeof(stp_kprocfs_dir)];
	struct path p;

	if (kern_path("/proc/systemtap", 0, &p) == 0)
		path_put(&p);
	else
		proc_mkdir("systemtap", NULL);
	snprintf(path, sizeof(path), "systemtap/%s", stp_kprocfs_dir);
	return proc_mkdir(path, NULL);
}

/* The files of the procfs sites; 0, or an error (the reason in stp_km.error). */
static int stp_kprocfs_start(void)
{
	int i;

	for (i = 0; i < (int)STP_KMOD_NSITES; i++) {
		const struct stp_ksite *s = &stp_kmod_sites[i];
		struct stp_kprocfs_file *f;

		if (!stp_kprocfs_site(s))
			continue;
		f = stp_kprocfs_file_of(s);
		if (s->kind == STP_KSITE_PROCFS_READ)
			f->read = s;
		else
			f->writes = true;
	}
	if (!stp_kpf.n)
		return 0;
	if (!stp_kprocfs_dir[0] || strchr(stp_kprocfs_dir, '/')) {
		snprintf(stp_km.error, sizeof(stp_km.error), "no procfs_dir for its procfs files");
		stp_kpf.n = 0;
		return -EINVAL;
	}
	stp_kpf.dir = stp_kprocfs_mkdir();
	if (!stp_kpf.dir) {
		snprintf(stp_km.error, sizeof(stp_km.error), "cannot make /proc/systemtap/%s "
			 "(another run of module '%s'?)", stp_kprocfs_dir, stp_kprocfs_dir);
		stp_kpf.n = 0;
		return -EEXIST;
	}
	for (i = 0; i < stp_kpf.n; i++) {
		struct stp_kprocfs_file *f = &stp_kpf.files[i];

		f->buf = kvzalloc(f->site->procfs_size, GFP_KERNEL);
		if (!f->buf || !proc_create_data(f->site->name, (umode_t)f->site->procfs_mode,
						 stp_kpf.dir, &stp_kprocfs_ops, f)) {
			snprintf(stp_km.error, sizeof(stp_km.error), "cannot make "
				 "/proc/systemtap/%s/%s", stp_kprocfs_dir, f->site->name);
			stp_kprocfs_stop();
			return -ENOMEM;
		}
	}
	return 0;
}
