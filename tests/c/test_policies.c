/* test_policies.c: each built-in device policy's choice on a given bandwidth matrix and data
 * placement, the exploration threshold, candidates, and registration of a user policy. */
#include "check.h"
#include "devices/interconnect.h"
#include "policies/builtin.h"

#include <string.h>

static const pg_device_policy *policy(const char *name) {
    for (const pg__builtin_policy *b = pg__builtin_policies(); b->name; b++)
        if (!strcmp(b->name, name))
            return &b->ops;
    return NULL;
}

static int choose(const char *name, const pg_policy_view *v) {
    const pg_device_policy *p = policy(name);
    void *st = p->create(v->ndevices);
    int d = p->choose(st, v);
    p->destroy(st);
    return d;
}

#define NDEV 4
#define NLOC (NDEV + 1)

static double bw[NLOC * NLOC];
static pg_policy_device devs[NDEV];

static void uniform(double host, double peer) {
    for (int s = 0; s < NLOC; s++)
        for (int d = 0; d < NLOC; d++)
            bw[s * NLOC + d] = s == d ? 1e9 : (s == 0 || d == 0) ? host : peer;
    for (int d = 0; d < NDEV; d++) {
        devs[d].id = d;
        devs[d].busy_streams = 0;
    }
}

static pg_policy_view view(pg_policy_array *arrays, int n) {
    pg_policy_view v = {NDEV, devs, n, arrays, bw, 0.1, (1u << NDEV) - 1};
    return v;
}

#define ON(dev) (1u << ((dev) + 1))
#define HOST 1u

int main(void) {
    uniform(10, 100);

    /* Round-robin rotates over candidates, skipping those not allowed. */
    {
        pg_policy_view v = view(NULL, 0);
        const pg_device_policy *p = policy("round-robin");
        void *st = p->create(NDEV);
        int seq[6];
        for (int i = 0; i < 6; i++)
            seq[i] = p->choose(st, &v);
        CHECK(seq[0] == 0 && seq[1] == 1 && seq[2] == 2 && seq[3] == 3 && seq[4] == 0);
        v.candidates = (1u << 1) | (1u << 3);
        int a = p->choose(st, &v), b = p->choose(st, &v), c = p->choose(st, &v);
        CHECK((a == 1 || a == 3) && b != a && (b == 1 || b == 3) && c == a);
        p->destroy(st);
    }

    /* Stream-aware: the device with the fewest busy streams. */
    {
        devs[0].busy_streams = 3;
        devs[1].busy_streams = 2;
        devs[2].busy_streams = 0;
        devs[3].busy_streams = 1;
        pg_policy_view v = view(NULL, 0);
        CHECK(choose("stream-aware", &v) == 2);
        v.candidates = (1u << 0) | (1u << 1);
        CHECK(choose("stream-aware", &v) == 1);
        uniform(10, 100);
    }

    /* min-transfer-size: the device already holding most of the input bytes. */
    {
        pg_policy_array arr[3] = {
            {1000, HOST | ON(1), PG_ACCESS_IN, 0},
            {5000, ON(2), PG_ACCESS_IN, 0},
            {9000, HOST, PG_ACCESS_OUT, 0}, /* output only: never copied, never counted */
        };
        pg_policy_view v = view(arr, 3);
        CHECK(choose("min-transfer-size", &v) == 2);
        arr[0].nbytes = 8000;
        CHECK(choose("min-transfer-size", &v) == 1);
        /* Exploration threshold: a device holding under 10% counts as holding nothing, so
         * all devices tie and the busy-stream tie break decides. */
        pg_policy_array small[2] = {{50, ON(3), PG_ACCESS_IN, 0}, {1000, HOST, PG_ACCESS_IN, 0}};
        v = view(small, 2);
        devs[3].busy_streams = 1;
        CHECK(choose("min-transfer-size", &v) == 0);
        v.exploration_threshold = 0.0; /* without it, device 3's 50 bytes win */
        CHECK(choose("min-transfer-size", &v) == 3);
        devs[3].busy_streams = 0;
    }

    /* minmax-transfer-time: the link matrix decides, not only the byte count. */
    {
        /* Array A (4 MB) is on devices 0 and 1. Device 2 and 3 would copy it. Make links into
         * device 0 from device 1 irrelevant (A is local on 0 and 1: zero cost), so 0 and 1 tie;
         * then slow down device 0's busy state to see the tie broken. */
        pg_policy_array arr[1] = {{4000000, ON(0) | ON(1), PG_ACCESS_IN, 0}};
        pg_policy_view v = view(arr, 1);
        int d = choose("minmax-transfer-time", &v);
        CHECK(d == 0 || d == 1);
        devs[0].busy_streams = 2;
        CHECK(choose("minmax-transfer-time", &v) == 1);
        devs[0].busy_streams = 0;

        /* Two arrays, on devices 1 and 2; the 1<->3 link is slow, 2<->3 fast. Device 3 must
         * copy both; devices 1 and 2 copy one each. Make 1 -> 2 slow: device 2 would pull
         * array X from 1 over a slow link; device 1 pulls Y from 2 over a fast one. */
        uniform(10, 100);
        bw[2 * NLOC + 3] = 1; /* device 1 -> device 2: 1 GB/s */
        pg_policy_array two[2] = {{1000000, ON(1), PG_ACCESS_IN, 0},
                                  {1000000, ON(2), PG_ACCESS_IN, 0}};
        v = view(two, 2);
        CHECK(choose("minmax-transfer-time", &v) == 1);
        /* min-transfer-size sees equal bytes on 1 and 2 (tie, rotation picks first = 1) but
         * min-transfer-time and minmax agree here; flip the slow link and both move to 2. */
        bw[2 * NLOC + 3] = 100;
        bw[3 * NLOC + 2] = 1; /* device 2 -> device 1 slow */
        CHECK(choose("minmax-transfer-time", &v) == 2);
        CHECK(choose("min-transfer-time", &v) == 2);

        /* minmax uses the slowest valid source, min the fastest: X is on the host (slow link
         * to every device, 10 GB/s) and on device 0 (fast to 1, 2, 3). Device 0 holds it.
         * With a second array Y only on the host, both policies prefer device 0. */
        uniform(10, 100);
        pg_policy_array xy[2] = {{8000000, HOST | ON(0), PG_ACCESS_IN, 0},
                                 {1000, HOST, PG_ACCESS_IN, 0}};
        v = view(xy, 2);
        CHECK(choose("minmax-transfer-time", &v) == 0);
        CHECK(choose("min-transfer-time", &v) == 0);
        /* Exploration threshold: under 10% held counts as nothing. */
        pg_policy_array tiny[2] = {{100, ON(3), PG_ACCESS_IN, 0}, {100000, HOST, PG_ACCESS_IN, 0}};
        v = view(tiny, 2);
        v.exploration_threshold = 0.1;
        devs[3].busy_streams = 1;
        CHECK(choose("minmax-transfer-time", &v) != 3);
        v.exploration_threshold = 0.0;
        CHECK(choose("minmax-transfer-time", &v) == 3);
        devs[3].busy_streams = 0;

        /* Inputs only on the host: no device holds any, so the choice is data-blind and
         * successive computations spread over every device, even when one host link measures
         * 2x faster than the others (the paper's rule: a transfer-time ranking of devices that
         * hold nothing would send every such computation to one device). */
        pg__interconnect ic;
        pg__interconnect_default(&ic, NDEV, 10, 100);
        ic.bw[0 * NLOC + 3] = 20;
        pg__interconnect_equalize(&ic, 0.10, bw);
        pg_policy_array h[1] = {{1 << 20, HOST, PG_ACCESS_IN, 0}};
        v = view(h, 1);
        const char *timed[] = {"minmax-transfer-time", "min-transfer-time"};
        for (int p = 0; p < 2; p++) {
            const pg_device_policy *pol = policy(timed[p]);
            void *st = pol->create(NDEV);
            unsigned used = 0;
            for (int i = 0; i < NDEV; i++)
                used |= 1u << pol->choose(st, &v);
            CHECK(used == (1u << NDEV) - 1);
            pol->destroy(st);
        }

        /* Between devices that hold enough, links measured a few percent apart (as a real
         * matrix is) tie: the runtime gives policies the matrix equalized
         * (devices/interconnect.h), so the work alternates instead of following the
         * fastest-measured link. A link 2x faster still wins. A is on device 0, B on 1. */
        pg__interconnect_default(&ic, NDEV, 10, 100);
        ic.bw[1 * NLOC + 2] = 97;  /* device 0 -> 1: device 1 pulls A */
        ic.bw[2 * NLOC + 1] = 103; /* device 1 -> 0: device 0 pulls B */
        pg_policy_array ab[2] = {{1 << 20, ON(0), PG_ACCESS_IN, 0},
                                 {1 << 20, ON(1), PG_ACCESS_IN, 0}};
        v = view(ab, 2);
        for (int p = 0; p < 2; p++) {
            const pg_device_policy *pol = policy(timed[p]);
            void *st = pol->create(NDEV);
            unsigned used = 0;
            pg__interconnect_equalize(&ic, 0.10, bw);
            for (int i = 0; i < 2; i++)
                used |= 1u << pol->choose(st, &v);
            CHECK(used == 3u);
            ic.bw[1 * NLOC + 2] = 200;
            pg__interconnect_equalize(&ic, 0.10, bw);
            for (int i = 0; i < 2; i++)
                CHECK(pol->choose(st, &v) == 1);
            ic.bw[1 * NLOC + 2] = 97;
            pol->destroy(st);
        }

        /* Devices that hold enough are the only candidates: device 0 holds half the input
         * bytes but its host link is slow; device 1 holds nothing and would copy A over a
         * fast peer link and B from the host sooner. The threshold keeps the work on device 0
         * (a device holding neither input is never chosen over one that holds enough). */
        uniform(10, 100);
        bw[0 * NLOC + 1] = 1;
        pg_policy_array slow_host[2] = {{1 << 20, ON(0), PG_ACCESS_IN, 0},
                                        {1 << 20, HOST, PG_ACCESS_IN, 0}};
        v = view(slow_host, 2);
        CHECK(choose("minmax-transfer-time", &v) == 0);
        CHECK(choose("min-transfer-time", &v) == 0);
        CHECK(choose("min-transfer-size", &v) == 0);
        uniform(10, 100);
    }

    /* earliest-finish: backlog + copies of what a device lacks + the call's estimate. */
    {
        uniform(10, 100);
        for (int d = 0; d < NDEV; d++)
            devs[d].estimated_s = 1e-4, devs[d].backlog_s = 0;
        /* A shared input x (1 MB, from the host, on device 0 too: 10 us to copy from device
         * 0; another unfinished call reads it) and a fresh output (valid everywhere). Idle
         * devices: device 0, which holds x. */
        pg_policy_array arr[2] = {
            {1000000, HOST | ON(0), PG_ACCESS_IN, 1},
            {1000000, HOST | ON(0) | ON(1) | ON(2) | ON(3), PG_ACCESS_OUT, 0}};
        pg_policy_view v = view(arr, 2);
        CHECK(choose("earliest-finish", &v) == 0);
        /* Device 0's queue outlasts the copy: another device; the data-aware policies do not
         * look at the queue. */
        devs[0].backlog_s = 1e-4;
        int d = choose("earliest-finish", &v);
        CHECK(d != 0);
        CHECK(choose("minmax-transfer-time", &v) == 0);
        CHECK(choose("min-transfer-size", &v) == 0);
        /* With no other call reading x, x is this call's own data: it stays with it. */
        arr[0].readers = 0;
        CHECK(choose("earliest-finish", &v) == 0);
        arr[0].readers = 1;
        /* ... and successive calls, each adding its estimate to its device's backlog, spread
         * over all four devices. */
        const pg_device_policy *ef = policy("earliest-finish");
        void *st = ef->create(NDEV);
        devs[0].backlog_s = 0;
        unsigned used = 0;
        for (int i = 0; i < NDEV; i++) {
            int c = ef->choose(st, &v);
            used |= 1u << c;
            devs[c].backlog_s += devs[c].estimated_s;
            arr[0].valid |= ON(c); /* x was copied there */
        }
        CHECK(used == (1u << NDEV) - 1);
        ef->destroy(st);
        for (int i = 0; i < NDEV; i++)
            devs[i].backlog_s = 0;
        /* Ties to locality: device 0's backlog equals the copy elsewhere (1 MB at 100 GB/s). */
        arr[0].valid = HOST | ON(0);
        devs[0].backlog_s = 1e-5;
        for (int i = 0; i < 3; i++)
            CHECK(choose("earliest-finish", &v) == 0);
        /* A faster device (a shorter estimate) wins when that outweighs the copy. */
        devs[0].backlog_s = 0;
        devs[2].estimated_s = 1e-5;
        CHECK(choose("earliest-finish", &v) == 2);
        devs[2].estimated_s = 1e-4;

        /* State does not move for load. An output whose value is on device 2 (a partition's
         * rows): device 2 however long its queue. */
        devs[2].backlog_s = 1.0;
        pg_policy_array part[2] = {{1000000, HOST | ON(2), PG_ACCESS_IN, 0},
                                   {1000000, ON(2), PG_ACCESS_OUT, 0}};
        v = view(part, 2);
        CHECK(choose("earliest-finish", &v) == 2);
        /* An input made on device 2 that no other call reads (a chain's last step): the same. */
        pg_policy_array chain[2] = {
            {1000000, ON(2), PG_ACCESS_IN, 0},
            {1000000, HOST | ON(0) | ON(1) | ON(2) | ON(3), PG_ACCESS_OUT, 0}};
        v = view(chain, 2);
        CHECK(choose("earliest-finish", &v) == 2);
        /* Once another call reads it, it is a shared input: the queue counts again. */
        chain[0].readers = 1;
        CHECK(choose("earliest-finish", &v) != 2);
        /* Among devices with the same data to move, the earliest finish: the output is on
         * devices 1 and 2 (each would copy the input, which is on the host only). */
        pg_policy_array two_homes[2] = {{1000000, HOST, PG_ACCESS_IN, 0},
                                        {1000000, ON(1) | ON(2), PG_ACCESS_OUT, 0}};
        v = view(two_homes, 2);
        devs[1].backlog_s = 0.5; /* device 2's: 1 s */
        CHECK(choose("earliest-finish", &v) == 1);
        devs[1].backlog_s = 2.0;
        CHECK(choose("earliest-finish", &v) == 2);
        devs[1].backlog_s = devs[2].backlog_s = 0;

        /* A little state does not pin a call: MUL's product writes 64 bytes of its rows (on
         * device 1) beside 16 KB of matrix rows from the host and a 1 KB vector on device 1.
         * Device 1 busy: elsewhere. Idle everywhere: the vector's copy is under a tenth of the
         * call's estimate and under the exploration threshold of the input, so the calls
         * rotate instead of all following the vector. */
        pg_policy_array mul[3] = {{64, ON(1), PG_ACCESS_OUT, 0},
                                  {16384, HOST, PG_ACCESS_IN, 0},
                                  {1024, HOST | ON(1), PG_ACCESS_IN, 1}};
        v = view(mul, 3);
        devs[1].backlog_s = 1e-4;
        CHECK(choose("earliest-finish", &v) != 1);
        devs[1].backlog_s = 0;
        st = ef->create(NDEV);
        used = 0;
        for (int i = 0; i < NDEV; i++)
            used |= 1u << ef->choose(st, &v);
        CHECK(used == (1u << NDEV) - 1);
        ef->destroy(st);
        /* When the rows are most of the bytes, they pin it: a 1 MB output on device 1. */
        mul[0].nbytes = 1 << 20;
        devs[1].backlog_s = 1.0;
        CHECK(choose("earliest-finish", &v) == 1);
        devs[1].backlog_s = 0;

        /* A call that reads nothing goes as GrCUDA's data-blind choice: the fewest busy
         * streams, in rotation, whatever the queues (CG's zeroing of each partition's rows
         * then stays in step with its products). */
        pg_policy_array zero[1] = {{1024, HOST | ON(0) | ON(1) | ON(2) | ON(3), PG_ACCESS_OUT, 0}};
        v = view(zero, 1);
        devs[2].backlog_s = 1.0;
        devs[0].busy_streams = 1;
        st = ef->create(NDEV);
        int z0 = ef->choose(st, &v), z1 = ef->choose(st, &v), z2 = ef->choose(st, &v);
        CHECK(z0 == 1 && z1 == 2 && z2 == 3);
        ef->destroy(st);
        devs[2].backlog_s = 0;
        devs[0].busy_streams = 0;
        for (int d2 = 0; d2 < NDEV; d2++)
            devs[d2].estimated_s = 0;
    }

    /* Candidates restrict every policy. */
    {
        pg_policy_array arr[1] = {{1000000, ON(0), PG_ACCESS_IN, 0}};
        pg_policy_view v = view(arr, 1);
        v.candidates = 1u << 2;
        const char *names[] = {"round-robin",          "stream-aware",      "min-transfer-size",
                               "minmax-transfer-time", "min-transfer-time", "earliest-finish"};
        for (int i = 0; i < 6; i++)
            CHECK(choose(names[i], &v) == 2);
    }

    /* User policies: registration, bad registrations, built-ins protected. */
    {
        pg_device_policy mine = {NULL, NULL, NULL};
        CHECK_STATUS(pg_policy_register("mine", &mine), PG_ERROR_ARGUMENT);
        CHECK(strstr(pg_last_error(), "choose") != NULL);
        mine.choose = NULL;
        pg_device_policy rr = *policy("round-robin");
        CHECK_STATUS(pg_policy_register("round-robin", &rr), PG_ERROR_ARGUMENT);
        CHECK_STATUS(pg_policy_register("", &rr), PG_ERROR_ARGUMENT);
        CHECK_OK(pg_policy_register("my-rr", &rr));
        CHECK_OK(pg_policy_register("my-rr", &rr)); /* re-registering a user policy replaces it */
    }
    CHECK_DONE();
}
