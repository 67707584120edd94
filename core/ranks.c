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
#include "core/internal.h"
#include "net/transport.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct pg__rsend {
    pg__net_req *req;
    void *buf; /* the staging copy it sends, freed when complete (NULL: a static byte) */
} pg__rsend;

struct pg__ranks {
    pg__net *net;
    int tag_max;
    pg__rsend *sends; /* sends in flight, and receives abandoned by an interrupted wait */
    int nsends, capsends;
};

static const char send_failed = 1; /* the message of a sender that could not read the value */

#define CLOSE_WAIT_NS (UINT64_C(10) * 1000000000u) /* a closing rank waits this long for sends */

static uint64_t all_ranks(const pg__runtime *rt) {
    return rt->nranks >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << rt->nranks) - 1;
}

static uint64_t bit(int rank) {
    return UINT64_C(1) << rank;
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
    r->tag_max = pg__net_tag_max(r->net);
    rt->ranks = r;
    rt->rank = rank;
    rt->nranks = size;
    if (pl.size == size) {
        *local_rank = pl.local_rank;
        *local_size = pl.local_size;
    }
    return PG_OK;
}

/* Complete what can be completed among the sends in flight; wait: until none is left. */
static pg_status sends_poll(void *ctx, int *done) {
    pg__ranks *r = ctx;
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
    *done = r->nsends == 0;
    return PG_OK;
}

void pg__ranks_close(pg__runtime *rt) {
    pg__ranks *r = rt->ranks;
    if (!r)
        return;
    /* Every rank posts the receives matching these sends at the same points of its program,
     * so they complete, unless a rank stopped early (an error it did not survive): then, after
     * CLOSE_WAIT_NS, the buffers are left to the process (MPI may still read them). */
    int done = 0;
    uint64_t t0 = pg__now_ns();
    while (sends_poll(r, &done) == PG_OK && !done && pg__now_ns() - t0 < CLOSE_WAIT_NS)
        nanosleep(&(struct timespec){0, 100000}, NULL);
    if (!done) {
        pg__log(rt, 0, /* always said: the run went wrong elsewhere */
                "ranks: %d message(s) to other ranks never completed (did a rank stop early?); "
                "their buffers are left to the process",
                r->nsends);
        r->sends = NULL; /* the buffers and requests stay allocated */
    } else {
        pg__net_close(r->net);
    }
    pg__free(r->sends);
    pg__free(r);
    rt->ranks = NULL;
}

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

/* The tag of p's current value: from its array, its place in the array and its version. Two
 * ranks post their messages in the same order, so the tag only has to tell apart messages that
 * could be in flight together between two ranks. */
static int tag_of(const pg__ranks *r, const pg__array *p) {
    uint64_t h = p->id * UINT64_C(0x9E3779B97F4A7C15) ^ p->off * UINT64_C(0xC2B2AE3D27D4EB4F);
    h ^= p->rank_version + (h >> 29);
    return (int)(h % ((uint64_t)r->tag_max + 1));
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

/* This rank sends p's current value to rank dst: read on the host into a staging copy, which
 * the send owns. A value this rank cannot read still sends a message (the failure byte), so
 * that the receiver reports it instead of waiting for ever. */
static pg_status send_piece(pg__runtime *rt, pg__array *p, int dst) {
    pg__ranks *r = rt->ranks;
    int tag = tag_of(r, p);
    pg_status st = sends_room(r);
    if (st)
        return st;
    char *buf = pg__malloc(p->nbytes + 1);
    pg_status rst = buf ? PG_OK : pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__array_ref(p);
    if (!rst && !(rst = pg__exec_host_begin(rt, p, PG_ACCESS_IN))) {
        memcpy(buf + 1, pg__array_buf(p, 0), p->nbytes);
        buf[0] = 0;
        rst = pg__exec_host_end(rt, p);
    }
    pg__array_unref(p);
    char why[512] = "";
    if (rst) {
        snprintf(why, sizeof why, "%s", pg_last_error());
        pg__free(buf);
        buf = NULL;
    }
    pg__net_req *req = NULL;
    st = buf ? pg__net_isend(r->net, buf, p->nbytes + 1, dst, tag, &req)
             : pg__net_isend(r->net, &send_failed, 1, dst, tag, &req);
    if (st) {
        pg__free(buf);
        return pg__error_wrap(st, "sending array %llu (elements %llu..%llu) to rank %d",
                              (unsigned long long)p->id, (unsigned long long)p->off,
                              (unsigned long long)(p->off + p->size), dst);
    }
    r->sends[r->nsends++] = (pg__rsend){req, buf};
    if (rst)
        return pg__error(rst, "rank %d needs array %llu (elements %llu..%llu) from this rank: %s",
                         dst, (unsigned long long)p->id, (unsigned long long)p->off,
                         (unsigned long long)(p->off + p->size), why);
    count(rt, dst, p->nbytes, 1);
    return PG_OK;
}

static pg_status req_poll(void *ctx, int *done) {
    return pg__net_test(ctx, done);
}

/* This rank receives p's current value from rank src and writes it on the host: p's local
 * coherence then brings it wherever it is used. A receive that fails leaves p lost here (the
 * other ranks count this rank as holding it, so a later use must report, not compute on a
 * stale copy). */
static pg_status recv_piece(pg__runtime *rt, pg__array *p, int src) {
    pg__ranks *r = rt->ranks;
    int tag = tag_of(r, p);
    pg_status st = sends_room(r);
    char *buf = st ? NULL : pg__malloc(p->nbytes + 1);
    if (!st && !buf)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "out of host memory");
    pg__net_req *req = NULL;
    if (!st)
        st = pg__net_irecv(r->net, buf, p->nbytes + 1, src, tag, &req);
    if (!st) {
        st = pg__wait_poll(rt, req_poll, req);
        if (st == PG_ERROR_TIMEOUT || st == PG_ERROR_INTERRUPTED) {
            /* still in flight: the buffer goes when the message has come */
            r->sends[r->nsends++] = (pg__rsend){req, buf};
            buf = NULL;
        }
    }
    if (!st && buf[0])
        st = pg__error(PG_ERROR_DEVICE,
                       "rank %d could not send its value (lost or failed there: see that rank's "
                       "error)",
                       src);
    if (!st) {
        pg__array_ref(p);
        st = pg__exec_host_begin(rt, p, PG_ACCESS_OUT);
        if (!st) {
            memcpy(pg__array_buf(p, 0), buf + 1, p->nbytes);
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
    int done;
    (void)sends_poll(rt->ranks, &done);
    pg_status st = pg__comp_expand_pieces(rt, c); /* ownership and holders are per piece */
    if (st)
        return st;
    uint64_t owners = 0;
    for (int i = 0; i < c->nargs; i++)
        if (c->args[i].access & PG_ACCESS_OUT)
            owners |= bit(c->args[i].array->owner);
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
    int done;
    (void)sends_poll(rt->ranks, &done);
    pg_status st = PG_OK;
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
