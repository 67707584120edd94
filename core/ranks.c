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
 * Why no deadlock: every send is nonblocking from a copy (a rank never waits for its own send),
 * and a rank waits only for a message that the sender posts at the same program point; the
 * sender reaches that point after its own earlier receives, each posted at an earlier point,
 * so by induction over program points every awaited message is sent.
 *
 * A message is one status byte (0: the value follows; 1: the sender could not read it, its
 * value is lost or failed there) and the piece's elements. Values travel through host memory
 * for now: the sender reads the piece on the host (waiting for its producer), the receiver
 * writes it there and the usual coherence brings it to the device that needs it. */
#include "core/ranks.h"
#include "core/array.h"
#include "core/coherence.h"
#include "core/exec.h"
#include "core/graph.h"
#include "core/handle.h"
#include "core/pieces.h"
#include "core/util.h"
#include "core/waits.h"
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

typedef struct rpeer {
    uint64_t sent;        /* this rank's last operation that sent this peer a value */
    uint64_t waits;       /* the peer's CTRL_WAIT: its operation + 1 (0: none) */
    uint64_t closed;      /* the peer's CTRL_CLOSE: its operations + 1 (0: open) */
    uint64_t closed_sent; /* ...and its last operation that sent this rank a value */
    int discard;          /* messages from it that an interrupted receive gave up */
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
    int blocked;           /* waiting in a receive (of operation seq) or in the close */
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

/* This rank sends p's current value to rank dst: read on the host into a staging copy, which
 * the send owns, after the header. A value this rank cannot read still sends a message (the
 * failure status), so that the receiver reports it instead of waiting for ever. */
static pg_status send_piece(pg__runtime *rt, pg__array *p, int dst) {
    pg__ranks *r = rt->ranks;
    char *buf = pg__malloc(sizeof(msg_hdr) + p->nbytes);
    pg_status rst = buf ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__array_ref(p);
    if (!rst && !(rst = pg__exec_host_begin(rt, p, PG_ACCESS_IN))) {
        memcpy(buf + sizeof(msg_hdr), pg__array_buf(p, 0), p->nbytes);
        rst = pg__exec_host_end(rt, p);
    }
    pg__array_unref(p);
    char why[512] = "";
    if (rst) {
        snprintf(why, sizeof why, "%s", pg_last_error());
        pg__free(buf);
        buf = pg__malloc(sizeof(msg_hdr));
        if (!buf)
            return pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    }
    msg_hdr *h = (msg_hdr *)buf;
    memset(h, 0, sizeof *h);
    h->status = rst != PG_OK;
    h->seq = r->seq;
    h->digest = digest_of(&r->cur, p);
    transfer_what(r, p, h->what, sizeof h->what);
    pthread_mutex_lock(&r->mu);
    pg__net_req *req = NULL;
    pg_status st = sends_room(r);
    if (!st)
        st = pg__net_isend(r->net, buf, sizeof(msg_hdr) + (rst ? 0 : p->nbytes), dst, TAG_DATA,
                           &req);
    if (!st) {
        r->sends[r->nsends++] = (pg__rsend){req, buf};
        r->peers[dst].sent = r->seq;
    }
    pthread_mutex_unlock(&r->mu);
    if (st) {
        pg__free(buf);
        return pg__error_wrap(st, "sending array %llu (elements %llu..%llu) to rank %d",
                              (unsigned long long)p->id, (unsigned long long)p->off,
                              (unsigned long long)(p->off + p->size), dst);
    }
    if (rst)
        return pg__error(rst, "rank %d needs array %llu (elements %llu..%llu) from this rank: %s",
                         dst, (unsigned long long)p->id, (unsigned long long)p->off,
                         (unsigned long long)(p->off + p->size), why);
    count(rt, dst, p->nbytes, 1);
    return PG_OK;
}

typedef struct recv_wait {
    pg__ranks *r;
    int src, noticed;
    size_t bytes;
    uint64_t t0;
    char *buf;        /* the message, once matched */
    pg__net_req *req; /* its receive in flight */
} recv_wait;

/* A receive's wait: match the next message from src (one an interrupted receive gave up is
 * received into a buffer of its own and dropped), then wait for its bytes; fails when the
 * peers say it will never come. The runtime's lock is not held: a large message may take the
 * sender's progress. */
static pg_status recv_poll(void *ctx, int *done) {
    recv_wait *w = ctx;
    pg__ranks *r = w->r;
    pthread_mutex_lock(&r->mu);
    sends_progress(r);
    ctrl_progress(r);
    pg_status st = PG_OK;
    int found = 0;
    while (!w->req && !st) {
        pg__net_msg *m = NULL;
        if ((st = pg__net_improbe(r->net, w->src, TAG_DATA, &found, &w->bytes, &m)) || !found)
            break;
        int drop = r->peers[w->src].discard > 0;
        char *buf = pg__malloc(w->bytes > sizeof(msg_hdr) ? w->bytes : sizeof(msg_hdr));
        pg__net_req *req = NULL;
        st = buf ? sends_room(r) : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
        if (!st)
            st = pg__net_imrecv(m, buf, w->bytes, &req);
        else
            (void)pg__net_imrecv(m, NULL, 0, &req), req = NULL; /* received into nothing */
        if (st) {
            pg__free(buf);
            break;
        }
        if (drop) { /* freed when it has come, as a send's staging copy is */
            r->peers[w->src].discard--;
            r->sends[r->nsends++] = (pg__rsend){req, buf};
            continue;
        }
        w->buf = buf;
        w->req = req;
    }
    int complete = 0;
    if (!st && w->req) {
        st = pg__net_test(w->req, &complete);
        if (st || complete)
            w->req = NULL;
        *done = complete;
        pthread_mutex_unlock(&r->mu);
        return st;
    }
    if (!st)
        st = peer_failures(r, w->src, 0);
    uint64_t waited = pg__now_ns() - w->t0;
    if (!st && r->timeout_ns && waited > r->timeout_ns) {
        char mine[WHAT], msg[3 * WHAT + 200];
        describe(&r->cur, r->seq, mine, sizeof mine);
        snprintf(msg, sizeof msg,
                 "rank %d waits at its %s for a value from rank %d, which has sent nothing for "
                 "%.0f s (PG_RANKS_TIMEOUT) and said nothing of where it is: it may run another "
                 "program, or be stuck outside polygpu",
                 r->rank, mine, w->src, (double)waited / 1e9);
        notice(r, w->src, CTRL_DIVERGED, r->seq, 0, msg);
        set_broken(r, msg);
        st = pg__error(PG_ERROR_TIMEOUT, "%s", msg);
    }
    if (!st && !w->noticed && waited > WAIT_NOTICE_NS) {
        char mine[WHAT];
        describe(&r->cur, r->seq, mine, sizeof mine);
        notice(r, w->src, CTRL_WAIT, r->seq, 0, mine);
        w->noticed = 1;
    }
    pthread_mutex_unlock(&r->mu);
    *done = 0;
    return st;
}

/* This rank receives p's current value from rank src and writes it on the host: p's local
 * coherence then brings it wherever it is used. A receive that fails leaves p lost here (the
 * other ranks count this rank as holding it, so a later use must report, not compute on a
 * stale copy). */
static pg_status recv_piece(pg__runtime *rt, pg__array *p, int src) {
    pg__ranks *r = rt->ranks;
    recv_wait w = {r, src, 0, 0, pg__now_ns(), NULL, NULL};
    pthread_mutex_lock(&r->mu);
    r->blocked = 1;
    pthread_mutex_unlock(&r->mu);
    pg_status st = pg__wait_poll(rt, recv_poll, &w);
    pthread_mutex_lock(&r->mu);
    r->blocked = 0;
    char *buf = w.buf;
    if (w.req) { /* interrupted with the message on its way: it goes when it has come */
        if (sends_room(r) == PG_OK)
            r->sends[r->nsends++] = (pg__rsend){w.req, buf};
        buf = NULL; /* (out of memory: the buffer stays with MPI) */
    } else if (!buf && (st == PG_ERROR_TIMEOUT || st == PG_ERROR_INTERRUPTED)) {
        r->peers[src].discard++; /* its message, when it comes, is not this rank's next one */
    }
    if (!st) {
        msg_hdr *h = (msg_hdr *)buf;
        h->what[sizeof h->what - 1] = 0;
        if (w.bytes < sizeof *h || h->seq != r->seq || h->digest != digest_of(&r->cur, p) ||
            (!h->status && w.bytes != sizeof *h + p->nbytes)) {
            char mine[TWHAT], msg[4 * WHAT];
            transfer_what(r, p, mine, sizeof mine);
            snprintf(msg, sizeof msg,
                     "the ranks' programs diverged: rank %d at its %s expects it from rank %d, "
                     "which sent instead its %s",
                     r->rank, mine, src,
                     w.bytes < sizeof *h ? "(a message of no polygpu)" : h->what);
            notice(r, src, CTRL_DIVERGED, r->seq, 0, msg);
            set_broken(r, msg);
            st = pg__error(PG_ERROR_STATE, "%s", msg);
        } else if (h->status) {
            st = pg__error(PG_ERROR_DEVICE,
                           "rank %d could not send its value (lost or failed there: see that "
                           "rank's error)",
                           src);
        }
    }
    pthread_mutex_unlock(&r->mu);
    if (!st) {
        pg__array_ref(p);
        st = pg__exec_host_begin(rt, p, PG_ACCESS_OUT);
        if (!st) {
            memcpy(pg__array_buf(p, 0), buf + sizeof(msg_hdr), p->nbytes);
            st = pg__exec_host_end(rt, p);
        }
        pg__array_unref(p);
    }
    pg__free(buf);
    if (!st) {
        count(rt, src, p->nbytes, 0);
        return PG_OK;
    }
    pg__error_wrap(st, "receiving array %llu (elements %llu..%llu) from rank %d",
                   (unsigned long long)p->id, (unsigned long long)p->off,
                   (unsigned long long)(p->off + p->size), src);
    if (!p->lost)
        p->lost = pg__strdup(pg_last_error());
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
