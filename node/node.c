/* node.c: the node's shared state (node.h says what and why). The file <dir>/node-v1 holds one
 * struct pg__node_seg; it is made under a private name, initialised, then linked into place,
 * so nobody maps a half-made one. Only the owner may open it: the folder must be ours and
 * 0700, the file ours, a regular file, 0600 and of the right size. */
#include "node/node.h"

#include "base/alloc.h"
#include "base/buf.h"
#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC UINT64_C(0x31766e6f64656770) /* "pgedonv1" */
#define REAP_EVERY_NS UINT64_C(200000000)

typedef struct pg__node_seg {
    uint64_t magic; /* written last at creation */
    uint64_t size;
    pthread_mutex_t mu; /* robust, process-shared */
    _Atomic uint32_t nclients;
    _Atomic uint64_t reaped_ns; /* CLOCK_MONOTONIC of the last reap */
    uint64_t next_ticket;
    int32_t ndevs;
    char keys[PG__NODE_DEVS][64];
    pg__node_slot slots[PG__NODE_CLIENTS];
} pg__node_seg;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Field 22 of /proc/PID/stat: when the process started; 0 if it cannot be read (gone). */
static uint64_t start_time(int pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    if (!p)
        return 0;
    int field = 2;
    for (p++; *p && field < 22; p++)
        if (*p == ' ')
            field++;
    return strtoull(p, NULL, 10);
}

static int alive(const pg__node_slot *s) {
    if (s->pid <= 0)
        return 0;
    if (kill(s->pid, 0) != 0 && errno == ESRCH)
        return 0;
    return start_time(s->pid) == s->start; /* a reused pid started later */
}

static void clear_slot(pg__node_seg *g, pg__node_slot *s) {
    for (int d = 0; d < PG__NODE_DEVS; d++) {
        atomic_store_explicit(&s->inflight[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->backlog_ns[d], 0, memory_order_relaxed);
        atomic_store_explicit(&s->bytes[d], 0, memory_order_relaxed);
    }
    s->ticket = 0;
    s->pid = 0;
    s->ndev = 0;
    if (atomic_load_explicit(&s->used, memory_order_relaxed)) {
        atomic_store_explicit(&s->used, 0, memory_order_release);
        atomic_fetch_sub_explicit(&g->nclients, 1, memory_order_relaxed);
    }
}

/* Lock held: reclaim the slots of clients that died (kill -9, a crash, exit without a close). */
static void reap(pg__node_seg *g, const pg__node_slot *me) {
    for (int i = 0; i < PG__NODE_CLIENTS; i++) {
        pg__node_slot *s = &g->slots[i];
        if (s != me && atomic_load_explicit(&s->used, memory_order_relaxed) && !alive(s))
            clear_slot(g, s);
    }
    atomic_store_explicit(&g->reaped_ns, now_ns(), memory_order_relaxed);
}

static pg_status lock(pg__node_seg *g, const pg__node_slot *me) {
    int r = pthread_mutex_lock(&g->mu);
    if (r == EOWNERDEAD) {
        /* The holder died inside: its slot is reaped below, and every update under the lock
         * leaves the other slots whole, so the state is consistent once that is done. */
        pthread_mutex_consistent(&g->mu);
        reap(g, me);
        return PG_OK;
    }
    if (r)
        return pg__error(PG_ERROR_INTERNAL, "the node's lock: %s", strerror(r));
    return PG_OK;
}

static void unlock(pg__node_seg *g) {
    pthread_mutex_unlock(&g->mu);
}

pg_status pg__node_dir(char *out, size_t size) {
    const char *base = getenv("PG_NODE_DIR");
    struct stat st;
    if (!base || !*base)
        base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
    if ((size_t)snprintf(out, size, "%s/polygpu-%u", base, (unsigned)geteuid()) >= size)
        return pg__error(PG_ERROR_ARGUMENT, "PG_NODE_DIR '%s' is too long", base);
    return PG_OK;
}

/* The folder, made 0700 if missing; refused unless it is ours and nobody else may enter. */
static pg_status check_dir(const char *dir, int create) {
    struct stat st;
    if (create && mkdir(dir, 0700) != 0 && errno != EEXIST)
        return pg__error(PG_ERROR_IO, "node folder %s cannot be made: %s", dir, strerror(errno));
    if (lstat(dir, &st) != 0)
        return pg__error(PG_ERROR_NOT_FOUND, "node folder %s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
        return pg__error(PG_ERROR_STATE,
                         "node folder %s is not a private folder of this user (owner uid %u, "
                         "mode %03o; uid %u needs it owned and 0700): not sharing the node",
                         dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
                         (unsigned)geteuid());
    return PG_OK;
}

static pg_status map_fd(int fd, const char *path, pg__node_seg **out) {
    struct stat st;
    if (fstat(fd, &st) != 0)
        return pg__error(PG_ERROR_IO, "node state %s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
        (uint64_t)st.st_size != sizeof(pg__node_seg))
        return pg__error(PG_ERROR_STATE,
                         "node state %s is not this user's (owner uid %u, mode %03o, %lld bytes; "
                         "expected uid %u, 0600, %zu bytes): not sharing the node",
                         path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
                         (long long)st.st_size, (unsigned)geteuid(), sizeof(pg__node_seg));
    void *p = mmap(NULL, sizeof(pg__node_seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return pg__error(PG_ERROR_IO, "node state %s: mmap: %s", path, strerror(errno));
    *out = p;
    return PG_OK;
}

/* Make a fresh state under a private name and link it into place; losing the race to another
 * process is fine (its state is used). */
static pg_status create_seg(const char *dir, const char *path) {
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s/.node-v1.%d", dir, (int)getpid());
    unlink(tmp);
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return pg__error(PG_ERROR_IO, "node state %s: %s", tmp, strerror(errno));
    pg_status st = PG_OK;
    if (ftruncate(fd, sizeof(pg__node_seg)) != 0)
        st = pg__error(PG_ERROR_IO, "node state %s: %s", tmp, strerror(errno));
    pg__node_seg *g = NULL;
    if (!st)
        st = map_fd(fd, tmp, &g);
    close(fd);
    if (!st) {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&g->mu, &a);
        pthread_mutexattr_destroy(&a);
        g->size = sizeof *g;
        g->next_ticket = 1;
        atomic_thread_fence(memory_order_release);
        g->magic = MAGIC;
        msync(g, sizeof *g, MS_SYNC);
        munmap(g, sizeof *g);
        if (link(tmp, path) != 0 && errno != EEXIST)
            st = pg__error(PG_ERROR_IO, "node state %s: %s", path, strerror(errno));
    }
    unlink(tmp);
    return st;
}

/* Open (create: make if missing) this user's node state. NOT_FOUND when there is none. */
static pg_status open_seg(int create, pg__node_seg **out) {
    char dir[1024], path[1100];
    pg_status st = pg__node_dir(dir, sizeof dir);
    if (st || (st = check_dir(dir, create)))
        return st;
    snprintf(path, sizeof path, "%s/node-v1", dir);
    for (int tries = 0;; tries++) {
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT && create && tries < 3) {
            if ((st = create_seg(dir, path)))
                return st;
            continue;
        }
        if (fd < 0)
            return pg__error(errno == ENOENT ? PG_ERROR_NOT_FOUND : PG_ERROR_IO,
                             "node state %s: %s", path, strerror(errno));
        st = map_fd(fd, path, out);
        close(fd);
        if (!st && ((*out)->magic != MAGIC || (*out)->size != sizeof(pg__node_seg))) {
            munmap(*out, sizeof(pg__node_seg));
            st = pg__error(PG_ERROR_STATE, "node state %s is not polygpu's node state v1", path);
        }
        return st;
    }
}

static int dev_index(pg__node_seg *g, const char *key) {
    for (int i = 0; i < g->ndevs; i++)
        if (!strncmp(g->keys[i], key, sizeof g->keys[i] - 1))
            return i;
    if (g->ndevs == PG__NODE_DEVS)
        return -1;
    snprintf(g->keys[g->ndevs], sizeof g->keys[0], "%s", key);
    return g->ndevs++;
}

pg_status pg__node_join(const char *language, int ndev, const char *const *keys, pg__node **out) {
    pg__node *n = pg__calloc(1, sizeof *n);
    if (!n)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__node_seg *g = NULL;
    pg_status st = open_seg(1, &g);
    if (!st && !(st = lock(g, NULL))) {
        reap(g, NULL);
        pg__node_slot *s = NULL;
        for (int i = 0; i < PG__NODE_CLIENTS && !s; i++)
            if (!atomic_load_explicit(&g->slots[i].used, memory_order_relaxed))
                s = &g->slots[i];
        for (int d = 0; s && !st && d < ndev; d++) {
            int i = dev_index(g, keys[d]);
            if (i < 0)
                st = pg__error(PG_ERROR_UNSUPPORTED, "the node knows %d devices already",
                               PG__NODE_DEVS);
            n->nd[d] = (int16_t)i;
        }
        if (!s && !st)
            st = pg__error(PG_ERROR_UNSUPPORTED, "%d clients share the node already",
                           PG__NODE_CLIENTS);
        if (!st) {
            clear_slot(g, s);
            s->pid = (int32_t)getpid();
            s->start = start_time(s->pid);
            snprintf(s->language, sizeof s->language, "%s", language);
            s->ndev = ndev;
            for (int d = 0; d < ndev; d++)
                s->devs[d] = n->nd[d];
            atomic_store_explicit(&s->used, 1, memory_order_release);
            atomic_fetch_add_explicit(&g->nclients, 1, memory_order_relaxed);
            n->me = s;
        }
        unlock(g);
    }
    if (st) {
        if (g)
            munmap(g, sizeof *g);
        pg__free(n);
        return st;
    }
    n->seg = g;
    n->ndev = ndev;
    *out = n;
    return PG_OK;
}

void pg__node_leave(pg__node *n) {
    if (!n)
        return;
    if (n->me->pid == (int32_t)getpid() && lock(n->seg, n->me) == PG_OK) {
        clear_slot(n->seg, n->me);
        unlock(n->seg);
    }
    munmap(n->seg, sizeof *n->seg);
    pg__free(n);
}

int pg__node_alone(const pg__node *n) {
    return atomic_load_explicit(&n->seg->nclients, memory_order_relaxed) <= 1;
}

void pg__node_others(pg__node *n, uint64_t *inflight, uint64_t *backlog_ns, int *clients) {
    pg__node_seg *g = n->seg;
    uint64_t t = now_ns();
    if (t - atomic_load_explicit(&g->reaped_ns, memory_order_relaxed) > REAP_EVERY_NS) {
        int r = pthread_mutex_trylock(&g->mu); /* busy: whoever holds it reaps */
        if (r == EOWNERDEAD)
            pthread_mutex_consistent(&g->mu);
        if (r == 0 || r == EOWNERDEAD) {
            reap(g, n->me);
            unlock(g);
        }
    }
    for (int d = 0; d < n->ndev; d++) {
        inflight[d] = backlog_ns[d] = 0;
        clients[d] = 0;
    }
    for (int i = 0; i < PG__NODE_CLIENTS; i++) {
        pg__node_slot *s = &g->slots[i];
        if (s == n->me || !atomic_load_explicit(&s->used, memory_order_acquire))
            continue;
        for (int d = 0; d < n->ndev; d++) {
            uint64_t f = atomic_load_explicit(&s->inflight[n->nd[d]], memory_order_relaxed);
            inflight[d] += f;
            backlog_ns[d] += atomic_load_explicit(&s->backlog_ns[n->nd[d]], memory_order_relaxed);
            clients[d] += f > 0;
        }
    }
}

void pg__node_others_bytes(pg__node *n, uint64_t *bytes) {
    for (int d = 0; d < n->ndev; d++)
        bytes[d] = 0;
    for (int i = 0; i < PG__NODE_CLIENTS; i++) {
        pg__node_slot *s = &n->seg->slots[i];
        if (s == n->me || !atomic_load_explicit(&s->used, memory_order_acquire))
            continue;
        for (int d = 0; d < n->ndev; d++)
            bytes[d] += atomic_load_explicit(&s->bytes[n->nd[d]], memory_order_relaxed);
    }
}

/* Lock held: the bytes the other clients hold on node device nd. */
static uint64_t others_bytes(pg__node_seg *g, const pg__node_slot *me, int nd) {
    uint64_t b = 0;
    for (int i = 0; i < PG__NODE_CLIENTS; i++)
        if (&g->slots[i] != me && atomic_load_explicit(&g->slots[i].used, memory_order_relaxed))
            b += atomic_load_explicit(&g->slots[i].bytes[nd], memory_order_relaxed);
    return b;
}

/* Lock held: the smallest ticket waiting for nd, 0 if none. */
static uint64_t first_ticket(pg__node_seg *g, int nd) {
    uint64_t t = 0;
    for (int i = 0; i < PG__NODE_CLIENTS; i++) {
        pg__node_slot *s = &g->slots[i];
        if (atomic_load_explicit(&s->used, memory_order_relaxed) && s->ticket &&
            s->wait_dev == nd && (!t || s->ticket < t))
            t = s->ticket;
    }
    return t;
}

int pg__node_admit(pg__node *n, int dev, uint64_t cap, uint64_t own, uint64_t need,
                   uint64_t *others) {
    pg__node_seg *g = n->seg;
    int nd = n->nd[dev];
    *others = 0;
    if (pg__node_alone(n)) { /* nobody to wait for or to count: no lock */
        if (own + need > cap)
            return 0;
        atomic_store_explicit(&n->me->bytes[nd], own + need, memory_order_relaxed);
        return 1;
    }
    if (lock(g, n->me))
        return 1; /* not reachable in practice; alone, as if not sharing */
    /* A dead holder's memory counts until reaped: at most every 200 ms here (a wait reaps at
     * each poll), since each look reads /proc for every other client. */
    if (now_ns() - atomic_load_explicit(&g->reaped_ns, memory_order_relaxed) > REAP_EVERY_NS)
        reap(g, n->me);
    *others = others_bytes(g, n->me, nd);
    uint64_t t = first_ticket(g, nd);
    int ok = t && t != n->me->ticket ? -1 : own + need <= cap && *others <= cap - own - need;
    if (ok > 0)
        atomic_store_explicit(&n->me->bytes[nd], own + need, memory_order_relaxed);
    unlock(g);
    return ok;
}

pg_status pg__node_wait_try(pg__node *n, int dev, uint64_t cap, uint64_t total, int *done) {
    pg__node_seg *g = n->seg;
    int nd = n->nd[dev];
    *done = 0;
    pg_status st = lock(g, n->me);
    if (st)
        return st;
    reap(g, n->me);
    pg__node_slot *me = n->me;
    if (!me->ticket) {
        me->ticket = g->next_ticket++;
        me->wait_dev = nd;
    }
    uint64_t others = others_bytes(g, me, nd);
    if (first_ticket(g, nd) == me->ticket && others + total <= cap) {
        me->ticket = 0;
        *done = 1;
    } else if (first_ticket(g, nd) == me->ticket) {
        /* Nobody would ever free memory there: every other holder waits too. */
        int holders = 0, waiting = 0;
        for (int i = 0; i < PG__NODE_CLIENTS; i++) {
            pg__node_slot *s = &g->slots[i];
            if (s == me || !atomic_load_explicit(&s->used, memory_order_relaxed) ||
                !atomic_load_explicit(&s->bytes[nd], memory_order_relaxed))
                continue;
            holders++;
            waiting += s->ticket != 0;
        }
        if (holders && holders == waiting) {
            me->ticket = 0;
            st = pg__error(PG_ERROR_OUT_OF_MEMORY,
                           "device %s: %llu bytes needed beside the %llu that %d other "
                           "process(es) hold, over the capacity of %llu bytes, and each of "
                           "them waits for memory too: none would ever free any",
                           g->keys[nd], (unsigned long long)total, (unsigned long long)others,
                           holders, (unsigned long long)cap);
        }
    }
    unlock(g);
    return st;
}

void pg__node_wait_cancel(pg__node *n) {
    if (n->me->ticket && lock(n->seg, n->me) == PG_OK) {
        n->me->ticket = 0;
        unlock(n->seg);
    }
}

pg_status pg__node_test_hold_lock(pg__node *n) {
    return lock(n->seg, n->me);
}

pg_status pg__node_status_json(char **out) {
    pg__node_seg *g = NULL;
    pg_status st = open_seg(0, &g);
    if (st == PG_ERROR_NOT_FOUND) {
        pg__error_clear();
        g = NULL;
        st = PG_OK;
    }
    if (st)
        return st;
    if (g && (st = lock(g, NULL))) {
        munmap(g, sizeof *g);
        return st;
    }
    if (g)
        reap(g, NULL);
    pg__buf b = {0};
    uint64_t dinf[PG__NODE_DEVS] = {0}, dbytes[PG__NODE_DEVS] = {0};
    int used[PG__NODE_DEVS] = {0};
    pg__buf_printf(&b, "{\"clients\": [");
    int first = 1;
    for (int i = 0; g && i < PG__NODE_CLIENTS; i++) {
        pg__node_slot *s = &g->slots[i];
        if (!atomic_load_explicit(&s->used, memory_order_relaxed))
            continue;
        uint64_t inf = 0, by = 0;
        pg__buf_printf(&b, "%s{\"pid\": %d, \"language\": ", first ? "" : ", ", (int)s->pid);
        pg__buf_json_string(&b, s->language);
        pg__buf_printf(&b, ", \"devices\": [");
        for (int d = 0; d < s->ndev; d++) {
            int nd = s->devs[d];
            if (nd < 0 || nd >= g->ndevs)
                continue;
            pg__buf_printf(&b, "%s", d ? ", " : "");
            pg__buf_json_string(&b, g->keys[nd]);
            used[nd] = 1;
        }
        for (int nd = 0; nd < g->ndevs; nd++) {
            uint64_t f = atomic_load_explicit(&s->inflight[nd], memory_order_relaxed);
            uint64_t y = atomic_load_explicit(&s->bytes[nd], memory_order_relaxed);
            inf += f;
            by += y;
            dinf[nd] += f;
            dbytes[nd] += y;
        }
        pg__buf_printf(&b, "], \"inflight\": %llu, \"bytes\": %llu}", (unsigned long long)inf,
                       (unsigned long long)by);
        first = 0;
    }
    pg__buf_printf(&b, "], \"devices\": [");
    first = 1;
    for (int nd = 0; g && nd < g->ndevs; nd++) {
        if (!used[nd])
            continue;
        pg__buf_printf(&b, "%s{\"device\": ", first ? "" : ", ");
        pg__buf_json_string(&b, g->keys[nd]);
        pg__buf_printf(&b, ", \"inflight\": %llu, \"bytes\": %llu, \"clients\": [",
                       (unsigned long long)dinf[nd], (unsigned long long)dbytes[nd]);
        int k = 0;
        for (int i = 0; i < PG__NODE_CLIENTS; i++) {
            pg__node_slot *s = &g->slots[i];
            if (!atomic_load_explicit(&s->used, memory_order_relaxed))
                continue;
            for (int d = 0; d < s->ndev; d++)
                if (s->devs[d] == nd) {
                    pg__buf_printf(&b, "%s%d", k++ ? ", " : "", (int)s->pid);
                    break;
                }
        }
        pg__buf_printf(&b, "]}");
        first = 0;
    }
    pg__buf_printf(&b, "]}");
    if (g) {
        unlock(g);
        munmap(g, sizeof *g);
    }
    if (b.failed) {
        pg__free(b.data);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    *out = b.data;
    return PG_OK;
}
