/* Shared helpers of tfprof_nb's native kernels: the cancel tokens, an int64 -> int64 hash map. */
#ifndef TFPROF_COMMON_H
#define TFPROF_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

#include "layout.h"

#define EXPORT __attribute__((visibility("default")))

/* Cancelling long kernels: a cancel token per run of work (tfprof_nb._interrupt), never a
   process-wide flag.  A thread works under at most one token (tfp_cancel_scope sets it for the
   calling thread; run_threads hands it to the threads it starts); a token is cancelled when its
   flag or one of its parents' flags is set (a run started inside another run is stopped with
   it).  Every kernel that polls stops at its next check and returns ERR_CANCELLED; a thread
   under no token (a direct call) is never cancelled.  The tokens' memory belongs to Python,
   which keeps a token alive while a thread works under it. */
typedef struct TfpCancel {
    int64_t flag;                    /* set (1) once, never cleared */
    const struct TfpCancel *parent;  /* NULL: none */
} TfpCancel;
extern __thread const TfpCancel *tfp_cancel_current;
static inline int tfp_cancelled(void) {
    for (const TfpCancel *t = tfp_cancel_current; t; t = t->parent)
        if (__atomic_load_n(&t->flag, __ATOMIC_RELAXED)) return 1;
    return 0;
}
#define CANCELLED() (tfp_cancelled())
/* true every 2**20 iterations when cancelled (cheap to test in a hot loop) */
#define CANCEL_POLL(i) ((((i) & 0xFFFFF) == 0) && CANCELLED())

/* a + b and a - b saturated at the int64 range: sums of values a file gives (durations, byte
   counts) never overflow, whatever the file says */
static inline int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}
static inline int64_t sat_sub(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r)) return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

/* Hand back the whole pages of buf[lo, hi) of a read-only file mapping (the kernel reads them
   again from the file when they are used). */
static inline void release_file_pages(const uint8_t *buf, int64_t lo, int64_t hi) {
    static int64_t page = 0;
    if (!page) page = sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)(buf + lo) + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t b = (uintptr_t)(buf + hi) & ~((uintptr_t)page - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

/* Whether row i may follow row i - 1 in nesting order: (line, begin) non-decreasing, the
   longer first at equal (line, begin). */
static inline int nesting_follows(const int32_t *line, const int64_t *begin, const int64_t *dur,
                                  int64_t i) {
    if (line[i] != line[i - 1]) return line[i] > line[i - 1];
    if (begin[i] != begin[i - 1]) return begin[i] > begin[i - 1];
    return dur[i] <= dur[i - 1];
}

/* A stat's value as an integer: uint64 and int64 as stored, doubles truncated toward zero;
   returns 0 (no value) for other kinds and for non-finite or out-of-range doubles. */
static inline int stat_int_value(int8_t kind, int64_t raw, int64_t *out) {
    if (kind == KIND_UINT64 || kind == KIND_INT64) {
        *out = raw;
        return 1;
    }
    if (kind != KIND_DOUBLE) return 0;
    double d;
    memcpy(&d, &raw, sizeof(double));
    if (!(d == d) || d >= 9.2233720368547758e18 || d <= -9.2233720368547758e18) return 0;
    *out = (int64_t)d;
    return 1;
}

/* run fn(arg) on ``threads`` threads, this one included (runtime.c) */
void run_threads(void *(*fn)(void *), void *arg, int64_t threads);

/* New columns about to be written row block by row block (runtime.c): a thread of their own
   faults their pages in ahead of the writers (MADV_POPULATE_WRITE, Linux 5.14+; elsewhere
   nothing), which on a virtual machine costs much less than the writers faulting them one by
   one side by side.  populate_begin starts it (nothing when too small to pay), populate_end
   stops and joins it. */
typedef struct {
    char *base;
    int64_t rows, width; /* width: bytes per row */
} PopColumn;
typedef struct {
    PopColumn cols[16];
    int n_cols, started;
    volatile int stop;
    void *thread; /* the pthread_t, kept opaque here */
    /* not NULL: the columns (of equal rows) are faulted in only up to the rows this says
       the writers will soon reach (it grows as they go) */
    const int64_t *follow;
} Populate;
void populate_begin(Populate *p);
void populate_end(Populate *p);

/* a code column stored as uint8 (code_bytes 1), uint16 (2) or int32 (4) */
#define CODE_AT(p, code_bytes, i)                                                              \
    ((code_bytes) == 1   ? (int32_t)((const uint8_t *)(p))[i]                                 \
     : (code_bytes) == 2 ? (int32_t)((const uint16_t *)(p))[i]                                \
                         : ((const int32_t *)(p))[i])

/* code v into row i of a code column of ``code_bytes`` (as CODE_AT reads it) */
static inline void code_store(void *p, int64_t code_bytes, int64_t i, int32_t v) {
    if (code_bytes == 1) ((uint8_t *)p)[i] = (uint8_t)v;
    else if (code_bytes == 2) ((uint16_t *)p)[i] = (uint16_t)v;
    else ((int32_t *)p)[i] = v;
}

/* v into row i of a signed column of ``bytes`` (int8, int16 or int32) */
static inline void signed_store(void *p, int64_t bytes, int64_t i, int32_t v) {
    if (bytes == 1) ((int8_t *)p)[i] = (int8_t)v;
    else if (bytes == 2) ((int16_t *)p)[i] = (int16_t)v;
    else ((int32_t *)p)[i] = v;
}

/* Large temporaries on huge pages: the kernel backs a 2 MiB page with one fault, where 4 KiB
   pages take one fault each (several times the cost per byte, every time the memory is new).
   numpy asks this for its arrays; glibc does not for large malloc blocks. */
#define TFP_HUGE_MIN ((size_t)4 << 20)
#define TFP_HUGE_PAGE ((uintptr_t)2 << 20)

static inline void *tfp_advise_huge(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
    if (p && n >= TFP_HUGE_MIN) {
        uintptr_t lo = ((uintptr_t)p + TFP_HUGE_PAGE - 1) & ~(TFP_HUGE_PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + n) & ~(TFP_HUGE_PAGE - 1);
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return p;
}

static inline void *tfp_malloc(size_t n) { return tfp_advise_huge(malloc(n), n); }
static inline void *tfp_calloc(size_t k, size_t n) {
    return tfp_advise_huge(calloc(k, n), k * n);
}
static inline void *tfp_realloc(void *p, size_t n) { return tfp_advise_huge(realloc(p, n), n); }

/* Open addressing, linear probing, power-of-two capacity; key INT64_MIN marks empty slots
   (so that key is not storable: callers treat it as absent). */
typedef struct {
    int64_t *keys;
    int64_t *vals;
    int64_t cap;
    int64_t size;
} I64Map;

#define I64MAP_EMPTY INT64_MIN

static inline uint64_t i64map_hash(int64_t key) {
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 29);
}

static inline int i64map_init(I64Map *m, int64_t expected) {
    int64_t cap = 16;
    while (cap < 2 * expected + 2) cap <<= 1;
    m->keys = (int64_t *)tfp_malloc((size_t)cap * sizeof(int64_t));
    m->vals = (int64_t *)tfp_malloc((size_t)cap * sizeof(int64_t));
    m->cap = cap;
    m->size = 0;
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        m->keys = m->vals = NULL;
        return -1;
    }
    for (int64_t i = 0; i < cap; i++) m->keys[i] = I64MAP_EMPTY;
    return 0;
}

static inline void i64map_free(I64Map *m) {
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
    m->cap = m->size = 0;
}

static inline int64_t i64map_slot(const I64Map *m, int64_t key) {
    uint64_t mask = (uint64_t)m->cap - 1;
    uint64_t i = i64map_hash(key) & mask;
    while (m->keys[i] != I64MAP_EMPTY && m->keys[i] != key) i = (i + 1) & mask;
    return (int64_t)i;
}

static inline int i64map_grow(I64Map *m) {
    I64Map bigger;
    if (i64map_init(&bigger, m->cap) != 0) return -1;
    for (int64_t i = 0; i < m->cap; i++) {
        if (m->keys[i] != I64MAP_EMPTY) {
            int64_t s = i64map_slot(&bigger, m->keys[i]);
            bigger.keys[s] = m->keys[i];
            bigger.vals[s] = m->vals[i];
            bigger.size++;
        }
    }
    i64map_free(m);
    *m = bigger;
    return 0;
}

/* Insert or overwrite (the last value wins).  Returns -1 when out of memory. */
static inline int i64map_put(I64Map *m, int64_t key, int64_t val) {
    if (key == I64MAP_EMPTY) return 0;
    if (2 * (m->size + 1) > m->cap && i64map_grow(m) != 0) return -1;
    int64_t s = i64map_slot(m, key);
    if (m->keys[s] == I64MAP_EMPTY) {
        m->keys[s] = key;
        m->size++;
    }
    m->vals[s] = val;
    return 0;
}

static inline int64_t i64map_get(const I64Map *m, int64_t key, int64_t missing) {
    if (m->cap == 0 || key == I64MAP_EMPTY) return missing;
    int64_t s = i64map_slot(m, key);
    return m->keys[s] == key ? m->vals[s] : missing;
}

static inline int i64map_has(const I64Map *m, int64_t key) {
    if (m->cap == 0 || key == I64MAP_EMPTY) return 0;
    return m->keys[i64map_slot(m, key)] == key;
}

static inline int i64map_del(I64Map *m, int64_t key) {
    /* backward-shift deletion keeps probe chains intact */
    if (m->cap == 0 || key == I64MAP_EMPTY) return 0;
    uint64_t mask = (uint64_t)m->cap - 1;
    int64_t s = i64map_slot(m, key);
    if (m->keys[s] != key) return 0;
    uint64_t i = (uint64_t)s;
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == I64MAP_EMPTY) break;
        uint64_t home = i64map_hash(m->keys[j]) & mask;
        /* move j back to i when its home is not in the cyclic range (i, j] */
        int in_range = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_range) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = I64MAP_EMPTY;
    m->size--;
    return 1;
}

#endif
