/* Memory profile kernels: matching deallocations to allocations by address. */
#include "common.h"

/* For each deallocation (in time order), the row of the live allocation at its address
   (-1 if none); allocations get -1.  An address allocated twice keeps its first live row. */
EXPORT int64_t tfp_inherit_from_allocations(int64_t n, const uint8_t *is_alloc,
                                            const int64_t *address, int64_t *source) {
    I64Map live;
    if (i64map_init(&live, 64) != 0) return -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t a = address[i];
        source[i] = -1;
        if (is_alloc[i]) {
            if (!i64map_has(&live, a) && i64map_put(&live, a, i) != 0) {
                i64map_free(&live);
                return -1;
            }
        } else if (i64map_has(&live, a)) {
            source[i] = i64map_get(&live, a, -1);
            i64map_del(&live, a);
        }
    }
    i64map_free(&live);
    return 0;
}

/* Mark the allocations of the peak step still live at the peak time (active[i] = 1) and
   return the bytes not attributable to an op: allocations minus deallocations of the step up
   to the peak, less the deallocations of memory allocated before the window.  Rows are in
   time order.  Returns INT64_MIN when out of memory. */
EXPORT int64_t tfp_active_at_peak(int64_t n, const uint8_t *is_alloc, const int64_t *address,
                                  const int64_t *step, const int64_t *time,
                                  const int64_t *alloc_bytes, int64_t peak_time,
                                  int64_t peak_step, uint8_t *active) {
    I64Map live;
    if (i64map_init(&live, 64) != 0) return INT64_MIN;
    int64_t unmapped = 0, unmapped_dealloc = 0;
    for (int64_t i = 0; i < n; i++) {
        if (time[i] > peak_time) break;
        if (step[i] != peak_step) continue;
        if (is_alloc[i]) {
            if (i64map_put(&live, address[i], i) != 0) {
                i64map_free(&live);
                return INT64_MIN;
            }
            unmapped = sat_sub(unmapped, alloc_bytes[i]); /* (byte counts from the file) */
        } else {
            if (i64map_has(&live, address[i])) i64map_del(&live, address[i]);
            else unmapped_dealloc = sat_add(unmapped_dealloc, alloc_bytes[i]);
            unmapped = sat_add(unmapped, alloc_bytes[i]);
        }
    }
    for (int64_t s = 0; s < live.cap; s++)
        if (live.keys[s] != I64MAP_EMPTY) active[live.vals[s]] = 1;
    i64map_free(&live);
    int64_t r = sat_sub(unmapped, unmapped_dealloc);
    return r == INT64_MIN ? INT64_MIN + 1 : r; /* (INT64_MIN: out of memory) */
}
