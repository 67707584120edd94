/* test_split_shares.c: how a split launch's blocks are shared among devices
 * (policies/split_shares.c, decision 29): proportional to each device's throughput, contiguous,
 * adding up to the grid, a device too slow for one block left out, and the last split kept
 * while the throughputs say about the same (so data stays where the last launch wrote it). */
#include "check.h"
#include "policies/split_shares.h"

#include <math.h>

static uint64_t share(const uint64_t *lo, int i) {
    return lo[i + 1] - lo[i];
}

static void check_cover(const uint64_t *lo, int n, uint64_t nblocks) {
    CHECK(lo[0] == 0);
    CHECK(lo[n] == nblocks);
    for (int i = 0; i < n; i++)
        CHECK(lo[i + 1] >= lo[i]);
}

static void test_proportional(void) {
    uint64_t lo[5];
    double eq[4] = {1, 1, 1, 1};
    CHECK(pg__split_shares(1000, 4, eq, NULL, lo) == 0);
    check_cover(lo, 4, 1000);
    for (int i = 0; i < 4; i++)
        CHECK(share(lo, i) == 250);
    /* a GPU three times the other: 3/4 and 1/4 of the blocks */
    double w[2] = {3e9, 1e9};
    pg__split_shares(1000, 2, w, NULL, lo);
    check_cover(lo, 2, 1000);
    CHECK(share(lo, 0) == 750 && share(lo, 1) == 250);
    /* uneven division: each share within one block of its ideal, summing to the grid */
    double w3[3] = {1, 2, 4};
    pg__split_shares(100, 3, w3, NULL, lo);
    check_cover(lo, 3, 100);
    CHECK(llabs((long long)share(lo, 0) - 14) <= 1);
    CHECK(llabs((long long)share(lo, 1) - 29) <= 1);
    CHECK(llabs((long long)share(lo, 2) - 57) <= 1);
}

static void test_slow_device_gets_nothing(void) {
    uint64_t lo[3];
    double w[2] = {1e12, 1e6}; /* a GPU against a CPU device a million times slower */
    pg__split_shares(64, 2, w, NULL, lo);
    check_cover(lo, 2, 64);
    CHECK(share(lo, 0) == 64 && share(lo, 1) == 0);
}

static void test_bad_weights(void) {
    uint64_t lo[4];
    double w[3] = {NAN, 2, -1}; /* unknown: counted as the mean of the known (2) */
    pg__split_shares(90, 3, w, NULL, lo);
    check_cover(lo, 3, 90);
    CHECK(share(lo, 0) == 30 && share(lo, 1) == 30 && share(lo, 2) == 30);
    double none[2] = {0, 0};
    pg__split_shares(10, 2, none, NULL, lo);
    check_cover(lo, 2, 10);
    CHECK(share(lo, 0) == 5);
}

static void test_kept_while_close(void) {
    uint64_t lo[3], prev[3] = {0, 500, 1000};
    double w[2] = {1.1, 1.0}; /* 524 : 476, within 25% of the last split: kept */
    CHECK(pg__split_shares(1000, 2, w, prev, lo) == 1);
    CHECK(lo[1] == 500);
    double far[2] = {3, 1}; /* 750 : 250: device 1's share halves, recomputed */
    CHECK(pg__split_shares(1000, 2, far, prev, lo) == 0);
    CHECK(lo[1] == 750);
    uint64_t other[3] = {0, 50, 100}; /* a split of another grid is not kept */
    CHECK(pg__split_shares(1000, 2, w, other, lo) == 0);
    check_cover(lo, 2, 1000);
}

int main(void) {
    test_proportional();
    test_slow_device_gets_nothing();
    test_bad_weights();
    test_kept_while_close();
    CHECK_DONE();
}
