/* analysis/critical/replay.py's visit: each point of a replayed graph the latest of its
   sources' replayed times plus the constraints' kept gaps, in a topological order (Kahn's
   algorithm over the constraints grouped by source).  A point's value is the maximum over its
   constraints of (source's value + gap), each sum made once, so the order points are visited
   in does not change the result. */
#include <math.h>

#include "common.h"

/* out[p] for the n points (times[p]: measured) under the m constraints src[k] -> dst[k] with
   gap[k]: a point with no constraint keeps times[p]; every other point is the largest
   out[src] + gap over its constraints once all its sources are known; a point never reached
   (on a cycle, or after one) or whose value is not finite keeps times[p] and is counted.
   Returns that count (>= 0), ERR_NO_MEMORY or ERR_CANCELLED; every src and dst must be in
   [0, n) (the caller checks). */
EXPORT int64_t tfp_cp_replay_visit(const double *times, int64_t n, const int64_t *src,
                                   const int64_t *dst, const double *gap, int64_t m,
                                   double *out) {
    int64_t *first = (int64_t *)calloc((size_t)n + 1, sizeof(int64_t));
    int64_t *indeg = (int64_t *)calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    int64_t *to = (int64_t *)malloc((size_t)(m > 0 ? m : 1) * sizeof(int64_t));
    double *by = (double *)malloc((size_t)(m > 0 ? m : 1) * sizeof(double));
    int64_t *stack = (int64_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    int64_t rc = 0;
    if (!first || !indeg || !to || !by || !stack) {
        rc = ERR_NO_MEMORY;
        goto done;
    }
    for (int64_t k = 0; k < m; k++) {
        first[src[k] + 1]++;
        indeg[dst[k]]++;
    }
    for (int64_t p = 0; p < n; p++) first[p + 1] += first[p];
    for (int64_t k = 0; k < m; k++) { /* grouped by source (first[] moves on as it fills) */
        int64_t at = first[src[k]]++;
        to[at] = dst[k];
        by[at] = gap[k];
    }
    for (int64_t p = n; p > 0; p--) first[p] = first[p - 1]; /* back to each group's start */
    first[0] = 0;
    int64_t top = 0;
    for (int64_t p = 0; p < n; p++) {
        out[p] = indeg[p] > 0 ? -INFINITY : times[p];
        if (indeg[p] == 0) stack[top++] = p;
    }
    for (int64_t seen = 0; top > 0; seen++) {
        if (CANCEL_POLL(seen)) {
            rc = ERR_CANCELLED;
            goto done;
        }
        int64_t p = stack[--top];
        double v = out[p];
        for (int64_t e = first[p]; e < first[p + 1]; e++) {
            int64_t d = to[e];
            double c = v + by[e];
            if (c > out[d]) out[d] = c;
            if (--indeg[d] == 0) stack[top++] = d;
        }
    }
    for (int64_t p = 0; p < n; p++) {
        if (indeg[p] > 0 || !isfinite(out[p])) {
            out[p] = times[p];
            rc++;
        }
    }
done:
    free(first);
    free(indeg);
    free(to);
    free(by);
    free(stack);
    return rc;
}
