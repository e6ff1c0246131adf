/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_tracker.c - a table of live tasks kept from proc events, made right
 * again by a /proc scan after events were lost (cn_proc_tracker_*).
 *
 * The table is libcn's hash table (hash_table.h) keyed by pid, sized once
 * at twice the entry bound, so an event costs one probe sequence and never
 * allocates. Each slot carries the caller's data after the entry
 * (cn_proc_tracker_data), which moves with it; the data ends (data_end)
 * when the task's entry does, or, for the entry an exit returns, at the
 * next call that changes the table (held in `gone` until then).
 *
 * A process is gone when its last thread has exited, which need not be
 * its main thread (docs/DESIGN.md, "Process exits"): its slot stays, with
 * its threads counted, until then; an exec by any of its threads is its
 * exec and leaves it one thread.
 *
 * The kernel sends no event when it gives orphans a new parent (the child
 * subreaper, or init): when a process with children in the table is gone,
 * their parents are read again from /proc (their new one is set by then:
 * each thread's do_exit reparents before it sends its exit event, and a
 * thread's children stay in its process while another thread lives).
 *
 * After loss, a rescan is due once the losses stop for SYNC_QUIET_NS (or
 * SYNC_BLIND_MAX_NS after the first): a reader that overruns again and again
 * in one burst rescans once, after it, not once per overrun.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"
#include "proc_tracker.h"

#define TRACKER_DEFAULT_MAX 65536u
#define TRACKER_MAX_MAX	    (1u << 24)

/* A /proc start time (clock ticks) and a fork event's time differ by the
 * tick and the fork's own duration: within this, one task. */
#define SAME_START_NS (50ull * 1000 * 1000)

/* A rescan is due when no loss was told for this long (the burst is over), */
#define SYNC_QUIET_NS	  (100ull * 1000 * 1000)
/* ... or this long after the first loss, however long losses go on. */
#define SYNC_BLIND_MAX_NS (1000ull * 1000 * 1000)

static uint64_t mono_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now); /* the clock of timestamp_ns */
	return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* Events were lost: the table needs a rescan, due when the losses stop. */
static void note_loss(struct cn_proc_tracker *t)
{
	uint64_t now = mono_ns();

	t->blind = 1;
	if (!t->lost_first_ns)
		t->lost_first_ns = now;
	t->lost_last_ns = now;
}

static struct cn_proc_slot *lookup(const struct cn_proc_tracker *t, pid_t pid)
{
	if (pid <= 0)
		return NULL;
	return cn__htab_find(&t->tab, (uint64_t)pid);
}

static void *data_of(const struct cn_proc_slot *sl)
{
	return (unsigned char *)sl + PROC_SLOT_DATA;
}

/* The task in sl is over: its data ends. */
static void end_data(struct cn_proc_tracker *t, struct cn_proc_slot *sl)
{
	if (t->data_end)
		t->data_end(&sl->e, data_of(sl), t->data_arg);
}

/* The entry an exit returned is no longer valid: its data ends. */
static void end_gone(struct cn_proc_tracker *t)
{
	if (t->gone_held) {
		t->gone_held = 0;
		end_data(t, t->gone);
	}
}

/* The task in sl is over and a new one takes its slot: the old data ends,
 * the new task's starts zeroed. */
static void renew_data(struct cn_proc_tracker *t, struct cn_proc_slot *sl)
{
	if (!t->data_size)
		return;
	end_data(t, sl);
	memset(data_of(sl), 0, t->data_size);
}

/* A live task's slot, one that find and next show: not one a sync found
 * vanished (see sync's sweep). */
static int visible(const struct cn_proc_slot *sl)
{
	return !(sl->e.flags & CN_PROC_ENTRY_VANISHED);
}

static struct cn_proc_slot *lookup_live(const struct cn_proc_tracker *t, pid_t pid)
{
	struct cn_proc_slot *sl = lookup(t, pid);

	return sl && visible(sl) ? sl : NULL;
}

/* The live slot of process tgid (its main thread's pid), or NULL. */
static struct cn_proc_slot *process_of(const struct cn_proc_tracker *t, pid_t tgid)
{
	struct cn_proc_slot *sl = lookup_live(t, tgid);

	return sl && sl->e.tgid == tgid ? sl : NULL;
}

/* The slot for a new task `pid` (not in the table), or NULL when full. */
static struct cn_proc_slot *insert(struct cn_proc_tracker *t, pid_t pid)
{
	struct cn_proc_slot *sl = cn__htab_add(&t->tab, (uint64_t)pid);

	if (!sl) {
		t->st.dropped++;
		return NULL;
	}
	sl->e.pid = pid;
	sl->gen = t->gen;
	t->live++;
	return sl;
}

/* The counts a slot about to be deleted leaves. */
static void forget(struct cn_proc_tracker *t, const struct cn_proc_slot *sl)
{
	if (visible(sl))
		t->live--;
}

/* The entry in slot sl goes unreturned (a sweep deletes the slot): its
 * counts and its data end. */
static void drop(struct cn_proc_tracker *t, struct cn_proc_slot *sl)
{
	forget(t, sl);
	end_data(t, sl);
}

/* Remove the entry in slot sl to return it (an exit's): kept with its data
 * in t->gone, whose data ends at the next change. Returns that copy. */
static struct cn_proc_slot *retire(struct cn_proc_tracker *t, struct cn_proc_slot *sl)
{
	end_gone(t);
	memcpy(t->gone, sl, t->tab.size);
	t->gone_held = 1;
	forget(t, sl);
	cn__htab_del(&t->tab, sl);
	return t->gone;
}

struct cn_proc_tracker *cn_proc_tracker_new(const struct cn_proc_tracker_opts *opts)
{
	struct cn_proc_tracker_opts o = { 0 };
	struct cn_proc_tracker *t;
	size_t size;
	int r;

	if (opts) {
		if (opts->sz < offsetof(struct cn_proc_tracker_opts, flags) + sizeof(opts->flags) ||
		    cn__opts_tail_nonzero(opts, opts->sz, sizeof(o))) {
			errno = opts->sz > sizeof(o) ? E2BIG : EINVAL;
			return NULL;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	if (!o.max_entries)
		o.max_entries = TRACKER_DEFAULT_MAX;
	if ((o.flags & ~CN_PROC_TRACKER_NO_THREADS) || o.max_entries > TRACKER_MAX_MAX ||
	    o.data_size > CN_PROC_TRACKER_DATA_MAX || (o.data_end && !o.data_size)) {
		errno = EINVAL;
		return NULL;
	}
	/* A multiple of the alignment: every slot's data is aligned. */
	size = PROC_SLOT_DATA + ((o.data_size + PROC_SLOT_ALIGN - 1) & ~(PROC_SLOT_ALIGN - 1));
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->gone = calloc(1, size);
	r = t->gone ? cn__htab_init(&t->tab, o.max_entries, size) : -ENOMEM;
	if (r < 0) {
		free(t->gone);
		free(t);
		errno = -r;
		return NULL;
	}
	t->proc_fd = open(o.proc_root ? o.proc_root : "/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->proc_fd < 0) {
		int err = errno;

		cn__htab_free(&t->tab);
		free(t->gone);
		free(t);
		errno = err;
		return NULL;
	}
	t->flags = o.flags;
	t->data_size = o.data_size;
	t->data_end = o.data_end;
	t->data_arg = o.data_arg;
	t->blind = 1; /* nothing known until the first sync */
	return t;
}

static int end_each(void *slot, void *arg)
{
	end_data(arg, slot);
	return CN__HTAB_KEEP;
}

void cn_proc_tracker_free(struct cn_proc_tracker *t)
{
	int saved = errno;

	if (!t)
		return;
	end_gone(t);
	if (t->data_end)
		cn__htab_sweep(&t->tab, end_each, t);
	close(t->proc_fd);
	cn__htab_free(&t->tab);
	free(t->gone);
	free(t);
	errno = saved;
}

void *cn_proc_tracker_data(struct cn_proc_tracker *t, const struct cn_proc_entry *e)
{
	uintptr_t at, first;

	if (!t || !e || !t->data_size) {
		errno = EINVAL;
		return NULL;
	}
	/* Compared as addresses: e may be any pointer, which pointer
	 * subtraction may not be given. */
	at = (uintptr_t)e - offsetof(struct cn_proc_slot, e);
	first = (uintptr_t)t->tab.slot;
	if (at == (uintptr_t)t->gone)
		return data_of(t->gone);
	if (at < first || (at - first) / t->tab.size > t->tab.mask ||
	    (at - first) % t->tab.size != 0) {
		errno = EINVAL;
		return NULL;
	}
	return data_of((struct cn_proc_slot *)at);
}

/* Not found: NULL with errno ENOENT. */
static const struct cn_proc_entry *found(const struct cn_proc_slot *sl)
{
	if (!sl) {
		errno = ENOENT;
		return NULL;
	}
	return &sl->e;
}

/* The slot that counts a live process entry among its children: its
 * parent's (threads count for none). */
static struct cn_proc_slot *parent_of(const struct cn_proc_tracker *t,
				      const struct cn_proc_slot *sl)
{
	if (!visible(sl) || (sl->e.flags & CN_PROC_ENTRY_THREAD))
		return NULL;
	return lookup_live(t, sl->e.ppid);
}

/* Give the task in sl the parent ppid, keeping the parents' child counts. */
static void set_parent(struct cn_proc_tracker *t, struct cn_proc_slot *sl, pid_t ppid)
{
	struct cn_proc_slot *p = parent_of(t, sl);

	if (p && p->children)
		p->children--;
	sl->e.ppid = ppid;
	p = parent_of(t, sl);
	if (p)
		p->children++;
}

/* Process `pid` is gone: the tasks that named it as their parent have a
 * new one (the subreaper or init: the kernel has set it by the time it
 * sends the last thread's exit event), read from /proc. A task gone from
 * /proc too keeps the old one; its own exit event is on its way. */
static void reparent_children(struct cn_proc_tracker *t, pid_t pid)
{
	struct cn_proc_slot *sl = NULL;

	while ((sl = cn__htab_next(&t->tab, sl))) {
		pid_t ppid;

		if (sl->e.ppid != pid || !visible(sl))
			continue;
		/* A thread's parent is its process's (the tgid's /proc). */
		if (cn__proc_read_ppid(t->proc_fd, sl->e.tgid, &ppid) == 0 && ppid != pid)
			set_parent(t, sl, ppid);
	}
}

struct threads_of {
	struct cn_proc_tracker *t;
	pid_t tgid;
};

static int remove_if_thread_of(void *slot, void *arg)
{
	struct cn_proc_slot *sl = slot;
	struct threads_of *c = arg;

	if (sl->e.tgid != c->tgid || sl->e.pid == c->tgid)
		return CN__HTAB_KEEP;
	drop(c->t, sl);
	return CN__HTAB_DELETE;
}

/* Remove the threads of process tgid but its main thread: its exec ended
 * them (de_thread). */
static void remove_threads_of(struct cn_proc_tracker *t, pid_t tgid)
{
	struct threads_of c = { t, tgid };

	cn__htab_sweep(&t->tab, remove_if_thread_of, &c);
}

/* Does sl hold the task this fork event is about, found by a sync that ran
 * after the fork (its event read only now)? Then it is counted already. */
static int scanned_before(const struct cn_proc_slot *sl, const struct cn_proc_event *ev)
{
	uint64_t a = sl->e.start_ns, b = ev->timestamp_ns;

	return visible(sl) && (sl->e.flags & CN_PROC_ENTRY_SCANNED) && sl->e.tgid == ev->tgid &&
	       (a > b ? a - b : b - a) <= SAME_START_NS;
}

static const struct cn_proc_entry *on_fork_event(struct cn_proc_tracker *t,
						 const struct cn_proc_event *ev)
{
	int thread = ev->pid != ev->tgid, counted;
	struct cn_proc_slot *sl, *parent, *proc;

	/* An outdated entry for a reused pid (its exit was lost) is replaced;
	 * one a sync found after the fork is the same task. */
	sl = lookup(t, ev->pid);
	counted = sl && scanned_before(sl, ev);
	if (thread && (t->flags & CN_PROC_TRACKER_NO_THREADS)) {
		if ((proc = process_of(t, ev->tgid)))
			proc->threads++;
		errno = ENOENT;
		return NULL;
	}
	if (sl && (sl->e.flags & CN_PROC_ENTRY_VANISHED))
		t->live++; /* alive again, as a new task */
	if (sl && !counted)
		renew_data(t, sl); /* another task's entry */
	if (!sl)
		sl = insert(t, ev->pid);
	if (!sl)
		return found(NULL); /* not stored: not counted either */
	if (thread && !counted && (proc = process_of(t, ev->tgid)))
		proc->threads++;
	if (!thread && !counted)
		sl->threads = sl->core = 0;
	/* The child starts with its creator's name: a thread's is its
	 * process's main thread, a fork's the forking thread's. */
	parent = lookup_live(t, thread ? ev->tgid : ev->parent_pid);
	if (!parent && !thread)
		parent = lookup_live(t, ev->parent_tgid);
	set_parent(t, sl, 0); /* a reused pid's old parent counts it no more */
	memset(&sl->e, 0, sizeof(sl->e));
	sl->e.pid = ev->pid;
	sl->e.tgid = ev->tgid;
	sl->e.flags = CN_PROC_ENTRY_FORK | (thread ? CN_PROC_ENTRY_THREAD : 0);
	/* For a thread the kernel names its process's parent already. */
	set_parent(t, sl, ev->parent_tgid);
	sl->e.start_ns = ev->timestamp_ns;
	if (parent)
		memcpy(sl->e.comm, parent->e.comm, sizeof(sl->e.comm));
	else if (ev->comm[0])
		memcpy(sl->e.comm, ev->comm, sizeof(sl->e.comm));
	else if (cn__proc_read_comm(t->proc_fd, ev->pid, sl->e.comm) < 0)
		memset(sl->e.comm, 0, sizeof(sl->e.comm));
	sl->gen = t->gen;
	return &sl->e;
}

static const struct cn_proc_entry *on_exec_event(struct cn_proc_tracker *t,
						 const struct cn_proc_event *ev)
{
	struct cn_proc_slot *sl = lookup(t, ev->pid);
	char comm[16];
	int r;

	if (sl && (sl->e.flags & CN_PROC_ENTRY_VANISHED)) {
		/* Its pid, reused: a task whose fork was lost. */
		renew_data(t, sl);
		memset(&sl->e, 0, sizeof(sl->e));
		sl->e.pid = ev->pid;
		sl->e.tgid = ev->tgid;
		sl->e.start_ns = ev->timestamp_ns;
		sl->gen = t->gen;
		sl->threads = sl->core = 0;
		t->live++;
	}
	if (sl && (sl->threads || (sl->e.flags & CN_PROC_ENTRY_MAIN_EXITED))) {
		/* An exec by any thread is the process's: the kernel ended the
		 * other threads and gave the exec'ing one the process id
		 * (de_thread), with the process's parent. Exits of those
		 * threads still to come find no entry and count for nothing. */
		if (!(t->flags & CN_PROC_TRACKER_NO_THREADS)) {
			remove_threads_of(t, ev->tgid);
			sl = lookup(t, ev->pid); /* removal may have moved it */
		}
		sl->threads = 0;
		sl->e.flags &= ~CN_PROC_ENTRY_MAIN_EXITED;
	}
	if (!sl) {
		/* Not seen (lost, or not tracked): known from now on. */
		sl = insert(t, ev->pid);
		if (!sl)
			return found(NULL);
		sl->e.tgid = ev->tgid;
		sl->e.start_ns = ev->timestamp_ns;
	}
	/* An event that carries the new name (cnbus_proc.ko's records) spares
	 * a /proc read per exec, and names a process already gone. */
	if (ev->comm[0]) {
		memcpy(comm, ev->comm, sizeof(comm));
		comm[sizeof(comm) - 1] = '\0';
		r = 0;
	} else {
		r = cn__proc_read_comm(t->proc_fd, ev->pid, comm);
	}
	sl->e.flags |= CN_PROC_ENTRY_EXEC;
	sl->e.exec_ns = ev->timestamp_ns;
	if (r == 0) {
		memcpy(sl->e.comm, comm, sizeof(comm));
		sl->e.flags &= ~CN_PROC_ENTRY_STALE_COMM;
	} else {
		sl->e.flags |= CN_PROC_ENTRY_STALE_COMM;
	}
	return &sl->e;
}

/* Process proc's last thread exited with event ev: the process is gone.
 * Returns its entry as it was, flagged EXITED, with the wait status its
 * parent sees: the last exit's code (a group exit gives every thread its
 * code; without one, the kernel takes the last thread's), with the core
 * dump bit that only the dumping thread's exit carries. */
static const struct cn_proc_entry *
process_gone(struct cn_proc_tracker *t, struct cn_proc_slot *proc, const struct cn_proc_event *ev)
{
	struct cn_proc_slot *parent = parent_of(t, proc), *g;
	uint32_t status = ev->exit_code;

	if (WIFSIGNALED(status) && proc->core)
		status |= WCOREFLAG;
	if (parent && parent->children)
		parent->children--;
	if (proc->children)
		reparent_children(t, proc->e.pid);
	g = retire(t, proc);
	g->e.flags = (g->e.flags & ~CN_PROC_ENTRY_MAIN_EXITED) | CN_PROC_ENTRY_EXITED;
	g->e.status = status;
	/* The parent it had at the end (a thread's exit names none). */
	if (ev->parent_tgid)
		g->e.ppid = ev->parent_tgid;
	return &g->e;
}

/* One thread of process proc (main or not) ended: it ends the process once
 * its main thread has exited and no other thread is left. */
static const struct cn_proc_entry *thread_gone(struct cn_proc_tracker *t, struct cn_proc_slot *proc,
					       const struct cn_proc_event *ev, int main)
{
	if (ev->exit_code & WCOREFLAG)
		proc->core = 1;
	if (main)
		proc->e.flags |= CN_PROC_ENTRY_MAIN_EXITED;
	else if (proc->threads)
		proc->threads--;
	if ((proc->e.flags & CN_PROC_ENTRY_MAIN_EXITED) && !proc->threads)
		return process_gone(t, proc, ev);
	return NULL;
}

/* An exit of a task the last sync reported vanished, whose exit happened
 * while /proc was being read: returned once more, flagged, then gone. A
 * thread's ends its process if its main thread has exited and no other
 * thread is left: the process, also reported vanished by that sync (a
 * zombie main thread without threads), or live. */
static const struct cn_proc_entry *vanished_exit(struct cn_proc_tracker *t, struct cn_proc_slot *sl,
						 const struct cn_proc_event *ev)
{
	struct cn_proc_slot *proc, *g;

	if (ev->pid != ev->tgid) {
		g = retire(t, sl);
		proc = lookup(t, ev->tgid);
		if (!proc || proc->e.tgid != ev->tgid ||
		    !(proc->e.flags & CN_PROC_ENTRY_MAIN_EXITED) || proc->threads)
			return &g->e;
		if (visible(proc))
			return process_gone(t, proc, ev);
		sl = proc;
	}
	g = retire(t, sl);
	if (ev->parent_tgid)
		g->e.ppid = ev->parent_tgid;
	g->e.flags |= CN_PROC_ENTRY_EXITED;
	g->e.status = ev->exit_code;
	if (WIFSIGNALED(g->e.status) && g->core)
		g->e.status |= WCOREFLAG;
	return &g->e;
}

static const struct cn_proc_entry *on_exit_event(struct cn_proc_tracker *t,
						 const struct cn_proc_event *ev)
{
	struct cn_proc_slot *sl = lookup(t, ev->pid), *proc;
	const struct cn_proc_entry *done;
	int main = ev->pid == ev->tgid;

	if (sl && !visible(sl) && sl->e.tgid == ev->tgid)
		return vanished_exit(t, sl, ev);
	if (main) {
		if (!sl || sl->e.tgid != ev->tgid)
			return found(NULL); /* not tracked */
		/* Its main thread's exit again, or the old main thread that a
		 * thread's exec ended (de_thread), read after the exec's event
		 * (it started before it): the live process. */
		if ((sl->e.flags & CN_PROC_ENTRY_MAIN_EXITED) ||
		    (sl->e.exec_ns && ev->timestamp_ns < sl->e.exec_ns))
			return &sl->e;
		done = thread_gone(t, sl, ev, 1);
		return done ? done : &sl->e; /* the process runs on */
	}
	if (sl && sl->e.tgid == ev->tgid && (sl->e.flags & CN_PROC_ENTRY_THREAD)) {
		struct cn_proc_slot *g = retire(t, sl);

		proc = process_of(t, ev->tgid);
		done = proc ? thread_gone(t, proc, ev, 0) : NULL;
		return done ? done : &g->e;
	}
	/* A thread not tracked: under NO_THREADS one of the counted ones,
	 * unless it started before the process's last exec, which ended it
	 * (otherwise a thread whose fork was lost, or one an exec ended). */
	proc = process_of(t, ev->tgid);
	if (proc && (t->flags & CN_PROC_TRACKER_NO_THREADS) &&
	    !(proc->e.exec_ns && ev->timestamp_ns < proc->e.exec_ns)) {
		done = thread_gone(t, proc, ev, 0);
		if (done)
			return done;
	}
	return found(NULL);
}

const struct cn_proc_entry *cn_proc_tracker_event(struct cn_proc_tracker *t,
						  const struct cn_proc_event *ev)
{
	struct cn_proc_slot *sl;

	if (!t || !ev) {
		errno = EINVAL;
		return NULL;
	}
	end_gone(t); /* the last exit's entry is no longer valid */
	t->st.events++;
	/* A gap whose events all happened before the last sync began (the
	 * event after it is older than that) was repaired by that sync: the
	 * overrun reported for it (cn_proc_tracker_lost) caused the sync, and
	 * the gap shows up only when the CPU's next event is read. Another
	 * rescan for the same loss would find nothing new. */
	if (ev->lost_before && ev->timestamp_ns >= t->synced_ns)
		note_loss(t);
	switch (ev->what) {
	case CN_PROC_FORK:
		return on_fork_event(t, ev);
	case CN_PROC_EXEC:
		return on_exec_event(t, ev);
	case CN_PROC_EXIT:
		return on_exit_event(t, ev);
	case CN_PROC_COMM:
		sl = lookup_live(t, ev->pid);
		if (sl)
			memcpy(sl->e.comm, ev->comm, sizeof(sl->e.comm) - 1);
		return found(sl);
	case CN_PROC_NONE:
		errno = ENOENT;
		return NULL;
	default:
		return found(lookup_live(t, ev->pid));
	}
}

const struct cn_proc_entry *cn_proc_tracker_find(const struct cn_proc_tracker *t, pid_t pid)
{
	if (!t) {
		errno = EINVAL;
		return NULL;
	}
	return found(lookup_live(t, pid));
}

const struct cn_proc_entry *cn_proc_tracker_next(const struct cn_proc_tracker *t,
						 const struct cn_proc_entry *prev)
{
	const struct cn_proc_slot *sl = NULL;

	if (!t)
		return NULL;
	if (prev)
		sl = (const struct cn_proc_slot *)((const unsigned char *)prev -
						   offsetof(struct cn_proc_slot, e));
	while ((sl = cn__htab_next(&t->tab, sl)))
		if (visible(sl))
			return &sl->e;
	return NULL;
}

void cn_proc_tracker_lost(struct cn_proc_tracker *t)
{
	if (t)
		note_loss(t);
}

int cn_proc_tracker_sync_timeout(const struct cn_proc_tracker *t)
{
	uint64_t now, due;

	if (!t || !t->blind)
		return -1;
	/* Blind with no loss told: nothing synced yet (a new tracker). */
	if (!t->lost_first_ns)
		return 0;
	due = t->lost_last_ns + SYNC_QUIET_NS;
	if (t->lost_first_ns + SYNC_BLIND_MAX_NS < due)
		due = t->lost_first_ns + SYNC_BLIND_MAX_NS;
	now = mono_ns();
	if (now >= due)
		return 0;
	return (int)((due - now + 999999) / 1000000);
}

/* Count again every entry's children (after a sync changed parents) and,
 * unless NO_THREADS (where the scan read each process's count), every
 * process's threads: the ones in the table. */
static void count_children(struct cn_proc_tracker *t)
{
	int threads = !(t->flags & CN_PROC_TRACKER_NO_THREADS);
	struct cn_proc_slot *sl = NULL, *p;

	while ((sl = cn__htab_next(&t->tab, sl))) {
		sl->children = 0;
		if (threads)
			sl->threads = 0;
	}
	while ((sl = cn__htab_next(&t->tab, sl))) {
		if (!visible(sl))
			continue;
		p = parent_of(t, sl);
		if (p)
			p->children++;
		if (threads && (sl->e.flags & CN_PROC_ENTRY_THREAD) &&
		    (p = process_of(t, sl->e.tgid)))
			p->threads++;
	}
}

struct sync_ctx {
	struct cn_proc_tracker *t;
	cn_proc_change_fn fn;
	void *arg;
	int changes;
	int report_appeared; /* not on the first sync: everything "appears" */
};

static void report(struct sync_ctx *c, const struct cn_proc_entry *e, enum cn_proc_change ch)
{
	if (ch == CN_PROC_APPEARED && !c->report_appeared)
		return;
	if (ch == CN_PROC_APPEARED)
		c->t->st.appeared++;
	else
		c->t->st.vanished++;
	c->changes++;
	if (c->fn)
		c->fn(e, ch, c->arg);
}

/* A zombie main thread whose process runs on in other threads. */
static int main_exited(const struct cn_proc_task *task)
{
	return task->zombie && task->pid == task->tgid && task->live_threads;
}

static void fill_scanned(struct cn_proc_slot *sl, const struct cn_proc_task *task)
{
	sl->e.tgid = task->tgid;
	sl->e.ppid = task->ppid;
	sl->e.flags = CN_PROC_ENTRY_SCANNED | (task->pid != task->tgid ? CN_PROC_ENTRY_THREAD : 0) |
		      (main_exited(task) ? CN_PROC_ENTRY_MAIN_EXITED : 0);
	sl->core = 0;
	sl->e.start_ns = task->start_ns;
	sl->e.exec_ns = 0;
	memcpy(sl->e.comm, task->comm, sizeof(sl->e.comm));
}

static int same_task(const struct cn_proc_entry *e, const struct cn_proc_task *task)
{
	uint64_t a = e->start_ns, b = task->start_ns;

	if (e->tgid != task->tgid)
		return 0;
	/* Known from an exec only: its start is not known, the pid is. */
	if (!(e->flags & (CN_PROC_ENTRY_FORK | CN_PROC_ENTRY_SCANNED)))
		return 1;
	return (a > b ? a - b : b - a) <= SAME_START_NS;
}

static int sync_task(const struct cn_proc_task *task, void *arg)
{
	struct sync_ctx *c = arg;
	struct cn_proc_tracker *t = c->t;
	struct cn_proc_slot *sl = lookup(t, task->pid);

	/* A zombie has exited: its exit event is sent (do_exit sends it
	 * before the parent can reap), so it is not added, and an entry of it
	 * is not seen (reported vanished, kept until its exit comes or the
	 * next sync), unless it is a main thread whose process runs on: the
	 * process lives. */
	if (task->zombie && !main_exited(task))
		return 0;
	/* Under NO_THREADS a process's other threads are counted, from
	 * num_threads (which counts its main thread until it is reaped). */
	if ((t->flags & CN_PROC_TRACKER_NO_THREADS) && task->pid == task->tgid && sl)
		sl->threads = task->threads - 1;
	if (sl && (sl->e.flags & CN_PROC_ENTRY_VANISHED)) {
		/* Reported vanished by an earlier sync; its pid is in use
		 * again by a task whose fork was lost. */
		renew_data(t, sl);
		fill_scanned(sl, task);
		sl->gen = t->gen;
		t->live++;
		report(c, &sl->e, CN_PROC_APPEARED);
		return 0;
	}
	if (sl && !same_task(&sl->e, task)) {
		/* The pid was reused while blind: the old task vanished
		 * (told with its data), the new one appeared. */
		report(c, &sl->e, CN_PROC_VANISHED);
		renew_data(t, sl);
		fill_scanned(sl, task);
		sl->gen = t->gen;
		report(c, &sl->e, CN_PROC_APPEARED);
		return 0;
	}
	if (sl) {
		sl->e.ppid = task->ppid; /* reparented while blind (counted after the scan) */
		sl->e.flags = (sl->e.flags & ~CN_PROC_ENTRY_MAIN_EXITED) |
			      (main_exited(task) ? CN_PROC_ENTRY_MAIN_EXITED : 0);
		if (strncmp(sl->e.comm, task->comm, sizeof(sl->e.comm)) != 0) {
			memcpy(sl->e.comm, task->comm, sizeof(sl->e.comm));
			sl->e.flags &= ~CN_PROC_ENTRY_STALE_COMM;
		}
		sl->gen = t->gen;
		return 0;
	}
	sl = insert(t, task->pid);
	if (!sl)
		return 0; /* full: counted in dropped */
	fill_scanned(sl, task);
	if ((t->flags & CN_PROC_TRACKER_NO_THREADS) && task->pid == task->tgid)
		sl->threads = task->threads - 1;
	report(c, &sl->e, CN_PROC_APPEARED);
	return 0;
}

/* A slot the scan did not see: reported vanished, kept until the next sync,
 * flagged: its exit may be on its way still (it ended while /proc was
 * read). One an earlier sync reported vanished, with no exit since, is
 * gone for good. */
static int sweep_unseen(void *slot, void *arg)
{
	struct cn_proc_slot *sl = slot;
	struct sync_ctx *c = arg;

	if (sl->gen == c->t->gen)
		return CN__HTAB_KEEP;
	if (!visible(sl)) {
		drop(c->t, sl);
		return CN__HTAB_DELETE;
	}
	sl->e.flags |= CN_PROC_ENTRY_VANISHED;
	c->t->live--;
	report(c, &sl->e, CN_PROC_VANISHED);
	return CN__HTAB_KEEP;
}

int cn_proc_tracker_sync(struct cn_proc_tracker *t, cn_proc_change_fn fn, void *arg)
{
	struct sync_ctx c = { .t = t, .fn = fn, .arg = arg };
	uint64_t start;
	int r;

	if (!t)
		return cn_fail(EINVAL);
	end_gone(t); /* the last exit's entry is no longer valid */
	c.report_appeared = t->st.syncs > 0;
	t->gen++;
	start = mono_ns();
	r = cn__proc_scan(t->proc_fd, !!(t->flags & CN_PROC_TRACKER_NO_THREADS), sync_task, &c);
	if (r < 0) {
		/* Unseen entries keep their old generation; the next
		 * complete sync judges them. Due again once a quiet
		 * period has passed, not at once. */
		note_loss(t);
		count_children(t);
		return cn_fail(-r);
	}
	/* Entries /proc no longer shows. */
	cn__htab_sweep(&t->tab, sweep_unseen, &c);
	count_children(t);
	t->blind = 0;
	t->lost_first_ns = t->lost_last_ns = 0;
	t->synced_ns = start;
	t->st.syncs++;
	return c.changes;
}

int cn_proc_tracker_stats(const struct cn_proc_tracker *t, struct cn_proc_tracker_stats *st)
{
	if (!t || !st)
		return cn_fail(EINVAL);
	*st = t->st;
	st->entries = t->live;
	return 0;
}
