/* ranks.c: the same program on several processes (ranks), over net/transport.h.
 *
 * Every rank runs the whole program and so sees every call in the same order. Each root or
 * piece has an owner rank and, kept identically on every rank, the set of ranks whose copy is
 * not current (rank_stale). From that state alone each rank knows, at each program point, who
 * sends what to whom: a kernel runs on the rank owning what it writes; an input that rank lacks
 * comes from its owner (or, if the owner's copy is stale too, from the lowest rank holding it);
 * a host read on every rank brings the value to every rank lacking it; a write leaves only the
 * writer's rank current. Received copies stay current until the next write anywhere (no
 * message then). Sends and receives are posted in program order on both sides, so no message
 * ever says what to do next, and there is no central scheduler.
 *
 * Why no deadlock: sends and receives are asynchronous (see "transfers in flight"): a rank
 * that waits for anything moves its own transfers on; the value of program point P is sent once
 * its producer is done, which needs only the sender's own receives of earlier points, so by
 * induction over program points every awaited message is sent.
 *
 * A message is one status byte (0: the value follows; 1: the sender could not read it, its
 * value is lost or failed there) and the piece's elements. Values travel through host memory
 * for now: the sender's copy to the host, a staging copy, MPI; the receiver writes the host copy
 * and the usual coherence brings it to the device that needs it. */
#include "core/ranks.h"
#include "core/array.h"
#include "core/coherence.h"
#include "core/comp.h"
#include "core/deps.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/observe.h"
#include "core/pieces.h"
#include "core/util.h"
#include "core/waits.h"
#include "base/vclock.h"
#include "net/transport.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Agreement between the ranks, checked (ARCHITECTURE.md decision 28): every rank numbers its
 * rank-visible operations (launches, host accesses per piece, owner changes) and each data
 * message carries the sender's operation number, a digest of the operation and its words; the
 * receiver compares them with its own. Messages are matched in the order posted, on one tag, so
 * a message meant for another operation is received and reported rather than never matched.
 * Beside the data, a control channel (a receive always posted, from any rank) carries notices:
 * "I wait at operation #M for a value from you" (sent after a receive has waited WAIT_NOTICE_NS),
 * "I closed after operation #K", "our programs diverged: ...". A rank that learns that a peer
 * waits for a value it will never send (it went past that operation without sending, or it
 * receives at that operation too), or that a peer closed before the operation it waits at,
 * fails the operation with a message naming both sides; it tells the peer, which fails too. */
enum { TAG_DATA = 1, TAG_CTRL = 2 };
enum { CTRL_WAIT = 1, CTRL_CLOSE, CTRL_DIVERGED };
enum { OPK_NONE, OPK_LAUNCH, OPK_READ, OPK_WRITE, OPK_OWNER, OPK_CLOSE };

#define WHAT 200  /* the words of an operation */
#define TWHAT 320 /* ...and of a value moved for it */

typedef struct msg_hdr { /* before a data message's elements */
    uint8_t status;      /* 0: the value follows; 1: the sender could not read it */
    uint8_t pad[7];
    uint64_t seq, digest;
    char what[TWHAT];
} msg_hdr;

typedef struct ctrl_msg {
    int32_t kind, rank;
    uint64_t seq;  /* the sender's operation */
    uint64_t sent; /* CTRL_CLOSE: the sender's last operation that sent the recipient a value */
    char what[2 * WHAT + 160];
} ctrl_msg;

typedef struct op_desc { /* the current operation, in words only when needed */
    int kind, access;
    const char *kernel;
    uint64_t id, off, size;
} op_desc;

typedef struct pg__rsend {
    pg__net_req *req;
    void *buf; /* the staging copy it sends, freed when complete */
} pg__rsend;

/* A transfer of this rank in flight (see "transfers in flight" below). */
typedef struct xfer xfer;
struct xfer {
    int send;  /* 1: this rank sends p to peer; 0: receives it from peer */
    int peer;  /* the other rank */
    int stage; /* a send: 0 until p's writer is placed and its copy to the host issued */
    int come;  /* a receive: its message came, or never will (fail) (r->mu) */
    int noticed;
    pg__comp *c;    /* the open host access standing for it (reference) */
    pg__comp *wait; /* a send: what makes p's host copy current (reference, or NULL) */
    pg__bevent *ev; /* ...its event when issued device work, for waits to watch (r->mu) */
    pg__array *p;   /* (reference) */
    uint64_t seq, digest;
    uint64_t waited_from; /* a receive: since when the program waits for it (0: it does not) */
    op_desc op;
    char what[TWHAT];
    char *buf; /* a receive: the message (header, elements) */
    size_t bytes;
    pg__net_req *req; /* a receive: posted (r->mu) */
    char *fail;       /* why it fails (owned) */
    char *net_err;    /* a receive: the transport's error (a message of another size) */
};

typedef struct rpeer {
    uint64_t sent;        /* this rank's last operation that sent this peer a value */
    uint64_t waits;       /* the peer's CTRL_WAIT: its operation + 1 (0: none) */
    uint64_t closed;      /* the peer's CTRL_CLOSE: its operations + 1 (0: open) */
    uint64_t closed_sent; /* ...and its last operation that sent this rank a value */
    char wait_what[WHAT], close_what[2 * WHAT];
} rpeer;

struct pg__ranks {
    pg__net *net;
    /* The state below and every call on net: a receive waits without the runtime's lock. */
    pthread_mutex_t mu;
    int rank, nranks;
    pg__rsend *sends; /* sends in flight (data and notices) */
    int nsends, capsends;
    uint64_t seq; /* this rank's rank-visible operations so far: the current one's number */
    op_desc cur;
    int blocked; /* waits in progress (of operation seq), or in the close */
    xfer **xs;   /* transfers in flight, in program order (added and removed under
                  * rt->mu and mu; the rest of each under rt->mu, `come` and `req`
                  * of receives under mu) */
    int nx, capx;
    int progressing;       /* a thread moves the transfers on (rt->mu) */
    uint64_t idle_since;   /* waits have found nothing to move since (0: they did; rt->mu) */
    uint64_t min_closed;   /* the fewest operations a closed peer ran (UINT64_MAX: none) */
    int nwaits;            /* peers whose CTRL_WAIT is not answered */
    char *broken;          /* why the ranks no longer agree: every later operation fails */
    int ended;             /* the close protocol ran (pg_runtime_free or the exit) */
    uint64_t timeout_ns;   /* PG_RANKS_TIMEOUT: the last resort for a receive (0: none) */
    pg__net_req *ctrl_req; /* the posted receive of notices */
    ctrl_msg ctrl_in;
    rpeer *peers;
    struct pg__ranks *next; /* the open ones, for the exit */
};

#define CLOSE_WAIT_NS (UINT64_C(10) * 1000000000u) /* a closing rank waits this long for sends */
#define BROKEN_WAIT_NS (UINT64_C(2) * 1000000000u) /* ...and for peers' notices after an error */
#define WAIT_NOTICE_NS (UINT64_C(20) * 1000000u)   /* a receive this long tells the sender */

/* The process's ranks, for pg_ranks_abort and the exit. */
static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static pg__ranks *reg_head;
static atomic_int g_active, g_rank, g_size;

static uint64_t all_ranks(const pg__runtime *rt) {
    return rt->nranks >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << rt->nranks) - 1;
}

static uint64_t bit(int rank) {
    return UINT64_C(1) << rank;
}

/* ---- words and digests of operations */

static void scopy(char *dst, size_t cap, const char *src) {
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void describe(const op_desc *d, uint64_t seq, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "operation #%llu (", (unsigned long long)seq);
    if (n < 0 || (size_t)n >= cap)
        return;
    buf += n, cap -= (size_t)n;
    switch (d->kind) {
    case OPK_LAUNCH:
        snprintf(buf, cap, "kernel '%s' on array %llu elements %llu..%llu)", d->kernel,
                 (unsigned long long)d->id, (unsigned long long)d->off,
                 (unsigned long long)(d->off + d->size));
        break;
    case OPK_READ:
    case OPK_WRITE:
        snprintf(buf, cap, "host %s of array %llu elements %llu..%llu)",
                 d->kind == OPK_READ ? "read" : "write", (unsigned long long)d->id,
                 (unsigned long long)d->off, (unsigned long long)(d->off + d->size));
        break;
    case OPK_OWNER:
        snprintf(buf, cap, "owner change of array %llu elements %llu..%llu)",
                 (unsigned long long)d->id, (unsigned long long)d->off,
                 (unsigned long long)(d->off + d->size));
        break;
    case OPK_CLOSE:
        snprintf(buf, cap, "closing its runtime)");
        break;
    default:
        snprintf(buf, cap, "none yet)");
    }
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + UINT64_C(0x9E3779B97F4A7C15) + (h << 6) + (h >> 2);
    return h * UINT64_C(0xff51afd7ed558ccd);
}

/* The digest of moving piece p's value for operation d: the same on two ranks that agree. */
static uint64_t digest_of(const op_desc *d, const pg__array *p) {
    uint64_t h = mix(mix((uint64_t)d->kind, d->id), d->off);
    h = mix(mix(h, d->size), p->id);
    h = mix(mix(mix(h, p->off), p->size), p->rank_version);
    for (const char *k = d->kernel; k && *k; k++)
        h = mix(h, (unsigned char)*k);
    return h;
}

/* ---- the process's ranks */

static void fatal(int rank, int size, const char *why, int code) {
    fprintf(stderr, "polygpu: rank %d of %d: %s: ending every rank (MPI_Abort)\n", rank, size, why);
    fflush(stderr);
    pg__net_abort(code ? code : 1);
}

int pg_ranks_active(void) {
    return atomic_load(&g_active);
}

void pg_ranks_abort(int code, const char *why) {
    if (!atomic_load(&g_active))
        return;
    fatal(atomic_load(&g_rank), atomic_load(&g_size), why && *why ? why : "failed", code);
}

static void reg_remove(pg__ranks *r) {
    pthread_mutex_lock(&reg_mu);
    for (pg__ranks **q = &reg_head; *q; q = &(*q)->next)
        if (*q == r) {
            *q = r->next;
            break;
        }
    pthread_mutex_unlock(&reg_mu);
}

static void end_ranks(pg__ranks *r, const char *cause);
static pg_status post_msg(pg__ranks *r, xfer *x, const char *fail, const void *data);
static void xfer_end(pg__runtime *rt, xfer *x, const char *fail);
static void xfer_free(pg__runtime *rt, xfer *x);

/* At exit, a runtime still open on several ranks tells its peers it has stopped and checks
 * that they stopped at the same operation (it runs before MPI is finalised: registered after). */
static void at_exit(void) {
    for (;;) {
        pthread_mutex_lock(&reg_mu);
        pg__ranks *r = reg_head;
        if (r)
            reg_head = r->next;
        pthread_mutex_unlock(&reg_mu);
        if (!r)
            return;
        end_ranks(r, "the process exited with its runtime open");
    }
}

static void register_exit(void) {
    atexit(at_exit);
}

/* ---- messages in flight */

static pg_status sends_room(pg__ranks *r) {
    if (r->nsends < r->capsends)
        return PG_OK;
    int cap = r->capsends ? 2 * r->capsends : 16;
    pg__rsend *n = pg__realloc(r->sends, (size_t)cap * sizeof *n);
    if (!n)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    r->sends = n;
    r->capsends = cap;
    return PG_OK;
}

/* Complete what can be completed among the sends in flight (r->mu held). */
static void sends_progress(pg__ranks *r) {
    for (int i = 0; i < r->nsends;) {
        int fin = 0;
        pg_status st = pg__net_test(r->sends[i].req, &fin);
        if (st) /* the request is gone; the receiver reports the missing value */
            pg__error_clear();
        if (fin || st) {
            pg__free(r->sends[i].buf);
            r->sends[i] = r->sends[--r->nsends];
        } else {
            i++;
        }
    }
}

/* Send a notice to rank dst (r->mu held); best effort: a notice that cannot go is dropped. */
static void notice(pg__ranks *r, int dst, int kind, uint64_t seq, uint64_t sent, const char *what) {
    ctrl_msg *m = pg__calloc(1, sizeof *m);
    pg__net_req *req = NULL;
    if (!m || sends_room(r)) {
        pg__free(m);
        pg__error_clear();
        return;
    }
    *m = (ctrl_msg){.kind = kind, .rank = r->rank, .seq = seq, .sent = sent};
    scopy(m->what, sizeof m->what, what);
    if (pg__net_isend(r->net, m, sizeof *m, dst, TAG_CTRL, &req)) {
        pg__free(m);
        pg__error_clear();
        return;
    }
    r->sends[r->nsends++] = (pg__rsend){req, m};
}

static void set_broken(pg__ranks *r, const char *why) {
    if (!r->broken)
        r->broken = pg__strdup(why);
}

/* Take the notices that have come (r->mu held). */
static void ctrl_progress(pg__ranks *r) {
    while (r->ctrl_req) {
        int done = 0;
        if (pg__net_test(r->ctrl_req, &done)) {
            pg__error_clear();
            r->ctrl_req = NULL;
            return;
        }
        if (!done)
            return;
        r->ctrl_req = NULL;
        ctrl_msg *m = &r->ctrl_in;
        m->what[sizeof m->what - 1] = 0;
        if (m->rank >= 0 && m->rank < r->nranks && m->rank != r->rank) {
            rpeer *q = &r->peers[m->rank];
            if (m->kind == CTRL_WAIT) {
                r->nwaits += !q->waits;
                q->waits = m->seq + 1;
                scopy(q->wait_what, sizeof q->wait_what, m->what);
            } else if (m->kind == CTRL_CLOSE) {
                q->closed = m->seq + 1;
                q->closed_sent = m->sent;
                scopy(q->close_what, sizeof q->close_what, m->what);
                if (m->seq < r->min_closed)
                    r->min_closed = m->seq;
            } else if (m->kind == CTRL_DIVERGED) {
                set_broken(r, m->what);
            }
        }
        if (pg__net_irecv(r->net, &r->ctrl_in, sizeof r->ctrl_in, -1, TAG_CTRL, &r->ctrl_req)) {
            pg__error_clear();
            r->ctrl_req = NULL;
        }
    }
}

/* Does what the peers said fail this rank's current operation (r->mu held)? `src`: the rank a
 * receive waits for (-1: none). Sets the message. */
static pg_status peer_failures(pg__ranks *r, int src, int closing) {
    char mine[WHAT], msg[3 * WHAT + 400];
    if (r->broken)
        return pg__error(PG_ERROR_STATE, "%s", r->broken);
    if (src >= 0 && r->peers[src].closed && r->peers[src].closed_sent < r->seq) {
        describe(&r->cur, r->seq, mine, sizeof mine);
        snprintf(msg, sizeof msg,
                 "rank %d closed its runtime (%s), while rank %d waits at its %s for a value "
                 "from it: every rank must run the same operations, and a rank that stops early "
                 "ends the run",
                 src, r->peers[src].close_what, r->rank, mine);
        set_broken(r, msg);
        return pg__error(PG_ERROR_STATE, "%s", msg);
    }
    if (r->seq > r->min_closed && !closing) {
        int x = 0;
        while (!r->peers[x].closed || r->peers[x].closed - 1 != r->min_closed)
            x++;
        describe(&r->cur, r->seq, mine, sizeof mine);
        snprintf(msg, sizeof msg,
                 "rank %d closed its runtime (%s), and rank %d went on to its %s: every rank "
                 "must run the same operations, and a rank that stops early ends the run",
                 x, r->peers[x].close_what, r->rank, mine);
        set_broken(r, msg);
        return pg__error(PG_ERROR_STATE, "%s", msg);
    }
    if (closing) /* a peer waiting for this rank learns it from the close notice */
        return PG_OK;
    for (int x = 0; r->nwaits && x < r->nranks; x++) {
        rpeer *q = &r->peers[x];
        if (!q->waits)
            continue;
        uint64_t m = q->waits - 1;
        if (q->sent >= m) { /* sent there (or later: the header tells): answered */
            q->waits = 0;
            r->nwaits--;
            continue;
        }
        if (r->seq > m || (r->seq == m && r->blocked)) {
            describe(&r->cur, r->seq, mine, sizeof mine);
            snprintf(msg, sizeof msg,
                     "the ranks' programs diverged: rank %d waits at its %s for a value from "
                     "rank %d, which %s its %s and sends it nothing there",
                     x, q->wait_what, r->rank, r->seq == m ? "receives at" : "went on to", mine);
            notice(r, x, CTRL_DIVERGED, r->seq, q->sent, msg);
            q->waits = 0;
            r->nwaits--;
            set_broken(r, msg);
            return pg__error(PG_ERROR_STATE, "%s", msg);
        }
    }
    return PG_OK;
}

static int progress(pg__runtime *rt, int waiting);

/* The start of a rank-visible operation (lock held): number it, complete sends, and take the
 * peers' notices now and then (each time while something is pending). */
static pg_status op_begin(pg__runtime *rt, const op_desc *d) {
    pg__ranks *r = rt->ranks;
    pthread_mutex_lock(&r->mu);
    r->seq++;
    r->cur = *d;
    pg_status st = PG_OK;
    if (r->nsends || !(r->seq & 15) || r->nwaits || r->broken || r->seq > r->min_closed) {
        sends_progress(r);
        ctrl_progress(r);
        st = peer_failures(r, -1, 0);
    }
    pthread_mutex_unlock(&r->mu);
    if (r->nx) /* messages that came let the work waiting for them go */
        progress(rt, 0);
    return st;
}

pg_status pg__ranks_open(pg__runtime *rt, int *local_rank, int *local_size) {
    rt->rank = 0;
    rt->nranks = 1;
    *local_rank = 0;
    *local_size = 1;
    if (rt->opt.ranks == PG__RANKS_OFF)
        return PG_OK;
    pg__net_place pl;
    pg__net_launcher(&pl);
    if (rt->opt.ranks == PG__RANKS_AUTO && pl.size <= 1)
        return PG_OK;
    if (!pg__net_available() && rt->opt.ranks == PG__RANKS_AUTO)
        return pg__error(PG_ERROR_UNSUPPORTED,
                         "this process was started as one of %d ranks (mpirun), but this polygpu "
                         "was built without MPI, so every rank would run the whole program "
                         "alone: rebuild with MPI (libopenmpi-dev), or set the option ranks=off "
                         "to run single-process anyway",
                         pl.size);
    pg__ranks *r = pg__calloc(1, sizeof *r);
    if (!r)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    int rank = 0, size = 1;
    pg_status st = pg__net_open(&r->net, &rank, &size);
    if (st) {
        pg__free(r);
        return pg__error_wrap(st, "starting the ranks (option ranks)");
    }
    if (size > PG_MAX_RANKS) {
        pg__net_close(r->net);
        pg__free(r);
        return pg__error(PG_ERROR_UNSUPPORTED, "%d ranks; polygpu runs on at most %d", size,
                         PG_MAX_RANKS);
    }
    if (size == 1) { /* mpirun -np 1: single-process, exactly as without mpirun */
        pg__net_close(r->net);
        pg__free(r);
        return PG_OK;
    }
    r->peers = pg__calloc((size_t)size, sizeof *r->peers);
    st = r->peers
             ? pg__net_irecv(r->net, &r->ctrl_in, sizeof r->ctrl_in, -1, TAG_CTRL, &r->ctrl_req)
             : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    if (st) {
        pg__free(r->peers);
        pg__net_close(r->net);
        pg__free(r);
        return st;
    }
    pthread_mutex_init(&r->mu, NULL);
    r->rank = rank;
    r->nranks = size;
    r->min_closed = UINT64_MAX;
    const char *tmo = getenv("PG_RANKS_TIMEOUT");
    double tmo_s = tmo && *tmo ? atof(tmo) : 0;
    r->timeout_ns = tmo_s > 0 && tmo_s < 1e9 ? (uint64_t)(tmo_s * 1e9) : 0;
    rt->ranks = r;
    rt->rank = rank;
    rt->nranks = size;
    if (pl.size == size) {
        *local_rank = pl.local_rank;
        *local_size = pl.local_size;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    atomic_store(&g_rank, rank);
    atomic_store(&g_size, size);
    atomic_store(&g_active, 1);
    pthread_mutex_lock(&reg_mu);
    r->next = reg_head;
    reg_head = r;
    pthread_mutex_unlock(&reg_mu);
    pthread_once(&once, register_exit); /* after MPI's own: ours runs first */
    return PG_OK;
}

/* The close protocol: tell every peer how many operations this rank ran and its last value
 * sent to it, wait for this rank's sends and for the peers' own notices, and end the job if
 * they stopped elsewhere or the ranks no longer agree (a rank that stopped early, or a
 * divergence: the others would wait for ever, or have failed). */
static void end_ranks(pg__ranks *r, const char *cause) {
    pthread_mutex_lock(&r->mu);
    if (r->ended) {
        pthread_mutex_unlock(&r->mu);
        return;
    }
    r->ended = 1;
    if (!pg__net_usable()) { /* the program finalised MPI itself: nobody to tell */
        pthread_mutex_unlock(&r->mu);
        return;
    }
    char why[2 * WHAT], last[WHAT];
    describe(&r->cur, r->seq, last, sizeof last);
    snprintf(why, sizeof why, "%s, after its %s", cause, last);
    /* Sends not posted yet (their values never came: the run went wrong, or the process is
     * exiting): each still sends its failure, so that no receiver waits for it. */
    for (int i = 0; i < r->nx; i++)
        if (r->xs[i]->send)
            (void)post_msg(r, r->xs[i], why, NULL);
    for (int x = 0; x < r->nranks; x++)
        if (x != r->rank)
            notice(r, x, CTRL_CLOSE, r->seq, r->peers[x].sent, why);
    r->seq++; /* the close is an operation: a peer waiting at it is answered by nothing */
    r->cur = (op_desc){OPK_CLOSE, 0, NULL, 0, 0, 0};
    r->blocked = 1;
    uint64_t t0 = pg__now_ns(), tb = 0;
    for (;;) {
        sends_progress(r);
        ctrl_progress(r);
        (void)peer_failures(r, -1, 1);
        pg__error_clear();
        int all = 1;
        for (int x = 0; x < r->nranks; x++)
            all &= x == r->rank || r->peers[x].closed != 0;
        if (all && !r->nsends)
            break;
        uint64_t now = pg__now_ns();
        if (r->broken && !tb)
            tb = now;
        if ((tb && now - tb > BROKEN_WAIT_NS) || (all && now - t0 > CLOSE_WAIT_NS))
            break;
        pthread_mutex_unlock(&r->mu);
        nanosleep(&(struct timespec){0, 200000}, NULL);
        pthread_mutex_lock(&r->mu);
    }
    r->blocked = 0;
    char msg[4 * WHAT + 200] = "";
    if (r->broken)
        snprintf(msg, sizeof msg, "%s", r->broken);
    for (int x = 0; !msg[0] && x < r->nranks; x++)
        if (x != r->rank && r->peers[x].closed && r->peers[x].closed - 1 != r->seq - 1)
            snprintf(msg, sizeof msg,
                     "rank %d closed its runtime (%s), rank %d (%s): every rank must run the "
                     "same operations",
                     x, r->peers[x].close_what, r->rank, why);
    if (msg[0])
        fatal(r->rank, r->nranks, msg, 1);
    pthread_mutex_unlock(&r->mu);
}

void pg__ranks_close(pg__runtime *rt) {
    pg__ranks *r = rt->ranks;
    if (!r)
        return;
    reg_remove(r);
    end_ranks(r, "pg_runtime_free");
    for (int i = 0; i < r->nx; i++) { /* the close's sync failed: what it left */
        if (r->xs[i]->req)
            pg__net_cancel(r->xs[i]->req);
        r->xs[i]->req = NULL;
        if (r->xs[i]->c->state == PG__OPEN)
            xfer_end(rt, r->xs[i], "the runtime closed");
        xfer_free(rt, r->xs[i]);
    }
    pg__free(r->xs);
    r->nx = 0;
    if (r->ctrl_req)
        pg__net_cancel(r->ctrl_req);
    if (r->nsends) {
        pg__log(rt, 0, /* always said: the run went wrong elsewhere */
                "ranks: %d message(s) to other ranks never completed (did a rank stop early?); "
                "their buffers are left to the process",
                r->nsends);
        r->sends = NULL; /* the buffers and requests stay allocated */
    } else {
        pg__net_close(r->net);
    }
    pthread_mutex_destroy(&r->mu);
    pg__free(r->sends);
    pg__free(r->peers);
    pg__free(r->broken);
    pg__free(r);
    rt->ranks = NULL;
}

/* Where p's current value comes from: its owner when current there, else the lowest rank that
 * holds it (one always does: the last writer's). */
static int source_of(const pg__runtime *rt, const pg__array *p) {
    uint64_t holders = all_ranks(rt) & ~p->rank_stale;
    if (holders >> p->owner & 1)
        return p->owner;
    return __builtin_ctzll(holders);
}

static void count(pg__runtime *rt, int peer, uint64_t bytes, int sent) {
    if (sent) {
        rt->stats.rank_messages_sent++;
        rt->stats.rank_bytes_sent += bytes;
        if (peer < PG_MAX_RANKS_STATS)
            rt->stats.rank_bytes_to[peer] += bytes;
    } else {
        rt->stats.rank_messages_received++;
        rt->stats.rank_bytes_received += bytes;
        if (peer < PG_MAX_RANKS_STATS)
            rt->stats.rank_bytes_from[peer] += bytes;
    }
}

/* The words of moving p for the current operation. */
static void transfer_what(const pg__ranks *r, const pg__array *p, char *buf, size_t cap) {
    char op[WHAT];
    describe(&r->cur, r->seq, op, sizeof op);
    snprintf(buf, cap, "%s, the value of array %llu elements %llu..%llu", op,
             (unsigned long long)p->id, (unsigned long long)p->off,
             (unsigned long long)(p->off + p->size));
}

/* ---- transfers in flight (issue 35). A transfer is an open host access in the DAG, ended by
 * progress rather than by the program: a receive is a host write of p that this rank's later
 * work on p depends on through the ordinary inference (a launch reading p is held back until
 * the message has come and is on the host; the script goes on); a send is a host read of p
 * whose message goes once p's writer is done and its value is on the host (a later writer of p
 * waits for the send's copy). Progress runs at every rank-visible operation and in every wait
 * of the runtime (pg__ranks_wait, through wait_host), so a rank that waits for anything moves
 * its messages on. Sends to one rank are posted in program order and receives posted at their
 * program points, on one tag, so messages still match in program order. */

/* p's state may change here (a receive replaces its value): first, this rank's earlier work on
 * p must know where it reads from — no reader held back (it would read the new value) and no
 * send that has not looked for p's value yet. Waits with progress. */
static int self_held(const pg__comp *c) { /* held back behind this thread's own mapping */
    const pg__comp *b = c->blocker;
    for (int i = 0; b && b->state == PG__OPEN && !b->holders_lost && i < b->nholders; i++)
        if (pthread_equal(b->holder[i].thread, pthread_self()))
            return 1;
    return 0;
}

static int held_back(const pg__comp *c, pg_status *st) {
    if (!c || c->state != PG__PENDING)
        return 0;
    if (self_held(c) && !*st)
        *st =
            pg__error(PG_ERROR_STATE,
                      "this would wait for array %llu, which this thread has mapped or is "
                      "accessing: unmap it (release the view) first",
                      c->blocker->nargs ? (unsigned long long)c->blocker->args[0].array->id : 0ULL);
    return 1;
}

/* 1 when p's state may change; *st set when it never will by waiting. */
static int settled(const pg__ranks *r, const pg__array *p, pg_status *st) {
    int held = held_back(p->hist.writer, st);
    for (int i = 0; i < p->hist.nreaders; i++)
        held |= held_back(p->hist.readers[i], st);
    for (int i = 0; !held && i < r->nx; i++)
        held = r->xs[i]->send && r->xs[i]->stage == 0 && r->xs[i]->p == p;
    return !held;
}

static pg_status xfer_add(pg__ranks *r, xfer *x) {
    if (r->nx == r->capx) {
        int cap = r->capx ? 2 * r->capx : 16;
        xfer **n = pg__realloc(r->xs, (size_t)cap * sizeof *n);
        if (!n)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        r->xs = n;
        r->capx = cap;
    }
    r->xs[r->nx++] = x;
    return PG_OK;
}

static void xfer_free(pg__runtime *rt, xfer *x) {
    if (x->c)
        pg__comp_unref(rt, x->c);
    if (x->wait)
        pg__comp_unref(rt, x->wait);
    if (x->p)
        pg__array_unref(x->p);
    pg__free(x->buf);
    pg__free(x->fail);
    pg__free(x->net_err);
    pg__free(x);
}

/* The open host access standing for a transfer of p (access IN: a send, OUT: a receive),
 * recorded in the DAG and in p's history. */
static pg_status xfer_comp(pg__runtime *rt, pg__array *p, pg_access access, pg__comp **out) {
    pg__carg arg = {p, access};
    pg__comp **ps = NULL;
    int n = 0;
    pg_status st = pg__dag_parents(rt, &arg, 1, &ps, &n, NULL, 0);
    if (st)
        return st;
    pg__comp *c = pg__comp_new(rt, access == PG_ACCESS_IN ? PG__HOST_READ : PG__HOST_WRITE);
    if (!c) {
        for (int i = 0; i < n; i++)
            pg__comp_unref(rt, ps[i]);
        pg__free(ps);
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    c->args = c->args_in;
    c->args[0] = arg;
    c->nargs = 1;
    pg__array_ref(p);
    c->parents = ps;
    c->nparents = n;
    st = pg__dag_record(rt, c, access == PG_ACCESS_IN ? "rank_send" : "rank_receive");
    if (!st && (st = pg__dag_commit(rt, c)) != PG_OK)
        pg__dag_record_drop(rt, c);
    if (st) {
        pg__comp_unref(rt, c);
        return st;
    }
    c->recorded = 1;
    c->state = PG__OPEN;
    c->timing.start_ns = pg__now_ns() - rt->epoch_ns;
    *out = c;
    return PG_OK;
}

/* The transfer's access ends: what waits for it may go (pg__exec_release, by the caller). */
static void xfer_end(pg__runtime *rt, xfer *x, const char *fail) {
    pg__comp *c = x->c;
    if (fail)
        pg__comp_fail(c, fail);
    c->timing.end_ns = pg__now_ns() - rt->epoch_ns;
    pg__dag_record_timing(rt, c);
    pg__comp_finish_host(rt, c);
}

/* This rank sends p's current value to rank dst: registered now, posted by progress once the
 * value is on the host (a staging copy the send owns, after the header). A value this rank
 * cannot read still sends a message (the failure status), so that the receiver reports it
 * instead of waiting for ever. */
static pg_status send_piece(pg__runtime *rt, pg__array *p, int dst) {
    pg__ranks *r = rt->ranks;
    xfer *x = pg__calloc(1, sizeof *x);
    if (!x)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    x->send = 1;
    x->peer = dst;
    x->seq = r->seq;
    x->digest = digest_of(&r->cur, p);
    transfer_what(r, p, x->what, sizeof x->what);
    pg_status st = xfer_comp(rt, p, PG_ACCESS_IN, &x->c);
    if (!st) {
        pg__array_ref(p);
        x->p = p;
        pthread_mutex_lock(&r->mu);
        st = xfer_add(r, x);
        if (!st)
            r->peers[dst].sent = r->seq; /* answered, as far as a waiting peer is concerned */
        pthread_mutex_unlock(&r->mu);
    }
    if (!st)
        count(rt, dst, p->nbytes, 1);
    if (st) {
        if (x->c)
            xfer_end(rt, x, pg_last_error());
        xfer_free(rt, x);
        return pg__error_wrap(st, "sending array %llu (elements %llu..%llu) to rank %d",
                              (unsigned long long)p->id, (unsigned long long)p->off,
                              (unsigned long long)(p->off + p->size), dst);
    }
    progress(rt, 0); /* its copy to the host goes behind its producer now, not later */
    return PG_OK;
}

/* Post send x's message (r->mu held): the header and the elements at data (p's size), or with
 * data NULL the header alone with the failure status. The error is set when it could not go. */
static pg_status post_msg(pg__ranks *r, xfer *x, const char *fail, const void *data) {
    size_t n = data ? x->p->nbytes : 0;
    char *buf = pg__malloc(sizeof(msg_hdr) + n);
    if (!buf)
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    msg_hdr *h = (msg_hdr *)buf;
    memset(h, 0, sizeof *h);
    h->status = data == NULL;
    h->seq = x->seq;
    h->digest = x->digest;
    scopy(h->what, sizeof h->what, x->what);
    if (data)
        memcpy(buf + sizeof *h, data, n);
    (void)fail;
    pg__net_req *req = NULL;
    pg_status st = sends_room(r);
    if (!st)
        st = pg__net_isend(r->net, buf, sizeof(msg_hdr) + n, x->peer, TAG_DATA, &req);
    if (st) {
        pg__free(buf);
        return st;
    }
    r->sends[r->nsends++] = (pg__rsend){req, buf};
    return PG_OK;
}

/* Post send x (r->mu held): p's value from its host copy, or the failure status. */
static void send_post(pg__runtime *rt, xfer *x, const char *fail) {
    pg__ranks *r = rt->ranks;
    pg_status st = post_msg(r, x, fail, fail ? NULL : pg__array_buf(x->p, 0));
    if (st && !fail) /* the failure still goes, if that much memory is left */
        st = post_msg(r, x, "out of host memory for the message", NULL);
    if (st) {
        pg__log(rt, 0, "ranks: sending %s to rank %d: %s", x->what, x->peer, pg_last_error());
        pg__error_clear();
        return;
    }
}

/* Move send x on (rt->mu held): 1 when its message is posted. held: the ranks an earlier send
 * of which is not posted yet (the next to them must wait its turn). */
static int send_step(pg__runtime *rt, xfer *x, uint64_t *held) {
    pg__ranks *r = rt->ranks;
    pg__comp *c = x->c;
    if (!x->fail && x->stage == 0) { /* p's writer placed: where its value will be is known */
        for (int i = 0; i < c->nparents; i++)
            if (c->parents[i]->state == PG__PENDING)
                goto wait;
        if (pg__issue_to_host(rt, c, x->p, &x->wait)) {
            x->fail = pg__strdup(pg_last_error());
            pg__error_clear();
        }
        x->stage = 1;
        if (x->wait && x->wait->state == PG__ISSUED && x->wait->event) {
            pthread_mutex_lock(&r->mu); /* the wait's reference keeps the event */
            x->ev = x->wait->event;
            pthread_mutex_unlock(&r->mu);
        }
    }
    if (!x->fail && x->wait) {
        if (!pg__comp_done(rt, x->wait))
            goto wait;
        if (x->wait->err) {
            char m[1536];
            snprintf(m, sizeof m, "array %llu has no valid value: %s", (unsigned long long)x->p->id,
                     x->wait->err);
            x->fail = pg__strdup(m);
        }
    }
    if (!x->fail)
        for (int i = 0; i < c->nparents; i++)
            if (!pg__comp_done(rt, c->parents[i]))
                goto wait;
    if (!x->fail && x->p->lost)
        x->fail = pg__strdup(x->p->lost);
    if (*held >> x->peer & 1)
        goto wait;
    pthread_mutex_lock(&r->mu);
    send_post(rt, x, x->fail ? x->fail : NULL);
    pthread_mutex_unlock(&r->mu);
    if (x->fail)
        pg__log(rt, 0, "ranks: rank %d needs array %llu (elements %llu..%llu) from this rank: %s",
                x->peer, (unsigned long long)x->p->id, (unsigned long long)x->p->off,
                (unsigned long long)(x->p->off + x->p->size), x->fail);
    xfer_end(rt, x, NULL); /* this rank's value is what it is: the send does not change it */
    return 1;
wait:
    *held |= bit(x->peer);
    return 0;
}

/* This rank receives p's current value from rank src: the receive is posted now into a
 * staging buffer, and p's host copy becomes the current value (made by the receive, an open
 * host write that this rank's later work on p waits for); progress writes it there once it
 * has come. A receive that fails leaves that failure as p's value here (the other ranks count
 * this rank as holding it, so a later use must report, not compute on a stale copy). */
static pg_status recv_piece(pg__runtime *rt, pg__array *p, int src) {
    pg__ranks *r = rt->ranks;
    pg_status st = PG_OK;
    pg__array_ref(p);
    while (!st && !settled(r, p, &st))
        st = pg__ranks_wait(rt);
    xfer *x = st ? NULL : pg__calloc(1, sizeof *x);
    if (!st && !x)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    void *host = NULL;
    if (!st) {
        x->peer = src;
        x->seq = r->seq;
        x->digest = digest_of(&r->cur, p);
        x->op = r->cur;
        transfer_what(r, p, x->what, sizeof x->what);
        x->p = p;
        pg__array_ref(p);
        x->bytes = sizeof(msg_hdr) + p->nbytes;
        x->buf = pg__malloc(x->bytes);
        st = x->buf ? pg__array_buffer(p, 0, NULL, &host)
                    : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    if (!st)
        st = xfer_comp(rt, p, PG_ACCESS_OUT, &x->c);
    if (!st) {
        pthread_mutex_lock(&r->mu);
        st = xfer_add(r, x);
        if (!st && (st = pg__net_irecv(r->net, x->buf, x->bytes, src, TAG_DATA, &x->req)))
            r->nx--;
        pthread_mutex_unlock(&r->mu);
    }
    if (!st) {
        pg__coh_write(rt, x->c, p, 0);
        pg__array_unref(p);
        count(rt, src, p->nbytes, 0); /* at the program point, as the send is */
        return PG_OK;
    }
    pg__error_wrap(st, "receiving array %llu (elements %llu..%llu) from rank %d",
                   (unsigned long long)p->id, (unsigned long long)p->off,
                   (unsigned long long)(p->off + p->size), src);
    if (x) {
        if (x->c) {
            pg__coh_write(rt, x->c, p, 0);
            xfer_end(rt, x, pg_last_error());
        }
        xfer_free(rt, x);
    }
    if (!p->lost)
        p->lost = pg__strdup(pg_last_error());
    pg__array_unref(p);
    return st;
}

/* Move receive x on (rt->mu held): 1 when it has ended (its value written, or failed). */
static int recv_step(pg__runtime *rt, xfer *x) {
    pg__ranks *r = rt->ranks;
    pthread_mutex_lock(&r->mu);
    int come = x->come;
    pthread_mutex_unlock(&r->mu);
    if (!come)
        return 0;
    pg__comp *c = x->c;
    char msg[4 * WHAT + 600] = "";
    if (x->fail) {
        snprintf(msg, sizeof msg, "%s", x->fail);
    } else {
        msg_hdr *h = (msg_hdr *)x->buf;
        h->what[sizeof h->what - 1] = 0;
        if (x->net_err || h->seq != x->seq || h->digest != x->digest) {
            snprintf(msg, sizeof msg,
                     "the ranks' programs diverged: rank %d at its %s expects it from rank %d, "
                     "which sent instead %s%s",
                     r->rank, x->what, x->peer, x->net_err ? "a message of another size: " : "its ",
                     x->net_err ? x->net_err : h->what);
            pthread_mutex_lock(&r->mu);
            notice(r, x->peer, CTRL_DIVERGED, r->seq, 0, msg);
            set_broken(r, msg);
            pthread_mutex_unlock(&r->mu);
        } else if (h->status) {
            snprintf(msg, sizeof msg,
                     "rank %d could not send its value (lost or failed there: see that rank's "
                     "error)",
                     x->peer);
        }
    }
    if (!msg[0]) {
        /* This rank's earlier readers of p's host copy (copies to a device) are done first. */
        for (int i = 0; i < c->nparents; i++)
            if (!pg__comp_done(rt, c->parents[i]))
                return 0;
        memcpy(pg__array_buf(x->p, 0), x->buf + sizeof(msg_hdr), x->p->nbytes);
        xfer_end(rt, x, NULL);
        return 1;
    }
    char full[sizeof msg + 200];
    snprintf(full, sizeof full, "receiving array %llu (elements %llu..%llu) from rank %d: %s",
             (unsigned long long)x->p->id, (unsigned long long)x->p->off,
             (unsigned long long)(x->p->off + x->p->size), x->peer, msg);
    xfer_end(rt, x, full);
    return 1;
}

/* Test the receives in flight (r->mu held): those whose message came, and those that will
 * never come (the ranks no longer agree, or the sender closed before sending it) are marked
 * come; 1 when any was. waiting: 1 from a wait, which also tells a silent sender where it
 * waits and observes PG_RANKS_TIMEOUT (the time counts from the first wait since the program
 * last went on); 0 at a program point (the program goes on: no wait counts); 2 neither. */
static int recvs_test(pg__ranks *r, int waiting) {
    int any = 0;
    uint64_t now = waiting == 1 ? pg__now_ns() : 0;
    for (int i = 0; i < r->nx; i++) {
        xfer *x = r->xs[i];
        if (x->send || x->come)
            continue;
        char msg[3 * WHAT + 400] = "";
        if (x->req) {
            int done = 0;
            pg_status st = pg__net_test(x->req, &done);
            if (st) {
                x->net_err = pg__strdup(pg_last_error());
                pg__error_clear();
            }
            if (st || done) {
                x->req = NULL;
                x->come = any = 1;
                continue;
            }
        }
        rpeer *q = &r->peers[x->peer];
        if (r->broken) {
            snprintf(msg, sizeof msg, "%s", r->broken);
        } else if (q->closed && q->closed_sent < x->seq) {
            snprintf(msg, sizeof msg,
                     "rank %d closed its runtime (%s), while rank %d waits at its %s for a value "
                     "from it: every rank must run the same operations, and a rank that stops "
                     "early ends the run",
                     x->peer, q->close_what, r->rank, x->what);
            set_broken(r, msg);
        } else if (waiting == 0) {
            x->waited_from = 0;
        } else if (waiting == 1) {
            if (!x->waited_from)
                x->waited_from = now;
            uint64_t waited = now - x->waited_from;
            if (r->timeout_ns && waited > r->timeout_ns) {
                snprintf(msg, sizeof msg,
                         "rank %d waits at its %s for a value from rank %d, which has sent "
                         "nothing for %.0f s (PG_RANKS_TIMEOUT) and said nothing of where it "
                         "is: it may run another program, or be stuck outside polygpu",
                         r->rank, x->what, x->peer, (double)waited / 1e9);
                notice(r, x->peer, CTRL_DIVERGED, x->seq, 0, msg);
                set_broken(r, msg);
            } else if (!x->noticed && waited > WAIT_NOTICE_NS) {
                char mine[WHAT];
                describe(&x->op, x->seq, mine, sizeof mine);
                notice(r, x->peer, CTRL_WAIT, x->seq, 0, mine);
                x->noticed = 1;
            }
        }
        if (msg[0]) {
            if (x->req)
                pg__net_cancel(x->req);
            x->req = NULL;
            x->fail = pg__strdup(msg);
            x->come = any = 1;
        }
    }
    return any;
}

/* Move every transfer on (rt->mu held): 1 when any ended. One thread at a time: issuing a copy
 * may drop the lock. */
static int progress(pg__runtime *rt, int waiting) {
    pg__ranks *r = rt->ranks;
    if (r->progressing)
        return 0;
    r->progressing = 1;
    pthread_mutex_lock(&r->mu);
    sends_progress(r);
    ctrl_progress(r);
    recvs_test(r, waiting ? 2 : 0);
    pthread_mutex_unlock(&r->mu);
    int moved = 0;
    uint64_t held = 0;
    for (int i = 0; i < r->nx;) {
        xfer *x = r->xs[i];
        if (!(x->send ? send_step(rt, x, &held) : recv_step(rt, x))) {
            i++;
            continue;
        }
        pthread_mutex_lock(&r->mu);
        memmove(&r->xs[i], &r->xs[i + 1], (size_t)(r->nx - i - 1) * sizeof *r->xs);
        r->nx--;
        pthread_mutex_unlock(&r->mu);
        xfer_free(rt, x);
        moved = 1;
    }
    r->progressing = 0;
    if (moved && pg__exec_release(rt) != PG_OK) /* each failure stays with its values */
        pg__error_clear();
    return moved;
}

typedef struct wait_ctx {
    pg__runtime *rt;
    pg__ranks *r;
    uint64_t t0, idle_since;
} wait_ctx;

/* A wait's poll with the runtime's lock dropped: done when a message came, a peer's notice
 * fails this rank, or (sends waiting for their values) after a moment. */
static pg_status wait_poll(void *ctx, int *done) {
    wait_ctx *w = ctx;
    pg__ranks *r = w->r;
    const pg__vclock_ops *vops;
    void *vctx;
    /* Simulated devices with host_clock=cpu count a thread's CPU time between backend calls as
     * host work: the polling of a wait is not (as the blocking receive, inside the transport,
     * was not), so its time since the last look does not count (leave marks the host's exit). */
    if (pg__vclock_get(&vops, &vctx))
        vops->leave(vctx);
    pthread_mutex_lock(&r->mu);
    sends_progress(r);
    ctrl_progress(r);
    *done = recvs_test(r, 1);
    pg_status st = peer_failures(r, -1, 0);
    if (st || r->broken)
        *done = 1;
    /* Simulated devices (a virtual clock, base/vclock.h) show a copy's end only through a host
     * wait when their host time is frozen (host_time=0), and count polling as host time when
     * not: a send's copy to the host not yet seen done is waited for as a host wait, which moves
     * the virtual clock to its end (as the blocking copy before asynchronous transfers did). It
     * cannot wait on a message: the copy was issued after its writer, so it needs only device
     * work issued. Before the watch below, which a copy already done but held behind this one
     * (sends to a peer go in order) would end at once, every time. */
    for (int i = 0; !*done && i < r->nx; i++)
        if (r->xs[i]->ev && pg__vclock_get(&vops, &vctx) &&
            !w->rt->ops->event_done(w->rt->b, r->xs[i]->ev)) {
            if (w->rt->ops->event_wait(w->rt->b, r->xs[i]->ev))
                pg__error_clear(); /* the copy failed: the send reports it */
            *done = 1;
        }
    /* Nothing else to do: blocked until a message comes, which on simulated devices moves the
     * clock to its arrival (net/sim_transport.c); at program points a message not yet arrived
     * in virtual time stays unreceived. */
    if (!*done && pg__vclock_get(&vops, &vctx)) {
        pg__vclock_set_blocked(1);
        sends_progress(r);
        *done = recvs_test(r, 1);
        pg__vclock_set_blocked(0);
    }
    /* A send's value on the host (its device's copy done): the event is watched here, without
     * the runtime's lock, so that the message goes at once. Not a send held behind an older one
     * to the same peer (sends to a peer go in program order): its copy, done, would end every
     * poll at once, and the wait would spin until the older copy ends. */
    for (int i = 0; !*done && i < r->nx; i++) {
        const xfer *x = r->xs[i];
        if (!x->ev || !w->rt->ops->event_done(w->rt->b, x->ev))
            continue;
        int behind = 0;
        for (int j = 0; j < i && !behind; j++)
            behind = r->xs[j]->send && r->xs[j]->peer == x->peer;
        *done = !behind;
    }
    pthread_mutex_unlock(&r->mu);
    uint64_t now = pg__now_ns();
    if (!*done) /* now and then the lock is taken again to look at the rest */
        *done = now - w->t0 > 1000000u;
    /* A message is usually microseconds away, but spinning takes a core from the CPU devices'
     * workers and the other ranks: a wait that found nothing for 2 ms sleeps between looks. */
    if (!*done && w->idle_since && now - w->idle_since > 2000000u)
        nanosleep(&(struct timespec){0, 20000}, NULL);
    return st;
}

/* Once the ranks no longer agree, a wait fails with why (as every later operation does): the
 * transfers it waited for ended failed, and the value error they leave would hide the cause. */
static pg_status broken_error(pg__ranks *r) {
    pg_status st = PG_OK;
    pthread_mutex_lock(&r->mu);
    if (r->broken)
        st = pg__error(PG_ERROR_STATE, "%s", r->broken);
    pthread_mutex_unlock(&r->mu);
    return st;
}

pg_status pg__ranks_wait(pg__runtime *rt) {
    pg__ranks *r = rt->ranks;
    if (!r->nx)
        return pg__wait_cond(rt);
    if (progress(rt, 1)) {
        r->idle_since = 0;
        return broken_error(r); /* something ended: the caller looks again */
    }
    if (!r->idle_since)
        r->idle_since = pg__now_ns();
    wait_ctx w = {rt, r, pg__now_ns(), r->idle_since};
    pthread_mutex_lock(&r->mu);
    r->blocked++;
    pthread_mutex_unlock(&r->mu);
    pg_status st = pg__wait_poll(rt, wait_poll, &w);
    pthread_mutex_lock(&r->mu);
    r->blocked--;
    pthread_mutex_unlock(&r->mu);
    progress(rt, 1);
    return st ? st : broken_error(r);
}

int pg__ranks_busy(const pg__runtime *rt) {
    return rt->ranks && rt->ranks->nx;
}

pg_status pg__ranks_quiesce(pg__runtime *rt) {
    pg_status st = PG_OK;
    while (!st && rt->ranks->nx)
        st = pg__ranks_wait(rt);
    return st;
}

/* p's current value goes from rank src to rank dst (src holds it, dst does not): the two ranks
 * act, every rank records dst as holding it. */
static pg_status transfer(pg__runtime *rt, pg__array *p, int src, int dst) {
    pg_status st = PG_OK;
    if (rt->rank == src)
        st = send_piece(rt, p, dst);
    else if (rt->rank == dst)
        st = recv_piece(rt, p, src);
    p->rank_stale &= ~bit(dst);
    return st;
}

static void wrote(pg__runtime *rt, pg__array *p, int rank) {
    p->rank_stale = all_ranks(rt) & ~bit(rank);
    p->rank_version++;
}

pg_status pg__ranks_launch(pg__runtime *rt, pg__comp *c, int *here) {
    *here = 0;
    pg_status st = pg__comp_expand_pieces(rt, c); /* ownership and holders are per piece */
    if (st)
        return st;
    uint64_t owners = 0;
    int first_out = -1;
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].access & PG_ACCESS_OUT) {
            owners |= bit(c->args[i].array->owner);
            if (first_out < 0)
                first_out = i;
        }
    const pg__array *d0 = c->nargs ? c->args[first_out >= 0 ? first_out : 0].array : NULL;
    op_desc d = {
        OPK_LAUNCH,       0, c->kernel ? c->kernel->name : "?", d0 ? d0->id : 0, d0 ? d0->off : 0,
        d0 ? d0->size : 0};
    if ((st = op_begin(rt, &d)))
        return st;
    if (owners & (owners - 1)) {
        char list[512];
        size_t len = 0;
        for (int i = 0; i < c->nargs && len < sizeof list; i++) {
            const pg__array *p = c->args[i].array;
            if (c->args[i].access & PG_ACCESS_OUT)
                len += (size_t)snprintf(
                    list + len, sizeof list - len, "%sarray %llu elements %llu..%llu (rank %d)",
                    len ? ", " : "", (unsigned long long)p->id, (unsigned long long)p->off,
                    (unsigned long long)(p->off + p->size), p->owner);
        }
        return pg__error(PG_ERROR_ARGUMENT,
                         "kernel '%s' writes data of several owners: %s; a kernel runs on the "
                         "rank owning what it writes: split the call by views, or give what "
                         "it writes one owner (pg_array_owner_set)",
                         c->kernel->name, list);
    }
    /* Nothing written (a kernel for its side effects): its first array's owner, else rank 0. */
    int e = owners ? __builtin_ctzll(owners) : c->nargs ? c->args[0].array->owner : 0;
    for (int i = 0; i < c->nargs; i++) {
        pg__array *p = c->args[i].array;
        if (!(c->args[i].access & PG_ACCESS_IN))
            continue;
        if (p->rank_stale >> e & 1) {
            pg_status t = transfer(rt, p, source_of(rt, p), e);
            if (!st)
                st = t;
        } else if (e == rt->rank && p->owner != e) {
            rt->stats.rank_cache_hits++; /* a received copy, still current */
        }
    }
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].access & PG_ACCESS_OUT)
            wrote(rt, c->args[i].array, e);
    *here = e == rt->rank;
    if (st && *here) /* it will not run: what it writes has no value here until written again */
        pg__coh_outputs_failed(rt, c, pg_last_error());
    return st;
}

pg_status pg__ranks_host_piece(pg__runtime *rt, pg__array *p, pg_access access, int whole,
                               int *local) {
    *local = 1;
    op_desc d = {
        access & PG_ACCESS_OUT ? OPK_WRITE : OPK_READ, (int)access, NULL, p->id, p->off, p->size};
    pg_status st = op_begin(rt, &d);
    if (st)
        return st;
    if (access & PG_ACCESS_IN) { /* every rank reads: a broadcast, one message per rank lacking */
        int src = source_of(rt, p);
        for (uint64_t lack = p->rank_stale & all_ranks(rt); lack; lack &= lack - 1) {
            pg_status t = transfer(rt, p, src, __builtin_ctzll(lack));
            if (!st)
                st = t;
        }
    } else if (!whole && (p->rank_stale >> p->owner & 1)) {
        /* the owner writes part of p: it needs the rest of p's value */
        st = transfer(rt, p, source_of(rt, p), p->owner);
    }
    if (access & PG_ACCESS_OUT) {
        wrote(rt, p, p->owner);
        *local = rt->rank == p->owner;
    }
    /* A host write here changes p's state at once (pg__exec_host_begin; a map writes on every
     * rank): a send of p that has not looked for its value yet must first. */
    while (!st && (access & PG_ACCESS_OUT) && !settled(rt->ranks, p, &st))
        st = pg__ranks_wait(rt);
    return st;
}

void pg__ranks_gpu_spec(int local_rank, int local_size, int ndev, char *buf, size_t cap) {
    buf[0] = 0;
    if (local_size <= 1 || ndev <= 0 || cap < 8)
        return;
    size_t len = 0;
    if (ndev < local_size) { /* ranks share GPUs, in turn */
        snprintf(buf, cap, "%d", local_rank % ndev);
        return;
    }
    for (int g = local_rank; g < ndev && len + 12 < cap; g += local_size)
        len += (size_t)snprintf(buf + len, cap - len, "%s%d", len ? "," : "", g);
}

/* ---- the public door */

pg_status pg_runtime_ranks(pg_runtime *h, int *rank, int *nranks) {
    pg__error_clear();
    if (!rank || !nranks)
        return pg__error(PG_ERROR_ARGUMENT, "pg_runtime_ranks: rank and nranks must not be NULL");
    pg__runtime *rt = pg__enter_runtime(h, "pg_runtime_ranks");
    if (!rt)
        return PG_ERROR_STATE;
    *rank = rt->rank;
    *nranks = rt->nranks;
    pg__leave(rt);
    return PG_OK;
}

pg_status pg_array_owner_set(pg_array *h, int owner) {
    pg__error_clear();
    pg__array *a = pg__enter_array(h, "pg_array_owner_set");
    if (!a)
        return PG_ERROR_STATE;
    pg__runtime *rt = a->rt;
    pg_status st = pg__graph_refuse(rt, "pg_array_owner_set", a);
    if (!st && rt->ranks) { /* an operation of every rank, numbered as the others */
        op_desc d = {OPK_OWNER, 0, NULL, a->id, a->off, a->size};
        st = op_begin(rt, &d);
    }
    if (!st && (owner < 0 || owner >= rt->nranks))
        st = pg__error(PG_ERROR_ARGUMENT,
                       "pg_array_owner_set: rank %d for array %llu; this run has %d rank(s), "
                       "0 to %d",
                       owner, (unsigned long long)a->id, rt->nranks, rt->nranks - 1);
    if (!st) {
        pg__array **ps;
        int n;
        pg__array_parts(a, &ps, &n);
        for (int i = 0; i < n; i++)
            ps[i]->owner = owner;
        if (a->kind == PG__A_ROOT)
            a->owner = owner; /* what pieces cut later start from */
    }
    pg__leave(rt);
    return st;
}

pg_status pg_array_owner(pg_array *h, int *owner) {
    pg__error_clear();
    if (!owner)
        return pg__error(PG_ERROR_ARGUMENT, "pg_array_owner: owner must not be NULL");
    pg__array *a = pg__enter_array(h, "pg_array_owner");
    if (!a)
        return PG_ERROR_STATE;
    pg__array **ps;
    int n;
    pg__array_parts(a, &ps, &n);
    *owner = ps[0]->owner;
    for (int i = 1; i < n; i++)
        if (ps[i]->owner != *owner)
            *owner = -1;
    pg__leave(a->rt);
    return PG_OK;
}

int pg_rank_block_owner(int i, int n, int nranks) {
    if (n <= 0 || nranks <= 1 || i < 0 || i >= n)
        return 0;
    return (int)((int64_t)i * nranks / n);
}
