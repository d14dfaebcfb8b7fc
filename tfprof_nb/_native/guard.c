/* The SIGBUS guard of reads of a file mapping (see guard.h). */
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "guard.h"

/* this thread's innermost guard (initial-exec: read in the signal handler without a lazy
   allocation of the thread's TLS block) */
static __thread FaultGuard *tls_guard __attribute__((tls_model("initial-exec")));
/* set while this thread's fault is handed to the previous handler: a handler that puts
   on_bus back and raises again (faulthandler enabled after the guard was installed) or
   returns must not loop */
static __thread int tls_chaining __attribute__((tls_model("initial-exec")));
static struct sigaction prev_bus;
static pthread_mutex_t install_mu = PTHREAD_MUTEX_INITIALIZER;

static void on_bus(int sig, siginfo_t *info, void *ctx) {
    FaultGuard *g = tls_guard;
    const uint8_t *at = (const uint8_t *)info->si_addr;
    if (g && g->armed && at >= g->lo && at < g->hi) {
        g->armed = 0;
        siglongjmp(g->env, 1); /* (SA_NODEFER: SIGBUS is not left blocked) */
    }
    /* not a guarded read: whatever handled SIGBUS before (faulthandler: its traceback), once;
       then the default action, so that the process ends with the fault as it would have
       without the guard (a handler that returned would have the faulting read run again) */
    if (!tls_chaining) {
        tls_chaining = 1;
        if (prev_bus.sa_flags & SA_SIGINFO) {
            prev_bus.sa_sigaction(sig, info, ctx);
        } else if (prev_bus.sa_handler != SIG_DFL && prev_bus.sa_handler != SIG_IGN) {
            prev_bus.sa_handler(sig);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Put on_bus on top of SIGBUS's handlers (cheap when it is: one sigaction call). */
void guard_install(void) {
    struct sigaction cur;
    pthread_mutex_lock(&install_mu);
    if (sigaction(SIGBUS, NULL, &cur) == 0 &&
        !((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_bus)) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_bus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        prev_bus = cur;
        sigaction(SIGBUS, &sa, NULL);
    }
    pthread_mutex_unlock(&install_mu);
}

void guard_push(FaultGuard *g, const uint8_t *lo, int64_t n) {
    g->armed = 0;
    g->lo = lo;
    g->hi = lo + n;
    g->prev = tls_guard;
    tls_guard = g;
}

void guard_pop(FaultGuard *g) {
    g->armed = 0;
    tls_guard = g->prev;
}

/* Copy the spans buf[off[i], off[i] + len[i]) one after another into ``out``; 0, or
   ERR_UNREADABLE when reading the mapping faulted (what Python reads of a mapping comes
   through here: a fault in Python itself could not be caught). */
static void copy_spans(const uint8_t *buf, const int64_t *off, const int64_t *len, int64_t n,
                       uint8_t *out) {
    for (int64_t i = 0; i < n; i++) {
        memcpy(out, buf + off[i], (size_t)len[i]);
        out += len[i];
    }
}

EXPORT int64_t tfp_copy_spans(const uint8_t *buf, int64_t size, const int64_t *off,
                              const int64_t *len, int64_t n, uint8_t *out) {
    volatile int64_t rc = 0;
    guard_install();
    GUARDED(buf, size, copy_spans(buf, off, len, n, out), rc = ERR_UNREADABLE);
    return rc;
}
