/* device_policies.c: the built-in device policies (GrCUDA's, plus min-transfer-time and
 * min-finish-time). Each reads the view only; its private state is a rotation counter that
 * breaks ties. */
#include "policies/builtin.h"
#include "base/alloc.h"

#include <float.h>
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

static const pg__builtin_policy builtins[] = {
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
