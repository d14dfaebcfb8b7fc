/* The critical path walk of analysis/critical/walk.py: many windows of one dependency graph
   walked backwards, segment by segment, in C (the walk's rules are in that module's doc).

   The graph's nodes are columns (begin, end, parent, resource, category, is_device, start_src,
   start_kind, end_src, end_kind); resource k of keys[] (ascending) holds nodes lo[k]..hi[k]-1,
   by begin.  Each window [t0, t1) gives its segments latest first, clipped to t0, empty ones
   dropped, then put in time order (earliest first) into growable columns: the caller takes
   them (tfp_cp_take) and frees them (tfp_cp_free). */
#include "common.h"

/* the codes the walk compares or writes, in the order of the ``codes`` argument */
enum { C_ELEMENT, C_HOST_WAIT, C_IDLE, C_INPUT, C_KERNEL_LAUNCH, C_LAUNCH, C_STREAM_WAIT,
       C_SYNC, N_CODES };
enum { K_EVENT, K_WAIT, K_IDLE }; /* a segment's kind */

#define MAX_NEST 256
#define MAX_PREVIOUS 4096
#define MAX_STEPS 1000000
#define NO_TIME INT64_MIN /* _previous_end's None */

typedef struct {
    const int64_t *begin, *end;
    const int32_t *parent, *start_src, *end_src;
    const int32_t *res, *keys;
    const int8_t *cat, *start_kind, *end_kind;
    const uint8_t *dev;
    const int64_t *lo, *hi;
    int64_t n_res, code[N_CODES];
    int64_t *hint; /* per resource: where its last search ended (a search starts there) */
} Graph;

typedef struct {
    int32_t *win, *res;
    int64_t *start, *end, *node, *waited;
    int8_t *cat, *kind;
    int64_t n, cap;
} Segments;

static int seg_grow(Segments *s) {
    int64_t cap = s->cap ? 2 * s->cap : 4096;
#define GROW(f, T)                                                                              \
    do {                                                                                        \
        T *p = (T *)tfp_realloc(s->f, (size_t)cap * sizeof(T));                                 \
        if (!p) return -1;                                                                      \
        s->f = p;                                                                               \
    } while (0)
    GROW(win, int32_t);
    GROW(res, int32_t);
    GROW(start, int64_t);
    GROW(end, int64_t);
    GROW(node, int64_t);
    GROW(waited, int64_t);
    GROW(cat, int8_t);
    GROW(kind, int8_t);
#undef GROW
    s->cap = cap;
    return 0;
}

static int seg_add(Segments *s, int32_t r, int64_t start, int64_t end, int64_t cat, int kind,
                   int64_t node, int64_t waited) {
    if (s->n == s->cap && seg_grow(s) != 0) return -1;
    int64_t i = s->n++;
    s->win[i] = -1;
    s->res[i] = r;
    s->start[i] = start;
    s->end[i] = end;
    s->cat[i] = (int8_t)cat;
    s->kind[i] = (int8_t)kind;
    s->node[i] = node;
    s->waited[i] = waited;
    return 0;
}

/* the index of resource r among the keys (-1: not one of them, which a graph's nodes never
   are: then r holds no nodes) */
static int64_t span_of(const Graph *g, int32_t r) {
    int64_t a = 0, b = g->n_res;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (g->keys[m] < r) a = m + 1;
        else b = m;
    }
    return a < g->n_res && g->keys[a] == r ? a : -1;
}

/* the first of nodes [lo, hi) (by begin) that starts at or after t (hi: none), searched
   outwards from h (galloping, then a binary search: the walk asks about nearby times one
   after another, so a search from where the last one ended takes a few steps, not a
   binary search of the whole resource) */
static int64_t first_from(const int64_t *begin, int64_t lo, int64_t hi, int64_t h, int64_t t) {
    int64_t a, b, step = 1; /* the answer lies in (a, b]: begin[a] < t, begin[b] >= t */
    h = h < lo ? lo : h > hi ? hi : h;
    if (h < hi && begin[h] < t) {
        for (a = h;; a = b, step <<= 1) {
            b = a + step;
            if (b >= hi) {
                b = hi;
                break;
            }
            if (begin[b] >= t) break;
        }
    } else {
        for (b = h;; b = a, step <<= 1) {
            a = b - step;
            if (a < lo) {
                a = lo - 1;
                break;
            }
            if (begin[a] < t) break;
        }
    }
    int64_t x = a + 1, y = b;
    while (x < y) {
        int64_t m = x + (y - x) / 2;
        if (begin[m] < t) x = m + 1;
        else y = m;
    }
    return x;
}

/* the last node of resource r (in order) that starts before t (-1) */
static int64_t last_before(const Graph *g, int32_t r, int64_t t) {
    int64_t k = span_of(g, r);
    if (k < 0) return -1;
    int64_t lo = g->lo[k], a = first_from(g->begin, lo, g->hi[k], g->hint[k], t);
    g->hint[k] = a;
    return a - 1 >= lo ? a - 1 : -1;
}

/* the innermost node on r running just before t (-1: none) */
static int64_t innermost(const Graph *g, int32_t r, int64_t t) {
    int64_t k = last_before(g, r, t);
    for (int i = 0; i < MAX_NEST; i++) {
        if (k < 0 || g->end[k] >= t) return k;
        k = g->parent[k];
    }
    return -1;
}

/* the end of the last lasting top-level event of r that started before t, at most t
   (NO_TIME: none) */
static int64_t previous_end(const Graph *g, int32_t r, int64_t t) {
    int64_t k = last_before(g, r, t);
    if (k < 0) return NO_TIME;
    int64_t lo = g->lo[span_of(g, r)];
    for (int i = 0; i < MAX_PREVIOUS; i++) {
        if (k < lo) return NO_TIME;
        if (g->parent[k] >= 0) k = g->parent[k];
        else if (g->end[k] == g->begin[k]) k -= 1;
        else return g->end[k] < t ? g->end[k] : t;
    }
    return NO_TIME;
}

/* the resource whose activity ends at t (see Walker.start_resource): the largest key
   (running, -end, device) or (0, previous end, 0), the first resource on ties */
static int32_t start_resource(const Graph *g, int64_t t) {
    int32_t best = g->keys[0];
    int64_t b0 = 0, b1 = 0, b2 = 0;
    for (int64_t i = 0; i < g->n_res; i++) {
        int32_t r = g->keys[i];
        int64_t k = innermost(g, r, t), k0, k1, k2;
        if (k >= 0) {
            k0 = 1, k1 = -g->end[k], k2 = g->dev[k];
        } else {
            int64_t prev = previous_end(g, r, t);
            k0 = 0, k1 = prev == NO_TIME ? -((int64_t)1 << 62) : prev, k2 = 0;
        }
        if (i == 0 || k0 > b0 || (k0 == b0 && (k1 > b1 || (k1 == b1 && k2 > b2)))) {
            best = r, b0 = k0, b1 = k1, b2 = k2;
        }
    }
    return best;
}

/* the child of k that ended last before t (-1: none started) */
static int64_t last_child(const Graph *g, int32_t r, int64_t t, int64_t k) {
    int64_t j = last_before(g, r, t);
    for (int i = 0; i < MAX_NEST; i++) {
        if (j < 0 || j == k) return -1;
        if (g->parent[j] == k) return g->end[j] < t ? j : -1;
        j = g->parent[j];
    }
    return -1;
}

/* the walk's position: a resource and a time */
typedef struct {
    int32_t r;
    int64_t t;
} Cursor;

/* at the start of nested k: its parent's wait for k's producer, or on into the parent */
static int nested_start(const Graph *g, int32_t r, int64_t k, Segments *out, Cursor *c) {
    int64_t b = g->begin[k], p = g->parent[k], src = g->start_src[k];
    c->r = r, c->t = b;
    if (src < 0 || g->start_kind[k] == g->code[C_LAUNCH]) return 0;
    int64_t j = last_before(g, r, b);
    for (int i = 0; i < MAX_NEST; i++) {
        if (j < 0 || j == p || g->parent[j] == p) break;
        j = g->parent[j];
    }
    int64_t lowest = j < 0 || j == p ? g->begin[p] : (g->end[j] < b ? g->end[j] : b);
    int64_t at = g->end[src];
    if (!(lowest < at && at <= b)) return 0;
    int64_t kind = g->start_kind[k];
    int64_t cat = kind == g->code[C_ELEMENT] ? g->code[C_INPUT]
                : kind == g->code[C_SYNC]    ? g->code[C_HOST_WAIT]
                                             : g->cat[p];
    c->r = g->res[src], c->t = at;
    return seg_add(out, r, at, b, cat, K_WAIT, k, src);
}

/* where the walk goes from the start of node k (Walker._at_start) */
static int at_start(const Graph *g, int32_t r, int64_t k, Segments *out, Cursor *c) {
    int64_t b = g->begin[k];
    if (g->parent[k] >= 0) return nested_start(g, r, k, out, c);
    int64_t prev = previous_end(g, r, b), src = g->start_src[k];
    if (src >= 0 && g->begin[src] <= b) {
        int64_t at = g->end[src] < b ? g->end[src] : b;
        if (prev == NO_TIME || at > prev) {
            int64_t kind = g->start_kind[k];
            int64_t cat = kind == g->code[C_LAUNCH]        ? g->code[C_KERNEL_LAUNCH]
                        : kind == g->code[C_ELEMENT]       ? g->code[C_INPUT]
                        : kind == g->code[C_STREAM_WAIT]   ? g->cat[src]
                                                           : g->code[C_IDLE];
            c->r = g->res[src], c->t = at;
            return seg_add(out, r, at, b, cat, K_WAIT, k, src);
        }
    }
    c->r = r;
    if (prev == NO_TIME) {
        c->t = b; /* (the next step finds nothing before: idle to the window's start) */
        return 0;
    }
    c->t = prev;
    return seg_add(out, r, prev, b, g->code[C_IDLE], K_IDLE, -1, -1);
}

/* one step of the walk back from c, before t0 (Walker._step) */
static int step(const Graph *g, int64_t t0, Segments *out, Cursor *c) {
    int32_t r = c->r;
    int64_t t = c->t, k = innermost(g, r, t);
    if (k < 0) {
        int64_t prev = previous_end(g, r, t);
        int64_t start = prev == NO_TIME ? t0 : (prev > t0 ? prev : t0);
        c->t = start;
        return seg_add(out, r, start, t, g->code[C_IDLE], K_IDLE, -1, -1);
    }
    int64_t src = g->end_src[k], child = last_child(g, r, t, k);
    if (src >= 0 && g->begin[k] < g->end[src] && g->end[src] <= t &&
        (child < 0 || g->end[child] <= g->end[src])) {
        int64_t kind = g->end_kind[k];
        int64_t cat = kind == g->code[C_SYNC]      ? g->code[C_HOST_WAIT]
                    : kind == g->code[C_ELEMENT]   ? g->code[C_INPUT]
                                                   : g->cat[k];
        c->r = g->res[src], c->t = g->end[src];
        return seg_add(out, r, g->end[src], t, cat, K_WAIT, k, src);
    }
    if (child >= 0) {
        c->t = g->end[child];
        return seg_add(out, r, g->end[child], t, g->cat[k], K_EVENT, k, -1);
    }
    if (seg_add(out, r, g->begin[k], t, g->cat[k], K_EVENT, k, -1) != 0) return -1;
    return at_start(g, r, k, out, c);
}

/* window w's walk: its segments appended to out, clipped, the empty ones dropped, in time
   order; ERR_NO_MEMORY or ERR_CANCELLED on failure */
static int64_t walk_window(const Graph *g, int64_t w, int64_t t0, int64_t t1, Segments *out,
                           int64_t *polls) {
    int64_t first = out->n;
    if (t1 <= t0 || g->n_res == 0) return 0;
    Cursor c = {start_resource(g, t1), t1};
    for (int64_t i = 0; i < MAX_STEPS && c.t > t0; i++) {
        if (step(g, t0, out, &c) != 0) return ERR_NO_MEMORY;
        *polls += 1;
        if (CANCEL_POLL(*polls)) return ERR_CANCELLED;
    }
    int64_t m = first;
    for (int64_t i = first; i < out->n; i++) {
        int64_t s = out->start[i] > t0 ? out->start[i] : t0;
        if (out->end[i] <= s) continue;
        out->win[m] = (int32_t)w, out->res[m] = out->res[i], out->start[m] = s;
        out->end[m] = out->end[i], out->cat[m] = out->cat[i], out->kind[m] = out->kind[i];
        out->node[m] = out->node[i], out->waited[m] = out->waited[i];
        m++;
    }
    out->n = m;
    for (int64_t a = first, b = m - 1; a < b; a++, b--) { /* latest first -> time order */
#define SWAP(f, T)                                                                              \
    do {                                                                                        \
        T x = out->f[a];                                                                        \
        out->f[a] = out->f[b];                                                                  \
        out->f[b] = x;                                                                          \
    } while (0)
        SWAP(res, int32_t);
        SWAP(start, int64_t);
        SWAP(end, int64_t);
        SWAP(cat, int8_t);
        SWAP(kind, int8_t);
        SWAP(node, int64_t);
        SWAP(waited, int64_t);
#undef SWAP
    }
    return 0;
}

static void seg_free(Segments *s) {
    if (!s) return;
    free(s->win), free(s->res), free(s->start), free(s->end);
    free(s->node), free(s->waited), free(s->cat), free(s->kind);
    free(s);
}

/* Walks windows [t0[w], t1[w]) of the graph (see the file's doc; ``codes``: the graph's
   ELEMENT, HOST_WAIT, IDLE, INPUT, KERNEL_LAUNCH, LAUNCH, STREAM_WAIT and SYNC codes).
   Returns the segments' count, their columns held by *handle (NULL when none), or
   ERR_NO_MEMORY / ERR_CANCELLED (*handle NULL). */
EXPORT int64_t tfp_cp_walk(const int64_t *begin, const int64_t *end, const int32_t *parent,
                           const int32_t *res, const int8_t *cat, const uint8_t *dev,
                           const int32_t *start_src, const int8_t *start_kind,
                           const int32_t *end_src, const int8_t *end_kind, int64_t n_res,
                           const int32_t *keys, const int64_t *lo, const int64_t *hi,
                           const int64_t *codes, int64_t n_win, const int64_t *t0,
                           const int64_t *t1, void **handle) {
    Graph g = {begin, end, parent, start_src, end_src, res, keys, cat, start_kind, end_kind,
               dev, lo, hi, n_res, {0}, NULL};
    for (int i = 0; i < N_CODES; i++) g.code[i] = codes[i];
    *handle = NULL;
    g.hint = (int64_t *)tfp_malloc((size_t)(n_res > 0 ? n_res : 1) * sizeof(int64_t));
    Segments *out = (Segments *)calloc(1, sizeof(Segments));
    if (!out || !g.hint) {
        free(out);
        free(g.hint);
        return ERR_NO_MEMORY;
    }
    for (int64_t k = 0; k < n_res; k++) g.hint[k] = lo[k];
    int64_t polls = 0;
    for (int64_t w = 0; w < n_win; w++) {
        int64_t rc = walk_window(&g, w, t0[w], t1[w], out, &polls);
        if (rc < 0) {
            free(g.hint);
            seg_free(out);
            return rc;
        }
    }
    free(g.hint);
    if (out->n == 0) {
        seg_free(out);
        return 0;
    }
    *handle = out;
    return out->n;
}

/* Copies the segments of a tfp_cp_walk into arrays of its count. */
EXPORT void tfp_cp_take(const void *handle, int32_t *win, int64_t *start, int64_t *end,
                        int32_t *res, int8_t *cat, int8_t *kind, int64_t *node,
                        int64_t *waited) {
    const Segments *s = (const Segments *)handle;
    if (!s) return;
    size_t n = (size_t)s->n;
    memcpy(win, s->win, n * sizeof(int32_t));
    memcpy(start, s->start, n * sizeof(int64_t));
    memcpy(end, s->end, n * sizeof(int64_t));
    memcpy(res, s->res, n * sizeof(int32_t));
    memcpy(cat, s->cat, n * sizeof(int8_t));
    memcpy(kind, s->kind, n * sizeof(int8_t));
    memcpy(node, s->node, n * sizeof(int64_t));
    memcpy(waited, s->waited, n * sizeof(int64_t));
}

/* Frees the segments of a tfp_cp_walk (NULL: nothing). */
EXPORT void tfp_cp_free(void *handle) { seg_free((Segments *)handle); }
