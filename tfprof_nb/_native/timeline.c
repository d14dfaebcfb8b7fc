/* The trace viewer's level of detail, answered by the kernel: which blocks of a time window
   to draw at a given resolution.

   The timeline's events are sorted by (track, nesting depth, start); each (track, depth)
   segment holds events that do not overlap, so the first one in view is found by binary
   search.  Events at least min_px wide are kept alone; narrower neighbours falling within
   min_px of the block before them are merged into it (one block per pixel column at most),
   as Perfetto's mipmaps and xprof's resolution filter do. */
#include "common.h"

static int64_t lower_bound(const double *start, int64_t lo, int64_t hi, double t) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (start[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Segment s covers rows seg_lo[s]..seg_hi[s].  Writes at most cap blocks: b_start, b_end
   (us), b_first (row of the block's first event), b_count (events merged), and seg_off
   (nseg + 1): the blocks of segment s are seg_off[s]..seg_off[s+1].  Returns the number of
   blocks of the window (more than cap: only seg_off is complete; call again with room). */
EXPORT int64_t tfp_tl_window(const double *start, const float *dur, const int64_t *seg_lo,
                             const int64_t *seg_hi, int64_t nseg, double t0, double t1,
                             double px_per_us, double min_px, int64_t cap, double *b_start,
                             double *b_end, int64_t *b_first, int64_t *b_count,
                             int64_t *seg_off) {
    const double min_us = min_px / px_per_us;
    int64_t n = 0;
    for (int64_t s = 0; s < nseg; s++) {
        seg_off[s] = n;
        int64_t lo = seg_lo[s], hi = seg_hi[s];
        int64_t i = lower_bound(start, lo, hi, t0);
        if (i > lo && start[i - 1] + (double)dur[i - 1] > t0) i -= 1; /* reaches into view */
        int open = 0;           /* the last block holds small events and may take more */
        double reach = -1e300;  /* the last block's end, at least min_us after its start */
        for (; i < hi; i++) {
            const double a = start[i];
            if (a > t1) break;
            const double e = a + (double)dur[i];
            const int small = (double)dur[i] < min_us;
            if (open && small && a <= reach + min_us) {
                if (n <= cap) {
                    if (e > b_end[n - 1]) b_end[n - 1] = e;
                    b_count[n - 1] += 1;
                }
                if (e > reach) reach = e;
                continue;
            }
            if (n < cap) {
                b_start[n] = a;
                b_end[n] = e;
                b_first[n] = i;
                b_count[n] = 1;
            }
            n += 1;
            reach = e > a + min_us ? e : a + min_us;
            open = small;
        }
    }
    seg_off[nseg] = n;
    return n;
}

/* Rows of seg_lo..seg_hi (per segment) whose event overlaps [t0, t1], written to out (at
   most cap); returns how many there are. */
EXPORT int64_t tfp_tl_rows_in(const double *start, const float *dur, const int64_t *seg_lo,
                              const int64_t *seg_hi, int64_t nseg, double t0, double t1,
                              int64_t cap, int64_t *out) {
    int64_t n = 0;
    for (int64_t s = 0; s < nseg; s++) {
        int64_t lo = seg_lo[s], hi = seg_hi[s];
        int64_t i = lower_bound(start, lo, hi, t0);
        if (i > lo && start[i - 1] + (double)dur[i - 1] > t0) i -= 1;
        for (; i < hi && start[i] <= t1; i++) {
            if (n < cap) out[n] = i;
            n += 1;
        }
    }
    return n;
}

/* Binary min-heaps of the row packing below: rows in use keyed by (end, row), free rows by
   row. */
static void busy_push(int64_t *end, int32_t *row, int64_t *n, int64_t e, int32_t r) {
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (end[p] < e || (end[p] == e && row[p] < r)) break;
        end[i] = end[p];
        row[i] = row[p];
        i = p;
    }
    end[i] = e;
    row[i] = r;
}

static void busy_pop(int64_t *end, int32_t *row, int64_t *n) {
    int64_t last = --(*n), i = 0;
    const int64_t e = end[last];
    const int32_t r = row[last];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= last) break;
        if (c + 1 < last && (end[c + 1] < end[c] || (end[c + 1] == end[c] && row[c + 1] < row[c])))
            c += 1;
        if (e < end[c] || (e == end[c] && r < row[c])) break;
        end[i] = end[c];
        row[i] = row[c];
        i = c;
    }
    end[i] = e;
    row[i] = r;
}

static void free_push(int32_t *heap, int64_t *n, int32_t r) {
    int64_t i = (*n)++;
    while (i > 0 && heap[(i - 1) / 2] > r) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = r;
}

static int32_t free_pop(int32_t *heap, int64_t *n) {
    const int32_t top = heap[0];
    const int32_t r = heap[--(*n)];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && heap[c + 1] < heap[c]) c += 1;
        if (r <= heap[c]) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n) heap[i] = r;
    return top;
}

/* The trace viewer's rows of each line: events taken by (line, begin, longest first), as
   ``order`` lists them, each goes on the lowest row of its line that is free when it begins
   (a row is free once its last event has ended).  Nested events get their nesting depth;
   events that overlap without nesting (async ops) get the fewest rows that keep any two of
   a row apart, so none hides another.  Writes row (per event); scratch: busy_end, busy_row,
   free_rows (n each).  O(n log rows). */
EXPORT void tfp_tl_rows(const int32_t *order, int64_t n, const int32_t *line,
                        const int64_t *begin, const int64_t *dur, int32_t *row,
                        int64_t *busy_end, int32_t *busy_row, int32_t *free_rows) {
    int64_t n_busy = 0, n_free = 0;
    int32_t rows = 0;
    int64_t current = INT64_MIN;
    for (int64_t k = 0; k < n; k++) {
        const int32_t i = order[k];
        if (line[i] != current) { /* a new line: every row free, none made yet */
            current = line[i];
            n_busy = n_free = 0;
            rows = 0;
        }
        const int64_t s = begin[i];
        while (n_busy && busy_end[0] <= s) {
            free_push(free_rows, &n_free, busy_row[0]);
            busy_pop(busy_end, busy_row, &n_busy);
        }
        const int32_t r = n_free ? free_pop(free_rows, &n_free) : rows++;
        row[i] = r;
        busy_push(busy_end, busy_row, &n_busy, s + dur[i], r);
    }
}
