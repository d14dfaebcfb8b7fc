/* Reading one stat of every event: sparse (rows, values) columns, lookups and joins. */
#include "common.h"

/* The integer stat ``code`` of events (owner_kind 0): for each event carrying it, its row
   and value (doubles truncated toward zero; non-finite or out-of-range doubles skipped; the
   last value wins when an event carries the stat twice).  Stat rows are in event order;
   name codes are uint16 or int32 (code_bytes 2 or 4).  Writes at most cap entries; returns
   how many there are. */
EXPORT int64_t tfp_int_stat(const void *name_code, int64_t code_bytes,
                            const int8_t *owner_kind, const int8_t *kind, const int64_t *raw,
                            const int32_t *owner, int64_t n, int32_t code, int32_t *out_rows,
                            int64_t *out_values, int64_t cap) {
    int64_t k = 0;
    int32_t last_owner = -1;
    for (int64_t i = 0; i < n; i++) {
        if (CODE_AT(name_code, code_bytes, i) != code || owner_kind[i] != 0) continue;
        int8_t t = kind[i];
        int64_t v;
        if (t == KIND_DOUBLE) {
            double d;
            memcpy(&d, &raw[i], sizeof(double));
            if (!(d == d) || d >= 9.2233720368547758e18 || d <= -9.2233720368547758e18)
                continue;
            v = (int64_t)d;
        } else if (t == KIND_UINT64 || t == KIND_INT64) {
            v = raw[i];
        } else {
            continue;
        }
        int32_t o = owner[i];
        if (k > 0 && last_owner == o) { /* the same event again: the last value wins */
            if (k <= cap) out_values[k - 1] = v;
            continue;
        }
        if (k < cap) {
            out_rows[k] = o;
            out_values[k] = v;
        }
        last_owner = o;
        k++;
    }
    return k;
}

/* Values of a sparse stat (rows increasing) at query rows: out[i] = values[j] where
   rows[j] == query[i] (hit[i] = 1), else 0.  Sorted queries are merged in one pass, others
   binary-searched. */
EXPORT void tfp_sparse_lookup(const int32_t *rows, const int64_t *values, int64_t n,
                              const int32_t *query, int64_t m, int64_t *out, uint8_t *hit) {
    int sorted = 1;
    for (int64_t i = 1; i < m; i++)
        if (query[i] < query[i - 1]) {
            sorted = 0;
            break;
        }
    int64_t j = 0;
    for (int64_t i = 0; i < m; i++) {
        int32_t q = query[i];
        if (sorted) {
            while (j < n && rows[j] < q) j++;
        } else {
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = (lo + hi) >> 1;
                if (rows[mid] < q) lo = mid + 1;
                else hi = mid;
            }
            j = lo;
        }
        if (j < n && rows[j] == q) {
            out[i] = values[j];
            hit[i] = 1;
        } else {
            out[i] = 0;
            hit[i] = 0;
        }
    }
}

/* Rows present in both sparse stats (rows increasing), with both values. */
EXPORT int64_t tfp_sparse_intersect(const int32_t *ra, const int64_t *va, int64_t na,
                                    const int32_t *rb, const int64_t *vb, int64_t nb,
                                    int32_t *rows, int64_t *out_a, int64_t *out_b) {
    int64_t i = 0, j = 0, k = 0;
    while (i < na && j < nb) {
        if (ra[i] < rb[j]) i++;
        else if (rb[j] < ra[i]) j++;
        else {
            rows[k] = ra[i];
            out_a[k] = va[i];
            out_b[k] = vb[j];
            k++;
            i++;
            j++;
        }
    }
    return k;
}

static inline uint64_t pair_hash(int64_t a, int64_t b) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)b + 0x632BE59BD9B4E019ULL);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

/* Distinct (k0, k1) keys of a: open addressing over key ids; a key id's representative
   row of a holds the key, so the table itself stores only int32 ids. */
typedef struct {
    int32_t *tab; /* key id per slot, -1: empty */
    int32_t *rep; /* a's index holding each key */
    const int64_t *k0, *k1;
    int64_t cap;
} KeyIndex;

static int64_t key_slot(const KeyIndex *x, int64_t a, int64_t b, int *found) {
    uint64_t mask = (uint64_t)x->cap - 1, i = pair_hash(a, b) & mask;
    while (x->tab[i] >= 0) {
        int32_t r = x->rep[x->tab[i]];
        if (x->k0[r] == a && x->k1[r] == b) {
            *found = 1;
            return (int64_t)i;
        }
        i = (i + 1) & mask;
    }
    *found = 0;
    return (int64_t)i;
}

/* Join one partition: a's entries ia[0..na) and b's entries ib[0..nb) (indices into the key
   arrays); appends pairs to out at *k (writes only below cap). */
static int join_partition(const int32_t *ia, int64_t na, const int32_t *ib, int64_t nb,
                          const int32_t *a_rows, const int64_t *a_k0, const int64_t *a_k1,
                          const int32_t *b_rows, const int64_t *b_k0, const int64_t *b_k1,
                          int64_t limit, int32_t *out_a, int32_t *out_b, int64_t cap,
                          int64_t *k, KeyIndex *x, int32_t *key_of, int32_t *a_count,
                          int32_t *b_count, int32_t *a_off, int32_t *grouped) {
    int found;
    x->cap = 16;
    while (x->cap < 2 * na + 2) x->cap <<= 1;
    for (int64_t i = 0; i < x->cap; i++) x->tab[i] = -1;
    int32_t n_keys = 0;
    for (int64_t i = 0; i < na; i++) { /* distinct keys, rows per key */
        int32_t e = ia[i];
        int64_t s = key_slot(x, a_k0[e], a_k1[e], &found);
        if (!found) {
            x->rep[n_keys] = e;
            a_count[n_keys] = 0;
            b_count[n_keys] = 0;
            x->tab[s] = n_keys++;
        }
        key_of[i] = x->tab[s];
        a_count[x->tab[s]]++;
    }
    a_off[0] = 0;
    for (int32_t q = 0; q < n_keys; q++) {
        a_off[q + 1] = a_off[q] + a_count[q];
        a_count[q] = 0;
    }
    for (int64_t i = 0; i < na; i++) {
        int32_t q = key_of[i];
        grouped[a_off[q] + a_count[q]++] = a_rows[ia[i]];
    }
    for (int64_t j = 0; j < nb; j++) {
        int32_t e = ib[j];
        int64_t s = key_slot(x, b_k0[e], b_k1[e], &found);
        key_of[na + j] = found ? x->tab[s] : -1; /* b's key ids follow a's */
        if (found) b_count[x->tab[s]]++;
    }
    for (int64_t j = 0; j < nb; j++) {
        int32_t q = key_of[na + j];
        if (q < 0) continue;
        if (limit > 0 && a_count[q] >= limit && b_count[q] >= limit) continue;
        for (int32_t p = a_off[q]; p < a_off[q + 1]; p++) {
            if (*k < cap) {
                out_a[*k] = grouped[p];
                out_b[*k] = b_rows[ib[j]];
            }
            (*k)++;
        }
    }
    return 0;
}

/* Join two row sets on equal (k0, k1): every pair (a row, b row) with equal keys.  Keys
   where both sides have ``limit`` or more rows are skipped (limit <= 0: none).  Both sides
   are first split into partitions by their keys' hash, so each partition's table stays in
   cache; pairs come partition by partition, in b's then a's order within one.  Writes at
   most cap pairs; returns the number of pairs, -1 when out of memory. */
EXPORT int64_t tfp_hash_join(const int32_t *a_rows, const int64_t *a_k0, const int64_t *a_k1,
                             int64_t na, const int32_t *b_rows, const int64_t *b_k0,
                             const int64_t *b_k1, int64_t nb, int64_t limit, int32_t *out_a,
                             int32_t *out_b, int64_t cap) {
    int bits = 0;
    while (bits < 12 && (na >> bits) > 16384) bits++;
    int64_t parts = (int64_t)1 << bits;
    int32_t *pa = (int32_t *)malloc(((size_t)na + 1) * sizeof(int32_t));
    int32_t *pb = (int32_t *)malloc(((size_t)nb + 1) * sizeof(int32_t));
    int64_t *off_a = (int64_t *)calloc((size_t)parts + 1, sizeof(int64_t));
    int64_t *off_b = (int64_t *)calloc((size_t)parts + 1, sizeof(int64_t));
    int64_t *fill = (int64_t *)malloc(((size_t)parts + 1) * sizeof(int64_t));
    int64_t k = -1;
    KeyIndex x = {NULL, NULL, a_k0, a_k1, 0};
    int32_t *key_of = NULL, *a_count = NULL, *b_count = NULL, *a_off = NULL, *grouped = NULL;
    if (!pa || !pb || !off_a || !off_b || !fill) goto done;
    /* partition by the top bits of the hash (the table uses the low bits) */
#define PART(k0, k1) (bits ? (int64_t)(pair_hash(k0, k1) >> (64 - bits)) : 0)
    for (int64_t i = 0; i < na; i++) off_a[PART(a_k0[i], a_k1[i]) + 1]++;
    for (int64_t j = 0; j < nb; j++) off_b[PART(b_k0[j], b_k1[j]) + 1]++;
    int64_t max_a = 0, max_b = 0;
    for (int64_t p = 0; p < parts; p++) {
        if (off_a[p + 1] > max_a) max_a = off_a[p + 1];
        if (off_b[p + 1] > max_b) max_b = off_b[p + 1];
        off_a[p + 1] += off_a[p];
        off_b[p + 1] += off_b[p];
    }
    memcpy(fill, off_a, (size_t)parts * sizeof(int64_t));
    for (int64_t i = 0; i < na; i++) pa[fill[PART(a_k0[i], a_k1[i])]++] = (int32_t)i;
    memcpy(fill, off_b, (size_t)parts * sizeof(int64_t));
    for (int64_t j = 0; j < nb; j++) pb[fill[PART(b_k0[j], b_k1[j])]++] = (int32_t)j;
#undef PART
    int64_t tcap = 16;
    while (tcap < 2 * max_a + 2) tcap <<= 1;
    x.tab = (int32_t *)malloc((size_t)tcap * sizeof(int32_t));
    x.rep = (int32_t *)malloc(((size_t)max_a + 1) * sizeof(int32_t));
    key_of = (int32_t *)malloc(((size_t)max_a + max_b + 1) * sizeof(int32_t));
    a_count = (int32_t *)malloc(((size_t)max_a + 1) * sizeof(int32_t));
    b_count = (int32_t *)malloc(((size_t)max_a + 1) * sizeof(int32_t));
    a_off = (int32_t *)malloc(((size_t)max_a + 2) * sizeof(int32_t));
    grouped = (int32_t *)malloc(((size_t)max_a + 1) * sizeof(int32_t));
    if (!x.tab || !x.rep || !key_of || !a_count || !b_count || !a_off || !grouped) goto done;
    k = 0;
    for (int64_t p = 0; p < parts; p++)
        join_partition(pa + off_a[p], off_a[p + 1] - off_a[p], pb + off_b[p],
                       off_b[p + 1] - off_b[p], a_rows, a_k0, a_k1, b_rows, b_k0, b_k1, limit,
                       out_a, out_b, cap, &k, &x, key_of, a_count, b_count, a_off, grouped);
done:
    free(pa);
    free(pb);
    free(off_a);
    free(off_b);
    free(fill);
    free(x.tab);
    free(x.rep);
    free(key_of);
    free(a_count);
    free(b_count);
    free(a_off);
    free(grouped);
    return k;
}

/* Whether rows are ordered by (line, time) already. */
EXPORT int64_t tfp_is_sorted_by(const int32_t *line, const int64_t *t, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        if (line[i] < line[i - 1]) return 0;
        if (line[i] == line[i - 1] && t[i] < t[i - 1]) return 0;
    }
    return 1;
}

/* Several integer stats of events in one pass over the stat table: slot_of_code[name code]
   is the output slot (-1: not wanted).  For each slot s, writes at most caps[s] (row, value)
   pairs to the arrays at rows_addr[s] / values_addr[s] (as tfp_int_stat does) and its count
   to counts[s]. */
EXPORT void tfp_int_stats(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
                          const int8_t *kind, const int64_t *raw, const int32_t *owner,
                          int64_t n, const int8_t *slot_of_code, int64_t n_codes,
                          const int64_t *rows_addr, const int64_t *values_addr,
                          const int64_t *caps, int64_t *counts, int32_t *last_owner,
                          int64_t n_slots) {
    for (int64_t s = 0; s < n_slots; s++) {
        counts[s] = 0;
        last_owner[s] = -1;
    }
    for (int64_t i = 0; i < n; i++) {
        if (owner_kind[i] != 0) continue;
        int32_t c = CODE_AT(name_code, code_bytes, i);
        if (c < 0 || c >= n_codes) continue;
        int s = slot_of_code[c];
        if (s < 0) continue;
        int8_t t = kind[i];
        int64_t v;
        if (t == KIND_DOUBLE) {
            double d;
            memcpy(&d, &raw[i], sizeof(double));
            if (!(d == d) || d >= 9.2233720368547758e18 || d <= -9.2233720368547758e18)
                continue;
            v = (int64_t)d;
        } else if (t == KIND_UINT64 || t == KIND_INT64) {
            v = raw[i];
        } else {
            continue;
        }
        int32_t o = owner[i];
        int64_t k = counts[s];
        int32_t *rows = (int32_t *)rows_addr[s];
        int64_t *values = (int64_t *)values_addr[s];
        if (k > 0 && last_owner[s] == o) { /* the same event again: the last value wins */
            if (k <= caps[s]) values[k - 1] = v;
            continue;
        }
        if (k < caps[s]) {
            rows[k] = o;
            values[k] = v;
        }
        last_owner[s] = o;
        counts[s] = k + 1;
    }
}
