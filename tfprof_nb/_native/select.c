/* Selecting events by a table over their codes (names, lines), and counting stats by name:
   one pass over a code column, no per-event temporaries. */
#include "common.h"

/* out[i] = table[code[i]] for n codes (uint8, uint16 or int32: code_bytes 1, 2 or 4) */
EXPORT int64_t tfp_code_lookup_u8(const void *code, int64_t code_bytes, int64_t n,
                                  const uint8_t *table, uint8_t *out) {
    if (code_bytes == 1) {
        const uint8_t *c = (const uint8_t *)code;
        for (int64_t i = 0; i < n; i++) {
            if (CANCEL_POLL(i)) return ERR_CANCELLED;
            out[i] = table[c[i]];
        }
    } else if (code_bytes == 2) {
        const uint16_t *c = (const uint16_t *)code;
        for (int64_t i = 0; i < n; i++) {
            if (CANCEL_POLL(i)) return ERR_CANCELLED;
            out[i] = table[c[i]];
        }
    } else {
        const int32_t *c = (const int32_t *)code;
        for (int64_t i = 0; i < n; i++) {
            if (CANCEL_POLL(i)) return ERR_CANCELLED;
            out[i] = table[c[i]];
        }
    }
    return 0;
}

/* out[i] = col[rows[i]] for m int32 rows of a column of n ``width``-byte items (1, 2, 4 or
   8); returns 0, -2 when a row is outside the column (out then partly written) or
   ERR_CANCELLED */
EXPORT int64_t tfp_take_rows(const void *col, int64_t n, int64_t width, const int32_t *rows,
                             int64_t m, void *out) {
#define TAKE(T)                                                                                \
    for (int64_t i = 0; i < m; i++) {                                                          \
        if (CANCEL_POLL(i)) return ERR_CANCELLED;                                              \
        if ((uint64_t)(int64_t)rows[i] >= (uint64_t)n) return -2;                              \
        ((T *)out)[i] = ((const T *)col)[rows[i]];                                             \
    }
    switch (width) {
    case 1: TAKE(uint8_t) break;
    case 2: TAKE(uint16_t) break;
    case 4: TAKE(uint32_t) break;
    case 8: TAKE(uint64_t) break;
    default: return -1;
    }
#undef TAKE
    return 0;
}

/* flags[col[rows[i]]] = 1 for m int32 rows of an int32 column of n items whose values are
   below n_flags (a value per row marked, the others left as they are); returns 0, -2 when a
   row or a value is out of range (flags then partly written) or ERR_CANCELLED */
EXPORT int64_t tfp_mark_values_at(const int32_t *col, int64_t n, const int32_t *rows, int64_t m,
                                  uint8_t *flags, int64_t n_flags) {
    for (int64_t i = 0; i < m; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        if ((uint64_t)(int64_t)rows[i] >= (uint64_t)n) return -2;
        int32_t v = col[rows[i]];
        if ((uint64_t)(int64_t)v >= (uint64_t)n_flags) return -2;
        flags[v] = 1;
    }
    return 0;
}

/* out[i] = table[code[i]] (int32 entries) for n codes (uint8, uint16 or int32: code_bytes 1,
   2 or 4); codes outside [0, n_table) give ``fill`` */
EXPORT int64_t tfp_code_gather_i32(const void *code, int64_t code_bytes, int64_t n,
                                   const int32_t *table, int64_t n_table, int32_t fill,
                                   int32_t *out) {
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int64_t c = CODE_AT(code, code_bytes, i);
        out[i] = (uint64_t)c < (uint64_t)n_table ? table[c] : fill;
    }
    return 0;
}

/* Rows i (increasing, int32) with table[code[i]] != 0 and, when ``also`` is given,
   also[i] != 0, into ``out`` (at most cap); returns how many there are. */
EXPORT int64_t tfp_code_rows(const void *code, int64_t code_bytes, int64_t n,
                             const uint8_t *table, const uint8_t *also, int32_t *out,
                             int64_t cap) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int32_t c = CODE_AT(code, code_bytes, i);
        if (table[c] && (!also || also[i])) {
            if (k < cap) out[k] = (int32_t)i;
            k++;
        }
    }
    return k;
}

/* counts[c] = number of stats with name code c owned by events (owner kind 0) */
EXPORT int64_t tfp_stat_name_counts(const void *name_code, int64_t code_bytes,
                                    const int8_t *owner_kind, int64_t n, int64_t *counts) {
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        if (owner_kind[i] == 0) counts[CODE_AT(name_code, code_bytes, i)]++;
    }
    return 0;
}

/* counts[code[i]] += 1 over n codes (uint8, uint16 or int32) */
EXPORT int64_t tfp_code_counts(const void *code, int64_t code_bytes, int64_t n, int64_t *counts) {
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        counts[CODE_AT(code, code_bytes, i)]++;
    }
    return 0;
}

/* Rows i (increasing) with name_ok[code[i]] and line_ok[line[i]], into ``out`` (at most
   cap); returns how many there are. */
EXPORT int64_t tfp_line_name_rows(const int32_t *line, const void *code, int64_t code_bytes,
                                  int64_t n, const uint8_t *line_ok, const uint8_t *name_ok,
                                  int32_t *out, int64_t cap) {
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        if (name_ok[CODE_AT(code, code_bytes, i)] && line_ok[line[i]]) {
            if (k < cap) out[k] = (int32_t)i;
            k++;
        }
    }
    return k;
}

/* Rows of several disjoint code sets in one pass: slot[c] is the set code c belongs to (-1:
   none); rows i with slot[code[i]] == s go to out[s] (at most cap[s] of them), increasing.
   counts[s] receives how many rows each set has. */
EXPORT int64_t tfp_code_rows_multi(const void *code, int64_t code_bytes, int64_t n,
                                   const int8_t *slot, int32_t **out, const int64_t *cap,
                                   int64_t *counts) {
    for (int64_t i = 0; i < n; i++) {
        if (CANCEL_POLL(i)) return ERR_CANCELLED;
        int8_t s = slot[CODE_AT(code, code_bytes, i)];
        if (s < 0) continue;
        if (counts[s] < cap[s]) out[s][counts[s]] = (int32_t)i;
        counts[s]++;
    }
    return 0;
}
