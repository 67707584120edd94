/* device_policies.c: the built-in device policies (GrCUDA's, plus min-transfer-time and
 * min-finish-time). Each reads the view only; its private state is a rotation counter that
 * breaks ties. */
#include "policies/builtin.h"
#include "base/alloc.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

typedef struct rotation {
    unsigned next;
} rotation;

static void *create(int ndevices) {
    (void)ndevices;
    return pg__calloc(1, sizeof(rotation));
}

static void destroy(void *state) {
    pg__free(state);
}

/* Among the devices in `among` whose score is within a relative epsilon of the best, prefer
 * fewer busy streams, then rotate so that equal devices share the work. */
static int pick(rotation *r, const pg_policy_view *v, uint32_t among, const double *score) {
    double best = DBL_MAX;
    for (int d = 0; d < v->ndevices; d++)
        if ((among >> d & 1) && score[d] < best)
            best = score[d];
    double tol = best * 1e-9 + 1e-12;
    int least_busy = 1 << 30;
    for (int d = 0; d < v->ndevices; d++)
        if ((among >> d & 1) && score[d] <= best + tol && v->devices[d].busy_streams < least_busy)
            least_busy = v->devices[d].busy_streams;
    for (int i = 0; i < v->ndevices; i++) {
        int d = (int)((r->next + (unsigned)i) % (unsigned)v->ndevices);
        if ((among >> d & 1) && score[d] <= best + tol &&
            v->devices[d].busy_streams == least_busy) {
            r->next = (unsigned)d + 1;
            return d;
        }
    }
    return 0; /* unreachable: among is never empty */
}

/* The data-blind choice: the least loaded candidates, in rotation. */
static int data_blind(rotation *r, const pg_policy_view *v) {
    double same[PG_MAX_DEVICES] = {0};
    return pick(r, v, v->candidates, same);
}

static int round_robin(void *state, const pg_policy_view *v) {
    rotation *r = state;
    for (int i = 0; i < v->ndevices; i++) {
        int d = (int)((r->next + (unsigned)i) % (unsigned)v->ndevices);
        if (v->candidates >> d & 1) {
            r->next = (unsigned)d + 1;
            return d;
        }
    }
    return 0;
}

static int stream_aware(void *state, const pg_policy_view *v) {
    double score[PG_MAX_DEVICES];
    for (int d = 0; d < v->ndevices; d++)
        score[d] = v->devices[d].busy_streams;
    return pick(state, v, v->candidates, score);
}

/* Bytes of the inputs already on each device, and the candidates that hold enough of them to
 * count: at least the exploration threshold's fraction of the input bytes (and some bytes).
 * A device under it counts as holding nothing; with none over it, locality is not worth
 * pursuing and the data-aware policies choose data-blind, exploring (GrCUDA's dataThreshold). */
static uint32_t holders(const pg_policy_view *v, double *held_bytes, double *total_bytes) {
    double total = 0;
    for (int a = 0; a < v->narrays; a++)
        if (v->arrays[a].access & PG_ACCESS_IN)
            total += (double)v->arrays[a].nbytes;
    uint32_t enough = 0;
    for (int d = 0; d < v->ndevices; d++) {
        held_bytes[d] = 0;
        for (int a = 0; a < v->narrays; a++)
            if ((v->arrays[a].access & PG_ACCESS_IN) && (v->arrays[a].valid >> (d + 1) & 1))
                held_bytes[d] += (double)v->arrays[a].nbytes;
        if ((v->candidates >> d & 1) && held_bytes[d] > 0 &&
            held_bytes[d] >= v->exploration_threshold * total)
            enough |= 1u << d;
    }
    *total_bytes = total;
    return enough;
}

/* Among the holders, the one already holding the most input bytes. */
static int min_transfer_size(void *state, const pg_policy_view *v) {
    double h[PG_MAX_DEVICES], total, score[PG_MAX_DEVICES];
    uint32_t among = holders(v, h, &total);
    if (!among)
        return data_blind(state, v);
    for (int d = 0; d < v->ndevices; d++)
        score[d] = total - h[d]; /* bytes to copy */
    return pick(state, v, among, score);
}

/* Estimated time to bring every input not already there to device d; each array comes from its
 * slowest valid source (minmax, the paper's formula) or its fastest (min). */
static double transfer_time(const pg_policy_view *v, int d, int slowest) {
    int nloc = v->ndevices + 1, dst = d + 1;
    double t = 0;
    for (int a = 0; a < v->narrays; a++) {
        const pg_policy_array *pa = &v->arrays[a];
        if (!(pa->access & PG_ACCESS_IN) || (pa->valid >> dst & 1))
            continue;
        double bw = slowest ? DBL_MAX : 0;
        for (int s = 0; s < nloc; s++) {
            if (s == dst || !(pa->valid >> s & 1))
                continue;
            double b = v->bandwidth[s * nloc + dst];
            if (slowest ? b < bw : b > bw)
                bw = b;
        }
        if (bw <= 0 || bw == DBL_MAX)
            bw = v->bandwidth[dst]; /* no valid source named: as if it came from the host */
        t += (double)pa->nbytes / (bw * 1e9);
    }
    return t;
}

/* Among the holders, the one with the least estimated transfer time: the matrix ranks only
 * devices that hold enough data, so that slow links to a few small copies never decide where
 * data-blind work goes. */
static int by_transfer_time(void *state, const pg_policy_view *v, int slowest) {
    double h[PG_MAX_DEVICES], total, score[PG_MAX_DEVICES];
    uint32_t among = holders(v, h, &total);
    if (!among)
        return data_blind(state, v);
    for (int d = 0; d < v->ndevices; d++)
        score[d] = (among >> d & 1) ? transfer_time(v, d, slowest) : DBL_MAX;
    return pick(state, v, among, score);
}

static int minmax_transfer_time(void *state, const pg_policy_view *v) {
    return by_transfer_time(state, v, 1);
}

static int min_transfer_time(void *state, const pg_policy_view *v) {
    return by_transfer_time(state, v, 0);
}

/* HEFT / StarPU's dmda: the earliest predicted finish — the device's queued work, then the
 * inputs it lacks over their slowest valid links, then this computation's predicted duration
 * there. Until the duration is known on every candidate (performance models calibrate as work
 * runs), minmax-transfer-time's choice. */
static int min_finish_time(void *state, const pg_policy_view *v) {
    double score[PG_MAX_DEVICES];
    for (int d = 0; d < v->ndevices; d++)
        if ((v->candidates >> d & 1) && !(v->devices[d].predicted_s >= 0))
            return minmax_transfer_time(state, v);
    for (int d = 0; d < v->ndevices; d++)
        score[d] = (v->candidates >> d & 1)
                       ? v->devices[d].queued_s + transfer_time(v, d, 1) + v->devices[d].predicted_s
                       : DBL_MAX;
    return pick(state, v, v->candidates, score);
}

/* The fastest link into dst from a location in `from` (a location mask); 0 when none. */
static double fastest_in(const pg_policy_view *v, uint32_t from, int dst) {
    int nloc = v->ndevices + 1;
    double bw = 0;
    for (int s = 0; s < nloc; s++)
        if (s != dst && (from >> s & 1) && v->bandwidth[s * nloc + dst] > bw)
            bw = v->bandwidth[s * nloc + dst];
    return bw;
}

/* The fastest link from src to a location in `to`; 0 when none. */
static double fastest_out(const pg_policy_view *v, int src, uint32_t to) {
    int nloc = v->ndevices + 1;
    double bw = 0;
    for (int s = 0; s < nloc; s++)
        if (s != src && (to >> s & 1) && v->bandwidth[src * nloc + s] > bw)
            bw = v->bandwidth[src * nloc + s];
    return bw;
}

/* Whether an argument is state, data that load must not move: a value on some candidates but
 * not all that the computation writes (where it runs, that value then lives: a partition's rows,
 * an accumulator), or that it reads while no other unfinished call reads it (its own data: a
 * partition's rows or its block of a matrix, the previous step of a chain). An input that other
 * unfinished calls read is a shared input (the dataset of a parameter sweep): the device
 * holding it is busy with those calls, and a copy elsewhere serves the calls that follow. */
static int is_state(const pg_policy_view *v, const pg_policy_array *pa) {
    uint32_t cand = v->candidates << 1, on = pa->valid & ~1u;
    if (!on || (on & cand) == cand)
        return 0; /* on no device (host only, or lost), or on every candidate (fresh too) */
    return (pa->access & PG_ACCESS_OUT) || pa->readers == 0;
}

/* Whether state is most of what the computation touches (its inputs and the state it writes):
 * then load must not move it. A little state beside inputs that must be copied anyway (MUL's
 * 64-byte result rows beside the matrix rows the host rewrote) does not pin it: that made
 * all of MUL's products follow its shared vector to one device. */
static int has_state(const pg_policy_view *v) {
    double state = 0, total = 0;
    for (int a = 0; a < v->narrays; a++) {
        const pg_policy_array *pa = &v->arrays[a];
        int s = is_state(v, pa);
        if (s)
            state += (double)pa->nbytes;
        if (s || (pa->access & PG_ACCESS_IN))
            total += (double)pa->nbytes;
    }
    return state > 0 && 2 * state >= total;
}

/* Seconds of data movement if the computation runs on device d: each input d lacks comes from
 * its fastest valid source (as coherence copies it, core/coherence.c); each written array whose
 * value is on other devices only must later go back to one of them, where the rest of its work
 * is (counted only with `state`). */
static double move_time(const pg_policy_view *v, int d, int state) {
    int dst = d + 1;
    double t = 0;
    for (int a = 0; a < v->narrays; a++) {
        const pg_policy_array *pa = &v->arrays[a];
        if (pa->valid >> dst & 1)
            continue;
        if (pa->access & PG_ACCESS_IN) {
            double bw = fastest_in(v, pa->valid, dst);
            if (bw <= 0)
                bw = v->bandwidth[dst]; /* no valid source named: as if from the host */
            t += (double)pa->nbytes / (bw * 1e9);
        }
        if (state && (pa->access & PG_ACCESS_OUT) && is_state(v, pa)) {
            double bw = fastest_out(v, dst, pa->valid & ~1u);
            if (bw > 0)
                t += (double)pa->nbytes / (bw * 1e9);
        }
    }
    return t;
}

static int less_by(double a, double b, double tol) {
    return a < b - (fabs(b) * 1e-9 + 1e-15 + tol);
}

static int less(double a, double b) {
    return less_by(a, b, 0);
}

/* Finish times closer than this fraction of the call's own estimate are ties: the cold
 * estimate is an order of magnitude, not a measurement, and a copy of a few hundred bytes must
 * not decide where a call goes (MUL's products all followed its 1 KB vector to one device). */
#define FINISH_TIE 0.1

/* Earliest finish (StarPU's dmda, HEFT's earliest finish time, without models to start from):
 * for each candidate, when it would finish this computation — its backlog (the estimated
 * durations of its issued, unfinished work), then the copies of the inputs it lacks, then this
 * computation's estimated duration there — and the earliest wins; ties go to the device
 * holding most of the input bytes, then to the one with the fewest busy streams, then in
 * rotation. Eight independent calls reading one array thus spread: a device that holds the
 * array but has k calls queued loses to one that would copy it and start now, once one call
 * outlasts the copy.
 * A computation whose bytes are mostly state (has_state) is placed by data first: the device
 * where the copies in and the write-back are least, the earliest finish breaking only ties. Load is
 * transient and data placement is not: moving a partition's rows to a device that looks idle
 * for a moment costs their copies every round after (its neighbours' halos cross devices, and
 * the next imbalance moves it again), and a chain that writes its accumulator stays with it. */
static int earliest_finish(void *state, const pg_policy_view *v) {
    rotation *r = state;
    /* A call that reads nothing (zeroing a partition's rows, an initialisation) has no data to
     * weigh and its output no consumer yet: GrCUDA's data-blind choice (fewest busy streams,
     * in rotation) keeps it in step with the rotation its partition's other calls follow. By
     * its queue it went to whichever device was idle, away from its partition: CG's first
     * iteration zeroed 4 of 16 rows on the wrong GPU, and the recorded iteration replayed the
     * copies every iteration (simulated 2 x H200: 5% slower). */
    int reads = 0;
    for (int a = 0; a < v->narrays; a++)
        reads |= v->arrays[a].access & PG_ACCESS_IN;
    if (!reads)
        return data_blind(r, v);
    int st = has_state(v);
    double move[PG_MAX_DEVICES], finish[PG_MAX_DEVICES], held[PG_MAX_DEVICES], input = 0;
    double tie = DBL_MAX;
    int best = -1;
    for (int a = 0; a < v->narrays; a++)
        if (v->arrays[a].access & PG_ACCESS_IN)
            input += (double)v->arrays[a].nbytes;
    for (int d = 0; d < v->ndevices; d++) {
        if (!(v->candidates >> d & 1))
            continue;
        move[d] = move_time(v, d, st);
        finish[d] = v->devices[d].backlog_s + move_time(v, d, 0) + v->devices[d].estimated_s;
        if (FINISH_TIE * v->devices[d].estimated_s < tie)
            tie = FINISH_TIE * v->devices[d].estimated_s;
        held[d] = 0;
        for (int a = 0; a < v->narrays; a++)
            if ((v->arrays[a].access & PG_ACCESS_IN) && (v->arrays[a].valid >> (d + 1) & 1))
                held[d] += (double)v->arrays[a].nbytes;
        /* Locality as GrCUDA's exploration threshold counts it: under its share of the input
         * bytes, a device holds nothing worth staying for. */
        if (held[d] < v->exploration_threshold * input)
            held[d] = 0;
    }
    /* Lexicographic: (state: move), finish, -held, busy streams; the rotation among equals. */
    for (int i = 0; i < v->ndevices; i++) {
        int d = (int)((r->next + (unsigned)i) % (unsigned)v->ndevices);
        if (!(v->candidates >> d & 1))
            continue;
        if (best < 0) {
            best = d;
            continue;
        }
        int better;
        if (st && (less(move[d], move[best]) || less(move[best], move[d])))
            better = less(move[d], move[best]);
        else if (less_by(finish[d], finish[best], tie) || less_by(finish[best], finish[d], tie))
            better = less_by(finish[d], finish[best], tie);
        else if (held[d] != held[best])
            better = held[d] > held[best];
        else
            better = v->devices[d].busy_streams < v->devices[best].busy_streams;
        if (better)
            best = d;
    }
    r->next = (unsigned)best + 1;
    return best;
}

static const pg__builtin_policy builtins[] = {
    {"earliest-finish", {create, earliest_finish, destroy}},
    {"round-robin", {create, round_robin, destroy}},
    {"stream-aware", {create, stream_aware, destroy}},
    {"min-transfer-size", {create, min_transfer_size, destroy}},
    {"minmax-transfer-time", {create, minmax_transfer_time, destroy}},
    {"min-transfer-time", {create, min_transfer_time, destroy}},
    {"min-finish-time", {create, min_finish_time, destroy}},
    {NULL, {NULL, NULL, NULL}},
};

const pg__builtin_policy *pg__builtin_policies(void) {
    return builtins;
}
