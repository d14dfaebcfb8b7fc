/* Reading a file mapping without dying of it.

   A read of a file mapping gives SIGBUS where ``read`` gives an error: past the end of a file
   truncated after it was mapped (a capture rewritten, a bucket re-synced), or when the file
   system fails the read (NFS, gcsfuse).  Every kernel that reads a mapping runs that work under
   GUARDED: a SIGBUS at an address of the guarded range on this thread jumps back there (the
   thread's guard is thread-local, so other threads and other faults are untouched: those go to
   the handler that was there before) and the work reports ERR_UNREADABLE instead.  The work
   abandoned this way must keep what it allocates reachable from its arguments (its caller
   frees it as on any error) and take no lock around its reads.  Entries call guard_install()
   first: it puts the handler back on top when something (faulthandler) replaced it. */
#ifndef TFPROF_GUARD_H
#define TFPROF_GUARD_H

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#include "layout.h" /* ERR_UNREADABLE: a read of the mapping faulted (the file shrank or
                        could not be read while it was read) */

typedef struct FaultGuard {
    sigjmp_buf env;
    volatile sig_atomic_t armed;
    const uint8_t *lo, *hi; /* the guarded addresses: faults elsewhere are not ours */
    struct FaultGuard *prev;
} FaultGuard;

void guard_install(void);
void guard_push(FaultGuard *g, const uint8_t *lo, int64_t n);
void guard_pop(FaultGuard *g);

/* The functions GUARDED runs are kept out of the function that calls sigsetjmp: inlined
   there, the event walk ran 2.4 % more instructions (callgrind, a 33 MB capture). */
#define GUARDED_WORK __attribute__((noinline))

/* Run ``work``; when it faults reading buf[0, n), run ``on_fault`` instead of dying.  Locals
   that ``work`` changes are not to be read by ``on_fault`` (call a function). */
#define GUARDED(buf, n, work, on_fault)                                                       \
    do {                                                                                      \
        FaultGuard guard_;                                                                    \
        guard_push(&guard_, (buf), (n));                                                      \
        if (sigsetjmp(guard_.env, 0) == 0) {                                                  \
            guard_.armed = 1;                                                                 \
            work;                                                                             \
        } else {                                                                              \
            on_fault;                                                                         \
        }                                                                                     \
        guard_pop(&guard_);                                                                   \
    } while (0)

#endif
