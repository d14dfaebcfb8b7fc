/* The cancel flag every long kernel polls (see common.h). */
#include "common.h"

volatile int64_t tfp_cancel_flag = 0;

/* Set (1) or clear (0) the flag; returns its previous value. */
EXPORT int64_t tfp_set_cancel(int64_t on) {
    return __atomic_exchange_n(&tfp_cancel_flag, on ? 1 : 0, __ATOMIC_SEQ_CST);
}
