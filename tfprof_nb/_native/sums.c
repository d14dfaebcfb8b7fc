/* Sums of a float64 column per group as pandas' groupby adds them (its group_sum): each
   group's rows in row order, Kahan-compensated, NaN skipped; so the same floats as a
   groupby's sums, without pandas' hashing of the group keys. */
#include "common.h"

/* sum[g] (and its compensation comp[g]) over the n rows of each group g = group[i] in
   [0, n_groups); returns 0, -2 for a group outside it, or ERR_CANCELLED. */
EXPORT int64_t tfp_group_sums(const int64_t *group, const double *value, int64_t n,
                              int64_t n_groups, double *sum, double *comp) {
    for (int64_t g = 0; g < n_groups; g++) sum[g] = comp[g] = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int64_t g = group[i];
        if (g < 0 || g >= n_groups) return -2;
        double v = value[i];
        if (v != v) continue;
        double y = v - comp[g];
        double t = sum[g] + y;
        comp[g] = t - sum[g] - y;
        if (comp[g] != comp[g]) comp[g] = 0.0; /* (an infinity: kept, as pandas keeps it) */
        sum[g] = t;
    }
    return 0;
}
