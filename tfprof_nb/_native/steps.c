/* Step-time breakdown and the TensorFlow op stack walk. */
#include "common.h"

void tfp_sort_pairs(int64_t *key, int32_t *val, int64_t n, int64_t *tkey, int32_t *tval);


/* Per step, add to out[step * N_TYPES + type] the time of each elementary interval inside the
   step span that belongs to the highest-priority event type active then (higher type codes
   win); present[step * N_TYPES + type] marks the types seen in each step.
   The events are graph nodes: node r < n_first reads begin1/dur1[r], others begin2/dur2[r -
   n_first]; node r belongs to step step_of_group[group[r]] (group -1 or a group without a
   step: ignored); type[i] is the type of rows[i].  At equal times ends come before starts.
   Returns -1 when out of memory. */
EXPORT int64_t tfp_step_breakdown(int64_t n, const int32_t *rows, const int8_t *type,
                                  const int32_t *group, const int32_t *step_of_group,
                                  int64_t n_groups, int64_t n_first, const int64_t *begin1,
                                  const int64_t *dur1, const int64_t *begin2,
                                  const int64_t *dur2, int64_t n_steps,
                                  const int64_t *step_begin, const int64_t *step_end,
                                  int64_t *out, uint8_t *present) {
#define STEP_OF(i) (group[rows[i]] >= 0 && group[rows[i]] < n_groups \
                    ? step_of_group[group[rows[i]]] : -1)
    int64_t *off = (int64_t *)calloc((size_t)n_steps + 1, sizeof(int64_t));
    int32_t *order = (int32_t *)malloc(((size_t)n + 1) * sizeof(int32_t));
    if (!off || !order) {
        free(off);
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
    int64_t *fill = (int64_t *)malloc(((size_t)n_steps + 1) * sizeof(int64_t));
    int64_t *key = (int64_t *)malloc((size_t)(2 * max_m + 1) * sizeof(int64_t));
    int64_t *tkey = (int64_t *)malloc((size_t)(2 * max_m + 1) * sizeof(int64_t));
    int32_t *val = (int32_t *)malloc((size_t)(2 * max_m + 1) * sizeof(int32_t));
    int32_t *tval = (int32_t *)malloc((size_t)(2 * max_m + 1) * sizeof(int32_t));
    if (!fill || !key || !tkey || !val || !tval) {
        free(off);
        free(order);
        free(fill);
        free(key);
        free(tkey);
        free(val);
        free(tval);
        return -1;
    }
    memcpy(fill, off, ((size_t)n_steps + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        int32_t s = STEP_OF(i);
        if (s >= 0 && s < n_steps) order[fill[s]++] = (int32_t)i;
    }
#undef STEP_OF
    for (int64_t s = 0; s < n_steps; s++) {
        int64_t lo = off[s], m = off[s + 1] - off[s];
        if (m == 0) continue;
        /* boundary keys: time * 2 + (1 for starts), so ends sort first at equal times;
           payload: event type * 2 + start flag */
        for (int64_t k = 0; k < m; k++) {
            int32_t i = order[lo + k];
            int32_t r = rows[i];
            int64_t b = r < n_first ? begin1[r] : begin2[r - n_first];
            int64_t d = r < n_first ? dur1[r] : dur2[r - n_first];
            int t = type[i];
            present[s * N_TYPES + t] = 1;
            key[2 * k] = b * 2 + 1;
            val[2 * k] = t * 2 + 1;
            key[2 * k + 1] = (b + d) * 2;
            val[2 * k + 1] = t * 2;
        }
        tfp_sort_pairs(key, val, 2 * m, tkey, tval);
        int64_t active[N_TYPES];
        memset(active, 0, sizeof(active));
        int64_t sb = step_begin[s], se = step_end[s];
        int64_t prev = key[0] >> 1;
        for (int64_t k = 0; k < 2 * m; k++) {
            int64_t t = key[k] >> 1; /* arithmetic shift: floor for negative times too */
            if (t > prev) {
                int top = -1;
                for (int q = N_TYPES - 1; q >= 0; q--)
                    if (active[q] > 0) {
                        top = q;
                        break;
                    }
                if (top >= 0) {
                    int64_t a = prev > sb ? prev : sb;
                    int64_t b = t < se ? t : se;
                    if (b > a) out[s * N_TYPES + top] += b - a;
                }
                prev = t;
            }
            int v = val[k];
            active[v >> 1] += (v & 1) ? 1 : -1;
        }
    }
    free(off);
    free(order);
    free(fill);
    free(key);
    free(tkey);
    free(val);
    free(tval);
    return 0;
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
    int32_t *stack_inst = (int32_t *)malloc(((size_t)n_act + 1) * sizeof(int32_t));
    int64_t *stack_child = (int64_t *)malloc(((size_t)n_act + 1) * sizeof(int64_t));
    if (!stack_inst || !stack_child) {
        free(stack_inst);
        free(stack_child);
        return -1;
    }
    int64_t top = -1, current = INT64_MIN;
    for (int64_t k = 0; k < n_act; k++) {
        int32_t a = act[k];
        int32_t inst = a >> 1;
        int is_end = a & 1;
        int32_t ln = inst_line[inst];
        int64_t ts = is_end ? inst_end[inst] : inst_begin[inst];
        if (ln != current) {
            current = ln;
            top = -1;
            line_first[ln] = ts;
        }
        line_last[ln] = ts;
        if (!is_end) {
            top++;
            stack_inst[top] = inst;
            stack_child[top] = 0;
            continue;
        }
        int64_t found = -1;
        while (top >= 0) {
            int64_t t = top--;
            if (stack_inst[t] == inst) {
                found = t;
                break;
            }
        }
        if (found < 0) continue;
        int64_t dur = inst_end[inst] - inst_begin[inst];
        int64_t self_time = dur - stack_child[found];
        int32_t op = inst_key[inst];
        occ[op] += 1;
        time_ps[op] += dur;
        self_ps[op] += self_time;
        line_op_ps[ln] += self_time;
        if (first_type[op] < 0 && inst_type[inst] >= 0) first_type[op] = inst_type[inst];
        if (top >= 0) stack_child[top] += dur;
    }
    free(stack_inst);
    free(stack_child);
    return 0;
}
