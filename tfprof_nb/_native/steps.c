/* Step-time breakdown and the TensorFlow op stack walk. */
#include "common.h"

void tfp_sort_pairs(int64_t *key, int32_t *val, int64_t n, int64_t *tkey, int32_t *tval);


typedef struct { /* the inputs of the step-time breakdown, shared by its threads */
    const int32_t *rows, *order;
    const int8_t *type;
    const int64_t *off, *begin, *dur, *step_begin, *step_end;
    int64_t n_steps, max_m, next, rc;
    int64_t *out;
    uint8_t *present;
} Breakdown;

/* one step's boundaries sorted and swept (scratch: 2 * max_m keys and payloads, twice) */
static void breakdown_step(Breakdown *w, int64_t s, int64_t *key, int32_t *val, int64_t *tkey,
                           int32_t *tval) {
    int64_t lo = w->off[s], m = w->off[s + 1] - w->off[s];
    if (m == 0) return;
    /* boundary keys: time * 2 + (1 for starts), so ends sort first at equal times;
       payload: event type * 2 + start flag */
    for (int64_t k = 0; k < m; k++) {
        int32_t i = w->order[lo + k];
        int32_t r = w->rows[i];
        int64_t b = w->begin[r], d = w->dur[r];
        int t = w->type[i];
        w->present[s * N_TYPES + t] = 1;
        key[2 * k] = b * 2 + 1;
        val[2 * k] = t * 2 + 1;
        key[2 * k + 1] = (b + d) * 2;
        val[2 * k + 1] = t * 2;
    }
    tfp_sort_pairs(key, val, 2 * m, tkey, tval);
    /* the reference's priority tracker, quirk included: the current type rises with any
       start and is recomputed only when an end of that very type brings its count to zero.
       A zero-length event (its end sorts before its start) met when nothing is active
       leaves its type current with a count of zero, until the next event of that type ends:
       XProf counts that stretch as the type's time, and so do we. */
    int64_t count[N_TYPES];
    memset(count, 0, sizeof(count));
    int current = 0; /* UNKNOWN: its time is left to "other" */
    int64_t sb = w->step_begin[s], se = w->step_end[s];
    int64_t prev = key[0] >> 1;
    int64_t *out = w->out + s * N_TYPES;
    for (int64_t k = 0; k < 2 * m; k++) {
        int64_t t = key[k] >> 1; /* arithmetic shift: floor for negative times too */
        if (t > prev) {
            if (current > 0) {
                int64_t a = prev > sb ? prev : sb;
                int64_t b = t < se ? t : se;
                if (b > a) out[current] += b - a;
            }
            prev = t;
        }
        int v = val[k], type = v >> 1;
        if (v & 1) {
            count[type]++;
            if (type > current) current = type;
        } else if (--count[type] == 0 && type == current) {
            current = 0;
            for (int q = type - 1; q > 0; q--)
                if (count[q] > 0) {
                    current = q;
                    break;
                }
        }
    }
}

static void *breakdown_worker(void *arg) {
    Breakdown *w = (Breakdown *)arg;
    size_t cap = (size_t)(2 * w->max_m + 1);
    int64_t *key = (int64_t *)tfp_malloc(cap * sizeof(int64_t));
    int64_t *tkey = (int64_t *)tfp_malloc(cap * sizeof(int64_t));
    int32_t *val = (int32_t *)tfp_malloc(cap * sizeof(int32_t));
    int32_t *tval = (int32_t *)tfp_malloc(cap * sizeof(int32_t));
    if (!key || !tkey || !val || !tval) {
        __atomic_store_n(&w->rc, -1, __ATOMIC_RELAXED);
    } else {
        for (;;) {
            int64_t s = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
            if (s >= w->n_steps || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
            if ((s & 0x3FF) == 0 && CANCELLED()) {
                __atomic_store_n(&w->rc, ERR_CANCELLED, __ATOMIC_RELAXED);
                break;
            }
            breakdown_step(w, s, key, val, tkey, tval);
        }
    }
    free(key);
    free(tkey);
    free(val);
    free(tval);
    return NULL;
}

/* Per step, add to out[step * N_TYPES + type] the time of each elementary interval inside the
   step span that belongs to the highest-priority event type active then (higher type codes
   win; the reference's tracker, see breakdown_step); present[step * N_TYPES + type] marks the
   types seen in each step.
   The events are rows[i] (begin[r], dur[r]); row r belongs to step step_of_group[group[r]]
   (group -1 or a group without a step: ignored); type[i] is the type of rows[i].  At equal times ends come before starts.
   Steps are swept on ``threads`` threads.  Returns 0, -1 when out of memory, or
   ERR_CANCELLED. */
EXPORT int64_t tfp_step_breakdown(int64_t n, const int32_t *rows, const int8_t *type,
                                  const int32_t *group, const int32_t *step_of_group,
                                  int64_t n_groups, const int64_t *begin, const int64_t *dur,
                                  int64_t n_steps,
                                  const int64_t *step_begin, const int64_t *step_end,
                                  int64_t *out, uint8_t *present, int64_t threads) {
#define STEP_OF(i) (group[rows[i]] >= 0 && group[rows[i]] < n_groups \
                    ? step_of_group[group[rows[i]]] : -1)
    int64_t *off = (int64_t *)tfp_calloc((size_t)n_steps + 1, sizeof(int64_t));
    int64_t *fill = (int64_t *)tfp_malloc(((size_t)n_steps + 1) * sizeof(int64_t));
    int32_t *order = (int32_t *)tfp_malloc(((size_t)n + 1) * sizeof(int32_t));
    if (!off || !order || !fill) {
        free(off);
        free(fill);
        free(order);
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t s = STEP_OF(i);
        if (s >= 0 && s < n_steps) off[s + 1]++;
    }
    int64_t max_m = 0;
    for (int64_t s = 0; s < n_steps; s++) {
        if (off[s + 1] > max_m) max_m = off[s + 1];
        off[s + 1] += off[s];
    }
    memcpy(fill, off, ((size_t)n_steps + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int32_t s = STEP_OF(i);
        if (s >= 0 && s < n_steps) order[fill[s]++] = (int32_t)i;
    }
#undef STEP_OF
    Breakdown w = {rows, order, type, off, begin, dur, step_begin, step_end, n_steps, max_m,
                   0, 0, out, present};
    run_threads(breakdown_worker, &w, threads);
    free(off);
    free(fill);
    free(order);
    return w.rc;
}

/* The op stack walk's state: a stack of open instances and their children's time. */
typedef struct {
    int32_t *inst;
    int64_t *child;
    int64_t top, current;
    const int32_t *key, *type;
    int64_t *occ, *time_ps, *self_ps, *line_op, *line_first, *line_last;
    int32_t *first_type;
} OpWalk;

/* one activity: the begin (is_end 0) or end of instance ``i`` on line ``ln`` at ``ts`` */
static inline void op_activity(OpWalk *w, int32_t i, int is_end, int32_t ln, int64_t ts,
                               int64_t dur) {
    if (ln != w->current) {
        w->current = ln;
        w->top = -1;
        w->line_first[ln] = ts;
    }
    w->line_last[ln] = ts;
    if (!is_end) {
        w->top++;
        w->inst[w->top] = i;
        w->child[w->top] = 0;
        return;
    }
    int64_t found = -1;
    while (w->top >= 0) {
        int64_t t = w->top--;
        if (w->inst[t] == i) {
            found = t;
            break;
        }
    }
    if (found < 0) return;
    int64_t self_time = sat_sub(dur, w->child[found]); /* (sums of durations: saturated) */
    int32_t op = w->key[i];
    w->occ[op] += 1;
    w->time_ps[op] = sat_add(w->time_ps[op], dur);
    w->self_ps[op] = sat_add(w->self_ps[op], self_time);
    w->line_op[ln] = sat_add(w->line_op[ln], self_time);
    if (w->first_type[op] < 0 && w->type[i] >= 0) w->first_type[op] = w->type[i];
    if (w->top >= 0) w->child[w->top] = sat_add(w->child[w->top], dur);
}

/* Walk begin/end activities sorted by (line, time, insertion order): ``act`` lists them as
   instance * 2 + (1 for the end).  An end pops the stack down to its own begin; entries
   popped on the way are dropped (a partially overlapping op is lost).  Records per op key the
   occurrences, time and self time; per line the summed self time and the first/last
   activity times.  first_type[key] gets the type code of the first instance recorded with a
   type (>= 0). */
EXPORT int64_t tfp_op_stack_walk(const int32_t *act, int64_t n_act, const int32_t *inst_line,
                                 const int64_t *inst_begin, const int64_t *inst_end,
                                 const int32_t *inst_key, const int32_t *inst_type,
                                 int64_t *occ, int64_t *time_ps, int64_t *self_ps,
                                 int32_t *first_type, int64_t *line_op_ps, int64_t *line_first,
                                 int64_t *line_last) {
    OpWalk w = {(int32_t *)tfp_malloc(((size_t)n_act + 1) * sizeof(int32_t)),
                (int64_t *)tfp_malloc(((size_t)n_act + 1) * sizeof(int64_t)), -1, INT64_MIN,
                inst_key, inst_type, occ, time_ps, self_ps, line_op_ps, line_first, line_last,
                first_type};
    if (!w.inst || !w.child) {
        free(w.inst);
        free(w.child);
        return -1;
    }
    for (int64_t k = 0; k < n_act; k++) {
        if (CANCEL_POLL(k)) {
            free(w.inst);
            free(w.child);
            return ERR_CANCELLED;
        }
        int32_t a = act[k];
        int32_t i = a >> 1;
        int is_end = a & 1;
        op_activity(&w, i, is_end, inst_line[i], is_end ? inst_end[i] : inst_begin[i],
                    inst_end[i] - inst_begin[i]);
    }
    free(w.inst);
    free(w.child);
    return 0;
}

/* a min-heap of pending ends: (end time, instance), ordered by both */
typedef struct {
    int64_t *t;
    int32_t *i;
    int64_t n, cap;
} EndHeap;

static inline int end_less(const EndHeap *h, int64_t a, int64_t b) {
    return h->t[a] < h->t[b] || (h->t[a] == h->t[b] && h->i[a] < h->i[b]);
}

static int heap_push(EndHeap *h, int64_t t, int32_t i) {
    if (h->n == h->cap) {
        int64_t cap = h->cap ? 2 * h->cap : 256;
        int64_t *nt = (int64_t *)tfp_realloc(h->t, (size_t)cap * sizeof(int64_t));
        if (nt) h->t = nt;
        int32_t *ni = (int32_t *)tfp_realloc(h->i, (size_t)cap * sizeof(int32_t));
        if (ni) h->i = ni;
        if (!nt || !ni) return -1;
        h->cap = cap;
    }
    int64_t k = h->n++;
    h->t[k] = t;
    h->i[k] = i;
    while (k > 0) {
        int64_t p = (k - 1) >> 1;
        if (!end_less(h, k, p)) break;
        int64_t tt = h->t[k]; h->t[k] = h->t[p]; h->t[p] = tt;
        int32_t ii = h->i[k]; h->i[k] = h->i[p]; h->i[p] = ii;
        k = p;
    }
    return 0;
}

static void heap_pop(EndHeap *h) {
    h->n--;
    h->t[0] = h->t[h->n];
    h->i[0] = h->i[h->n];
    int64_t k = 0;
    for (;;) {
        int64_t l = 2 * k + 1, r = l + 1, m = k;
        if (l < h->n && end_less(h, l, m)) m = l;
        if (r < h->n && end_less(h, r, m)) m = r;
        if (m == k) break;
        int64_t tt = h->t[k]; h->t[k] = h->t[m]; h->t[m] = tt;
        int32_t ii = h->i[k]; h->i[k] = h->i[m]; h->i[m] = ii;
        k = m;
    }
}

/* The op stack walk of instances rows[0..m) (event rows, in file order) without sorting
   their activities: when the instances are ordered by (line, begin) and none ends before it
   begins, the activities in (line, time, insertion order) are the begins in instance order
   merged with the pending ends from a heap (ends first at equal times: an end's instance is
   always earlier).  Same outputs as tfp_op_stack_walk.  Returns 0; 1 when the instances are
   not in that order (the caller sorts the activities instead); -1 out of memory;
   ERR_CANCELLED. */
EXPORT int64_t tfp_op_walk_rows(const int32_t *rows, int64_t m, const int32_t *line,
                                const int64_t *begin, const int64_t *dur,
                                const int32_t *inst_key, const int32_t *inst_type,
                                int64_t *occ, int64_t *time_ps, int64_t *self_ps,
                                int32_t *first_type, int64_t *line_op_ps, int64_t *line_first,
                                int64_t *line_last) {
    for (int64_t k = 0; k < m; k++) { /* the order this walk needs */
        int32_t r = rows[k];
        if (dur[r] < 0) return 1;
        if (k && (line[r] < line[rows[k - 1]] ||
                  (line[r] == line[rows[k - 1]] && begin[r] < begin[rows[k - 1]])))
            return 1;
    }
    OpWalk w = {NULL, NULL, -1, INT64_MIN, inst_key, inst_type, occ, time_ps, self_ps,
                line_op_ps, line_first, line_last, first_type};
    EndHeap h = {NULL, NULL, 0, 0};
    int64_t cap = 256, rc = 0;
    w.inst = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
    w.child = (int64_t *)tfp_malloc((size_t)cap * sizeof(int64_t));
    int32_t cur = m ? line[rows[0]] : 0;
    for (int64_t k = 0; k <= m && rc == 0; k++) {
        if (CANCEL_POLL(k)) {
            rc = ERR_CANCELLED;
            break;
        }
        int32_t r = k < m ? rows[k] : -1;
        int32_t ln = k < m ? line[r] : cur;
        int64_t b = k < m ? begin[r] : 0;
        /* the ends before this begin (all of them at a new line or past the last row) */
        while (h.n > 0 && (k == m || ln != cur || h.t[0] <= b)) {
            int32_t i = h.i[0];
            int64_t e = h.t[0];
            heap_pop(&h);
            op_activity(&w, i, 1, cur, e, dur[rows[i]]);
        }
        if (k == m) break;
        cur = ln;
        if (w.top + 2 >= cap) { /* the stack holds at most the open instances */
            cap *= 2;
            int32_t *ni = (int32_t *)tfp_realloc(w.inst, (size_t)cap * sizeof(int32_t));
            if (ni) w.inst = ni;
            int64_t *nc = (int64_t *)tfp_realloc(w.child, (size_t)cap * sizeof(int64_t));
            if (nc) w.child = nc;
            if (!ni || !nc) rc = -1;
        }
        if (!w.inst || !w.child) rc = -1;
        if (rc) break;
        op_activity(&w, (int32_t)k, 0, ln, b, dur[r]);
        if (heap_push(&h, b + dur[r], (int32_t)k) != 0) rc = -1;
    }
    free(w.inst);
    free(w.child);
    free(h.t);
    free(h.i);
    return rc;
}

/* The events of host steps: over events i (in order) on lines with line_ok[line[i]] and in a
   group (group[i] >= 0), with name code c: a marker when explicit[c] or its flag bit 1 is
   set (flags: sorted rows flag_rows with bits flag_bits; bit 1: a named root, bit 2: work of
   an inferred step); host work when !not_compute[c] and (not a marker, or bit 2).  Writes
   the markers' rows, and the work's rows and types (kind_of[c]); counts[0] and counts[1]
   receive how many.  Returns 0 or ERR_CANCELLED. */
EXPORT int64_t tfp_host_step_rows(const int32_t *line, const void *code, int64_t code_bytes,
                                  int64_t n, const uint8_t *line_ok, const int32_t *group,
                                  const uint8_t *explicit_name, const uint8_t *not_compute,
                                  const int8_t *kind_of, const int32_t *flag_rows,
                                  const uint8_t *flag_bits, int64_t n_flags, int32_t *out_rows,
                                  int8_t *out_kind, int32_t *out_markers, int64_t *counts) {
    int64_t k = 0, km = 0, f = 0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        if (group[i] < 0 || !line_ok[line[i]]) continue;
        int32_t c = CODE_AT(code, code_bytes, i);
        while (f < n_flags && flag_rows[f] < i) f++;
        int bits = f < n_flags && flag_rows[f] == i ? flag_bits[f] : 0;
        int marker = explicit_name[c] || (bits & 1);
        if (marker) out_markers[km++] = (int32_t)i;
        if (!not_compute[c] && (!marker || (bits & 2))) {
            out_rows[k] = (int32_t)i;
            out_kind[k++] = kind_of[c];
        }
    }
    counts[0] = k;
    counts[1] = km;
    return 0;
}
