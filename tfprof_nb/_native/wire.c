/* XSpace protobuf walker: one pass over a serialized XSpace into narrow column tables.

   The walker knows the shape of xplane.proto (XSpace > XPlane > XLine > XEvent > XStat and the
   two metadata maps).  Each plane is read in two sweeps over its fields: the first reads the
   metadata maps (they follow the lines on the wire), the second the lines and plane stats, so
   every event's metadata row and every stat's metadata row are resolved while walking.

   Every table is written only below its capacity but counted in full: when a count exceeds a
   capacity the walk returns ERR_CAPACITY and the caller reruns it with the exact counts.
   Every read is bounds-checked against the end of its enclosing message; a malformed file
   gives a negative error code and the byte offset where decoding stopped.  Semantics follow
   protobuf: unknown fields and known fields with an unexpected wire type are skipped, the last
   value of a scalar or oneof wins, and a map entry's repeated value merges into the first. */
#include "common.h"

enum {
    ERR_TRUNCATED_VARINT = -1, ERR_VARINT_TOO_LONG = -2, ERR_LENGTH_OVERRUN = -3,
    ERR_FIXED_OVERRUN = -4, ERR_BAD_WIRE_TYPE = -5, ERR_FIELD_ZERO = -6, ERR_CAPACITY = -7,
    ERR_BAD_TAG = -8, ERR_NO_MEMORY = -9
};

/* tables (T_*), their columns (*_COLS and names), stat kinds and owners: layout.h; the two
   metadata tables share their plane and key columns (map code reads either) */
typedef char metadata_columns_agree[((int)M_PLANE == (int)SM_PLANE && (int)M_KEY == (int)SM_KEY) ? 1 : -1];
#define C_ERRPOS N_TABLES
#define C_STAT_NO_META (N_TABLES + 1) /* stats whose metadata id is not in their plane */

/* column pointers handed in by the caller */
enum {
    A_P, A_L, A_M, A_SM, A_CH, A_X, A_EV_LINE, A_EV_META, A_EV_OFF, A_EV_DUR, A_EX,
    A_ST_OWNER, A_ST_OKIND, A_ST_META, A_ST_KIND, A_ST_VALUE, A_TX_ROW, A_TX_LEN, N_ARRAYS
};


/* metadata key -> row of one plane: a dense array when keys are small and dense (the
   profiler numbers metadata 1, 2, 3...), else a hash map */
typedef struct {
    int32_t *dense;
    int64_t lo, size;
    I64Map map;
} Lookup;

static inline int64_t lookup_get(const Lookup *l, int64_t key) {
    if (l->dense) {
        uint64_t i = (uint64_t)(key - l->lo);
        return i < (uint64_t)l->size ? l->dense[i] : -1;
    }
    return i64map_get(&l->map, key, -1);
}

static void lookup_free(Lookup *l) {
    free(l->dense);
    l->dense = NULL;
    i64map_free(&l->map);
}

typedef struct {
    const uint8_t *b;
    int64_t *cnt;
    const int64_t *cap;
    int64_t *P, *L, *M, *SM, *CH, *X, *EX;
    int32_t *ev_line, *ev_meta;
    int64_t *ev_off, *ev_dur;
    int32_t *st_owner, *st_meta, *tx_row, *tx_len;
    int8_t *st_okind, *st_kind;
    int64_t *st_value;
    Lookup evmap, smmap; /* metadata key -> row, for the plane being walked */
} W;

static inline int64_t varint(const uint8_t *b, int64_t pos, int64_t end, uint64_t *out) {
    if (pos < end && b[pos] < 0x80) {
        *out = b[pos];
        return pos + 1;
    }
    uint64_t r = 0;
    int shift = 0;
    while (pos < end && shift <= 63) {
        uint64_t c = b[pos++];
        r |= (c & 0x7F) << shift;
        if (c < 0x80) {
            *out = r;
            return pos;
        }
        shift += 7;
    }
    *out = 0;
    return pos >= end ? ERR_TRUNCATED_VARINT : ERR_VARINT_TOO_LONG;
}

/* field tag: returns the new position or an error; field number and wire type via pointers */
static inline int64_t tag(const uint8_t *b, int64_t pos, int64_t end, int64_t *field, int *wt) {
    uint64_t key;
    pos = varint(b, pos, end, &key);
    if (pos < 0) return pos;
    if (key > 0xFFFFFFFFULL) return ERR_BAD_TAG;
    *field = (int64_t)(key >> 3);
    *wt = (int)(key & 7);
    if (*field == 0) return ERR_FIELD_ZERO;
    return pos;
}

/* length prefix: returns the payload start; payload end via pointer */
static inline int64_t length(const uint8_t *b, int64_t pos, int64_t end, int64_t *stop) {
    uint64_t n;
    pos = varint(b, pos, end, &n);
    if (pos < 0) return pos;
    if (n > (uint64_t)(end - pos)) return ERR_LENGTH_OVERRUN;
    *stop = pos + (int64_t)n;
    return pos;
}

static inline int64_t skip(const uint8_t *b, int64_t pos, int64_t end, int wt) {
    uint64_t v;
    int64_t stop;
    switch (wt) {
    case 0:
        return varint(b, pos, end, &v);
    case 1:
        return pos + 8 > end ? ERR_FIXED_OVERRUN : pos + 8;
    case 2:
        pos = length(b, pos, end, &stop);
        return pos < 0 ? pos : stop;
    case 5:
        return pos + 4 > end ? ERR_FIXED_OVERRUN : pos + 4;
    default:
        return ERR_BAD_WIRE_TYPE;
    }
}

/* the innermost failing field's start is kept (the first failure wins) */
static inline int64_t fail(W *w, int64_t field_start, int64_t code) {
    if (w->cnt[C_ERRPOS] < 0) w->cnt[C_ERRPOS] = field_start;
    return code;
}

static inline int64_t next_row(W *w, int t) {
    return w->cnt[t]++;
}

static inline int fits(const W *w, int t, int64_t row) {
    return row < w->cap[t];
}

static int64_t stat(W *w, int64_t pos, int64_t end, int okind, int64_t owner) {
    const uint8_t *b = w->b;
    int64_t md = 0, value = 0, len = 0, field, stop;
    int kind = KIND_NONE, wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && (field == 1 || field == 3 || field == 4 || field == 7)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (field == 1) {
                md = (int64_t)v;
            } else {
                value = (int64_t)v;
                kind = field == 3 ? KIND_UINT64 : (field == 4 ? KIND_INT64 : KIND_REF);
            }
        } else if (wt == 1 && field == 2) {
            if (pos + 8 > end) return fail(w, fs, ERR_FIXED_OVERRUN);
            uint64_t u = 0;
            for (int i = 0; i < 8; i++) u |= (uint64_t)b[pos + i] << (8 * i);
            value = (int64_t)u;
            kind = KIND_DOUBLE;
            pos += 8;
        } else if (wt == 2 && (field == 5 || field == 6)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            value = pos;
            len = stop - pos;
            kind = field == 5 ? KIND_STR : KIND_BYTES;
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    int64_t row = next_row(w, T_ST);
    if (kind == KIND_STR || kind == KIND_BYTES) {
        int64_t t = next_row(w, T_TX);
        if (fits(w, T_TX, t)) {
            w->tx_row[t] = (int32_t)row;
            w->tx_len[t] = (int32_t)len;
        }
    }
    if (fits(w, T_ST, row)) {
        if (kind == KIND_REF) value = lookup_get(&w->smmap, value);
        w->st_owner[row] = (int32_t)owner;
        w->st_okind[row] = (int8_t)okind;
        int64_t meta = lookup_get(&w->smmap, md);
        if (meta < 0) w->cnt[C_STAT_NO_META]++;
        w->st_meta[row] = (int32_t)meta;
        w->st_kind[row] = (int8_t)kind;
        w->st_value[row] = value;
    }
    return pos;
}

static int64_t event(W *w, int64_t pos, int64_t end, int64_t line_row) {
    const uint8_t *b = w->b;
    int64_t row = next_row(w, T_EV);
    int64_t md = 0, offset = 0, duration = 0, occurrences = 0, field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 2 && field == 4) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = stat(w, pos, stop, OWNER_EVENT, row);
            if (pos < 0) return fail(w, fs, pos);
        } else if (wt == 0 && (field == 1 || field == 2 || field == 3 || field == 5)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (field == 1) {
                md = (int64_t)v;
            } else if (field == 2) { /* oneof data: offset_ps clears num_occurrences */
                offset = (int64_t)v;
                occurrences = 0;
            } else if (field == 3) {
                duration = (int64_t)v;
            } else {
                occurrences = (int64_t)v;
                offset = 0;
            }
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    int64_t meta = -1;
    if (fits(w, T_EV, row)) {
        meta = lookup_get(&w->evmap, md);
        w->ev_line[row] = (int32_t)line_row;
        w->ev_meta[row] = (int32_t)meta;
        w->ev_off[row] = offset;
        w->ev_dur[row] = duration;
    }
    if (occurrences != 0 || meta < 0) {
        /* rare: aggregated events and events whose metadata id is not in the plane */
        if (occurrences != 0) {
            int64_t x = next_row(w, T_EX);
            if (fits(w, T_EX, x)) {
                w->EX[x * EX_COLS + EX_ROW] = row;
                w->EX[x * EX_COLS + EX_WHAT] = 0;
                w->EX[x * EX_COLS + EX_VALUE] = occurrences;
            }
        }
        if (meta < 0) {
            int64_t x = next_row(w, T_EX);
            if (fits(w, T_EX, x)) {
                w->EX[x * EX_COLS + EX_ROW] = row;
                w->EX[x * EX_COLS + EX_WHAT] = 1;
                w->EX[x * EX_COLS + EX_VALUE] = md;
            }
        }
    }
    return pos;
}

static int64_t line(W *w, int64_t pos, int64_t end, int64_t plane) {
    const uint8_t *b = w->b;
    int64_t row = next_row(w, T_L), field, stop;
    int wt;
    uint64_t v;
    int64_t *L = fits(w, T_L, row) ? w->L + row * L_COLS : NULL;
    if (L) {
        memset(L, 0, L_COLS * sizeof(int64_t));
        L[L_PLANE] = plane;
    }
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 2 && field == 4) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = event(w, pos, stop, row);
            if (pos < 0) return fail(w, fs, pos);
        } else if (wt == 0 && (field == 1 || field == 10 || field == 3 || field == 9)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (L) L[field == 1 ? L_ID : field == 10 ? L_DISPLAY_ID
                     : field == 3 ? L_TIMESTAMP_NS : L_DURATION_PS] = (int64_t)v;
        } else if (wt == 2 && (field == 2 || field == 11)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            if (L) {
                int col = field == 2 ? L_NAME_OFF : L_DNAME_OFF;
                L[col] = pos;
                L[col + 1] = stop - pos;
            }
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    return pos;
}

static void add_child(W *w, int64_t meta_row, int64_t child) {
    int64_t c = next_row(w, T_CH);
    if (fits(w, T_CH, c)) {
        w->CH[c * CH_COLS + CH_META_ROW] = meta_row;
        w->CH[c * CH_COLS + CH_CHILD] = child;
    }
}

static int64_t event_metadata(W *w, int64_t pos, int64_t end, int64_t row) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    uint64_t v;
    int64_t *M = fits(w, T_M, row) ? w->M + row * M_COLS : NULL;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && (field == 1 || field == 6)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (field == 1) {
                if (M) M[M_ID] = (int64_t)v;
            } else {
                add_child(w, row, (int64_t)v);
            }
        } else if (wt == 2 && field == 6) { /* packed child ids */
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            while (pos < stop) {
                pos = varint(b, pos, stop, &v);
                if (pos < 0) return fail(w, fs, pos);
                add_child(w, row, (int64_t)v);
            }
        } else if (wt == 2 && field == 5) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = stat(w, pos, stop, OWNER_EVENT_METADATA, row);
            if (pos < 0) return fail(w, fs, pos);
        } else if (wt == 2 && (field == 2 || field == 3 || field == 4)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            if (M) {
                int col = field == 2 ? M_NAME_OFF : (field == 3 ? M_META_OFF : M_DNAME_OFF);
                M[col] = pos;
                M[col + 1] = stop - pos;
            }
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    return pos;
}

static int64_t stat_metadata(W *w, int64_t pos, int64_t end, int64_t row) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    uint64_t v;
    int64_t *SM = fits(w, T_SM, row) ? w->SM + row * SM_COLS : NULL;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && field == 1) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (SM) SM[SM_ID] = (int64_t)v;
        } else if (wt == 2 && (field == 2 || field == 3)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            if (SM) {
                int col = field == 2 ? SM_NAME_OFF : SM_DESC_OFF;
                SM[col] = pos;
                SM[col + 1] = stop - pos;
            }
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    return pos;
}

static int64_t new_metadata_row(W *w, int is_event_map, int64_t plane) {
    int t = is_event_map ? T_M : T_SM;
    int cols = is_event_map ? M_COLS : SM_COLS;
    int64_t *table = is_event_map ? w->M : w->SM;
    int64_t row = next_row(w, t);
    if (fits(w, t, row)) {
        memset(table + row * cols, 0, (size_t)cols * sizeof(int64_t));
        table[row * cols + M_PLANE] = plane;
    }
    return row;
}

/* one map entry {1: int64 key, 2: XEventMetadata | XStatMetadata} */
static int64_t map_entry(W *w, int64_t pos, int64_t end, int64_t plane, int is_event_map) {
    const uint8_t *b = w->b;
    int64_t row = -1, key = 0, field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && field == 1) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            key = (int64_t)v;
        } else if (wt == 2 && field == 2) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            if (row < 0) row = new_metadata_row(w, is_event_map, plane);
            pos = is_event_map ? event_metadata(w, pos, stop, row)
                               : stat_metadata(w, pos, stop, row);
            if (pos < 0) return fail(w, fs, pos);
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    if (row < 0) row = new_metadata_row(w, is_event_map, plane); /* key maps to {} */
    if (is_event_map) {
        if (fits(w, T_M, row)) w->M[row * M_COLS + M_KEY] = key;
    } else if (fits(w, T_SM, row)) {
        w->SM[row * SM_COLS + SM_KEY] = key;
    }
    return pos;
}

/* key -> row lookup of one plane's metadata rows [first, last) (the last row of a key
   wins) */
static int build_map(Lookup *l, const int64_t *table, int cols, int64_t first, int64_t last) {
    memset(l, 0, sizeof(*l));
    int64_t n = last - first, lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t r = first; r < last; r++) {
        int64_t k = table[r * cols + M_KEY];
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    if (n > 0 && hi - lo >= 0 && hi - lo < 4 * n + 4096) {
        l->lo = lo;
        l->size = hi - lo + 1;
        l->dense = (int32_t *)malloc((size_t)l->size * sizeof(int32_t));
        if (!l->dense) return -1;
        for (int64_t i = 0; i < l->size; i++) l->dense[i] = -1;
        for (int64_t r = first; r < last; r++) l->dense[table[r * cols + M_KEY] - lo] = (int32_t)r;
        return 0;
    }
    if (i64map_init(&l->map, n) != 0) return -1;
    for (int64_t r = first; r < last; r++)
        if (i64map_put(&l->map, table[r * cols + M_KEY], r) != 0) return -1;
    return 0;
}

/* Sweep over a plane's fields reading only the map ``field`` (4: event metadata, 5: stat
   metadata) and, when ``P`` is given, the plane's id and name; everything else is checked. */
static int64_t plane_maps(W *w, int64_t pos, int64_t end, int64_t row, int64_t *P,
                          int map_field) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 2 && field == map_field) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = map_entry(w, pos, stop, row, field == 4);
        } else if (P && wt == 0 && field == 1) {
            pos = varint(b, pos, end, &v);
            if (pos >= 0) P[P_ID] = (int64_t)v;
        } else if (P && wt == 2 && field == 2) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            P[P_NAME_OFF] = pos;
            P[P_NAME_LEN] = stop - pos;
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
        }
        if (pos < 0) return fail(w, fs, pos);
    }
    return pos;
}

static inline int64_t stored(const W *w, int t) {
    return w->cnt[t] < w->cap[t] ? w->cnt[t] : w->cap[t];
}

/* Sweep over a plane's fields reading its lines and plane stats (metadata maps built). */
static int64_t plane_lines(W *w, int64_t pos, int64_t end, int64_t row) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 2 && (field == 3 || field == 6)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = field == 3 ? line(w, pos, stop, row) : stat(w, pos, stop, OWNER_PLANE, row);
        } else {
            pos = skip(b, pos, end, wt);
        }
        if (pos < 0) return fail(w, fs, pos);
    }
    return pos;
}

static int64_t plane(W *w, int64_t pos, int64_t end) {
    int64_t row = next_row(w, T_P), p;
    int64_t P_unused[P_COLS];
    int64_t *P = fits(w, T_P, row) ? w->P + row * P_COLS : P_unused;
    memset(P, 0, P_COLS * sizeof(int64_t));
    /* sweep 1: stat metadata (and id, name); sweep 2: event metadata, whose stats need the
       stat metadata; sweep 3: lines and plane stats.  Metadata rows past a capacity are not
       stored, which is fine: the walk is rerun then. */
    int64_t s0 = stored(w, T_SM);
    p = plane_maps(w, pos, end, row, P, 5);
    if (p < 0) return p;
    int64_t m0 = stored(w, T_M);
    if (build_map(&w->smmap, w->SM, SM_COLS, s0, stored(w, T_SM)) != 0) {
        lookup_free(&w->smmap);
        return ERR_NO_MEMORY;
    }
    p = plane_maps(w, pos, end, row, NULL, 4);
    if (p >= 0 && build_map(&w->evmap, w->M, M_COLS, m0, stored(w, T_M)) != 0) p = ERR_NO_MEMORY;
    if (p >= 0) p = plane_lines(w, pos, end, row);
    lookup_free(&w->evmap);
    lookup_free(&w->smmap);
    return p;
}

/* Walk a whole serialized XSpace.  ``arrays`` holds the column addresses (A_*), ``cap`` the
   capacity of each table (T_*); ``cnt`` receives each table's row count (T_*), the error
   position (C_ERRPOS) and the number of stats without metadata (C_STAT_NO_META).  Returns 0, ERR_CAPACITY when a table was too small (counts are exact
   then), or another negative error code. */
EXPORT int64_t tfp_walk_space(const uint8_t *buf, int64_t n, const int64_t *arrays,
                              const int64_t *cap, int64_t *cnt) {
    W w;
    memset(&w, 0, sizeof(w));
    w.b = buf;
    w.cnt = cnt;
    w.cap = cap;
    w.P = (int64_t *)arrays[A_P];
    w.L = (int64_t *)arrays[A_L];
    w.M = (int64_t *)arrays[A_M];
    w.SM = (int64_t *)arrays[A_SM];
    w.CH = (int64_t *)arrays[A_CH];
    w.X = (int64_t *)arrays[A_X];
    w.EX = (int64_t *)arrays[A_EX];
    w.ev_line = (int32_t *)arrays[A_EV_LINE];
    w.ev_meta = (int32_t *)arrays[A_EV_META];
    w.ev_off = (int64_t *)arrays[A_EV_OFF];
    w.ev_dur = (int64_t *)arrays[A_EV_DUR];
    w.st_owner = (int32_t *)arrays[A_ST_OWNER];
    w.st_okind = (int8_t *)arrays[A_ST_OKIND];
    w.st_meta = (int32_t *)arrays[A_ST_META];
    w.st_kind = (int8_t *)arrays[A_ST_KIND];
    w.st_value = (int64_t *)arrays[A_ST_VALUE];
    w.tx_row = (int32_t *)arrays[A_TX_ROW];
    w.tx_len = (int32_t *)arrays[A_TX_LEN];
    for (int t = 0; t < N_TABLES; t++) cnt[t] = 0;
    cnt[C_ERRPOS] = -1;
    cnt[C_STAT_NO_META] = 0;
    int64_t pos = 0, field, stop;
    int wt;
    while (pos < n) {
        int64_t fs = pos;
        pos = tag(buf, pos, n, &field, &wt);
        if (pos >= 0) {
            if (wt == 2 && field == 1) {
                pos = length(buf, pos, n, &stop);
                if (pos >= 0) pos = plane(&w, pos, stop);
            } else if (wt == 2 && (field == 2 || field == 3 || field == 4)) {
                pos = length(buf, pos, n, &stop);
                if (pos >= 0) {
                    int64_t row = next_row(&w, T_X);
                    if (fits(&w, T_X, row)) {
                        w.X[row * X_COLS + X_FIELD] = field;
                        w.X[row * X_COLS + X_OFF] = pos;
                        w.X[row * X_COLS + X_LEN] = stop - pos;
                    }
                    pos = stop;
                }
            } else {
                pos = skip(buf, pos, n, wt);
            }
        }
        if (pos < 0) return fail(&w, fs, pos);
    }
    /* the 32-bit columns address rows, lines, metadata rows and string lengths */
    if (cnt[T_EV] > INT32_MAX || cnt[T_ST] > INT32_MAX || cnt[T_L] > INT32_MAX ||
        cnt[T_M] > INT32_MAX || cnt[T_SM] > INT32_MAX)
        return ERR_NO_MEMORY;
    for (int t = 0; t < N_TABLES; t++)
        if (cnt[t] > cap[t]) return ERR_CAPACITY;
    return 0;
}

/* ---- string interning ------------------------------------------------------------------ */

static inline uint64_t span_hash(const uint8_t *p, int64_t n, uint64_t salt) {
    uint64_t h = 14695981039346656037ULL ^ salt;
    for (int64_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
}

/* Intern the text values of the stats listed by (tx_row, tx_len): each value (its buffer
   offset in st_value) is replaced by a code into a table of distinct (kind, bytes) values,
   first-seen order.  rep_off/rep_len/rep_kind receive each distinct value's span and kind.
   Returns the number of distinct values, or ERR_NO_MEMORY. */
EXPORT int64_t tfp_intern_text(const uint8_t *buf, int64_t n_text, const int32_t *tx_row,
                               const int32_t *tx_len, const int8_t *st_kind, int64_t *st_value,
                               int64_t *rep_off, int32_t *rep_len, int8_t *rep_kind) {
    int64_t cap = 1024, n_rep = 0;
    int64_t *slots = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    uint64_t *hashes = (uint64_t *)malloc((size_t)cap * sizeof(uint64_t));
    if (!slots || !hashes) {
        free(slots);
        free(hashes);
        return ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < cap; i++) slots[i] = -1;
    for (int64_t t = 0; t < n_text; t++) {
        int64_t row = tx_row[t], len = tx_len[t], off = st_value[row];
        int8_t kind = st_kind[row];
        uint64_t h = span_hash(buf + off, len, (uint64_t)kind);
        uint64_t mask = (uint64_t)cap - 1, i = h & mask;
        int64_t code = -1;
        while (slots[i] >= 0) {
            int64_t r = slots[i];
            if (hashes[i] == h && rep_len[r] == len && rep_kind[r] == kind &&
                memcmp(buf + rep_off[r], buf + off, (size_t)len) == 0) {
                code = r;
                break;
            }
            i = (i + 1) & mask;
        }
        if (code < 0) {
            code = n_rep++;
            rep_off[code] = off;
            rep_len[code] = (int32_t)len;
            rep_kind[code] = kind;
            slots[i] = code;
            hashes[i] = h;
            if (2 * n_rep > cap) { /* grow and rehash */
                int64_t ncap = cap * 2;
                int64_t *ns = (int64_t *)malloc((size_t)ncap * sizeof(int64_t));
                uint64_t *nh = (uint64_t *)malloc((size_t)ncap * sizeof(uint64_t));
                if (!ns || !nh) {
                    free(ns);
                    free(nh);
                    free(slots);
                    free(hashes);
                    return ERR_NO_MEMORY;
                }
                for (int64_t k = 0; k < ncap; k++) ns[k] = -1;
                for (int64_t k = 0; k < cap; k++) {
                    if (slots[k] < 0) continue;
                    uint64_t j = hashes[k] & (uint64_t)(ncap - 1);
                    while (ns[j] >= 0) j = (j + 1) & (uint64_t)(ncap - 1);
                    ns[j] = slots[k];
                    nh[j] = hashes[k];
                }
                free(slots);
                free(hashes);
                slots = ns;
                hashes = nh;
                cap = ncap;
            }
        }
        st_value[row] = code;
    }
    free(slots);
    free(hashes);
    return n_rep;
}

/* out[i] = table[rows[i]], or ``missing`` where rows[i] < 0 (out may be rows itself) */
EXPORT void tfp_gather_i32(const int32_t *rows, int64_t n, const int32_t *table,
                           int32_t missing, int32_t *out) {
    for (int64_t i = 0; i < n; i++) {
        int32_t r = rows[i];
        out[i] = r < 0 ? missing : table[r];
    }
}

/* Value codes of reference stats: st_value holds the referenced stat-metadata row (-1 when
   missing); it becomes ``base`` + the code of that row's name (``missing`` for -1). */
EXPORT void tfp_resolve_refs(const int8_t *st_kind, int64_t n, int64_t *st_value,
                             const int32_t *name_code_of_row, int64_t base, int64_t missing) {
    for (int64_t i = 0; i < n; i++) {
        if (st_kind[i] != KIND_REF) continue;
        int64_t r = st_value[i];
        st_value[i] = base + (r < 0 ? missing : name_code_of_row[r]);
    }
}

/* values[i] += table[rows[i]] (in place: event offsets become starts) */
EXPORT void tfp_add_gathered_i64(int64_t *values, const int32_t *rows, int64_t n,
                                 const int64_t *table) {
    for (int64_t i = 0; i < n; i++) values[i] += table[rows[i]];
}

/* Narrow copies of a column of metadata rows (-1: missing): their name codes
   (code_of_row[row], ``missing`` for -1) as uint16 or int32 (name_bytes 2 or 4), and, when
   rows16 is given, the rows themselves as int16. */
EXPORT void tfp_narrow_codes(const int32_t *rows, int64_t n, const int32_t *code_of_row,
                             int32_t missing, void *names, int64_t name_bytes,
                             int16_t *rows16) {
    for (int64_t i = 0; i < n; i++) {
        int32_t r = rows[i];
        int32_t c = r < 0 ? missing : code_of_row[r];
        if (name_bytes == 2) ((uint16_t *)names)[i] = (uint16_t)c;
        else ((int32_t *)names)[i] = c;
        if (rows16) rows16[i] = (int16_t)r;
    }
}
