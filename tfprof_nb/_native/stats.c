/* Reading one stat of every event: sparse (rows, values) columns, lookups and joins. */
#include "common.h"

/* Values of a sparse stat (rows increasing; values int32 or int64, value_bytes 4 or 8) at
   query rows: out[i] = values[j] where rows[j] == query[i] (hit[i] = 1), else 0.  Sorted
   queries are merged in one pass that gallops over runs of rows between queries; others are
   binary-searched. */
EXPORT int64_t tfp_sparse_lookup(const int32_t *rows, const void *values, int64_t value_bytes,
                                 int64_t n, const int32_t *query, int64_t m, int64_t *out,
                                 uint8_t *hit) {
    int sorted = 1;
    for (int64_t i = 1; i < m; i++)
        if (query[i] < query[i - 1]) {
            sorted = 0;
            break;
        }
    int64_t j = 0;
    for (int64_t i = 0; i < m; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int32_t q = query[i];
        int64_t lo = sorted ? j : 0, hi = n;
        if (sorted) { /* gallop from the last position, then binary search */
            int64_t step = 1;
            while (lo + step < n && rows[lo + step] < q) {
                lo += step;
                step <<= 1;
            }
            hi = lo + step < n ? lo + step + 1 : n;
        }
        while (lo < hi) {
            int64_t mid = (lo + hi) >> 1;
            if (rows[mid] < q) lo = mid + 1;
            else hi = mid;
        }
        j = lo;
        if (j < n && rows[j] == q) {
            out[i] = value_bytes == 4 ? (int64_t)((const int32_t *)values)[j]
                                      : ((const int64_t *)values)[j];
            hit[i] = 1;
        } else {
            out[i] = 0;
            hit[i] = 0;
        }
    }
    return 0;
}

/* Whether rows are ordered by (line, time) already. */
EXPORT int64_t tfp_is_sorted_by(const int32_t *line, const int64_t *t, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        if (line[i] < line[i - 1]) return 0;
        if (line[i] == line[i - 1] && t[i] < t[i - 1]) return 0;
    }
    return 1;
}

/* Several integer stats of events in one pass over the stat table: slot_of_code[name code]
   is the output slot (-1: not wanted).  For each slot s, writes at most caps[s] (event row,
   value) pairs to the arrays at rows_addr[s] / values_addr[s] and its count to counts[s]:
   doubles truncated toward zero (non-finite or out-of-range doubles skipped), the last value
   winning when an event carries the stat twice (stat rows are in event order).  Name codes
   are uint8, uint16 or int32 (code_bytes 1, 2 or 4).  Returns 0, or ERR_CANCELLED. */
#define INT_STATS_LOOP(CODE_T)                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                        \
        if (CANCEL_POLL(i)) return ERR_CANCELLED;                                            \
        if (owner_kind[i] != 0) continue;                                                    \
        int64_t c = ((const CODE_T *)name_code)[i];                                          \
        if (c < 0 || c >= n_codes) continue;                                                 \
        int s = slot_of_code[c];                                                             \
        if (s < 0) continue;                                                                 \
        int64_t v;                                                                           \
        if (!stat_int_value(kind[i], raw[i], &v)) continue;                                  \
        int32_t o = owner[i];                                                                \
        int64_t k = counts[s];                                                               \
        if (k > 0 && last_owner[s] == o) { /* the same event again: the last value wins */  \
            if (k <= caps[s]) ((int64_t *)values_addr[s])[k - 1] = v;                         \
            continue;                                                                        \
        }                                                                                    \
        if (k < caps[s]) {                                                                   \
            ((int32_t *)rows_addr[s])[k] = o;                                                \
            ((int64_t *)values_addr[s])[k] = v;                                              \
        }                                                                                    \
        last_owner[s] = o;                                                                   \
        counts[s] = k + 1;                                                                   \
    }

EXPORT int64_t tfp_int_stats(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
                             const int8_t *kind, const int64_t *raw, const int32_t *owner,
                             int64_t n, const int8_t *slot_of_code, int64_t n_codes,
                             const int64_t *rows_addr, const int64_t *values_addr,
                             const int64_t *caps, int64_t *counts, int32_t *last_owner,
                             int64_t n_slots) {
    for (int64_t s = 0; s < n_slots; s++) {
        counts[s] = 0;
        last_owner[s] = -1;
    }
    if (code_bytes == 1) {
        INT_STATS_LOOP(uint8_t)
    } else if (code_bytes == 2) {
        INT_STATS_LOOP(uint16_t)
    } else {
        INT_STATS_LOOP(int32_t)
    }
    return 0;
}
#undef INT_STATS_LOOP

/* Integer stats of events at given rows, in one pass over the stat table (a merge: event
   stats are in event order).  Query q (0 <= q < n_queries) reads the stat of name code
   code_of[q] at the rows rows[off[q]..off[q+1]) (non-decreasing); queries of one code are
   consecutive (first_of_code[c], n_of_code[c]).  values (same positions) get the stat's value
   and hit = 1 where the event carries it (doubles truncated, non-finite or out-of-range
   doubles and non-numeric values skipped, the last value of an event winning).  Returns 0 or
   ERR_CANCELLED. */
EXPORT int64_t tfp_stats_at(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
                            const int8_t *kind, const int64_t *raw, const int32_t *owner,
                            int64_t n, const int32_t *first_of_code, const int32_t *n_of_code,
                            int64_t n_codes, const int32_t *rows, const int64_t *off,
                            int64_t n_queries, int64_t *values, uint8_t *hit, int64_t *cursor) {
    for (int64_t q = 0; q < n_queries; q++) {
        cursor[q] = off[q];
        for (int64_t j = off[q]; j < off[q + 1]; j++) {
            values[j] = 0;
            hit[j] = 0;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        if (owner_kind[i] != 0) continue;
        int64_t c = CODE_AT(name_code, code_bytes, i);
        if (c < 0 || c >= n_codes || n_of_code[c] == 0) continue;
        int64_t v;
        if (!stat_int_value(kind[i], raw[i], &v)) continue;
        int32_t o = owner[i];
        for (int32_t q = first_of_code[c]; q < first_of_code[c] + n_of_code[c]; q++) {
            int64_t j = cursor[q], end = off[q + 1];
            while (j < end && rows[j] < o) j++;
            cursor[q] = j;
            /* equal query rows all get it */
            for (int64_t k = j; k < end && rows[k] == o; k++) {
                values[k] = v;
                hit[k] = 1;
            }
        }
    }
    return 0;
}

/* The first event stat at or after row i (n when none): rows of other owners come in runs
   [run_lo[k], run_hi[k]) (increasing, maximal), skipped with a binary search. */
static inline int64_t next_event_stat(const int8_t *owner_kind, int64_t n, const int64_t *run_lo,
                                      const int64_t *run_hi, int64_t n_runs, int64_t i) {
    if (i >= n || owner_kind[i] == 0) return i;
    int64_t lo = 0, hi = n_runs;
    while (hi - lo > 1) { /* the last run starting at or before i */
        int64_t mid = (lo + hi) >> 1;
        if (run_lo[mid] <= i) lo = mid;
        else hi = mid;
    }
    return n_runs && run_lo[lo] <= i && i < run_hi[lo] ? run_hi[lo] : i + 1;
}

/* the owner of the first event stat at or after row i (INT32_MAX past the end): it does not
   decrease with i, as event stats are in event order */
static inline int32_t owner_from(const int8_t *owner_kind, const int32_t *owner, int64_t n,
                                 const int64_t *run_lo, const int64_t *run_hi, int64_t n_runs,
                                 int64_t i) {
    i = next_event_stat(owner_kind, n, run_lo, run_hi, n_runs, i);
    return i < n ? owner[i] : INT32_MAX;
}

/* tfp_stats_at for queries on the same rows without a pass over the stat table: each of the
   ``m`` rows (non-decreasing) is found by galloping over the owners from the last one found,
   then its event's stats are read for the ``k`` name codes ``codes``.  For few rows against
   many stats.  ``run_lo``/``run_hi``: the runs of stats not owned by events (see
   next_event_stat).  values and hit are k x m (row-major), as tfp_stats_at gives them;
   returns 0 or ERR_CANCELLED. */
EXPORT int64_t tfp_stats_seek(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
                              const int8_t *kind, const int64_t *raw, const int32_t *owner,
                              int64_t n, const int64_t *run_lo, const int64_t *run_hi,
                              int64_t n_runs, const int32_t *codes, int64_t k,
                              const int32_t *rows, int64_t m, int64_t *values, uint8_t *hit) {
    int64_t j = 0; /* every event stat before j has an owner below the current row */
    for (int64_t q = 0; q < m; q++) {
        if (CANCEL_POLL(q)) return ERR_CANCELLED;
        int32_t r = rows[q];
        if (q > 0 && r == rows[q - 1]) {
            for (int64_t c = 0; c < k; c++) {
                values[c * m + q] = values[c * m + q - 1];
                hit[c * m + q] = hit[c * m + q - 1];
            }
            continue;
        }
        /* gallop: the first j' >= j whose owner (from j' on) is at least r */
        int64_t lo = j, step = 1, hi;
        if (owner_from(owner_kind, owner, n, run_lo, run_hi, n_runs, lo) >= r) {
            hi = lo;
        } else {
            while (lo + step < n &&
                   owner_from(owner_kind, owner, n, run_lo, run_hi, n_runs, lo + step) < r) {
                lo += step;
                step <<= 1;
            }
            hi = lo + step < n ? lo + step : n;
            lo++; /* owner_from(lo - 1) < r */
            while (lo < hi) {
                int64_t mid = lo + ((hi - lo) >> 1);
                if (owner_from(owner_kind, owner, n, run_lo, run_hi, n_runs, mid) < r)
                    lo = mid + 1;
                else
                    hi = mid;
            }
        }
        j = hi;
        for (int64_t c = 0; c < k; c++) {
            values[c * m + q] = 0;
            hit[c * m + q] = 0;
        }
        for (int64_t i = next_event_stat(owner_kind, n, run_lo, run_hi, n_runs, j);
             i < n && owner[i] == r;
             i = next_event_stat(owner_kind, n, run_lo, run_hi, n_runs, i + 1)) {
            int32_t code = CODE_AT(name_code, code_bytes, i);
            int64_t c = 0;
            while (c < k && codes[c] != code) c++;
            if (c == k) continue;
            int64_t v;
            if (!stat_int_value(kind[i], raw[i], &v)) continue;
            values[c * m + q] = v;
            hit[c * m + q] = 1;
        }
    }
    return 0;
}
