/* split_shares.c: blocks of a split launch shared among devices by their throughput. */
#include "policies/split_shares.h"

#include <math.h>

static int usable(double w) {
    return isfinite(w) && w > 0;
}

int pg__split_shares(uint64_t nblocks, int n, const double *weight, const uint64_t *prev,
                     uint64_t *lo) {
    if (n < 1)
        return 0;
    double sum = 0, mean = 0;
    int good = 0;
    for (int i = 0; i < n; i++)
        if (usable(weight[i])) {
            mean += weight[i];
            good++;
        }
    mean = good ? mean / good : 1;
    for (int i = 0; i < n; i++)
        sum += usable(weight[i]) ? weight[i] : mean;
    /* Cumulative rounding: the bounds are round(nblocks * prefix / sum), so the shares add up to
     * nblocks exactly and each is within one block of its ideal. */
    double acc = 0;
    lo[0] = 0;
    for (int i = 0; i < n; i++) {
        acc += usable(weight[i]) ? weight[i] : mean;
        uint64_t b = i + 1 == n ? nblocks : (uint64_t)llround((double)nblocks * (acc / sum));
        lo[i + 1] = b < lo[i] ? lo[i] : b > nblocks ? nblocks : b;
    }
    if (!prev || prev[0] != 0 || prev[n] != nblocks)
        return 0;
    for (int i = 0; i < n; i++) {
        if (prev[i + 1] < prev[i])
            return 0;
        double want = (double)(lo[i + 1] - lo[i]), had = (double)(prev[i + 1] - prev[i]);
        if (fabs(had - want) > PG__SPLIT_KEEP * (want > had ? want : had) + 1)
            return 0;
    }
    for (int i = 0; i <= n; i++)
        lo[i] = prev[i];
    return 1;
}
