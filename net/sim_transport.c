/* sim_transport.c: a simulated cluster's transport (net/transport.h). The ranks of a cluster we
 * do not have run as processes of this machine, started by tools/sim_cluster.py, each with
 * simulated GPUs (devices/sim) of its node; their messages travel over Unix sockets and cost, in
 * the devices' virtual time (base/vclock.h), what the cluster's network would:
 *
 *   between ranks of one node (MPI through shared memory): intra_us + bytes / intra_gbps;
 *   between nodes: the sender's NIC sends one message after another, each for bytes / (inter_gbps
 *   / nic_ranks) (nic_ranks ranks share one NIC, each at an equal share), then inter_us of
 *   latency; the receiver's NIC takes them in the order the receiver receives them, one after
 *   another; every send and receive costs its rank overhead_us of host time (the MPI call).
 *
 * A receive moves the receiving rank's clock to the message's arrival when it is later (the
 * rank waited for it); the real time a rank spends inside these calls, waiting for a peer
 * process that this machine runs later, does not count. So N ranks keep N virtual clocks that
 * meet where messages make them, as the ranks of a cluster do. Receives are posted
 * (core/ranks.c) and match messages in the order posted; a message with a clock completes only
 * while its rank is blocked (base/vclock.h: a ranks wait with nothing else to do), the oldest
 * posted first, one per blocked look, so that virtual times do not depend on whether a message
 * is already here, in real time, at a program point; pg__net_test never waits.
 *
 * Chosen at run time: with PG_SIMNET_DIR in the environment (the launcher's) every pg__net_*
 * call comes here; without it, to the real transport (MPI, or none), whose functions are built
 * as pg__netreal_* (CMakeLists.txt renames them when compiling net/mpi_transport.c,
 * no_transport.c and launcher.c). Environment: PG_SIMNET_DIR (the sockets' folder),
 * PG_SIMNET_SIZE, PG_SIMNET_RANK, PG_SIMNET_NODE_RANKS (ranks per node, in blocks: rank r on
 * node r / NODE_RANKS) and PG_SIMNET (the network: intra_us=,intra_gbps=,inter_us=,inter_gbps=,
 * nic_ranks=,overhead_us=). */
#include "base/alloc.h"
#include "base/error.h"
#include "base/vclock.h"
#include "net/transport.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The real transport, renamed at compile time. */
void pg__netreal_launcher(pg__net_place *out);
int pg__netreal_available(void);
pg_status pg__netreal_open(pg__net **out, int *rank, int *size);
void pg__netreal_close(pg__net *n);
int pg__netreal_tag_max(const pg__net *n);
pg_status pg__netreal_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                            pg__net_req **out);
pg_status pg__netreal_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag,
                            pg__net_req **out);
pg_status pg__netreal_test(pg__net_req *r, int *done);
pg_status pg__netreal_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                              pg__net_msg **msg);
pg_status pg__netreal_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out);
void pg__netreal_cancel(pg__net_req *r);
int pg__netreal_usable(void);
void pg__netreal_abort(int code);
int pg__netreal_cuda_aware(void);

#define MAGIC 0x70677369u /* "pgsi" */

enum { K_DATA, K_ACK, K_DONE };

typedef struct frame { /* what precedes every message on a socket */
    uint32_t magic;
    int32_t kind, src, chan, tag;
    int32_t rndv; /* K_DATA: its bytes move only once the receiver matched it (K_ACK) */
    uint64_t id;  /* a rendezvous message's number at its sender; its K_ACK and K_DONE name it */
    uint64_t bytes;
    double arrive; /* virtual ns when its last byte reaches the receiver (0: no clock) */
    double wire;   /* ns its bytes occupy the receiver's NIC (0: within a node) */
} frame;

typedef struct smsg { /* a frame received, waiting to be matched */
    struct smsg *next;
    uint64_t seen_ns; /* real time it came (CLOCK_MONOTONIC) */
    frame f;
    char data[];
} smsg;

typedef struct schan { /* a channel: one runtime's (pg__net) */
    int chan;
} schan;

typedef struct sreq { /* a request (pg__net_req); a probed message (pg__net_msg) too */
    int recv;         /* 0: a send */
    int chan, peer, tag;
    void *buf;
    size_t bytes;
    smsg *m;            /* the matched message */
    smsg *d;            /* a rendezvous receive: its K_DONE, come */
    struct sreq *pnext; /* a receive from one rank: in S.posted, in the order posted */
    int acked;          /* a rendezvous receive: its K_ACK went */
    uint64_t id;        /* a rendezvous send: its number (0: eager, complete when posted) */
    int sent;           /* a rendezvous send: its K_DONE went */
    struct sreq *next;  /* in the rendezvous sends waiting for their K_ACK */
} sreq;

static struct {
    pthread_once_t once;
    int on, failed;
    char why[256];
    int size, rank, node_ranks;
    double intra_ns, intra_gbps, inter_ns, inter_gbps, o_ns;
    int nic_ranks;
    char dir[90];
    int listen_fd;
    int *out_fd;             /* per peer; -1 until connected */
    pthread_mutex_t send_mu; /* out_fd, writes, out_free: never held with mu */
    double out_free;         /* virtual ns when this rank's NIC has sent all it was given */
    pthread_mutex_t mu;      /* the inbox, in_free, next_chan */
    pthread_cond_t cv;
    smsg *head, *tail;
    double in_free; /* virtual ns when this rank's NIC has received all it was given */
    int next_chan;
    int ctrl_tag;     /* a tag some receive from any rank was posted on (-1: none yet) */
    double eager;     /* bytes above which a message goes by rendezvous (1e18: never) */
    uint64_t next_id; /* send_mu */
    sreq *pending;    /* rendezvous sends waiting for their K_ACK (send_mu) */
    sreq *posted;     /* receives from one rank not yet complete, oldest first (mu) */
} S = {.ctrl_tag = -1,
       .once = PTHREAD_ONCE_INIT,
       .send_mu = PTHREAD_MUTEX_INITIALIZER,
       .mu = PTHREAD_MUTEX_INITIALIZER,
       .cv = PTHREAD_COND_INITIALIZER};

/* ---- the environment */

static int env_int(const char *name, int lo, int hi, int *out) {
    const char *v = getenv(name);
    char *end;
    long x = v && *v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || x < lo || x > hi) {
        snprintf(S.why, sizeof S.why, "%s='%s' is not a whole number from %d to %d", name,
                 v ? v : "", lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

/* PG_SIMNET: key=value,... ; every key required, each a number >= 0 (gbps > 0). */
static int parse_net(const char *s) {
    struct {
        const char *k;
        double *v;
        int set;
    } keys[] = {{"intra_us", &S.intra_ns, 0},
                {"intra_gbps", &S.intra_gbps, 0},
                {"inter_us", &S.inter_ns, 0},
                {"inter_gbps", &S.inter_gbps, 0},
                {"overhead_us", &S.o_ns, 0}};
    double nic = -1;
    S.eager = 1e18;
    char buf[512];
    if (!s || strlen(s) >= sizeof buf) {
        snprintf(S.why, sizeof S.why, "PG_SIMNET is missing or too long");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(p, '='), *end;
        double x = eq ? strtod(eq + 1, &end) : -1;
        if (!eq || end == eq + 1 || *end || !(x >= 0 && x <= 1e9)) {
            snprintf(S.why, sizeof S.why, "PG_SIMNET: '%s' is not key=number (0 to 1e9)", p);
            return -1;
        }
        *eq = 0;
        int i, n = (int)(sizeof keys / sizeof keys[0]);
        for (i = 0; i < n && strcmp(keys[i].k, p); i++)
            ;
        if (i < n) {
            *keys[i].v = x;
            keys[i].set = 1;
        } else if (!strcmp(p, "nic_ranks") && x >= 1 && x == (int)x)
            nic = x;
        else if (!strcmp(p, "eager_bytes"))
            S.eager = x;
        else {
            snprintf(S.why, sizeof S.why,
                     "PG_SIMNET: unknown key or bad value '%s' (intra_us, intra_gbps, inter_us, "
                     "inter_gbps, nic_ranks (a whole number >= 1), overhead_us, eager_bytes)",
                     p);
            return -1;
        }
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!keys[i].set) {
            snprintf(S.why, sizeof S.why, "PG_SIMNET: %s is missing", keys[i].k);
            return -1;
        }
    if (nic < 0 || S.intra_gbps <= 0 || S.inter_gbps <= 0) {
        snprintf(S.why, sizeof S.why,
                 "PG_SIMNET: nic_ranks is missing, or a bandwidth is 0 (GB/s must be > 0)");
        return -1;
    }
    S.nic_ranks = (int)nic;
    S.intra_ns *= 1e3;
    S.inter_ns *= 1e3;
    S.o_ns *= 1e3;
    return 0;
}

static void *receiver(void *unused);

static void init(void) {
    const char *dir = getenv("PG_SIMNET_DIR");
    if (!dir || !*dir)
        return;
    S.on = 1;
    S.failed = 1;
    S.listen_fd = -1;
    if (strlen(dir) >= sizeof S.dir) {
        snprintf(S.why, sizeof S.why, "PG_SIMNET_DIR is longer than %zu characters",
                 sizeof S.dir - 1);
        return;
    }
    snprintf(S.dir, sizeof S.dir, "%s", dir);
    if (env_int("PG_SIMNET_SIZE", 1, 1 << 16, &S.size) ||
        env_int("PG_SIMNET_RANK", 0, S.size - 1, &S.rank) ||
        env_int("PG_SIMNET_NODE_RANKS", 1, 1 << 16, &S.node_ranks) ||
        parse_net(getenv("PG_SIMNET")))
        return;
    if (!(S.out_fd = pg__malloc((size_t)S.size * sizeof *S.out_fd))) {
        snprintf(S.why, sizeof S.why, "out of host memory");
        return;
    }
    for (int i = 0; i < S.size; i++)
        S.out_fd[i] = -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/r%d", S.dir, S.rank);
    unlink(a.sun_path);
    S.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (S.listen_fd < 0 || bind(S.listen_fd, (struct sockaddr *)&a, sizeof a) ||
        listen(S.listen_fd, 128)) {
        snprintf(S.why, sizeof S.why, "cannot listen on %s: %s", a.sun_path, strerror(errno));
        return;
    }
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &at, receiver, NULL);
    pthread_attr_destroy(&at);
    if (rc) {
        snprintf(S.why, sizeof S.why, "cannot start the receiving thread: %s", strerror(rc));
        return;
    }
    S.failed = 0;
}

static int sim_on(void) {
    pthread_once(&S.once, init);
    return S.on;
}

static pg_status sim_failed(void) {
    return pg__error(PG_ERROR_ARGUMENT, "simulated cluster (tools/sim_cluster.py): %s", S.why);
}

/* ---- sockets */

static int read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static uint64_t real_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void deliver(smsg *m) {
    m->seen_ns = real_ns();
    pthread_mutex_lock(&S.mu);
    m->next = NULL;
    if (S.tail)
        S.tail->next = m;
    else
        S.head = m;
    S.tail = m;
    pthread_cond_broadcast(&S.cv);
    pthread_mutex_unlock(&S.mu);
}

/* Accepts the peers' connections and reads their messages into the inbox, whatever the ranks'
 * threads are doing, so a sender never waits for its receiver's program (as MPI's eager sends
 * and progress do). It never holds send_mu: no cycle of writers. */
static void *receiver(void *unused) {
    (void)unused;
    int cap = S.size + 1, n = 1;
    struct pollfd *fds = pg__calloc((size_t)cap, sizeof *fds);
    if (!fds)
        return NULL;
    fds[0] = (struct pollfd){S.listen_fd, POLLIN, 0};
    for (;;) {
        if (poll(fds, (nfds_t)n, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if ((fds[0].revents & POLLIN) && n < cap) {
            int fd = accept(S.listen_fd, NULL, NULL);
            if (fd >= 0)
                fds[n++] = (struct pollfd){fd, POLLIN, 0};
        }
        for (int i = 1; i < n; i++) {
            if (!fds[i].revents)
                continue;
            frame f;
            smsg *m = NULL;
            size_t len = 0; /* only K_DATA carries bytes; a K_ACK's bytes field is the size */
            if (read_all(fds[i].fd, &f, sizeof f) || f.magic != MAGIC ||
                !(m = pg__malloc(sizeof *m + ((len = f.kind == K_DATA ? f.bytes : 0) ? len : 1))) ||
                read_all(fds[i].fd, m->data, len)) {
                pg__free(m); /* the peer ended (or sent nonsense): forget its connection */
                close(fds[i].fd);
                fds[i--] = fds[--n];
                continue;
            }
            m->f = f;
            deliver(m);
        }
    }
    pg__free(fds);
    return NULL;
}

static pg_status connect_peer(int peer, int *fd_out) {
    if (S.out_fd[peer] >= 0) {
        *fd_out = S.out_fd[peer];
        return PG_OK;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s/r%d", S.dir, peer);
    /* The peer binds when it opens its first channel: wait for it (60 s, then an error). */
    for (int tries = 0;; tries++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return pg__error(PG_ERROR_IO, "simulated cluster: socket: %s", strerror(errno));
        if (!connect(fd, (struct sockaddr *)&a, sizeof a)) {
            S.out_fd[peer] = *fd_out = fd;
            return PG_OK;
        }
        int e = errno;
        close(fd);
        if ((e != ENOENT && e != ECONNREFUSED && e != EAGAIN) || tries >= 60000)
            return pg__error(PG_ERROR_IO,
                             "simulated cluster: rank %d cannot reach rank %d (%s): %s", S.rank,
                             peer, a.sun_path, strerror(e));
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

/* ---- virtual time */

typedef struct vclk {
    const pg__vclock_ops *ops;
    void *ctx;
} vclk;

/* The virtual times this rank spent inside transport calls ("in MPI"), oldest first: a
 * rendezvous message's sender answers the receiver's K_ACK at its first moment in MPI at or
 * after the ACK's arrival, found here whenever the ACK physically comes (its process may have
 * run ahead, or not yet got there): the answer is the same whatever order the processes run in. */
#define HIST 65536
static struct { double t0, t1; } hist[HIST];
static uint64_t nhist; /* send_mu */
static double call_t0; /* the current call's start (virtual ns) */
static int in_call;

static vclk vc_enter(void) {
    vclk v = {NULL, NULL};
    if (pg__vclock_get(&v.ops, &v.ctx)) {
        v.ops->enter(v.ctx);
        if (!in_call++)
            call_t0 = v.ops->now(v.ctx);
    }
    return v;
}

static void vc_leave(vclk v) {
    if (!v.ops)
        return;
    if (!--in_call) {
        pthread_mutex_lock(&S.send_mu);
        hist[nhist % HIST].t0 = call_t0;
        hist[nhist % HIST].t1 = v.ops->now(v.ctx);
        nhist++;
        pthread_mutex_unlock(&S.send_mu);
    }
    v.ops->leave(v.ctx);
}

/* When this rank answers an ACK arriving at ta (send_mu held): at its first time in MPI at or
 * after ta; -1 while it has not yet been in MPI since ta. `blocked`: the rank is waiting inside
 * a receive, in MPI from the call's start until a message comes; taken to last past ta (the
 * waited-for message comes after the ACK when its sender is the one waiting for the answer). */
static double answer_time(vclk v, double ta, int blocked) {
    uint64_t lo = nhist > HIST ? nhist - HIST : 0, hi = nhist;
    while (lo < hi) { /* the first interval ending at or after ta (their ends never decrease) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (hist[mid % HIST].t1 < ta)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nhist) {
        double t0 = hist[lo % HIST].t0;
        return t0 > ta ? t0 : ta;
    }
    double now = v.ops->now(v.ctx);
    if (in_call && (now >= ta || blocked))
        return call_t0 > ta ? call_t0 : ta;
    return -1;
}

static int node_of(int rank) {
    return rank / S.node_ranks;
}

/* ---- the transport, simulated */

static double latency(int peer) {
    return node_of(peer) == node_of(S.rank) ? S.intra_ns : S.inter_ns;
}

/* When `bytes` leaving this rank at virtual time t reach `peer`, and for how long they occupy
 * its NIC (0 within a node). send_mu held (the NIC's queue). */
static double transfer(int peer, double bytes, double t, double *wire) {
    *wire = 0;
    if (node_of(peer) == node_of(S.rank))
        return t + S.intra_ns + bytes / S.intra_gbps; /* GB/s = bytes per ns */
    *wire = bytes / (S.inter_gbps / S.nic_ranks);
    double start = t > S.out_free ? t : S.out_free;
    S.out_free = start + *wire;
    return S.out_free + S.inter_ns;
}

static pg_status send_frame(int peer, const frame *f, const void *data) {
    int fd = -1;
    pg_status st = connect_peer(peer, &fd);
    if (!st && (write_all(fd, f, sizeof *f) ||
                (f->kind == K_DATA && f->bytes && write_all(fd, data, f->bytes))))
        st = pg__error(PG_ERROR_IO,
                       "simulated cluster: rank %d cannot send to rank %d (it ended?): %s", S.rank,
                       peer, strerror(errno));
    return st;
}

/* A sender's MPI progress: every K_ACK come in (a receiver matched one of this rank's
 * rendezvous messages) is answered at this rank's first time in MPI from the ACK's arrival on
 * (answer_time), its bytes moving from then and a K_DONE telling the receiver when they arrive;
 * an ACK that arrives (in virtual time) after this rank's clock waits for a later call. Called
 * by every transport call and while one waits: a rank that makes no call (computing, or waiting
 * for its GPU) leaves its receivers waiting, as MPI without asynchronous progress does. */
static smsg *deferred; /* ACKs not yet answered (send_mu) */

static void progress(vclk v, int blocked) {
    pthread_mutex_lock(&S.mu);
    smsg *acks = NULL, **tail = &acks;
    for (smsg **pp = &S.head, *prev = NULL; *pp;) {
        smsg *m = *pp;
        if (m->f.kind == K_ACK) {
            *pp = m->next;
            if (S.tail == m)
                S.tail = prev;
            m->next = NULL;
            *tail = m;
            tail = &m->next;
        } else {
            prev = m;
            pp = &m->next;
        }
    }
    pthread_mutex_unlock(&S.mu);
    pthread_mutex_lock(&S.send_mu);
    *tail = deferred;
    deferred = NULL;
    for (smsg *a = acks, *next; a; a = next) {
        next = a->next;
        frame d = {MAGIC, K_DONE, S.rank, -1, 0, 0, a->f.id, a->f.bytes, 0, 0};
        if (v.ops && a->f.arrive > 0) {
            /* An ACK unanswered for 20 ms of real time: this rank is waiting in MPI without a
             * receive (its close waits for its peers), not computing. */
            double t = answer_time(v, a->f.arrive, blocked || real_ns() - a->seen_ns > 20000000);
            if (t < 0) { /* not yet in MPI since it arrived: later */
                a->next = deferred;
                deferred = a;
                continue;
            }
            d.arrive = transfer(a->f.src, (double)a->f.bytes + sizeof d, t, &d.wire);
        }
        if (send_frame(a->f.src, &d, NULL))
            pg__error_clear(); /* the receiver is gone: its rank reports it */
        for (sreq **pp = &S.pending; *pp; pp = &(*pp)->next)
            if ((*pp)->id == a->f.id) {
                (*pp)->sent = 1;
                *pp = (*pp)->next;
                break;
            }
        pg__free(a);
    }
    pthread_mutex_unlock(&S.send_mu);
}

/* Wait (real time, up to 5 ms; mu held) for a new frame. 0: one may have come. */
static int wait_frame(void) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 5000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    return pthread_cond_timedwait(&S.cv, &S.mu, &until);
}

static pg_status s_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                         pg__net_req **out) {
    const schan *c = (const schan *)n;
    if (peer < 0 || peer >= S.size)
        return pg__error(PG_ERROR_ARGUMENT, "simulated cluster: no rank %d (of %d)", peer, S.size);
    sreq *r = pg__calloc(1, sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    vclk v = vc_enter();
    progress(v, 0);
    frame f = {MAGIC, K_DATA, S.rank, c->chan, tag, 0, 0, bytes, 0, 0};
    pthread_mutex_lock(&S.send_mu);
    if (v.ops && tag != S.ctrl_tag) {
        double t = v.ops->now(v.ctx);
        if ((double)bytes > S.eager && peer != S.rank) {
            /* Rendezvous: the header goes now, the bytes when the receiver has matched it and
             * this rank's MPI answers (progress). */
            f.rndv = 1;
            f.id = r->id = ++S.next_id;
            f.arrive = t + latency(peer);
            r->next = S.pending;
            S.pending = r;
        } else {
            f.arrive = transfer(peer, (double)bytes + sizeof f, t, &f.wire);
        }
        v.ops->advance_to(v.ctx, t + S.o_ns);
    }
    pg_status st = PG_OK;
    if (peer == S.rank) { /* to itself: straight into the inbox */
        smsg *m = pg__malloc(sizeof *m + (bytes ? bytes : 1));
        if (!m)
            st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        else {
            m->f = f;
            memcpy(m->data, buf, bytes);
        }
        pthread_mutex_unlock(&S.send_mu);
        if (m)
            deliver(m);
    } else {
        st = send_frame(peer, &f, buf);
        if (st && r->id) { /* never acknowledged: out of the pending list */
            for (sreq **pp = &S.pending; *pp; pp = &(*pp)->next)
                if (*pp == r) {
                    *pp = r->next;
                    break;
                }
        }
        pthread_mutex_unlock(&S.send_mu);
    }
    vc_leave(v);
    if (st) {
        pg__free(r);
        return st;
    }
    *out = (pg__net_req *)r; /* eager: complete; rendezvous: when the receiver's K_ACK came */
    return PG_OK;
}

/* The first K_DATA of the inbox for chan from peer (-1: any) with tag, taken out. mu held. */
static smsg *take(int chan, int peer, int tag) {
    for (smsg **pp = &S.head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        smsg *m = *pp;
        if (m->f.kind == K_DATA && m->f.chan == chan && m->f.tag == tag &&
            (peer < 0 || m->f.src == peer)) {
            *pp = m->next;
            if (S.tail == m)
                S.tail = prev;
            return m;
        }
    }
    return NULL;
}

/* The K_DONE from src for its message id, taken out. mu held. */
static smsg *take_done(int src, uint64_t id) {
    for (smsg **pp = &S.head, *prev = NULL; *pp; prev = *pp, pp = &(*pp)->next) {
        smsg *m = *pp;
        if (m->f.kind == K_DONE && m->f.src == src && m->f.id == id) {
            *pp = m->next;
            if (S.tail == m)
                S.tail = prev;
            return m;
        }
    }
    return NULL;
}

static pg_status s_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag,
                         pg__net_req **out) {
    sreq *r = pg__calloc(1, sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    r->recv = 1;
    r->chan = ((const schan *)n)->chan;
    r->peer = peer;
    r->tag = tag;
    r->buf = buf;
    r->bytes = bytes;
    if (peer < 0)
        S.ctrl_tag = tag;
    else {
        pthread_mutex_lock(&S.mu);
        sreq **pp = &S.posted;
        while (*pp)
            pp = &(*pp)->pnext;
        *pp = r;
        pthread_mutex_unlock(&S.mu);
    }
    *out = (pg__net_req *)r;
    return PG_OK;
}

/* A receive completes: its rank's clock moves to the bytes' arrival (through its NIC, in the
 * order this rank receives), plus the call's overhead. */
static void arrived(vclk v, const frame *f) {
    if (!v.ops || f->arrive <= 0)
        return;
    pthread_mutex_lock(&S.mu);
    double done = f->arrive;
    if (f->wire > 0) {
        if (S.in_free + f->wire > done)
            done = S.in_free + f->wire;
        S.in_free = done;
    }
    pthread_mutex_unlock(&S.mu);
    double t = v.ops->now(v.ctx);
    v.ops->advance_to(v.ctx, (t > done ? t : done) + S.o_ns);
}

/* A rendezvous receive matched: tell the sender (once), then look for its K_DONE, answering
 * this rank's own K_ACKs first (two ranks receiving from each other). Never waits: receives are
 * posted and tested (core/ranks.c), a wait polls. NULL: not yet. */
static smsg *rendezvous(vclk v, sreq *r) {
    if (!r->acked) {
        frame a = {MAGIC, K_ACK, S.rank, -1, 0, 0, r->m->f.id, r->m->f.bytes, 0, 0};
        if (v.ops && r->m->f.arrive > 0) {
            double t = v.ops->now(v.ctx);
            a.arrive = (t > r->m->f.arrive ? t : r->m->f.arrive) + latency(r->m->f.src);
        }
        pthread_mutex_lock(&S.send_mu);
        if (send_frame(r->m->f.src, &a, NULL))
            pg__error_clear(); /* the sender is gone: its rank reports it */
        pthread_mutex_unlock(&S.send_mu);
        r->acked = 1;
    }
    if (!r->d) {
        progress(v, pg__vclock_blocked());
        pthread_mutex_lock(&S.mu);
        r->d = take_done(r->m->f.src, r->m->f.id);
        pthread_mutex_unlock(&S.mu);
    }
    return r->d;
}

/* Whether receive r may complete now (its message is here, in real time). A message with a
 * clock completes only while the rank is blocked until a message comes (vclock.h: a wait found
 * nothing else to do), and only the oldest receive posted, one per blocked look: its rank's clock
 * then goes to the arrival (arrived). Never at a program point, nor out of order: whether a
 * message is already here in real time (the processes run in any order) must not change the
 * virtual times, and a rank needs its receives in the order its program posted them. */
static int may_complete(vclk v, sreq *r) {
    if (!v.ops || r->m->f.arrive <= 0)
        return 1;
    if (!pg__vclock_blocked())
        return 0;
    pthread_mutex_lock(&S.mu);
    int oldest = S.posted == r;
    pthread_mutex_unlock(&S.mu);
    return oldest;
}

/* r out of the posted receives (it completed or was cancelled). */
static void unpost(sreq *r) {
    pthread_mutex_lock(&S.mu);
    for (sreq **pp = &S.posted; *pp; pp = &(*pp)->pnext)
        if (*pp == r) {
            *pp = r->pnext;
            break;
        }
    pthread_mutex_unlock(&S.mu);
}

static pg_status s_test(pg__net_req *req, int *done) {
    sreq *r = (sreq *)req;
    *done = 0;
    if (!r->recv) {
        if (r->id) { /* rendezvous: complete once its K_ACK was answered */
            vclk v = vc_enter();
            progress(v, pg__vclock_blocked());
            vc_leave(v);
            pthread_mutex_lock(&S.send_mu);
            int sent = r->sent;
            pthread_mutex_unlock(&S.send_mu);
            if (!sent)
                return PG_OK;
        }
        pg__free(r);
        *done = 1;
        return PG_OK;
    }
    vclk v = vc_enter();
    progress(v, pg__vclock_blocked());
    if (!r->m) {
        pthread_mutex_lock(&S.mu);
        if (r->peer < 0)
            r->m = take(r->chan, r->peer, r->tag);
        else /* as MPI matches: the messages come, in the order the receives were posted, not
              * the order they are tested in (core/ranks.c may post one before it tests older) */
            for (sreq *q = S.posted; q; q = q->pnext)
                if (!q->m)
                    q->m = take(q->chan, q->peer, q->tag);
        pthread_mutex_unlock(&S.mu);
        if (!r->m) {
            vc_leave(v);
            return PG_OK;
        }
    }
    pg_status st = PG_OK;
    smsg *d = NULL;
    if (r->m->f.bytes > r->bytes && r->buf)
        st = pg__error(PG_ERROR_IO,
                       "simulated cluster: a message of %llu bytes from rank %d for a receive of "
                       "%zu bytes (truncated)",
                       (unsigned long long)r->m->f.bytes, r->m->f.src, r->bytes);
    else if (!may_complete(v, r) || (r->m->f.rndv && !(d = rendezvous(v, r)))) {
        vc_leave(v);
        return PG_OK;
    } else {
        if (v.ops && r->m->f.arrive > 0)
            pg__vclock_set_blocked(0); /* one message per blocked look */
        if (r->buf)
            memcpy(r->buf, r->m->data, r->m->f.bytes);
        arrived(v, d ? &d->f : &r->m->f);
    }
    vc_leave(v);
    unpost(r);
    pg__free(r->d);
    pg__free(r->m);
    pg__free(r);
    *done = 1;
    return st;
}

/* A probe that finds nothing waits a little for a message (up to 5 ms, real time, not counted):
 * the receiving rank is blocked at its program point, and a peer process may not have run yet.
 * It answers this rank's K_ACKs meanwhile. */
static pg_status s_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                           pg__net_msg **msg) {
    int chan = ((const schan *)n)->chan;
    sreq *r = pg__calloc(1, sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    vclk v = vc_enter();
    smsg *m = NULL;
    for (int round = 0; !m && round < 2; round++) {
        progress(v, 1);
        pthread_mutex_lock(&S.mu);
        if (!(m = take(chan, peer, tag)) && !round)
            (void)wait_frame();
        pthread_mutex_unlock(&S.mu);
    }
    vc_leave(v);
    *found = m != NULL;
    if (!m) {
        pg__free(r);
        return PG_OK;
    }
    r->recv = 1;
    r->chan = chan;
    r->peer = m->f.src;
    r->tag = tag;
    r->bytes = (size_t)m->f.bytes;
    r->m = m;
    *bytes = (size_t)m->f.bytes;
    *msg = (pg__net_msg *)r;
    return PG_OK;
}

static pg_status s_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out) {
    sreq *r = (sreq *)msg;
    r->buf = buf;
    r->bytes = bytes;
    *out = (pg__net_req *)r;
    return PG_OK;
}

static void s_cancel(pg__net_req *req) {
    sreq *r = (sreq *)req;
    if (!r)
        return;
    if (!r->recv && r->id) { /* a send never acknowledged: out of the pending list */
        pthread_mutex_lock(&S.send_mu);
        for (sreq **pp = &S.pending; *pp; pp = &(*pp)->next)
            if (*pp == r) {
                *pp = r->next;
                break;
            }
        pthread_mutex_unlock(&S.send_mu);
    }
    if (r->recv)
        unpost(r);
    pg__free(r->d);
    pg__free(r->m);
    pg__free(r);
}

/* ---- the doors: simulated or real */

void pg__net_launcher(pg__net_place *out) {
    if (!sim_on()) {
        pg__netreal_launcher(out);
        return;
    }
    /* Before the first channel, so a bad environment shows at the open (size 2 then, so that the
     * runtime asks for a channel and reports it). */
    if (S.failed) {
        *out = (pg__net_place){2, 0, 2, 0};
        return;
    }
    int per = S.node_ranks < S.size ? S.node_ranks : S.size;
    *out = (pg__net_place){S.size, S.rank, per, S.rank % per};
}

int pg__net_available(void) {
    return sim_on() ? 1 : pg__netreal_available();
}

pg_status pg__net_open(pg__net **out, int *rank, int *size) {
    if (!sim_on())
        return pg__netreal_open(out, rank, size);
    if (S.failed)
        return sim_failed();
    schan *c = pg__calloc(1, sizeof *c);
    if (!c)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pthread_mutex_lock(&S.mu);
    c->chan = S.next_chan++; /* collective: every rank opens its channels in one order */
    pthread_mutex_unlock(&S.mu);
    *rank = S.rank;
    *size = S.size;
    *out = (pg__net *)c;
    return PG_OK;
}

void pg__net_close(pg__net *n) {
    if (!sim_on()) {
        pg__netreal_close(n);
        return;
    }
    pg__free(n);
}

int pg__net_tag_max(const pg__net *n) {
    return sim_on() ? (1 << 30) : pg__netreal_tag_max(n);
}

pg_status pg__net_isend(pg__net *n, const void *buf, size_t bytes, int peer, int tag,
                        pg__net_req **out) {
    return sim_on() ? s_isend(n, buf, bytes, peer, tag, out)
                    : pg__netreal_isend(n, buf, bytes, peer, tag, out);
}

pg_status pg__net_irecv(pg__net *n, void *buf, size_t bytes, int peer, int tag, pg__net_req **out) {
    return sim_on() ? s_irecv(n, buf, bytes, peer, tag, out)
                    : pg__netreal_irecv(n, buf, bytes, peer, tag, out);
}

pg_status pg__net_test(pg__net_req *r, int *done) {
    return sim_on() ? s_test(r, done) : pg__netreal_test(r, done);
}

pg_status pg__net_improbe(pg__net *n, int peer, int tag, int *found, size_t *bytes,
                          pg__net_msg **msg) {
    return sim_on() ? s_improbe(n, peer, tag, found, bytes, msg)
                    : pg__netreal_improbe(n, peer, tag, found, bytes, msg);
}

pg_status pg__net_imrecv(pg__net_msg *msg, void *buf, size_t bytes, pg__net_req **out) {
    return sim_on() ? s_imrecv(msg, buf, bytes, out) : pg__netreal_imrecv(msg, buf, bytes, out);
}

void pg__net_cancel(pg__net_req *r) {
    if (sim_on())
        s_cancel(r);
    else
        pg__netreal_cancel(r);
}

int pg__net_usable(void) {
    return sim_on() ? !S.failed : pg__netreal_usable();
}

/* The launcher ends the other ranks when one exits with a nonzero status (as mpirun does after
 * MPI_Abort). */
void pg__net_abort(int code) {
    if (!sim_on()) {
        pg__netreal_abort(code);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    _exit(code & 255 ? code & 255 : 1);
}

int pg__net_cuda_aware(void) {
    return sim_on() ? 0 : pg__netreal_cuda_aware();
}
