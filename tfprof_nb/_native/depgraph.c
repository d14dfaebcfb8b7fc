/* Steps of analysis/critical/graph.py's dependency graph that numpy does in many passes over
   every node: an owner inherited down the nesting tree, each target's latest-ending source,
   a backward as-of lookup by id.  Plain loops, no allocation per element. */
#include "common.h"

/* owner[i]: the nearest of i and its ancestors (parent[], -1 at the top) that is a seed, when
   it is at most max_depth levels up (max_depth < 0: any; at most 65534), else -1.  Parents may
   come before or after their children; a chain is walked once (each node resolved once, by a
   stack); a parent outside [0, n) or a cycle ends a chain.  Returns 0, ERR_NO_MEMORY or
   ERR_CANCELLED. */
EXPORT int64_t tfp_cp_inherit(const int32_t *parent, const uint8_t *seed, int64_t n,
                              int64_t max_depth, int32_t *owner) {
    enum { UNSEEN = -2, ON_STACK = -3 };
    const uint16_t far = UINT16_MAX; /* no seed, or one further up than any max_depth */
    uint16_t *dist = NULL;
    if (max_depth >= 0 && !(dist = (uint16_t *)malloc((size_t)(n > 0 ? n : 1) * 2)))
        return ERR_NO_MEMORY;
    int64_t cap = 1024, rc = 0;
    int64_t *stack = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    if (!stack) {
        free(dist);
        return ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < n; i++) owner[i] = UNSEEN;
    for (int64_t i = 0; i < n && rc == 0; i++) {
        if (CANCEL_POLL(i)) rc = ERR_CANCELLED;
        if (owner[i] != UNSEEN) continue;
        int64_t top = 0, p = i;
        while (p >= 0 && p < n && owner[p] == UNSEEN && !seed[p]) {
            if (top == cap) {
                int64_t *more = (int64_t *)realloc(stack, (size_t)(2 * cap) * sizeof(int64_t));
                if (!more) {
                    rc = ERR_NO_MEMORY;
                    break;
                }
                stack = more;
                cap *= 2;
            }
            owner[p] = ON_STACK;
            stack[top++] = p;
            p = parent[p];
        }
        if (rc != 0) { /* out of memory: no node left ON_STACK */
            while (top > 0) owner[stack[--top]] = -1;
            break;
        }
        int64_t base_owner = -1;
        uint16_t base_dist = far;
        if (p >= 0 && p < n && owner[p] != ON_STACK) {
            if (owner[p] == UNSEEN) { /* a seed not seen yet */
                owner[p] = (int32_t)p;
                if (dist) dist[p] = 0;
            }
            base_owner = owner[p];
            base_dist = dist ? dist[p] : 0;
        }
        while (top > 0) {
            int64_t x = stack[--top];
            if (base_dist != far) base_dist++;
            owner[x] = base_dist == far ? -1 : (int32_t)base_owner;
            if (dist) dist[x] = base_dist;
        }
    }
    if (dist && rc == 0)
        for (int64_t i = 0; i < n; i++)
            if (owner[i] >= 0 && dist[i] > max_depth) owner[i] = -1;
    free(dist);
    free(stack);
    return rc;
}

/* For each distinct target dst[k] (nodes in [0, n_nodes)), the pair k whose source ends
   latest (end[src[k]]; the last such pair on ties): their indices into out, by target
   ascending.  Returns their count or ERR_NO_MEMORY; every src and dst must be a node (the
   wrapper, critical_kernel.latest_per_target, checks them). */
EXPORT int64_t tfp_cp_latest(const int64_t *src, const int64_t *dst, int64_t m,
                             const int64_t *end, int64_t n_nodes, int64_t *out) {
    if (m > INT32_MAX) return ERR_NO_MEMORY;
    int32_t *best = (int32_t *)malloc((size_t)(n_nodes > 0 ? n_nodes : 1) * sizeof(int32_t));
    if (!best) return ERR_NO_MEMORY;
    memset(best, 0xFF, (size_t)n_nodes * sizeof(int32_t)); /* -1 */
    for (int64_t k = 0; k < m; k++) {
        int64_t d = dst[k], b = best[d];
        if (b < 0 || end[src[k]] >= end[src[b]]) best[d] = (int32_t)k;
    }
    int64_t count = 0;
    for (int64_t i = 0; i < n_nodes; i++)
        if (best[i] >= 0) out[count++] = best[i];
    free(best);
    return count;
}

/* For each query q, the last entry r of the right side (sorted by (r_id, r_t) ascending)
   with r_id[r] == q_id[q] and r_t[r] <= q_t[q]: out[q] = r, or -1 (a backward as-of join by
   id, exact matches allowed, the last of equal keys).  q_order: the queries in (id, t) order
   (one merge pass over both sides).  Returns 0, or -1 (nothing written) when either side is
   not in that order. */
EXPORT int64_t tfp_cp_asof(const int64_t *r_id, const int64_t *r_t, int64_t nr,
                           const int64_t *q_id, const int64_t *q_t, int64_t nq,
                           const int32_t *q_order, int64_t *out) {
    for (int64_t r = 1; r < nr; r++)
        if (r_id[r] < r_id[r - 1] || (r_id[r] == r_id[r - 1] && r_t[r] < r_t[r - 1])) return -1;
    for (int64_t k = 0; k < nq; k++) {
        if (q_order[k] < 0 || q_order[k] >= nq) return -1;
        if (k == 0) continue;
        int64_t a = q_order[k - 1], b = q_order[k];
        if (q_id[b] < q_id[a] || (q_id[b] == q_id[a] && q_t[b] < q_t[a])) return -1;
    }
    int64_t r = 0;
    for (int64_t k = 0; k < nq; k++) {
        int64_t q = q_order[k], id = q_id[q], t = q_t[q];
        while (r < nr && (r_id[r] < id || (r_id[r] == id && r_t[r] <= t))) r++;
        out[q] = r > 0 && r_id[r - 1] == id ? r - 1 : -1;
    }
    return 0;
}

/* graph.py's flow edges (its _add_flows): of the pairs src[k] -> dst[k] (nodes; -1 or a pair
   on one node: left out), each consumer's producer ending latest (the last pair on ties).
   When that producer ended while the consumer ran (after it started, not after it ended, and
   started before it), the consumer's end waits for it; else, when it started no later than
   the consumer and the consumer's start waits for nothing yet, its start does.  The kind of
   the edge is element_kind where is_element[k], else context_kind; an element's producer
   on a host thread becomes input_code.  Returns 0 or ERR_NO_MEMORY. */
EXPORT int64_t tfp_cp_flows(const int64_t *src, const int64_t *dst, const uint8_t *is_element,
                            int64_t m, const int64_t *begin, const int64_t *end,
                            const uint8_t *dev, int64_t n, const int64_t *codes,
                            int32_t *start_src, int8_t *start_kind, int32_t *end_src,
                            int8_t *end_kind, int8_t *category) {
    int8_t element_kind = (int8_t)codes[0], context_kind = (int8_t)codes[1];
    int8_t input_code = (int8_t)codes[2];
    if (m > INT32_MAX) return ERR_NO_MEMORY;
    int32_t *best = (int32_t *)malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
    if (!best) return ERR_NO_MEMORY;
    memset(best, 0xFF, (size_t)n * sizeof(int32_t)); /* -1 */
    for (int64_t k = 0; k < m; k++) {
        int64_t s = src[k], d = dst[k];
        if (s < 0 || d < 0 || s >= n || d >= n || s == d) continue;
        int64_t b = best[d];
        if (b < 0 || end[s] >= end[src[b]]) best[d] = (int32_t)k;
    }
    for (int64_t d = 0; d < n; d++) {
        int64_t k = best[d];
        if (k < 0) continue;
        int64_t s = src[k];
        int8_t kind = is_element[k] ? element_kind : context_kind;
        int during = end[s] > begin[d] && end[s] <= end[d] && begin[s] < begin[d];
        if (during) {
            end_src[d] = (int32_t)s;
            end_kind[d] = kind;
        }
        if (is_element[k] && !dev[s]) category[s] = input_code;
        if (!during && begin[s] <= begin[d] && start_src[d] < 0) {
            start_src[d] = (int32_t)s;
            start_kind[d] = kind;
        }
    }
    free(best);
    return 0;
}

/* graph.py's wake-ups (its _add_wake_ups), over the nodes in node order (by resource): an
   instant at the top level of a host thread (not a device) whose start waits for a node
   hands it to the next top-level host node that lasts, when that one is on the same
   resource; of the instants handing to one node, the one whose source ends latest (the last
   on ties); the node's start then waits for that source (with the instant's kind), unless it
   waits for one that ends no earlier. */
EXPORT void tfp_cp_wake_ups(int64_t n, const int32_t *parent, const uint8_t *dev,
                            const int64_t *begin, const int64_t *end, const int32_t *res,
                            int32_t *start_src, int8_t *start_kind) {
    int64_t best = -1; /* the pending instant whose source ends latest */
    for (int64_t i = 0; i < n; i++) {
        if (parent[i] >= 0 || dev[i]) continue;
        if (end[i] <= begin[i]) { /* an instant */
            int64_t s = start_src[i];
            if (s < 0) continue;
            if (best >= 0 && res[best] != res[i]) best = -1; /* (another thread's) */
            if (best < 0 || end[s] >= end[start_src[best]]) best = i;
            continue;
        }
        if (best >= 0 && res[best] == res[i]) {
            int64_t s = start_src[best], own = start_src[i];
            if (own < 0 || end[own] < end[s]) {
                start_src[i] = (int32_t)s;
                start_kind[i] = start_kind[best];
            }
        }
        best = -1;
    }
}

/* graph.py's _input_inside_input in place: a host node (!dev) of category compute_code with
   itself or an ancestor (parent[], -1 at the top) a host node of category input_code becomes
   input_code.  Parents may come before or after their children; a parent outside [0, n) or a
   cycle ends a chain (as tfp_cp_inherit: each node resolved once, by a stack, one byte of
   state a node).  Returns 0, ERR_NO_MEMORY or ERR_CANCELLED. */
EXPORT int64_t tfp_cp_input_inside(const int32_t *parent, const uint8_t *dev, int64_t n,
                                   int64_t input_code, int64_t compute_code, int8_t *category) {
    enum { UNSEEN = 0, NO = 1, YES = 2, ON_STACK = 3 };
    uint8_t *state = (uint8_t *)calloc((size_t)(n > 0 ? n : 1), 1);
    int64_t cap = 1024, rc = 0;
    int64_t *stack = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    if (!state || !stack) {
        free(state);
        free(stack);
        return ERR_NO_MEMORY;
    }
#define SEED(p) (category[p] == input_code && !dev[p])
    for (int64_t i = 0; i < n && rc == 0; i++) {
        if (CANCEL_POLL(i)) rc = ERR_CANCELLED;
        if (state[i] != UNSEEN) continue;
        int64_t top = 0, p = i;
        while (p >= 0 && p < n && state[p] == UNSEEN && !SEED(p)) {
            if (top == cap) {
                int64_t *more = (int64_t *)realloc(stack, (size_t)(2 * cap) * sizeof(int64_t));
                if (!more) {
                    rc = ERR_NO_MEMORY;
                    break;
                }
                stack = more;
                cap *= 2;
            }
            state[p] = ON_STACK;
            stack[top++] = p;
            p = parent[p];
        }
        uint8_t base = NO;
        if (rc == 0 && p >= 0 && p < n && state[p] != ON_STACK) {
            if (state[p] == UNSEEN) state[p] = YES; /* a seed not seen yet */
            base = state[p];
        }
        while (top > 0) state[stack[--top]] = base;
    }
#undef SEED
    if (rc == 0)
        for (int64_t i = 0; i < n; i++)
            if (state[i] == YES && !dev[i] && category[i] == compute_code)
                category[i] = (int8_t)input_code;
    free(state);
    free(stack);
    return rc;
}

/* The first place j in [lo, hi) of t (ascending, every stride-th entry: t[j * stride]) with
   t[j * stride] >= x (hi: none), searched from hint (a place found before: ends come mostly in
   order on a thread) outwards. */
static int64_t first_at_least(const int64_t *t, int64_t stride, int64_t lo, int64_t hi,
                              int64_t hint, int64_t x) {
    if (hint < lo || hint > hi) hint = lo;
    int64_t a, b, step = 1; /* the answer in (a, b] */
    if (hint < hi && t[hint * stride] < x) {
        a = hint;
        for (b = hint + 1; b < hi && t[b * stride] < x; b += step, step *= 2) a = b;
        if (b > hi) b = hi;
    } else {
        b = hint;
        for (a = hint - 1; a >= lo && t[a * stride] >= x; a -= step, step *= 2) b = a;
        if (a < lo) a = lo - 1;
    }
    while (b - a > 1) { /* t[a] < x (or a = lo - 1), t[b] >= x (or b = hi) */
        int64_t m = a + (b - a) / 2;
        if (t[m * stride] < x) a = m;
        else b = m;
    }
    return b;
}

/* executor_waits.py's work of each executor event and its lookup, in one pass over the nodes:
   a node's owner is the nearest of itself and its ancestors (parent[], -1 at the top, at
   most max_depth levels up, at most 65534) that is an executor event (seeds, ascending, with
   seed_rank[k] its id's rank in [0, n_ranks)); a node with an owner is work of that rank.
   Work of a rank with is_data[rank] becomes input_code (category).  Queries (q_rank, q_t),
   q_order[k] the k-th in (rank, t) order (a permutation of [0, nq)): out[q] = the work node
   w of the query's rank with end[w] <= q_t whose (end, w) is the largest, or -1 (rank -1:
   none).  Returns 0, ERR_NO_MEMORY, ERR_CANCELLED,
   or ERR_UNSORTED (nothing written) when the seeds or queries are not in order, a rank or
   an order entry is out of range or max_depth is not in [0, 65534]. */
EXPORT int64_t tfp_cp_exec_work(int64_t n, const int32_t *parent, const int64_t *end,
                                const int64_t *seeds, const int32_t *seed_rank, int64_t n_seeds,
                                int64_t n_ranks, int64_t max_depth, const uint8_t *is_data,
                                int64_t input_code, int8_t *category, const int32_t *q_rank,
                                const int64_t *q_t, const int32_t *q_order, int64_t nq,
                                int64_t *out) {
    if (max_depth < 0 || max_depth > 65534) return ERR_UNSORTED;
    for (int64_t k = 0; k < n_seeds; k++)
        if (seeds[k] < 0 || seeds[k] >= n || (k && seeds[k] <= seeds[k - 1]) ||
            seed_rank[k] < 0 || seed_rank[k] >= n_ranks)
            return ERR_UNSORTED;
    for (int64_t k = 0; k < nq; k++) {
        int64_t q = q_order[k], b = k ? q_order[k - 1] : 0;
        if (q < 0 || q >= nq || q_rank[q] < -1 || q_rank[q] >= n_ranks ||
            (k && (q_rank[q] < q_rank[b] || (q_rank[q] == q_rank[b] && q_t[q] < q_t[b]))))
            return ERR_UNSORTED;
    }
    uint8_t *is_seed = (uint8_t *)calloc((size_t)(n > 0 ? n : 1), 1);
    int64_t *lo = (int64_t *)malloc((size_t)(n_ranks + 1) * sizeof(int64_t));
    int64_t *hint = (int64_t *)malloc((size_t)(n_ranks + 1) * sizeof(int64_t));
    /* per query (in order): its t, and the work node found for it with that node's end,
       side by side (a node's look-up touches one place) */
    struct slot {
        int64_t t, best, best_end;
    } *slot = (struct slot *)malloc((size_t)(nq > 0 ? nq : 1) * sizeof(struct slot));
    if (!is_seed || !lo || !hint || !slot) {
        free(is_seed);
        free(lo);
        free(hint);
        free(slot);
        return ERR_NO_MEMORY;
    }
    for (int64_t k = 0; k < n_seeds; k++) is_seed[seeds[k]] = 1;
    int64_t q = 0; /* lo[r]: the first query of rank r; lo[r + 1]: its end */
    for (int64_t r = 0; r <= n_ranks; r++) {
        while (q < nq && q_rank[q_order[q]] < r) q++;
        lo[r] = hint[r] = q;
    }
    for (int64_t k = 0; k < nq; k++) {
        slot[k].t = q_t[q_order[k]];
        slot[k].best = -1;
        slot[k].best_end = 0;
    }
    const int64_t stride = sizeof(struct slot) / sizeof(int64_t);
    int64_t rc = 0, last_owner = -1, last_rank = -1, last_seed = 0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) {
            rc = ERR_CANCELLED;
            break;
        }
        int64_t p = i, d = 0;
        while (p >= 0 && p < n && !is_seed[p] && d <= max_depth) {
            p = parent[p];
            d++;
        }
        if (p < 0 || p >= n || !is_seed[p] || d > max_depth) continue;
        if (p != last_owner) { /* its rank: the seeds are sorted, owners mostly ascending */
            last_seed = first_at_least(seeds, 1, 0, n_seeds, last_seed, p);
            last_owner = p;
            last_rank = seed_rank[last_seed];
        }
        if (is_data[last_rank]) category[i] = (int8_t)input_code;
        int64_t r = last_rank, lo_r = lo[r], hi_r = lo[r + 1];
        if (lo_r == hi_r) continue;
        int64_t e = end[i], j = first_at_least(&slot[0].t, stride, lo_r, hi_r, hint[r], e);
        hint[r] = j;
        if (j == hi_r) continue;
        struct slot *s = &slot[j];
        if (s->best < 0 || e > s->best_end || (e == s->best_end && i > s->best)) {
            s->best = i;
            s->best_end = e;
        }
    }
    if (rc == 0)
        for (int64_t r = 0; r < n_ranks; r++) { /* each query: the best of its rank's up to it */
            int64_t run = -1, run_end = 0;
            for (int64_t k = lo[r]; k < lo[r + 1]; k++) {
                int64_t b = slot[k].best, e = slot[k].best_end;
                if (b >= 0 && (run < 0 || e > run_end || (e == run_end && b > run))) {
                    run = b;
                    run_end = e;
                }
                out[q_order[k]] = run;
            }
        }
    if (rc == 0)
        for (int64_t k = 0; k < lo[0]; k++) out[q_order[k]] = -1; /* rank -1 */
    free(is_seed);
    free(lo);
    free(hint);
    free(slot);
    return rc;
}
