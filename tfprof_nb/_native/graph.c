/* Event graph kernels: nesting by time on a line, CSR adjacency, group spreading.

   Nodes are real events (rows 0..n_first-1, first set of arrays) followed by synthetic ones
   (rows n_first.., second set of arrays), so callers never concatenate per-event arrays. */
#include "common.h"

#define NODE(a1, a2, r) ((r) < n_first ? (a1)[r] : (a2)[(r) - n_first])

/* The nesting stack: open nodes with their begin and end (growable). */
typedef struct {
    int32_t *node;
    int64_t *begin, *end;
    int64_t top, cap;
} Stack;

static int stack_grow(Stack *st) {
    int64_t cap = st->cap ? 2 * st->cap : 1024;
    int32_t *node = (int32_t *)tfp_realloc(st->node, (size_t)cap * sizeof(int32_t));
    if (node) st->node = node;
    int64_t *begin = (int64_t *)tfp_realloc(st->begin, (size_t)cap * sizeof(int64_t));
    if (begin) st->begin = begin;
    int64_t *end = (int64_t *)tfp_realloc(st->end, (size_t)cap * sizeof(int64_t));
    if (end) st->end = end;
    if (!node || !begin || !end) return -1;
    st->cap = cap;
    return 0;
}

/* A new line empties the stack. */
static inline void nest_line(Stack *st, int64_t *current, int64_t ln) {
    if (ln != *current) {
        *current = ln;
        st->top = -1;
    }
}

/* The open nodes that do not contain [b, e) are closed; the innermost one left is the
   parent (-1: none).  The stack then holds exactly the node's ancestors. */
static inline int32_t nest_close(Stack *st, int64_t b, int64_t e) {
    while (st->top >= 0 && !(st->begin[st->top] <= b && e <= st->end[st->top])) st->top--;
    return st->top >= 0 ? st->node[st->top] : -1;
}

/* node i ([b, e)) opened on the stack; -1 when out of memory */
static inline int nest_open(Stack *st, int32_t i, int64_t b, int64_t e) {
    if (st->top + 1 >= st->cap && stack_grow(st) != 0) return -1;
    int64_t t = ++st->top;
    st->node[t] = i;
    st->begin[t] = b;
    st->end[t] = e;
    return 0;
}

/* node i (line ln, [b, e)) visited next: its parent is the innermost open node containing
   it.  Returns -1 when out of memory. */
static inline int nest_visit(Stack *st, int64_t *current, int32_t i, int64_t ln, int64_t b,
                             int64_t e, const uint8_t *skip, int32_t *parent) {
    nest_line(st, current, ln);
    if (skip && skip[i]) {
        parent[i] = -1;
        return 0;
    }
    parent[i] = nest_close(st, b, e);
    return nest_open(st, i, b, e);
}

#define NEST_PART_MIN 262144 /* visits: smaller walks run in one part */

/* ``parts`` + 1 cuts of the visits [0, n) (order NULL: rows in order) at line boundaries:
   cut k at the first visit of the line of the visit k/parts of the way (lines never
   decrease along the visits); parts that would split a line are left empty */
static void line_cuts(const int32_t *order, const int32_t *line, int64_t n, int64_t parts,
                      int64_t *cut) {
    cut[0] = 0;
    for (int64_t k = 1; k < parts; k++) {
        int64_t at = n * k / parts, lo = cut[k - 1], hi = at;
        if (at <= lo) {
            cut[k] = lo;
            continue;
        }
        int32_t ln = line[order ? order[at] : at];
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (line[order ? order[mid] : mid] < ln) lo = mid + 1;
            else hi = mid;
        }
        cut[k] = lo;
    }
    cut[parts] = n;
}

/* how many parts a walk of ``n`` visits on ``threads`` threads is cut into */
static int64_t nest_parts(int64_t n, int64_t threads) {
    int64_t parts = threads > 1 ? 4 * threads : 1;
    if (parts > n / NEST_PART_MIN) parts = n / NEST_PART_MIN;
    return parts < 1 ? 1 : parts;
}

typedef struct { /* tfp_nest_strict's inputs, shared by its threads */
    const int32_t *order1, *order2, *line1, *line2;
    const int64_t *begin1, *dur1, *begin2, *dur2;
    const uint8_t *skip;
    int32_t *parent;
    int64_t n1, n2, n_first;
    const int64_t *cut1, *cut2; /* part k: visits [cut1[k], cut1[k+1]) and [cut2[k], ...) */
    int64_t parts, next, rc;
} Nest;

/* the line of the real node visited at position i, of the extra one at position j */
#define LINE1(w, i) ((w)->line1[(w)->order1 ? (w)->order1[i] : (int32_t)(i)])
#define LINE2(w, j) ((w)->line2[(w)->order2[j] - (w)->n_first])

/* one part of the walk: real visits [lo1, hi1) merged with extra visits [lo2, hi2), all of
   them on lines no other part has */
static int64_t nest_part(const Nest *w, int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2) {
    Stack st = {NULL, NULL, NULL, -1, 0};
    int64_t current = INT64_MIN, i2 = lo2, rc = 0, n_first = w->n_first;
    /* the next extra node and its key, cached */
    int32_t y = -1;
    int64_t ly = 0, by = 0, dy = 0;
    if (i2 < hi2) {
        y = w->order2[i2];
        ly = w->line2[y - n_first];
        by = w->begin2[y - n_first];
        dy = w->dur2[y - n_first];
    }
    for (int64_t i1 = lo1; i1 <= hi1 && rc == 0; i1++) {
        if (((i1 - lo1) & 0xFFFFF) == 0) { /* first, then now and then: cancelled, or failed */
            if (CANCELLED()) rc = ERR_CANCELLED;
            if (rc || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
        }
        int32_t x = -1;
        int64_t lx = 0, bx = 0, dx = 0;
        if (i1 < hi1) {
            x = w->order1 ? w->order1[i1] : (int32_t)i1;
            lx = w->line1[x];
            bx = w->begin1[x];
            dx = w->dur1[x];
        }
        /* extra nodes before this real one (all of them after the last real one) */
        while (rc == 0 && i2 < hi2 &&
               (x < 0 || ly < lx || (ly == lx && (by < bx || (by == bx && dy > dx))))) {
            rc = nest_visit(&st, &current, y, ly, by, by + dy, w->skip, w->parent);
            if (++i2 < hi2) {
                y = w->order2[i2];
                ly = w->line2[y - n_first];
                by = w->begin2[y - n_first];
                dy = w->dur2[y - n_first];
            }
        }
        if (x >= 0 && rc == 0)
            rc = nest_visit(&st, &current, x, lx, bx, bx + dx, w->skip, w->parent);
    }
    free(st.node);
    free(st.begin);
    free(st.end);
    return rc;
}

static void *nest_worker(void *arg) {
    Nest *w = (Nest *)arg;
    for (;;) {
        int64_t k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (k >= w->parts || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
        int64_t rc = nest_part(w, w->cut1[k], w->cut1[k + 1], w->cut2[k], w->cut2[k + 1]);
        if (rc) {
            int64_t none = 0;
            __atomic_compare_exchange_n(&w->rc, &none, rc, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

/* the first extra visit from ``lo`` on whose line is at least ``ln`` (lines never decrease
   along the visits) */
static int64_t first_extra_on_line(const Nest *w, int64_t lo, int64_t ln) {
    int64_t hi = w->n2;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (LINE2(w, mid) < ln) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Parent of each node = the innermost earlier node on its line that fully contains it
   (begin <= begin and end <= end); nodes with skip set get -1 and never become parents.
   Nodes are visited by (line, begin, longest first): the real nodes in ``order1`` (NULL: rows
   0..n1-1 are in that order already) merged with the extra nodes in ``order2`` (node ids
   n_first..), real nodes first on ties.  Lines are independent, so a large walk is cut at
   line boundaries into parts walked on ``threads`` threads.  Returns 0, -1 (out of memory)
   or ERR_CANCELLED. */
EXPORT int64_t tfp_nest_strict(const int32_t *order1, int64_t n1, const int32_t *order2,
                               int64_t n2, int64_t n_first, const int32_t *line1,
                               const int64_t *begin1, const int64_t *dur1,
                               const int32_t *line2, const int64_t *begin2, const int64_t *dur2,
                               const uint8_t *skip, int32_t *parent, int64_t threads) {
    Nest w = {order1, order2, line1, line2, begin1, dur1, begin2, dur2, skip, parent,
              n1, n2, n_first, NULL, NULL, 1, 0, 0};
    int64_t parts = nest_parts(n1 + n2, threads);
    int64_t *cut1 = (int64_t *)malloc((size_t)(parts + 1) * sizeof(int64_t));
    int64_t *cut2 = (int64_t *)malloc((size_t)(parts + 1) * sizeof(int64_t));
    if (!cut1 || !cut2) {
        free(cut1);
        free(cut2);
        return -1;
    }
    /* the real visits cut at line boundaries, the extra ones at the same lines */
    line_cuts(order1, line1, n1, parts, cut1);
    cut2[0] = 0;
    for (int64_t k = 1; k < parts; k++)
        cut2[k] = cut1[k] < n1 ? first_extra_on_line(&w, cut2[k - 1], LINE1(&w, cut1[k]))
                               : n2;
    cut2[parts] = n2;
    w.cut1 = cut1;
    w.cut2 = cut2;
    w.parts = parts;
    run_threads(nest_worker, &w, parts > 1 ? threads : 1);
    free(cut1);
    free(cut2);
    return w.rc;
}

#undef LINE1
#undef LINE2

/* Loose nesting (trace viewer rows, self time): a node's parent is the innermost open node
   on its line that ends after it starts.  Writes parent (-1 for roots) and depth, and adds
   each node's duration, clipped to its parent's end, to the parent's child_ps.  ``order``:
   rows 0..n-1 by (line, begin, longest first). */
EXPORT void tfp_nest_loose(const int32_t *order, int64_t n, const int32_t *line,
                           const int64_t *begin, const int64_t *dur, int32_t *parent,
                           int32_t *depth, int64_t *child_ps, int32_t *stack) {
    int64_t top = -1;
    int64_t current = INT64_MIN;
    for (int64_t k = 0; k < n; k++) {
        int32_t i = order[k];
        if (line[i] != current) {
            current = line[i];
            top = -1;
        }
        int64_t s = begin[i];
        while (top >= 0 && begin[stack[top]] + dur[stack[top]] <= s) top--;
        if (top >= 0) {
            int32_t p = stack[top];
            parent[i] = p;
            depth[i] = (int32_t)(top + 1);
            int64_t end = s + dur[i], p_end = begin[p] + dur[p];
            child_ps[p] = sat_add(child_ps[p], (end < p_end ? end : p_end) - s);
        } else {
            parent[i] = -1;
            depth[i] = 0;
        }
        stack[++top] = i;
    }
}

/* Adjacency lists of the edges src -> dst over n nodes: off (n + 1) and tgt (e < 2**31),
   edges kept in their order. */
EXPORT int64_t tfp_csr(const int32_t *src, const int32_t *dst, int64_t e, int64_t n,
                       int32_t *off, int32_t *tgt) {
    if (e > INT32_MAX) return -1;
    memset(off, 0, (size_t)(n + 1) * sizeof(int32_t));
    for (int64_t i = 0; i < e; i++) off[src[i] + 1]++;
    for (int64_t i = 0; i < n; i++) off[i + 1] += off[i];
    for (int64_t i = 0; i < e; i++) tgt[off[src[i]]++] = dst[i];
    /* each off[v] now holds the end of v's list: shift back to starts */
    for (int64_t i = n; i > 0; i--) off[i] = off[i - 1];
    off[0] = 0;
    return 0;
}

/* The parents of a node: its nesting parent (parent[v], -1: none) then the sources of the
   extra edges into it, which are sorted by destination (x_dst increasing, x_src alongside). */
typedef struct {
    const int32_t *parent, *x_dst, *x_src;
    int64_t n_x;
} Parents;

/* the first position of a sorted array not below x */
static inline int64_t lower_bound_i32(const int32_t *a, int64_t n, int32_t x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) >> 1;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static inline int64_t first_extra(const Parents *p, int32_t v) {
    return lower_bound_i32(p->x_dst, p->n_x, v);
}

#define SEEN(s, v) (((s)[(v) >> 3] >> ((v) & 7)) & 1)
#define SEE(s, v) ((s)[(v) >> 3] |= (uint8_t)(1u << ((v) & 7)))
#define UNSEE(s, v) ((s)[(v) >> 3] &= (uint8_t)~(1u << ((v) & 7)))

/* Whether an ancestor of r (over every parent edge) is a root of r's level.  ``seen`` is a
   per-node scratch bit, all clear on entry and on return. */
static int has_root_ancestor(int32_t r, const int8_t *root_level, const Parents *par,
                             uint8_t *seen, int32_t **queue, int64_t *qcap) {
    int64_t head = 0, tail = 0;
    int8_t level = root_level[r];
    int found = 0;
    (*queue)[tail++] = r;
    SEE(seen, r);
    while (head < tail && !found) {
        int32_t v = (*queue)[head++];
        int64_t j = first_extra(par, v);
        for (int32_t p = par->parent[v]; found == 0; p = par->x_src[j++]) {
            if (p >= 0 && !SEEN(seen, p)) {
                if (root_level[p] == level) {
                    found = 1;
                    break;
                }
                if (tail == *qcap) {
                    int32_t *q = (int32_t *)tfp_realloc(*queue,
                                                    (size_t)(*qcap * 2) * sizeof(int32_t));
                    if (!q) {
                        found = -1;
                        break;
                    }
                    *queue = q;
                    *qcap *= 2;
                }
                SEE(seen, p);
                (*queue)[tail++] = p;
            }
            if (j >= par->n_x || par->x_dst[j] != v) break;
        }
    }
    for (int64_t i = 0; i < tail; i++) UNSEE(seen, (*queue)[i]);
    return found;
}

/* The extra children of the node at visit position p: edges sorted by their source's visit
   position (s_key increasing, s_dst alongside), from cursor *k on; each ungrouped child gets
   group g and is pushed on the work stack.  Returns -1 when out of memory. */
static inline int spread_extra(int64_t p, const int32_t *s_key, const int32_t *s_dst,
                               int64_t n_x, int64_t *k, int32_t *group, int32_t g,
                               int32_t **work, int64_t *top, int64_t *wcap) {
    int64_t j = *k;
    while (j < n_x && s_key[j] < p) j++;
    for (; j < n_x && s_key[j] == p; j++) {
        int32_t c = s_dst[j];
        if (group[c] >= 0) continue;
        group[c] = g;
        if (*top + 1 >= *wcap) {
            int32_t *w = (int32_t *)tfp_realloc(*work, (size_t)(*wcap * 2) * sizeof(int32_t));
            if (!w) return -1;
            *work = w;
            *wcap *= 2;
        }
        (*work)[++*top] = c;
    }
    *k = j;
    return 0;
}

/* Give each root (in the given order) a new group unless it is grouped already or has a
   root ancestor of its level (over every parent edge), then spread the group to every
   ungrouped node it reaches, as a breadth-first spread over child lists would, without the
   lists.  A node's nesting descendants are the real nodes after it in visit order (``order``,
   NULL: row order; ``pos`` its inverse, NULL likewise) whose nearest real ancestor (climbing
   through the synthetic nodes n_real..n-1) is at or after it, up to the first one off its
   line or not nested in it (async nodes, ``skip``, are passed over); a node reached through
   an extra edge has its own range scanned.  Extra edges come sorted by their source's visit
   position (s_key, s_dst).  Real nodes get the groups a breadth-first spread gives them (a
   grouped node's nesting descendants are all grouped, so scanning through them changes
   nothing); a synthetic node gets the group of the first descendant that leads to it, none
   when it has none.  parent and x_dst/x_src: see Parents.  Returns the number of groups,
   -1 when out of memory, or ERR_CANCELLED. */
EXPORT int64_t tfp_spread_groups(const int32_t *roots, int64_t n_roots,
                                 const int8_t *root_level, int64_t n_real, int64_t n,
                                 const int32_t *order, const int32_t *pos, const int32_t *line,
                                 const uint8_t *skip, const int32_t *parent,
                                 const int32_t *x_dst, const int32_t *x_src, int64_t n_x,
                                 const int32_t *s_key, const int32_t *s_dst, int64_t n_s,
                                 int32_t *group, int32_t *root_of_group) {
    Parents par = {parent, x_dst, x_src, n_x};
    uint8_t *seen = (uint8_t *)tfp_calloc((size_t)n / 8 + 1, 1);
    int64_t qcap = 64, wcap = 1024;
    int32_t *pq = (int32_t *)tfp_malloc((size_t)qcap * sizeof(int32_t));
    int32_t *work = (int32_t *)tfp_malloc((size_t)wcap * sizeof(int32_t));
    if (!seen || !pq || !work) {
        free(seen);
        free(pq);
        free(work);
        return -1;
    }
    for (int64_t i = 0; i < n; i++) group[i] = -1;
    int32_t next = 0;
    int64_t scanned = 0;
    for (int64_t k = 0; k < n_roots && next >= 0; k++) {
        if ((k & 0xFFF) == 0 && CANCELLED()) {
            next = ERR_CANCELLED;
            break;
        }
        int32_t r = roots[k];
        if (group[r] >= 0) continue;
        int ancestor = has_root_ancestor(r, root_level, &par, seen, &pq, &qcap);
        if (ancestor < 0) {
            next = -1;
            break;
        }
        if (ancestor) continue;
        int32_t g = next++;
        root_of_group[g] = r;
        group[r] = g;
        int64_t top = 0;
        work[0] = r;
        while (top >= 0 && next >= 0) {
            int32_t x = work[top--];
            int64_t px = x < n_real ? (pos ? pos[x] : x) : -1;
            /* the extra children of x, then its nesting descendants and theirs */
            int64_t cur = px >= 0 ? lower_bound_i32(s_key, n_s, (int32_t)px) : n_s;
            if (px >= 0 && spread_extra(px, s_key, s_dst, n_s, &cur, group, g, &work, &top,
                                        &wcap) != 0) {
                next = -1;
                break;
            }
            if (px < 0) continue;
            int32_t ln = line[x];
            for (int64_t p = px + 1; p < n_real; p++) {
                if ((++scanned & 0xFFFFF) == 0 && CANCELLED()) {
                    next = ERR_CANCELLED;
                    break;
                }
                int32_t u = order ? order[p] : (int32_t)p;
                if (line[u] != ln) break;
                int32_t q = parent[u];
                if (q < 0) {
                    if (skip && skip[u]) continue;
                    break;
                }
                while (q >= n_real) q = parent[q];
                if (q < 0 || (pos ? pos[q] : q) < px) break;
                if (group[u] >= 0) continue;
                group[u] = g;
                for (int32_t a = parent[u]; a >= n_real && group[a] < 0; a = parent[a])
                    group[a] = g;
                if (spread_extra(p, s_key, s_dst, n_s, &cur, group, g, &work, &top,
                                 &wcap) != 0) {
                    next = -1;
                    break;
                }
            }
        }
    }
    free(seen);
    free(pq);
    free(work);
    return next;
}

/* ThreadpoolListener regions: from each StopRegion back to the last StartRegion before it
   on the same line.  Input rows are sorted by (line, time); writes the (line, begin, end,
   context) of each region and returns how many. */
EXPORT int64_t tfp_threadpool_regions(int64_t m, const uint8_t *is_start, const int32_t *line,
                                      const int64_t *t, const int64_t *ctx, int32_t *r_line,
                                      int64_t *r_begin, int64_t *r_end, int64_t *r_ctx) {
    int64_t k = 0, cur = INT64_MIN, last_t = 0, last_c = 0;
    int have = 0;
    for (int64_t i = 0; i < m; i++) {
        if (line[i] != cur) {
            cur = line[i];
            have = 0;
        }
        if (is_start[i]) {
            have = 1;
            last_t = t[i];
            last_c = ctx[i];
        } else if (have) {
            r_line[k] = line[i];
            r_begin[k] = last_t;
            r_end[k] = t[i];
            r_ctx[k] = last_c;
            k++;
        }
    }
    return k;
}

/* The same regions straight from the event rows of the starts (with their contexts) and the
   stops (both increasing), merged in row order, which must be (line, time) order; starts
   whose ``has`` flag is 0 are left out (``has`` NULL: none); ctx NULL reads as 0s and r_ctx
   may be NULL.  Writes at
   most nt regions and returns how many, or -2 when the rows are not in that order. */
EXPORT int64_t tfp_regions_from_rows(const int32_t *starts, const int64_t *ctx,
                                     const uint8_t *has, int64_t ns, const int32_t *stops,
                                     int64_t nt, const int32_t *line, const int64_t *begin,
                                     int32_t *r_line, int64_t *r_begin, int64_t *r_end,
                                     int64_t *r_ctx) {
    int64_t i = 0, j = 0, k = 0, cur = INT64_MIN, last_t = 0, last_c = 0, prev_t = 0;
    int have = 0;
    for (;;) {
        while (has && i < ns && !has[i]) i++;
        if (i >= ns && j >= nt) break;
        int is_start = j >= nt || (i < ns && starts[i] <= stops[j]);
        int32_t r = is_start ? starts[i] : stops[j];
        int64_t ln = line[r], t = begin[r];
        if (ln != cur) {
            if (ln < cur) return -2;
            cur = ln;
            have = 0;
        } else if (t < prev_t) {
            return -2;
        }
        prev_t = t;
        if (is_start) {
            have = 1;
            last_t = t;
            last_c = ctx ? ctx[i] : 0;
            i++;
        } else {
            if (have) {
                r_line[k] = (int32_t)ln;
                r_begin[k] = last_t;
                r_end[k] = t;
                if (r_ctx) r_ctx[k] = last_c;
                k++;
            }
            j++;
        }
    }
    return k;
}

/* The strict nesting of tfp_nest_strict over one set of nodes (rows 0..n-1 visited in
   ``order``, NULL: in row order), answered at the query rows only, with no parent per event:
   q (m rows, increasing, repeats allowed) get their parent in parent_out.  With ``exec_name``
   (a flag per name code) given, found[k] = call_flag of the first of q[k]'s ancestors (its
   parent first, at most ``levels``) whose name has the flag, 0 when none: at a node's visit
   the nesting stack holds exactly its ancestors.  Lines whose line_ok is 0 (line_ok NULL:
   every line is walked) are passed over and their query rows left as they are: the caller
   walks every line it asks about, or knows no flagged ancestor is there.  Returns 0, -1
   (out of memory) or ERR_CANCELLED.  parent_out may be NULL (only ``found`` wanted). */
typedef struct { /* tfp_nest_query's inputs, shared by its threads */
    const int32_t *order, *line;
    const int64_t *begin, *dur;
    const uint8_t *skip, *line_ok, *is_q;
    const int32_t *q;
    int64_t m;
    int32_t *parent_out;
    const void *name_code;
    int64_t code_bytes;
    const uint8_t *exec_name, *call_flag;
    int64_t levels;
    uint8_t *found;
    const int64_t *cut; /* part k: visits [cut[k], cut[k + 1]) */
    int64_t parts, next, rc;
} NestQuery;

/* one part of the query walk: visits [lo, hi), on lines no other part has */
static int64_t nest_query_part(const NestQuery *w, int64_t lo, int64_t hi) {
    Stack st = {NULL, NULL, NULL, -1, 0};
    int64_t current = INT64_MIN, rc = 0;
    const int32_t *line = w->line, *q = w->q;
    for (int64_t i = lo; i < hi; i++) {
        if (((i - lo) & 0xFFFFF) == 0) { /* first, then now and then: cancelled, or failed */
            if (CANCELLED()) rc = ERR_CANCELLED;
            if (rc || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
        }
        int32_t x = w->order ? w->order[i] : (int32_t)i;
        if (w->line_ok && !w->line_ok[line[x]]) continue;
        int64_t b = w->begin[x], e = b + w->dur[x];
        nest_line(&st, &current, line[x]);
        int skipped = w->skip && w->skip[x];
        int32_t p = skipped ? -1 : nest_close(&st, b, e);
        if (SEEN(w->is_q, x)) {
            uint8_t f = 0;
            if (w->exec_name && p >= 0) {
                for (int64_t t = st.top; t >= 0 && st.top - t < w->levels; t--) {
                    int32_t z = st.node[t];
                    if (w->exec_name[CODE_AT(w->name_code, w->code_bytes, z)]) {
                        f = w->call_flag[z];
                        break;
                    }
                }
            }
            for (int64_t k = lower_bound_i32(q, w->m, x); k < w->m && q[k] == x; k++) {
                if (w->parent_out) w->parent_out[k] = p;
                if (w->found) w->found[k] = f;
            }
        }
        if (!skipped && nest_open(&st, x, b, e) != 0) {
            rc = -1;
            break;
        }
    }
    free(st.node);
    free(st.begin);
    free(st.end);
    return rc;
}

static void *nest_query_worker(void *arg) {
    NestQuery *w = (NestQuery *)arg;
    for (;;) {
        int64_t k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (k >= w->parts || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
        int64_t rc = nest_query_part(w, w->cut[k], w->cut[k + 1]);
        if (rc) {
            int64_t none = 0;
            __atomic_compare_exchange_n(&w->rc, &none, rc, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

EXPORT int64_t tfp_nest_query(const int32_t *order, int64_t n, const int32_t *line,
                              const int64_t *begin, const int64_t *dur, const uint8_t *skip,
                              const uint8_t *line_ok, const int32_t *q, int64_t m,
                              int32_t *parent_out, const void *name_code, int64_t code_bytes,
                              const uint8_t *exec_name, const uint8_t *call_flag,
                              int64_t levels, uint8_t *found, int64_t threads) {
    uint8_t *is_q = (uint8_t *)tfp_calloc((size_t)n / 8 + 1, 1);
    int64_t parts = nest_parts(n, threads);
    int64_t *cut = (int64_t *)malloc((size_t)(parts + 1) * sizeof(int64_t));
    if (!is_q || !cut) {
        free(is_q);
        free(cut);
        return -1;
    }
    for (int64_t k = 0; k < m; k++) SEE(is_q, q[k]);
    line_cuts(order, line, n, parts, cut);
    NestQuery w = {order, line, begin, dur, skip, line_ok, is_q, q, m, parent_out, name_code,
                   code_bytes, exec_name, call_flag, levels, found, cut, parts, 0, 0};
    run_threads(nest_query_worker, &w, parts > 1 ? threads : 1);
    free(is_q);
    free(cut);
    return w.rc;
}
