/* Sorting and bucketing kernels: stable radix argsorts and counting sorts over int32 rows. */
#include "common.h"

/* The digits of an LSD radix sort over keys whose varying bits are ``varying``: as few passes
   of at most 9 bits as cover the span from the lowest to the highest varying bit, the bits
   shared evenly (*lo: the first shift; returns the digit width, 0 when no bit varies).  Small
   digits keep the scatter's write streams (two per bucket) in the first-level cache: on 10.8 M
   pairs with 26 varying bits, three 9-bit passes take 0.39 s where two 16-bit ones took 0.67 s
   and three 11-bit ones 0.75 s. */
static inline int radix_digits(uint64_t varying, int *lo) {
    if (!varying) {
        *lo = 0;
        return 0;
    }
    int first = __builtin_ctzll(varying), width = 64 - __builtin_clzll(varying) - first;
    int passes = (width + 8) / 9;
    *lo = first;
    return (width + passes - 1) / passes;
}

/* Stable LSD radix passes over n (key, value) pairs with unsigned keys (KT: 32 or 64 bits):
   the digits of radix_digits where ``varying`` has a bit set; k2/v2 are scratch of n.
   Returns 1 when the sorted pairs ended in k2/v2, 0 when in k/v, -1 when out of memory or
   ERR_CANCELLED.  One template for both key widths. */
#define DEFINE_RADIX(NAME, KT)                                                               \
    static int64_t NAME(KT *k, int32_t *v, KT *k2, int32_t *v2, int64_t n, KT varying) {     \
        int first, bits = radix_digits((uint64_t)varying, &first);                          \
        int64_t buckets = (int64_t)1 << bits;                                               \
        KT mask = (KT)(buckets - 1);                                                        \
        int64_t *count = (int64_t *)tfp_malloc((size_t)512 * sizeof(int64_t));              \
        if (!count) return -1;                                                              \
        KT *sk = k, *dk = k2;                                                               \
        int32_t *sv = v, *dv = v2;                                                          \
        for (int shift = first; bits && shift < (int)(8 * sizeof(KT)); shift += bits) {     \
            if (((varying >> shift) & mask) == 0) continue;                                 \
            if (CANCELLED()) {                                                              \
                free(count);                                                                \
                return ERR_CANCELLED;                                                       \
            }                                                                               \
            memset(count, 0, (size_t)buckets * sizeof(int64_t));                            \
            for (int64_t i = 0; i < n; i++) count[(sk[i] >> shift) & mask]++;               \
            int64_t sum = 0;                                                                \
            for (int64_t b = 0; b < buckets; b++) {                                         \
                int64_t c = count[b];                                                       \
                count[b] = sum;                                                             \
                sum += c;                                                                   \
            }                                                                               \
            for (int64_t i = 0; i < n; i++) {                                               \
                int64_t d = count[(sk[i] >> shift) & mask]++;                               \
                dk[d] = sk[i];                                                              \
                dv[d] = sv[i];                                                              \
            }                                                                               \
            KT *tk = sk;                                                                    \
            sk = dk;                                                                        \
            dk = tk;                                                                        \
            int32_t *tv = sv;                                                               \
            sv = dv;                                                                        \
            dv = tv;                                                                        \
        }                                                                                   \
        free(count);                                                                        \
        return sk != k;                                                                     \
    }
DEFINE_RADIX(radix_u32, uint32_t)
DEFINE_RADIX(radix_u64, uint64_t)
#undef DEFINE_RADIX

/* Stable LSD radix argsort: reorder ``order`` (n row numbers) by key(order[i]) ascending,
   where key(r) = keys[r] (IT: int32 or int64, signed).  Keys are gathered once (the sign bit
   flipped, so unsigned order is signed order) and sorted with their rows (sequential passes)
   over the digits of radix_digits; digits that are the same for every key are skipped.
   ``tmp`` is scratch of n int32.  Returns -1 when out of memory, or ERR_CANCELLED. */
#define DEFINE_ARGSORT(NAME, IT, KT, RADIX)                                                  \
    EXPORT int64_t NAME(const IT *keys, int64_t n, int32_t *order, int32_t *tmp) {           \
        if (n < 2) return 0;                                                                \
        KT *ka = (KT *)tfp_malloc((size_t)n * sizeof(KT));                                  \
        KT *kb = (KT *)tfp_malloc((size_t)n * sizeof(KT));                                  \
        if (!ka || !kb) {                                                                   \
            free(ka);                                                                       \
            free(kb);                                                                       \
            return -1;                                                                      \
        }                                                                                   \
        const KT sign = (KT)1 << (8 * sizeof(KT) - 1);                                      \
        KT any = 0, all = (KT)~(KT)0;                                                       \
        for (int64_t i = 0; i < n; i++) {                                                   \
            KT k = (KT)keys[order[i]] ^ sign;                                               \
            ka[i] = k;                                                                      \
            any |= k;                                                                       \
            all &= k;                                                                       \
        }                                                                                   \
        int64_t rc = RADIX(ka, order, kb, tmp, n, any ^ all);                               \
        if (rc == 1) memcpy(order, tmp, (size_t)n * sizeof(int32_t));                       \
        free(ka);                                                                           \
        free(kb);                                                                           \
        return rc < 0 ? rc : 0;                                                             \
    }
DEFINE_ARGSORT(tfp_argsort_i64, int64_t, uint64_t, radix_u64)
DEFINE_ARGSORT(tfp_argsort_i32, int32_t, uint32_t, radix_u32)
#undef DEFINE_ARGSORT

/* (key, value) pairs sorted by key, stably, into out_key/out_val: key i is pos[src[i]] (pos
   NULL: src[i]), non-negative; src, pos and val are only read.  One counting pass over the
   top (at most 9) bits of the keys' span spreads the pairs into their buckets of the output,
   then each bucket is radix-sorted in place with scratch the size of the largest bucket: the
   memory is the output and that scratch (a plain LSD sort needs a second output-sized pair of
   arrays) and each bucket's passes stay in cache.  Returns 0, -1 when out of memory or
   ERR_CANCELLED. */
EXPORT int64_t tfp_sort_pairs_gather(const int32_t *src, const int32_t *pos, const int32_t *val,
                                     int64_t n, int32_t *out_key, int32_t *out_val) {
#define KEY_AT(i) (pos ? pos[src[i]] : src[i])
    if (n <= 0) return 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)KEY_AT(i);
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    uint32_t span = hi - lo;
    int total = span ? 32 - __builtin_clz(span) : 0;
    int top = total < 9 ? total : 9, shift = total - top;
    int64_t buckets = (int64_t)1 << top;
    int64_t *next = (int64_t *)tfp_calloc((size_t)buckets + 1, sizeof(int64_t));
    if (!next) return -1;
    for (int64_t i = 0; i < n; i++) next[(((uint32_t)KEY_AT(i) - lo) >> shift) + 1]++;
    int64_t largest = 0;
    for (int64_t b = 0; b < buckets; b++) {
        if (next[b + 1] > largest) largest = next[b + 1];
        next[b + 1] += next[b];
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t k = KEY_AT(i);
        int64_t d = next[((uint32_t)k - lo) >> shift]++;
        out_key[d] = k;
        out_val[d] = val[i];
    }
#undef KEY_AT
    /* next[b] is now the end of bucket b (its start: next[b - 1], 0 for the first) */
    int64_t rc = 0;
    if (shift > 0 && largest > 1) {
        uint32_t *kb = (uint32_t *)tfp_malloc((size_t)largest * sizeof(uint32_t));
        int32_t *vb = (int32_t *)tfp_malloc((size_t)largest * sizeof(int32_t));
        if (!kb || !vb) rc = -1;
        for (int64_t b = 0; b < buckets && rc == 0; b++) {
            int64_t first = b ? next[b - 1] : 0, m = next[b] - first;
            if (m < 2) continue;
            if ((b & 63) == 0 && CANCELLED()) {
                rc = ERR_CANCELLED;
                break;
            }
            uint32_t *k = (uint32_t *)out_key + first;
            int32_t *v = out_val + first;
            uint32_t any = 0, all = ~0U;
            for (int64_t i = 0; i < m; i++) {
                any |= k[i];
                all &= k[i];
            }
            int64_t r = radix_u32(k, v, kb, vb, m, any ^ all);
            if (r < 0) {
                rc = r;
            } else if (r == 1) {
                memcpy(k, kb, (size_t)m * sizeof(uint32_t));
                memcpy(v, vb, (size_t)m * sizeof(int32_t));
            }
        }
        free(kb);
        free(vb);
    }
    free(next);
    return rc;
}

/* Whether rows 0..n-1 are ordered by (line, begin, longest first). */
EXPORT int64_t tfp_is_nesting_order(const int32_t *line, const int64_t *begin,
                                    const int64_t *dur, int64_t n) {
    for (int64_t i = 1; i < n; i++)
        if (!nesting_follows(line, begin, dur, i)) return 0;
    return 1;
}

/* Sort (key, payload) pairs by key, stably (merge sort; tmp holds n of each). */
void tfp_sort_pairs(int64_t *key, int32_t *val, int64_t n, int64_t *tkey, int32_t *tval) {
    if (n < 2) return;
    for (int64_t lo = 0; lo < n; lo += 16) { /* insertion sort of runs of 16 */
        int64_t hi = lo + 16 < n ? lo + 16 : n;
        for (int64_t i = lo + 1; i < hi; i++) {
            int64_t k = key[i];
            int32_t v = val[i];
            int64_t j = i - 1;
            while (j >= lo && key[j] > k) {
                key[j + 1] = key[j];
                val[j + 1] = val[j];
                j--;
            }
            key[j + 1] = k;
            val[j + 1] = v;
        }
    }
    int64_t *sk = key, *dk = tkey;
    int32_t *sv = val, *dv = tval;
    for (int64_t width = 16; width < n; width *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * width) {
            int64_t mid = lo + width < n ? lo + width : n;
            int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            int64_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (sk[j] < sk[i]) {
                    dk[k] = sk[j];
                    dv[k++] = sv[j++];
                } else {
                    dk[k] = sk[i];
                    dv[k++] = sv[i++];
                }
            }
            while (i < mid) {
                dk[k] = sk[i];
                dv[k++] = sv[i++];
            }
            while (j < hi) {
                dk[k] = sk[j];
                dv[k++] = sv[j++];
            }
        }
        int64_t *t = sk;
        sk = dk;
        dk = t;
        int32_t *tv = sv;
        sv = dv;
        dv = tv;
    }
    if (sk != key) {
        memcpy(key, sk, (size_t)n * sizeof(int64_t));
        memcpy(val, sv, (size_t)n * sizeof(int32_t));
    }
}

/* Rows r with code[r] == value and (kind == NULL or kind[r] == kind_value), increasing, into
   ``out`` (at most cap); returns how many there are (rerun with a larger cap if more).
   ``code`` holds uint8, uint16 or int32 codes (code_bytes 1, 2 or 4). */
EXPORT int64_t tfp_select_rows(const void *code, int64_t code_bytes, const int8_t *kind,
                               int64_t n, int32_t value, int8_t kind_value, int32_t *out,
                               int64_t cap) {
    int64_t k = 0;
    for (int64_t r = 0; r < n; r++) {
        if (CODE_AT(code, code_bytes, r) == value && (!kind || kind[r] == kind_value)) {
            if (k < cap) out[k] = (int32_t)r;
            k++;
        }
    }
    return k;
}

/* Indices of the nonzero bytes of mask, as int32; returns how many. */
EXPORT int64_t tfp_nonzero_i32(const uint8_t *mask, int64_t n, int32_t *out) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (mask[i]) out[k++] = (int32_t)i;
    return k;
}

/* out[0] = min(begin), out[1] = max(begin + dur) over n > 0 events. */
EXPORT void tfp_span(const int64_t *begin, const int64_t *dur, int64_t n, int64_t *out) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t i = 0; i < n; i++) {
        if (begin[i] < lo) lo = begin[i];
        if (begin[i] + dur[i] > hi) hi = begin[i] + dur[i];
    }
    out[0] = lo;
    out[1] = hi;
}

/* Rows r where (a[r] == value) == (equal != 0), increasing, into ``out`` (at most cap);
   returns how many there are.  Runs of 8 rows that all fail are skipped a word at a time
   when looking for rare values. */
EXPORT int64_t tfp_rows_where_i8(const int8_t *a, int64_t n, int8_t value, int64_t equal,
                                 int32_t *out, int64_t cap) {
    int64_t k = 0, r = 0;
    uint64_t pattern = 0x0101010101010101ULL * (uint8_t)value;
    if (!equal) { /* rows that differ from a common value: skip words equal to it */
        for (; r + 8 <= n; r += 8) {
            uint64_t w;
            memcpy(&w, a + r, 8);
            if (w == pattern) continue;
            for (int64_t i = r; i < r + 8; i++)
                if (a[i] != value) {
                    if (k < cap) out[k] = (int32_t)i;
                    k++;
                }
        }
    }
    for (; r < n; r++)
        if ((a[r] == value) == (equal != 0)) {
            if (k < cap) out[k] = (int32_t)r;
            k++;
        }
    return k;
}
