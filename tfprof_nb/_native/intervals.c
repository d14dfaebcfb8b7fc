/* Interval sets of the GPU-time analyses (analysis/intervals.py): half-open [begin, end)
   int64 intervals.  A set is sorted and disjoint; the kernels' results are also without
   empty or touching intervals (touching ones merge), so a set of times has one form. */
#include "common.h"


/* boundary k of a sorted, disjoint set: begin of interval k/2 (k even) or its end (k odd) */
#define BOUND(b, e, k) (((k) & 1) ? (e)[(k) >> 1] : (b)[(k) >> 1])

/* Where keep(in a, in b) holds: mode 0 the union, 1 the intersection, 2 a minus b.  a and b
   must be sorted and disjoint (each interval's begin at or after the previous end, each end
   at or after its begin: touching and empty intervals are allowed); out_b/out_e take
   na + nb intervals.  Returns the result's count, or ERR_UNSORTED when a or b is not
   sorted and disjoint (nothing meaningful is written then). */
EXPORT int64_t tfp_iv_combine(const int64_t *ab, const int64_t *ae, int64_t na,
                              const int64_t *bb, const int64_t *be, int64_t nb, int64_t mode,
                              int64_t *out_b, int64_t *out_e) {
    int64_t ia = 0, ib = 0, n_a = 2 * na, n_b = 2 * nb, n = 0, start = 0;
    int64_t last_a = INT64_MIN, last_b = INT64_MIN;
    int in_a = 0, in_b = 0, open = 0;
    while (ia < n_a || ib < n_b) {
        int64_t ta = ia < n_a ? BOUND(ab, ae, ia) : INT64_MAX;
        int64_t tb = ib < n_b ? BOUND(bb, be, ib) : INT64_MAX;
        int64_t t = ta < tb ? ta : tb;
        /* every boundary at t, in order (an end before a begin that touches it) */
        for (int64_t v; ia < n_a && (v = BOUND(ab, ae, ia)) <= t; ia++) {
            if (v < last_a) return ERR_UNSORTED;
            last_a = v;
            in_a = !(ia & 1);
        }
        for (int64_t v; ib < n_b && (v = BOUND(bb, be, ib)) <= t; ib++) {
            if (v < last_b) return ERR_UNSORTED;
            last_b = v;
            in_b = !(ib & 1);
        }
        int keep = mode == 0 ? (in_a | in_b) : mode == 1 ? (in_a & in_b) : (in_a & !in_b);
        if (keep && !open) {
            open = 1;
            start = t;
        } else if (!keep && open) {
            open = 0;
            out_b[n] = start;
            out_e[n] = t;
            n++;
        }
    }
    return n; /* (every interval ended: nothing is left open) */
}

/* The union of any n intervals [begin[i], end[i]) taken in the order ``order`` (int32 rows,
   begins non-decreasing along it; NULL: row order): empty ones dropped, overlapping and
   touching ones merged, into out_b/out_e (n at most).  Returns the count, or ERR_UNSORTED
   when the begins decrease along the order. */
EXPORT int64_t tfp_iv_union(const int64_t *begin, const int64_t *end, int64_t n,
                            const int32_t *order, int64_t *out_b, int64_t *out_e) {
    int64_t m = 0, last = INT64_MIN;
    for (int64_t k = 0; k < n; k++) {
        int64_t i = order ? order[k] : k;
        int64_t b = begin[i], e = end[i];
        if (b < last) return ERR_UNSORTED;
        last = b;
        if (e <= b) continue;
        if (m && b <= out_e[m - 1]) {
            if (e > out_e[m - 1]) out_e[m - 1] = e;
        } else {
            out_b[m] = b;
            out_e[m] = e;
            m++;
        }
    }
    return m;
}
