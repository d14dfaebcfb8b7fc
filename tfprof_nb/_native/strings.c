/* After the walk: interning text stat values, resolving references, offsets to starts. */
#include "guard.h"
#include "wire.h"

/* ---- string interning ------------------------------------------------------------------ */

static inline uint64_t span_hash(const uint8_t *p, int64_t n, uint64_t salt) {
    uint64_t h = 14695981039346656037ULL ^ salt;
    for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
}

static int64_t intern_window = (int64_t)32 << 20; /* kept resident behind the current value */

/* Set the bytes tfp_intern_text keeps resident behind the value it reads (at least 1);
   returns the previous value (tests use a page to have small files handed back). */
EXPORT int64_t tfp_set_intern_window(int64_t bytes) {
    int64_t old = intern_window;
    intern_window = bytes > 0 ? bytes : 1;
    return old;
}

/* The open-addressing table of tfp_intern_text: slots (value codes, -1 empty) and their
   hashes, ``cap`` a power of two (kept here so a faulted walk frees them). */
typedef struct {
    int64_t *slots;
    uint64_t *hashes;
    int64_t cap;
} Interned;

static int interned_grow(Interned *t, int64_t ncap) {
    int64_t *ns = (int64_t *)tfp_malloc((size_t)ncap * sizeof(int64_t));
    uint64_t *nh = (uint64_t *)tfp_malloc((size_t)ncap * sizeof(uint64_t));
    if (!ns || !nh) {
        free(ns);
        free(nh);
        return -1;
    }
    for (int64_t k = 0; k < ncap; k++) ns[k] = -1;
    for (int64_t k = 0; k < t->cap; k++) {
        if (t->slots[k] < 0) continue;
        uint64_t j = t->hashes[k] & (uint64_t)(ncap - 1);
        while (ns[j] >= 0) j = (j + 1) & (uint64_t)(ncap - 1);
        ns[j] = t->slots[k];
        nh[j] = t->hashes[k];
    }
    free(t->slots);
    free(t->hashes);
    t->slots = ns;
    t->hashes = nh;
    t->cap = ncap;
    return 0;
}

typedef struct { /* tfp_intern_text's arguments */
    const uint8_t *buf;
    int64_t n_text;
    const int32_t *tx_row, *tx_len;
    const int8_t *st_kind;
    int64_t *st_value, *rep_off;
    int32_t *rep_len;
    int8_t *rep_kind;
    int64_t release, n_rep;
} InternJob;

/* (not inlined: the table lives in memory when a fault jumps out of it) */
GUARDED_WORK static int64_t intern_all(InternJob *a, Interned *t) {
    const int64_t window = intern_window;
    const uint8_t *buf = a->buf;
    int64_t released = 0; /* pages below this offset were handed back */
    for (int64_t x = 0; x < a->n_text; x++) {
        int64_t row = a->tx_row[x], len = a->tx_len[x], off = a->st_value[row];
        int8_t kind = a->st_kind[row];
        if (a->release && off > released + 2 * window) {
            release_file_pages(buf, released, off - window);
            released = off - window;
        }
        uint64_t h = span_hash(buf + off, len, (uint64_t)kind);
        uint64_t mask = (uint64_t)t->cap - 1, i = h & mask;
        int64_t code = -1;
        while (t->slots[i] >= 0) {
            int64_t r = t->slots[i];
            if (t->hashes[i] == h && a->rep_len[r] == len && a->rep_kind[r] == kind &&
                memcmp(buf + a->rep_off[r], buf + off, (size_t)len) == 0) {
                code = r;
                break;
            }
            i = (i + 1) & mask;
        }
        if (code < 0) {
            code = a->n_rep++;
            a->rep_off[code] = off;
            a->rep_len[code] = (int32_t)len;
            a->rep_kind[code] = kind;
            t->slots[i] = code;
            t->hashes[i] = h;
            if (2 * a->n_rep > t->cap && interned_grow(t, t->cap * 2) != 0) return ERR_NO_MEMORY;
        }
        a->st_value[row] = code;
    }
    return a->n_rep;
}

/* Intern the text values of the stats listed by (tx_row, tx_len): each value (its buffer
   offset in st_value) is replaced by a code into a table of distinct (kind, bytes) values,
   first-seen order.  rep_off/rep_len/rep_kind receive each distinct value's span and kind.
   With ``release`` (buf is a read-only file mapping), the pages the values are read from are
   handed back behind them as they go (values come in about file order): a profile's text
   stats are spread over the whole file, which would otherwise be resident again beside its
   columns.  Returns the number of distinct values, ERR_NO_MEMORY, or ERR_UNREADABLE when
   reading buf[0, n_buf) faulted (see guard.h). */
EXPORT int64_t tfp_intern_text(const uint8_t *buf, int64_t n_buf, int64_t n_text,
                               const int32_t *tx_row, const int32_t *tx_len,
                               const int8_t *st_kind, int64_t *st_value, int64_t *rep_off,
                               int32_t *rep_len, int8_t *rep_kind, int64_t release) {
    InternJob a = {buf, n_text, tx_row, tx_len, st_kind, st_value, rep_off, rep_len, rep_kind,
                   release, 0};
    Interned t = {NULL, NULL, 0};
    volatile int64_t rc = ERR_NO_MEMORY;
    guard_install();
    if (interned_grow(&t, 1024) == 0)
        GUARDED(buf, n_buf, rc = intern_all(&a, &t), rc = ERR_UNREADABLE);
    free(t.slots);
    free(t.hashes);
    return rc;
}

static int64_t pass_block = (int64_t)1 << 20; /* rows per block of the two passes below */

/* Set the rows per block of tfp_resolve_refs and tfp_add_gathered_i64 (at least 1); returns
   the previous value (tests use small blocks to have small files split). */
EXPORT int64_t tfp_set_pass_block(int64_t rows) {
    int64_t old = pass_block;
    pass_block = rows > 0 ? rows : 1;
    return old;
}

typedef struct { /* tfp_resolve_refs's work, shared by its threads */
    const int8_t *kind;
    int64_t *value;
    const int32_t *code_of_row;
    int64_t n, base, missing, next, block;
} RefWork;

static void *refs_worker(void *arg) {
    RefWork *w = (RefWork *)arg;
    for (;;) {
        int64_t lo = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED) * w->block;
        if (lo >= w->n) break;
        int64_t hi = lo + w->block < w->n ? lo + w->block : w->n;
        for (int64_t i = lo; i < hi; i++) {
            if (w->kind[i] != KIND_REF) continue;
            int64_t r = w->value[i];
            w->value[i] = w->base + (r < 0 ? w->missing : w->code_of_row[r]);
        }
    }
    return NULL;
}

/* Value codes of reference stats: st_value holds the referenced stat-metadata row (-1 when
   missing); it becomes ``base`` + the code of that row's name (``missing`` for -1).  Blocks
   of rows on ``threads`` threads. */
EXPORT void tfp_resolve_refs(const int8_t *st_kind, int64_t n, int64_t *st_value,
                             const int32_t *name_code_of_row, int64_t base, int64_t missing,
                             int64_t threads) {
    RefWork w = {st_kind, st_value, name_code_of_row, n, base, missing, 0, pass_block};
    run_threads(refs_worker, &w, n > w.block ? threads : 1);
}

typedef struct { /* tfp_add_gathered_i64's work: per block its earliest start, latest end and
                    whether its rows are in nesting order */
    int64_t *values;
    const int32_t *rows;
    const int64_t *table, *dur;
    int64_t n, next, block;
    int64_t *lo, *hi, *bad; /* bad: per block its first event out of range, or n */
    uint8_t *ordered;
} StartWork;

static void *starts_worker(void *arg) {
    StartWork *w = (StartWork *)arg;
    for (;;) {
        int64_t b = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED), first = b * w->block;
        if (first >= w->n) break;
        int64_t last = first + w->block < w->n ? first + w->block : w->n;
        int64_t lo = INT64_MAX, hi = INT64_MIN, bad = w->n;
        int ordered = 1;
        const int32_t *rows = w->rows;
        const int64_t *dur = w->dur;
        int64_t *values = w->values;
        for (int64_t i = first; i < last; i++) {
            int64_t v, e, line_start = w->table[rows[i]]; /* all three from the file */
            if (dur[i] < 0 || line_start < -TFP_TIME_LIMIT_PS || line_start > TFP_TIME_LIMIT_PS ||
                __builtin_add_overflow(values[i], line_start, &v) ||
                __builtin_add_overflow(v, dur[i], &e) || v < -TFP_TIME_LIMIT_PS ||
                v > TFP_TIME_LIMIT_PS || e < -TFP_TIME_LIMIT_PS || e > TFP_TIME_LIMIT_PS) {
                if (bad == w->n) bad = i;
                continue; /* (its offset left as it is, for the error message) */
            }
            values[i] = v;
            if (v < lo) lo = v;
            if (e > hi) hi = e;
            if (i > first && ordered) ordered = nesting_follows(rows, values, dur, i);
        }
        w->lo[b] = lo;
        w->hi[b] = hi;
        w->bad[b] = bad;
        w->ordered[b] = (uint8_t)ordered;
    }
    return NULL;
}

/* values[i] += table[rows[i]] (in place: event offsets become starts), in blocks on
   ``threads`` threads; span receives the earliest start and the latest start + dur[i] (when
   n > 0), then whether the events are in nesting order: rows non-decreasing, then starts
   non-decreasing, then durations non-increasing (1 or 0; nesting_follows).
   Returns 0, -1 when out of memory, or ERR_TIME_RANGE when an event starts or ends more than
   TFP_TIME_LIMIT_PS from zero (or its sum overflows), lasts a negative time, or lies on a
   line whose start is out of that range (whatever its offset): span[0] is then the first
   such row, whose value is left as it was (its offset). */
EXPORT int64_t tfp_add_gathered_i64(int64_t *values, const int32_t *rows, int64_t n,
                                    const int64_t *table, const int64_t *dur, int64_t *span,
                                    int64_t threads) {
    const int64_t block = pass_block;
    int64_t blocks = n / block + 1;
    int64_t *lo = (int64_t *)tfp_malloc((size_t)blocks * 3 * sizeof(int64_t));
    uint8_t *ordered = (uint8_t *)tfp_malloc((size_t)blocks);
    if (!lo || !ordered) {
        free(lo);
        free(ordered);
        return -1;
    }
    StartWork w = {values, rows, table, dur, n, 0, block, lo, lo + blocks, lo + 2 * blocks,
                   ordered};
    run_threads(starts_worker, &w, n > block ? threads : 1);
    span[0] = INT64_MAX;
    span[1] = INT64_MIN;
    span[2] = 1;
    for (int64_t b = 0; b * block < n; b++) {
        if (w.bad[b] < n) {
            span[0] = w.bad[b];
            free(lo);
            free(ordered);
            return ERR_TIME_RANGE;
        }
        if (w.lo[b] < span[0]) span[0] = w.lo[b];
        if (w.hi[b] > span[1]) span[1] = w.hi[b];
        /* (the first row of a block against the last of the block before) */
        if (!w.ordered[b] || (b > 0 && !nesting_follows(rows, values, dur, b * block)))
            span[2] = 0;
    }
    free(lo);
    free(ordered);
    return 0;
}
