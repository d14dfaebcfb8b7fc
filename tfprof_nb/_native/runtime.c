/* What every kernel shares: the cancel tokens (see common.h), running work on threads, and
   faulting new columns in ahead of their writers. */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

__thread const TfpCancel *tfp_cancel_current = NULL;

/* Work on this thread under ``token`` (NULL: none) from now on; returns the token it worked
   under until now (to be set back when the work ends). */
EXPORT const void *tfp_cancel_scope(const void *token) {
    const TfpCancel *old = tfp_cancel_current;
    tfp_cancel_current = (const TfpCancel *)token;
    return old;
}

/* Cancel ``token``: every kernel working under it (or under a token it is a parent of) stops
   at its next check.  Returns whether it was cancelled already (its own flag). */
EXPORT int64_t tfp_cancel_set(void *token) {
    return __atomic_exchange_n(&((TfpCancel *)token)->flag, 1, __ATOMIC_SEQ_CST);
}

/* Whether ``token`` (NULL: this thread's token) or one of its parents is cancelled. */
EXPORT int64_t tfp_cancel_get(const void *token) {
    if (!token) return CANCELLED() ? 1 : 0;
    for (const TfpCancel *t = (const TfpCancel *)token; t; t = t->parent)
        if (__atomic_load_n(&t->flag, __ATOMIC_RELAXED)) return 1;
    return 0;
}

typedef struct {
    void *(*fn)(void *);
    void *arg;
    const TfpCancel *token;
} ThreadStart;

static void *start_under_token(void *p) {
    const ThreadStart *s = (const ThreadStart *)p;
    tfp_cancel_current = s->token; /* the starting thread's token: cancelled with its run */
    return s->fn(s->arg);
}

/* Run ``fn(arg)`` on ``threads`` threads (this one included) and wait for them all; fewer
   when threads cannot be started.  The threads started work under this thread's token. */
void run_threads(void *(*fn)(void *), void *arg, int64_t threads) {
    pthread_t ids[64];
    ThreadStart start = {fn, arg, tfp_cancel_current};
    int64_t started = 0;
    if (threads > 64) threads = 64;
    for (int64_t t = 1; t < threads; t++)
        if (pthread_create(&ids[started], NULL, start_under_token, &start) == 0) started++;
    fn(arg);
    for (int64_t t = 0; t < started; t++) pthread_join(ids[t], NULL);
}

static void *probe_worker(void *arg) {
    if (CANCELLED()) __atomic_add_fetch((int64_t *)arg, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* How many of ``threads`` threads run_threads starts (this one included) see their token
   cancelled (a test of the hand-over). */
EXPORT int64_t tfp_cancel_probe(int64_t threads) {
    int64_t seen = 0;
    run_threads(probe_worker, &seen, threads);
    return seen;
}

#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif
#define POPULATE_BLOCK_BYTES ((int64_t)8 << 20)  /* about this much per block, every column */
static int64_t populate_min_bytes = (int64_t)64 << 20; /* smaller: not worth a thread */

/* Set the smallest columns (bytes in all) populate_begin starts a thread for; returns the
   previous value (tests use 0 to have small files populated). */
EXPORT int64_t tfp_set_populate_min(int64_t bytes) {
    int64_t old = populate_min_bytes;
    populate_min_bytes = bytes;
    return old;
}

static void *populate_worker(void *arg) {
#ifdef MADV_POPULATE_WRITE
    Populate *p = (Populate *)arg;
    int64_t total = 0;
    for (int c = 0; c < p->n_cols; c++) total += p->cols[c].rows * p->cols[c].width;
    int64_t blocks = total / POPULATE_BLOCK_BYTES + 1;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int64_t b = 0; b < blocks; b++) {
        if (p->follow) { /* wait for the writers to come near this block */
            int64_t need = p->cols[0].rows * b / blocks;
            while (need > __atomic_load_n(p->follow, __ATOMIC_RELAXED)) {
                if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) return NULL;
                usleep(200);
            }
        }
        for (int c = 0; c < p->n_cols; c++) {
            if (__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) return NULL;
            const PopColumn *col = &p->cols[c];
            int64_t lo = col->rows * b / blocks, hi = col->rows * (b + 1) / blocks;
            if (hi <= lo) continue;
            uintptr_t a = (uintptr_t)(col->base + lo * col->width) & ~(page - 1);
            uintptr_t e = (uintptr_t)(col->base + hi * col->width);
            if (madvise((void *)a, e - a, MADV_POPULATE_WRITE) != 0) return NULL; /* unsupported */
        }
    }
#else
    (void)arg;
#endif
    return NULL;
}

void populate_begin(Populate *p) {
    int64_t total = 0;
    p->started = 0;
    p->stop = 0;
    p->thread = NULL;
    for (int c = 0; c < p->n_cols; c++) total += p->cols[c].rows * p->cols[c].width;
    if (total < populate_min_bytes || total == 0) return;
    pthread_t *id = (pthread_t *)malloc(sizeof(pthread_t));
    if (id && pthread_create(id, NULL, populate_worker, p) == 0) {
        p->thread = id;
        p->started = 1;
    } else {
        free(id);
    }
}

void populate_end(Populate *p) {
    if (!p->started) return;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
    pthread_join(*(pthread_t *)p->thread, NULL);
    free(p->thread);
    p->started = 0;
}
