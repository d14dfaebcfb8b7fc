/* What every kernel shares: the cancel flag (see common.h) and running work on threads. */
#include <pthread.h>

#include "common.h"

volatile int64_t tfp_cancel_flag = 0;

/* Set (1) or clear (0) the flag; returns its previous value. */
EXPORT int64_t tfp_set_cancel(int64_t on) {
    return __atomic_exchange_n(&tfp_cancel_flag, on ? 1 : 0, __ATOMIC_SEQ_CST);
}

/* Whether the flag is set. */
EXPORT int64_t tfp_get_cancel(void) { return CANCELLED() ? 1 : 0; }

/* Run ``fn(arg)`` on ``threads`` threads (this one included) and wait for them all; fewer
   when threads cannot be started. */
void run_threads(void *(*fn)(void *), void *arg, int64_t threads) {
    pthread_t ids[64];
    int64_t started = 0;
    if (threads > 64) threads = 64;
    for (int64_t t = 1; t < threads; t++)
        if (pthread_create(&ids[started], NULL, fn, arg) == 0) started++;
    fn(arg);
    for (int64_t t = 0; t < started; t++) pthread_join(ids[t], NULL);
}
