/* XSpace walker: a serialized XSpace into narrow column tables, events walked in parallel.

   The walker knows the shape of xplane.proto (XSpace > XPlane > XLine > XEvent > XStat and the
   two metadata maps).  It runs in three or four calls on one handle:

   1. tfp_space_open: every plane is swept (one thread) for its stat metadata, then its event
      metadata (their stats included), then its lines and plane stats.  Then tfp_space_frame:
      the lines are framed side by side (``threads`` threads, largest first): their events
      are cut into chunks of about ``chunk_bytes`` and counted, so every event's row is known
      (a selecting walk reads every event's times there and counts only the events it keeps:
      the lines chosen, a time window; the walk skips the others).  A line's stats are
      counted as it is framed, unless it is larger than a thread's share of the lines (its
      thread would frame alone): its chunks' stats are only bounded (a stat field takes two
      bytes or more).  The stat table is in file order: a plane's metadata stats, then its
      lines' event stats and its plane stats in field order.  Small tables (planes, lines,
      metadata, space strings) and the stats of metadata and planes ("staged" stats) are kept
      by the handle.
   1b. tfp_space_count (only where the caller cannot reserve stat columns of the bound): the
      stats of every chunk not counted while framing counted side by side, so every stat's
      row is known before the walk.
   2. tfp_space_events (``threads`` threads): chunks are walked side by side straight into the
      caller's event columns (metadata rows and name codes resolved on the way).  A chunk's
      stats go straight into the caller's stat columns when its first stat row is known as it
      starts (every chunk before it walked, or counted); else into a staging buffer, copied
      there by whichever thread learns the row.  The stat columns only need the bound's rows
      reserved: the rows past the real count are never written.
   3. tfp_space_finish: the text stats and the rare per-event extras, in file order.

   Every read is bounds-checked against the end of its enclosing message; a malformed file
   gives a negative error code and the byte offset where decoding stopped (the earliest one
   when several chunks fail).  Semantics follow protobuf: unknown fields and known fields with
   an unexpected wire type are skipped, the last value of a scalar or oneof wins, and a map
   entry's repeated value merges into the first.  Every phase polls the cancel token and updates
   a progress array (PR_*).  When the buffer is a read-only file mapping, pages already walked
   are handed back (MADV_DONTNEED) so the file does not stay resident beside its columns. */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "wire.h"

typedef char metadata_columns_agree[((int)M_PLANE == (int)SM_PLANE && (int)M_KEY == (int)SM_KEY) ? 1 : -1];

/* ---- growable storage ------------------------------------------------------------------ */

typedef struct { /* rows of ``cols`` int64 */
    int64_t *d;
    int64_t n, cap;
    int cols;
} Tab;

static int64_t tab_add(Tab *t) { /* a new zeroed row's index, -1 when out of memory */
    if (t->n == t->cap) {
        int64_t cap = t->cap ? 2 * t->cap : 64;
        int64_t *d = (int64_t *)tfp_realloc(t->d, (size_t)(cap * t->cols) * sizeof(int64_t));
        if (!d) return -1;
        t->d = d;
        t->cap = cap;
    }
    memset(t->d + t->n * t->cols, 0, (size_t)t->cols * sizeof(int64_t));
    return t->n++;
}

static inline int64_t *tab_at(Tab *t, int64_t row) { return t->d + row * t->cols; }

/* Where a walk's stats go: growable staging (``fixed`` 0: metadata rows kept in ``meta``) or
   the caller's stat columns from a chunk's first row on (``fixed`` 1: name codes written to
   ``name`` through code_of_srow, at most ``cap`` rows).  Text rows are local to the buffer. */
typedef struct {
    int32_t *owner, *meta, *tx_row, *tx_len;
    int8_t *okind, *kind;
    int64_t *value;
    int64_t n, cap, ntx, captx, no_meta, refs;
    int fixed;
    void *name;
    int64_t name_bytes, n_srows;
    const int32_t *code_of_srow;
    int32_t missing;
    int64_t *name_counts; /* fixed: stats per name code (n_srows + 1 entries) */
} StatBuf;

static void sb_free(StatBuf *s) {
    if (s->fixed) {
        free(s->name_counts);
        free(s->tx_row);
        free(s->tx_len);
        memset(s, 0, sizeof(*s));
        return;
    }
    free(s->owner);
    free(s->meta);
    free(s->okind);
    free(s->kind);
    free(s->value);
    free(s->tx_row);
    free(s->tx_len);
    memset(s, 0, sizeof(*s));
}

#define GROW(p, type, cap) ((type *)tfp_realloc((p), (size_t)(cap) * sizeof(type)))

static int sb_reserve(StatBuf *s) {
    if (s->n < s->cap) return 0;
    if (s->fixed) return -1; /* more stats than counted: cannot happen */
    int64_t cap = s->cap ? 2 * s->cap : 1024;
    int32_t *owner = GROW(s->owner, int32_t, cap);
    if (owner) s->owner = owner;
    int32_t *meta = GROW(s->meta, int32_t, cap);
    if (meta) s->meta = meta;
    int8_t *okind = GROW(s->okind, int8_t, cap);
    if (okind) s->okind = okind;
    int8_t *kind = GROW(s->kind, int8_t, cap);
    if (kind) s->kind = kind;
    int64_t *value = GROW(s->value, int64_t, cap);
    if (value) s->value = value;
    if (!owner || !meta || !okind || !kind || !value) return -1;
    s->cap = cap;
    return 0;
}

static int sb_add_text(StatBuf *s, int64_t row, int64_t len) {
    if (len > INT32_MAX) return ERR_TOO_LONG; /* (text lengths are 32-bit columns) */
    if (s->ntx == s->captx) {
        int64_t cap = s->captx ? 2 * s->captx : 256;
        int32_t *r = GROW(s->tx_row, int32_t, cap);
        if (r) s->tx_row = r;
        int32_t *l = GROW(s->tx_len, int32_t, cap);
        if (l) s->tx_len = l;
        if (!r || !l) return -1;
        s->captx = cap;
    }
    s->tx_row[s->ntx] = (int32_t)row;
    s->tx_len[s->ntx] = (int32_t)len;
    s->ntx++;
    return 0;
}

/* metadata key -> row of one plane: a dense array when keys are small and dense (the
   profiler numbers metadata 1, 2, 3...), else a hash map */
typedef struct {
    int32_t *dense;
    int64_t lo, size;
    I64Map map;
} Lookup;

static inline int64_t lookup_get(const Lookup *l, int64_t key) {
    if (l->dense) {
        uint64_t i = (uint64_t)key - (uint64_t)l->lo; /* (wraps, never overflows) */
        return i < (uint64_t)l->size ? l->dense[i] : -1;
    }
    return i64map_get(&l->map, key, -1);
}

static void lookup_free(Lookup *l) {
    free(l->dense);
    l->dense = NULL;
    i64map_free(&l->map);
}

/* key -> row lookup of metadata rows [first, last) of a table (the last row of a key wins) */
static int build_map(Lookup *l, Tab *t, int64_t first, int64_t last) {
    memset(l, 0, sizeof(*l));
    int64_t n = last - first, lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t r = first; r < last; r++) {
        int64_t k = tab_at(t, r)[M_KEY];
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    int64_t spread; /* keys come from the file: any int64 */
    if (n > 0 && !__builtin_sub_overflow(hi, lo, &spread) && spread < 4 * n + 4096) {
        l->lo = lo;
        l->size = spread + 1;
        l->dense = (int32_t *)tfp_malloc((size_t)l->size * sizeof(int32_t));
        if (!l->dense) return -1;
        for (int64_t i = 0; i < l->size; i++) l->dense[i] = -1;
        for (int64_t r = first; r < last; r++) l->dense[tab_at(t, r)[M_KEY] - lo] = (int32_t)r;
        return 0;
    }
    if (i64map_init(&l->map, n) != 0) return -1;
    for (int64_t r = first; r < last; r++)
        if (i64map_put(&l->map, tab_at(t, r)[M_KEY], r) != 0) return -1;
    return 0;
}

/* ---- the handle ------------------------------------------------------------------------ */

typedef struct { /* a run of a line's event fields, walked by one thread */
    int64_t pos, end, plane, line, ev_first, n_ev;
    int64_t n_st, ub; /* its stats (known once counted or walked), at most ub */
    int counted;      /* n_st counted while framing (ub is then n_st) */
    int64_t stage;    /* >= 0: the staging buffer its stats wait in for their first row */
    StatBuf st;
    Tab ex;
    int64_t err, err_pos;
} Chunk;

typedef struct { /* a run of stat rows in file order: a chunk's, a line's, or staged rows */
    int64_t chunk; /* -1: staged rows [lo, hi), their text entries [tx_lo, tx_hi) */
    int64_t lo, hi, tx_lo, tx_hi, base; /* base: its first row in the stat columns */
    int64_t job; /* >= 0 (chunk -2): a line not framed yet, whose chunks replace it */
} Seg;

typedef struct { /* a line whose events are framed (by one thread) into chunks */
    int64_t pos, end, plane, line;
    int count; /* its events' stats are counted while framing */
    Chunk *chunks;
    int64_t n_chunks, cap_chunks, err, err_pos;
} Job;

typedef struct { /* stat columns from a chunk's first row (the caller's, or a stage's) */
    int32_t *owner;
    int8_t *okind, *kind;
    int64_t *value;
    void *name;
} StatCols;

typedef struct Stage { /* stat columns a chunk's stats wait in for their first row */
    StatCols col;
    int64_t cap;
    int busy;
} Stage;

typedef struct { /* the caller's event columns and what resolves names (phase 2) */
    int32_t *line;
    void *meta, *name;
    int64_t *start, *dur;
    int64_t meta_bytes, name_bytes;
    const int32_t *code_of_row;
    int32_t missing;
    int64_t n_codes; /* > 0: events are counted per name code (codes below it) */
} EvOut;

typedef struct {
    const uint8_t *b;
    int64_t n, chunk_bytes;
    int release;
    int64_t *progress;
    Tab P, L, M, SM, CH, X;
    Lookup *evmaps, *smmaps;
    int64_t n_maps;
    StatBuf staged;
    Chunk *chunks;
    int64_t n_chunks, cap_chunks;
    Seg *segs;
    int64_t n_segs, cap_segs;
    Job *jobs;
    int64_t n_jobs, cap_jobs;
    int64_t *job_order; /* the jobs framed largest first (NULL: in file order) */
    int64_t n_events, err, err_pos;
    /* stat rows: n_stats once known (counted, or after the walk), else at most st_bound */
    int64_t n_stats, st_bound;
    int64_t row_limit; /* the most rows of each table (the 32-bit columns address them) */
    int stats_known;
    /* phase 2 and 3 work sharing */
    EvOut out;
    int64_t next;
    int32_t *st_owner;
    int8_t *st_okind, *st_kind;
    int64_t *st_value;
    void *st_name;
    int64_t st_name_bytes, n_srows, st_cap; /* st_cap: rows of the caller's stat columns */
    /* phase 2's frontier: the segments before ``frontier`` are walked (their stats known) and
       the one at it has its first stat row (Seg.base) known; staged chunks at rows below it
       are copied from ``copy_from`` on.  Guarded by ``mu`` (with the staging pool). */
    pthread_mutex_t mu;
    int64_t frontier, copy_from;
    /* the stat rows before the frontier, the most stats a walked chunk had, and the rows the
       writers will soon reach (the stat columns are faulted in up to them ahead) */
    int64_t frontier_rows, chunk_rows_max, soon_rows, threads;
    uint8_t *seg_done;
    struct Stage *stages;
    int64_t n_stages, stage_rows;
    const int32_t *code_of_srow;
    int32_t missing_stat;
    int64_t *ev_counts; /* events per name code over every thread (NULL: not counted) */
    int ev_counts_lost; /* a thread could not count (out of memory) */
    /* a selecting walk (tfp_space_frame with ``keep``): the lines kept, and per line the
       window [lo, hi] of offsets (ps, relative to its timestamp) an event must overlap */
    uint8_t *keep;
    int64_t *lo, *hi;
} Space;

static void progress_add(Space *s, int64_t bytes) {
    if (s->progress) __atomic_fetch_add(&s->progress[PR_DONE], bytes, __ATOMIC_RELAXED);
}

/* hand back the whole pages of [pos, end) of a file mapping (they are read again on use) */
static void release_pages(const Space *s, int64_t pos, int64_t end) {
    if (s->release) release_file_pages(s->b, pos, end);
}

/* Files up to this size keep the pages their framing read for the walk, which reads them
   again (handed back and read again: 6 % of a 35 MB file's decode); a larger file hands them
   back as it is framed (its columns may then be faulted in ahead of the walk, beside it). */
#define FRAME_KEEPS_PAGES_BYTES ((int64_t)64 << 20)

/* [pos, end), framed: its pages handed back where the walk is not about to read them */
static void framed_pages(const Space *s, int64_t pos, int64_t end) {
    if (s->n > FRAME_KEEPS_PAGES_BYTES) release_pages(s, pos, end);
}

/* ---- message walkers ------------------------------------------------------------------- */

typedef struct { /* one walk: where its stats go, its plane's stat metadata, its error */
    const uint8_t *b;
    StatBuf *st;
    const Lookup *smmap;
    int64_t err_pos;
} W;

/* the innermost failing field's start is kept (the first failure wins) */
static inline int64_t fail(W *w, int64_t field_start, int64_t code) {
    if (w->err_pos < 0) w->err_pos = field_start;
    return code;
}

static int64_t stat(W *w, int64_t pos, int64_t end, int okind, int64_t owner) {
    const uint8_t *b = w->b;
    int64_t md = 0, value = 0, len = 0, field, stop;
    int kind = KIND_NONE, wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        /* one-byte keys of XStat's fields first (metadata_id, then the value oneof) */
        switch (b[pos]) {
        case 0x08: case 0x18: case 0x20: case 0x38:
            field = b[pos] >> 3;
            pos = varint(b, pos + 1, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (field == 1) {
                md = (int64_t)v;
            } else {
                value = (int64_t)v;
                kind = field == 3 ? KIND_UINT64 : (field == 4 ? KIND_INT64 : KIND_REF);
            }
            continue;
        case 0x11:
            if (pos + 9 > end) return fail(w, fs, ERR_FIXED_OVERRUN);
            uint64_t u;
            memcpy(&u, b + pos + 1, 8); /* little-endian */
            value = (int64_t)u;
            kind = KIND_DOUBLE;
            pos += 9;
            continue;
        case 0x2a: case 0x32:
            field = b[pos] >> 3;
            pos = length(b, pos + 1, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            value = pos;
            len = stop - pos;
            kind = field == 5 ? KIND_STR : KIND_BYTES;
            pos = stop;
            continue;
        default:
            break;
        }
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
            uint64_t u;
            memcpy(&u, b + pos, 8); /* little-endian */
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
    StatBuf *s = w->st;
    if (sb_reserve(s) != 0) return s->fixed ? ERR_CHANGED : ERR_NO_MEMORY;
    int64_t row = s->n++;
    if (kind == KIND_STR || kind == KIND_BYTES) {
        int rc = sb_add_text(s, row, len);
        if (rc != 0) return rc == ERR_TOO_LONG ? ERR_TOO_LONG : ERR_NO_MEMORY;
    }
    if (kind == KIND_REF) {
        value = lookup_get(w->smmap, value);
        s->refs++;
    }
    int64_t meta = lookup_get(w->smmap, md);
    if (meta < 0) s->no_meta++;
    s->owner[row] = (int32_t)owner;
    s->okind[row] = (int8_t)okind;
    if (s->fixed) {
        int32_t code = meta < 0 || meta >= s->n_srows ? s->missing : s->code_of_srow[meta];
        code_store(s->name, s->name_bytes, row, code);
        s->name_counts[code]++;
    } else {
        s->meta[row] = (int32_t)meta;
    }
    s->kind[row] = (int8_t)kind;
    s->value[row] = value;
    return pos;
}

static inline int add_extra(Tab *ex, int64_t row, int64_t what, int64_t value) {
    int64_t x = tab_add(ex);
    if (x < 0) return -1;
    int64_t *r = tab_at(ex, x);
    r[EX_ROW] = row;
    r[EX_WHAT] = what;
    r[EX_VALUE] = value;
    return 0;
}

static int64_t event(W *w, const EvOut *o, const Lookup *evmap, Tab *ex, int64_t *counts,
                     int64_t pos, int64_t end, int64_t row, int64_t line_row) {
    const uint8_t *b = w->b;
    int64_t md = 0, offset = 0, duration = 0, occurrences = 0, field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        int key = b[pos];
        if (key == 0x22) { /* a stat */
            pos = length(b, pos + 1, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = stat(w, pos, stop, OWNER_EVENT, row);
            if (pos < 0) return fail(w, fs, pos);
            continue;
        }
        if (key == 0x08 || key == 0x10 || key == 0x18 || key == 0x28) {
            field = key >> 3;
            pos = varint(b, pos + 1, end, &v);
        } else {
            pos = tag(b, pos, end, &field, &wt);
            if (pos < 0) return fail(w, fs, pos);
            if (wt == 2 && field == 4) {
                pos = length(b, pos, end, &stop);
                if (pos < 0) return fail(w, fs, pos);
                pos = stat(w, pos, stop, OWNER_EVENT, row);
                if (pos < 0) return fail(w, fs, pos);
                continue;
            }
            if (!(wt == 0 && (field == 1 || field == 2 || field == 3 || field == 5))) {
                pos = skip(b, pos, end, wt);
                if (pos < 0) return fail(w, fs, pos);
                continue;
            }
            pos = varint(b, pos, end, &v);
        }
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
    }
    int64_t meta = lookup_get(evmap, md);
    o->line[row] = (int32_t)line_row;
    int32_t code = meta < 0 ? o->missing : o->code_of_row[meta];
    if (counts) counts[code]++;
    signed_store(o->meta, o->meta_bytes, row, (int32_t)meta);
    code_store(o->name, o->name_bytes, row, code);
    o->start[row] = offset;
    o->dur[row] = duration;
    /* rare: aggregated events and events whose metadata id is not in the plane */
    if (occurrences != 0 && add_extra(ex, row, 0, occurrences) != 0) return ERR_NO_MEMORY;
    if (meta < 0 && add_extra(ex, row, 1, md) != 0) return ERR_NO_MEMORY;
    return pos;
}

/* ---- selection: an event's times, read before it is walked ----------------------------- */

/* the offset and duration (ps) of the event [pos, end) as event() reads them (the last value
   wins; num_occurrences clears the offset) and its stats (counted, not read): the event's end,
   or an error */
static int64_t event_times(const uint8_t *b, int64_t pos, int64_t end, int64_t *off,
                           int64_t *dur, int64_t *n_st) {
    int64_t field, stats = 0;
    int wt;
    uint64_t v;
    *off = *dur = 0;
    while (pos < end) {
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return pos;
        if (wt == 0 && (field == 2 || field == 3 || field == 5)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return pos;
            if (field == 3) *dur = (int64_t)v;
            else *off = field == 2 ? (int64_t)v : 0;
        } else {
            stats += wt == 2 && field == 4;
            pos = skip(b, pos, end, wt);
            if (pos < 0) return pos;
        }
    }
    *n_st = stats;
    return pos;
}

/* an event's end (saturating: corrupt times are refused later, when its start is made) */
static inline int64_t event_end(int64_t off, int64_t dur) {
    int64_t e;
    return __builtin_add_overflow(off, dur, &e) ? (dur < 0 ? INT64_MIN : INT64_MAX) : e;
}

/* whether the event [pos, end) of line ``line`` is kept by a selecting walk (*err: its
   error, 0 when none) */
static inline int event_kept(const Space *s, int64_t line, int64_t pos, int64_t end,
                             int64_t *err) {
    int64_t off, dur, n_st, p = event_times(s->b, pos, end, &off, &dur, &n_st);
    *err = p < 0 ? p : 0;
    return p >= 0 && off <= s->hi[line] && event_end(off, dur) >= s->lo[line];
}

/* the stat fields among an event's fields [pos, end), or an error (its field's start in
   *fs) */
static inline int64_t count_stats(const uint8_t *b, int64_t pos, int64_t end, int64_t *fs) {
    int64_t n = 0, field, stop;
    int wt;
    while (pos < end) {
        *fs = pos;
        int key = b[pos];
        if (key == 0x22) {
            n++;
            pos = length(b, pos + 1, end, &stop);
            if (pos >= 0) pos = stop;
        } else if (key == 0x08 || key == 0x10 || key == 0x18 || key == 0x28) {
            pos = skip_varint(b, pos + 1, end);
        } else {
            pos = tag(b, pos, end, &field, &wt);
            if (pos >= 0) {
                n += wt == 2 && field == 4;
                pos = skip(b, pos, end, wt);
            }
        }
        if (pos < 0) return pos;
    }
    return n;
}

/* ---- phase 1: planes, metadata, line framing ------------------------------------------- */

static int seg_add(Space *s, int64_t chunk, int64_t lo, int64_t hi, int64_t tx_lo,
                   int64_t tx_hi) {
    if (chunk == -1 && hi == lo) return 0;
    if (chunk == -1 && s->n_segs && s->segs[s->n_segs - 1].chunk == -1 &&
        s->segs[s->n_segs - 1].hi == lo) { /* staged rows continuing the last run */
        s->segs[s->n_segs - 1].hi = hi;
        s->segs[s->n_segs - 1].tx_hi = tx_hi;
        return 0;
    }
    if (s->n_segs == s->cap_segs) {
        int64_t cap = s->cap_segs ? 2 * s->cap_segs : 64;
        Seg *g = GROW(s->segs, Seg, cap);
        if (!g) return -1;
        s->segs = g;
        s->cap_segs = cap;
    }
    Seg *g = &s->segs[s->n_segs++];
    memset(g, 0, sizeof(*g));
    g->chunk = chunk;
    g->lo = lo;
    g->hi = hi;
    g->tx_lo = tx_lo;
    g->tx_hi = tx_hi;
    g->job = -1;
    return 0;
}

static int64_t staged_stat(Space *s, W *w, int64_t pos, int64_t end, int okind, int64_t owner) {
    int64_t lo = s->staged.n, tx_lo = s->staged.ntx;
    pos = stat(w, pos, end, okind, owner);
    if (pos >= 0 && seg_add(s, -1, lo, s->staged.n, tx_lo, s->staged.ntx) != 0)
        return ERR_NO_MEMORY;
    return pos;
}

/* a line: its row in L, and a job to frame its events (tfp_space_frame) */
static int64_t line(Space *s, W *w, int64_t pos, int64_t end, int64_t plane) {
    (void)w;
    int64_t row = tab_add(&s->L);
    if (row < 0) return ERR_NO_MEMORY;
    tab_at(&s->L, row)[L_PLANE] = plane;
    if (s->n_jobs == s->cap_jobs) {
        int64_t cap = s->cap_jobs ? 2 * s->cap_jobs : 16;
        Job *j = GROW(s->jobs, Job, cap);
        if (!j) return ERR_NO_MEMORY;
        s->jobs = j;
        s->cap_jobs = cap;
    }
    Job *j = &s->jobs[s->n_jobs];
    memset(j, 0, sizeof(*j));
    j->pos = pos;
    j->end = end;
    j->plane = plane;
    j->line = row;
    if (seg_add(s, -2, 0, 0, 0, 0) != 0) return ERR_NO_MEMORY;
    s->segs[s->n_segs - 1].job = s->n_jobs++;
    return end;
}

static Chunk *job_chunk(Job *j, int64_t pos) {
    if (j->n_chunks == j->cap_chunks) {
        int64_t cap = j->cap_chunks ? 2 * j->cap_chunks : 16;
        Chunk *c = GROW(j->chunks, Chunk, cap);
        if (!c) return NULL;
        j->chunks = c;
        j->cap_chunks = cap;
    }
    Chunk *c = &j->chunks[j->n_chunks++];
    memset(c, 0, sizeof(*c));
    c->pos = c->end = pos;
    c->stage = -1;
    c->plane = j->plane;
    c->line = j->line;
    c->counted = j->count;
    c->ex.cols = EX_COLS;
    return c;
}

/* The event field [fs, stop) (its message from ``body``) of job ``j`` framed into the job's
   open chunk ``c`` (a new chunk from ``fs`` when NULL) with its ``n_st`` stats (counted, when
   the job counts them; else bounded by its bytes: a stat field takes two bytes or more): the
   chunk, or NULL when out of memory. */
static inline Chunk *chunk_add(Job *j, Chunk *c, int64_t fs, int64_t body, int64_t stop,
                               int64_t n_st) {
    if (!c && !(c = job_chunk(j, fs))) return NULL;
    c->n_ev++;
    if (j->count) {
        c->n_st += n_st;
        c->ub += n_st;
    } else {
        c->ub += (stop - body) >> 1;
    }
    c->end = stop;
    return c;
}

/* a line's field other than an event (``field``, wire type ``wt``, its value at ``pos``)
   into L: its end, or an error */
static int64_t line_field(Space *s, int64_t row, int64_t pos, int64_t end, int64_t field,
                          int wt) {
    const uint8_t *b = s->b;
    int64_t stop;
    uint64_t v;
    if (wt == 0 && (field == 1 || field == 10 || field == 3 || field == 9)) {
        pos = varint(b, pos, end, &v);
        if (pos < 0) return pos;
        tab_at(&s->L, row)[field == 1 ? L_ID : field == 10 ? L_DISPLAY_ID
                           : field == 3 ? L_TIMESTAMP_NS : L_DURATION_PS] = (int64_t)v;
        return pos;
    }
    if (wt == 2 && (field == 2 || field == 11)) {
        pos = length(b, pos, end, &stop);
        if (pos < 0) return pos;
        int col = field == 2 ? L_NAME_OFF : L_DNAME_OFF;
        tab_at(&s->L, row)[col] = pos;
        tab_at(&s->L, row)[col + 1] = stop - pos;
        return stop;
    }
    return skip(b, pos, end, wt);
}

/* Phase 1, one line: its header into L; its events framed into chunks of about
   chunk_bytes and counted, their stats counted too when the job counts them (else bounded). */
GUARDED_WORK static void frame_line(Space *s, Job *j) {
    const uint8_t *b = s->b;
    int64_t pos = j->pos, end = j->end, row = j->line, field, stop, seen = 0, fs = pos;
    int wt;
    Chunk *c = NULL;
    while (pos < end) {
        fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) break;
        if (wt == 2 && field == 4) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) break;
            int64_t n_st = 0, inner = pos;
            if (j->count && (n_st = count_stats(b, pos, stop, &inner)) < 0) {
                pos = n_st;
                fs = inner; /* the failing field's start */
                break;
            }
            if (!(c = chunk_add(j, c, fs, pos, stop, n_st))) {
                pos = ERR_NO_MEMORY;
                break;
            }
            pos = stop;
            if (stop - c->pos >= s->chunk_bytes) {
                progress_add(s, c->end - c->pos);
                framed_pages(s, c->pos, c->end);
                c = NULL;
            }
            if ((++seen & 0xFFFF) == 0 && CANCELLED()) {
                pos = ERR_CANCELLED;
                break;
            }
        } else {
            pos = line_field(s, row, pos, end, field, wt);
            if (pos < 0) break;
        }
    }
    if (c) {
        progress_add(s, c->end - c->pos);
        framed_pages(s, c->pos, c->end);
    }
    tab_at(&s->L, row)[L_EVENTS] = seen;
    if (pos < 0) {
        j->err = pos;
        j->err_pos = pos == ERR_CANCELLED || pos == ERR_NO_MEMORY ? -1 : fs;
    }
}

/* Phase 1, one line of a selecting walk: as frame_line, but only the events it keeps (the
   line kept, the event overlapping its window) are counted into chunks, their stats counted
   with them; a chunk runs from its first kept event to its last (the walk skips the others
   between them).  Every event's times are read: the line's events in the file and their span
   go into L. */
GUARDED_WORK static void select_line(Space *s, Job *j) {
    const uint8_t *b = s->b;
    int64_t pos = j->pos, end = j->end, row = j->line, field, stop, seen = 0, fs = pos;
    int64_t first = INT64_MAX, last = INT64_MIN, done = pos, off, dur, n_st;
    const int keep = s->keep[row];
    int wt;
    Chunk *c = NULL;
    j->count = 1; /* (the times are read: the stats are counted with them) */
    while (pos < end) {
        fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) break;
        if (wt == 2 && field == 4) {
            int64_t body = pos = length(b, pos, end, &stop);
            if (pos >= 0) pos = event_times(b, pos, stop, &off, &dur, &n_st);
            if (pos < 0) break;
            int64_t e = event_end(off, dur);
            first = off < first ? off : first;
            last = e > last ? e : last;
            if (keep && off <= s->hi[row] && e >= s->lo[row]) {
                if (!(c = chunk_add(j, c, fs, body, stop, n_st))) {
                    pos = ERR_NO_MEMORY;
                    break;
                }
                if (stop - c->pos >= s->chunk_bytes) c = NULL;
            }
            if (stop - done >= s->chunk_bytes) { /* scanned bytes: counted, pages handed back */
                progress_add(s, stop - done);
                release_pages(s, done, stop);
                done = stop;
            }
            if ((++seen & 0xFFFF) == 0 && CANCELLED()) {
                pos = ERR_CANCELLED;
                break;
            }
        } else {
            pos = line_field(s, row, pos, end, field, wt);
            if (pos < 0) break;
        }
    }
    progress_add(s, end - done);
    release_pages(s, done, end);
    int64_t *L = tab_at(&s->L, row);
    L[L_EVENTS] = seen;
    L[L_FIRST_PS] = seen ? first : 0;
    L[L_LAST_PS] = seen ? last : 0;
    if (pos < 0) {
        j->err = pos;
        j->err_pos = pos == ERR_CANCELLED || pos == ERR_NO_MEMORY ? -1 : fs;
    }
}

static void *frame_worker(void *arg) {
    Space *s = (Space *)arg;
    for (;;) {
        int64_t k = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
        if (k >= s->n_jobs) break;
        int64_t i = s->job_order ? s->job_order[k] : k;
        if (CANCELLED()) {
            s->jobs[i].err = ERR_CANCELLED;
            s->jobs[i].err_pos = -1;
            continue;
        }
        Job *j = &s->jobs[i];
        if (s->keep)
            GUARDED(s->b, s->n, select_line(s, j), (j->err = ERR_UNREADABLE, j->err_pos = -1));
        else
            GUARDED(s->b, s->n, frame_line(s, j), (j->err = ERR_UNREADABLE, j->err_pos = -1));
    }
    return NULL;
}

static int add_child(Space *s, int64_t meta_row, int64_t child) {
    int64_t c = tab_add(&s->CH);
    if (c < 0) return -1;
    tab_at(&s->CH, c)[CH_META_ROW] = meta_row;
    tab_at(&s->CH, c)[CH_CHILD] = child;
    return 0;
}

static int64_t event_metadata(Space *s, W *w, int64_t pos, int64_t end, int64_t row) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && (field == 1 || field == 6)) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            if (field == 1) tab_at(&s->M, row)[M_ID] = (int64_t)v;
            else if (add_child(s, row, (int64_t)v) != 0) return ERR_NO_MEMORY;
        } else if (wt == 2 && field == 6) { /* packed child ids */
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            while (pos < stop) {
                pos = varint(b, pos, stop, &v);
                if (pos < 0) return fail(w, fs, pos);
                if (add_child(s, row, (int64_t)v) != 0) return ERR_NO_MEMORY;
            }
        } else if (wt == 2 && field == 5) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            pos = staged_stat(s, w, pos, stop, OWNER_EVENT_METADATA, row);
            if (pos < 0) return fail(w, fs, pos);
        } else if (wt == 2 && (field == 2 || field == 3 || field == 4)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            int col = field == 2 ? M_NAME_OFF : (field == 3 ? M_META_OFF : M_DNAME_OFF);
            tab_at(&s->M, row)[col] = pos;
            tab_at(&s->M, row)[col + 1] = stop - pos;
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    return pos;
}

static int64_t stat_metadata(Space *s, W *w, int64_t pos, int64_t end, int64_t row) {
    const uint8_t *b = w->b;
    int64_t field, stop;
    int wt;
    uint64_t v;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos < 0) return fail(w, fs, pos);
        if (wt == 0 && field == 1) {
            pos = varint(b, pos, end, &v);
            if (pos < 0) return fail(w, fs, pos);
            tab_at(&s->SM, row)[SM_ID] = (int64_t)v;
        } else if (wt == 2 && (field == 2 || field == 3)) {
            pos = length(b, pos, end, &stop);
            if (pos < 0) return fail(w, fs, pos);
            int col = field == 2 ? SM_NAME_OFF : SM_DESC_OFF;
            tab_at(&s->SM, row)[col] = pos;
            tab_at(&s->SM, row)[col + 1] = stop - pos;
            pos = stop;
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    return pos;
}

/* one map entry {1: int64 key, 2: XEventMetadata | XStatMetadata} */
static int64_t map_entry(Space *s, W *w, int64_t pos, int64_t end, int64_t plane,
                         int is_event_map) {
    const uint8_t *b = w->b;
    Tab *t = is_event_map ? &s->M : &s->SM;
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
            if (row < 0) {
                if ((row = tab_add(t)) < 0) return ERR_NO_MEMORY;
                tab_at(t, row)[M_PLANE] = plane;
            }
            pos = is_event_map ? event_metadata(s, w, pos, stop, row)
                               : stat_metadata(s, w, pos, stop, row);
            if (pos < 0) return fail(w, fs, pos);
        } else {
            pos = skip(b, pos, end, wt);
            if (pos < 0) return fail(w, fs, pos);
        }
    }
    if (row < 0) { /* the key maps to {} */
        if ((row = tab_add(t)) < 0) return ERR_NO_MEMORY;
        tab_at(t, row)[M_PLANE] = plane;
    }
    tab_at(t, row)[M_KEY] = key;
    return pos;
}

/* Sweep over a plane's fields reading only the map ``map_field`` (4: event metadata, 5: stat
   metadata) and, when ``P`` is given, the plane's id and name; everything else is checked. */
static int64_t plane_maps(Space *s, W *w, int64_t pos, int64_t end, int64_t row, int64_t *P,
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
            pos = map_entry(s, w, pos, stop, row, field == 4);
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

/* Sweep over a plane's fields framing its lines and reading its plane stats. */
static int64_t plane_lines(Space *s, W *w, int64_t pos, int64_t end, int64_t row) {
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
            pos = field == 3 ? line(s, w, pos, stop, row)
                             : staged_stat(s, w, pos, stop, OWNER_PLANE, row);
        } else {
            pos = skip(b, pos, end, wt);
        }
        if (pos < 0) return fail(w, fs, pos);
    }
    return pos;
}

static int64_t plane(Space *s, W *w, int64_t pos, int64_t end) {
    int64_t row = tab_add(&s->P);
    if (row < 0) return ERR_NO_MEMORY;
    if (row >= s->n_maps) {
        int64_t cap = s->n_maps ? 2 * s->n_maps : 8;
        Lookup *e = GROW(s->evmaps, Lookup, cap);
        if (e) s->evmaps = e;
        Lookup *m = GROW(s->smmaps, Lookup, cap);
        if (m) s->smmaps = m;
        if (!e || !m) return ERR_NO_MEMORY;
        memset(s->evmaps + s->n_maps, 0, (size_t)(cap - s->n_maps) * sizeof(Lookup));
        memset(s->smmaps + s->n_maps, 0, (size_t)(cap - s->n_maps) * sizeof(Lookup));
        s->n_maps = cap;
    }
    /* sweep 1: stat metadata (and id, name); sweep 2: event metadata, whose stats need the
       stat metadata; sweep 3: lines and plane stats */
    int64_t P[P_COLS] = {0};
    int64_t s0 = s->SM.n, p = plane_maps(s, w, pos, end, row, P, 5);
    memcpy(tab_at(&s->P, row), P, sizeof(P));
    if (p < 0) return p;
    if (build_map(&s->smmaps[row], &s->SM, s0, s->SM.n) != 0) return ERR_NO_MEMORY;
    w->smmap = &s->smmaps[row];
    int64_t m0 = s->M.n;
    p = plane_maps(s, w, pos, end, row, NULL, 4);
    if (p < 0) return p;
    if (build_map(&s->evmaps[row], &s->M, m0, s->M.n) != 0) return ERR_NO_MEMORY;
    return plane_lines(s, w, pos, end, row);
}

static void stage_columns_free(Stage *g) {
    free(g->col.owner);
    free(g->col.okind);
    free(g->col.kind);
    free(g->col.value);
    free(g->col.name);
    memset(g, 0, sizeof(*g));
}

static void stages_free(Space *s) {
    for (int64_t i = 0; i < s->n_stages; i++) stage_columns_free(&s->stages[i]);
    free(s->stages);
    s->stages = NULL;
    s->n_stages = 0;
}

static void space_free(Space *s) {
    free(s->P.d);
    free(s->L.d);
    free(s->M.d);
    free(s->SM.d);
    free(s->CH.d);
    free(s->X.d);
    for (int64_t i = 0; i < s->n_maps; i++) {
        lookup_free(&s->evmaps[i]);
        lookup_free(&s->smmaps[i]);
    }
    free(s->evmaps);
    free(s->smmaps);
    sb_free(&s->staged);
    for (int64_t c = 0; c < s->n_chunks; c++) {
        sb_free(&s->chunks[c].st);
        free(s->chunks[c].ex.d);
    }
    free(s->chunks);
    for (int64_t i = 0; i < s->n_jobs; i++) free(s->jobs[i].chunks);
    free(s->jobs);
    free(s->job_order);
    free(s->segs);
    free(s->ev_counts);
    free(s->seg_done);
    free(s->keep);
    free(s->lo);
    free(s->hi);
    stages_free(s);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* errors that win over format errors, in this order: cancelled, unreadable, out of memory */
static int error_rank(int64_t code) {
    return code == ERR_CANCELLED ? 3 : code == ERR_UNREADABLE ? 2 : code == ERR_NO_MEMORY;
}

static void set_error(Space *s, int64_t code, int64_t pos) {
    if (error_rank(code)) {
        if (error_rank(code) >= error_rank(s->err)) {
            s->err = code;
            s->err_pos = pos;
        }
        return;
    }
    if (error_rank(s->err)) return;
    if (s->err == 0 || (pos >= 0 && (s->err_pos < 0 || pos < s->err_pos))) {
        s->err = code;
        s->err_pos = pos;
    }
}

static void fill_info(const Space *s, int64_t *info) {
    info[T_P] = s->P.n;
    info[T_L] = s->L.n;
    info[T_M] = s->M.n;
    info[T_SM] = s->SM.n;
    info[T_CH] = s->CH.n;
    info[T_X] = s->X.n;
    info[T_EV] = s->n_events;
    info[C_CHUNKS] = s->n_chunks;
    info[C_ERR] = s->err;
    info[C_ERR_POS] = s->err_pos;
    int64_t ntx = s->staged.ntx, nex = 0, no_meta = s->staged.no_meta, refs = s->staged.refs;
    for (int64_t c = 0; c < s->n_chunks; c++) {
        ntx += s->chunks[c].st.ntx;
        nex += s->chunks[c].ex.n;
        no_meta += s->chunks[c].st.no_meta;
        refs += s->chunks[c].st.refs;
    }
    info[T_ST] = s->stats_known ? s->n_stats : s->st_bound;
    info[T_TX] = ntx;
    info[T_EX] = nex;
    info[C_STAT_NO_META] = no_meta;
    info[C_REFS] = refs;
}

/* a segment's stat rows: its staged rows, or its chunk's stats (once counted or walked) */
static inline int64_t seg_rows(const Space *s, const Seg *seg) {
    return seg->chunk < 0 ? seg->hi - seg->lo : s->chunks[seg->chunk].n_st;
}

/* every segment's first stat row from the stats of those before it (each counted or walked);
   the 32-bit columns address stat rows: more is an error */
static void assign_bases(Space *s) {
    int64_t base = 0;
    for (int64_t g = 0; g < s->n_segs; g++) {
        s->segs[g].base = base;
        base += seg_rows(s, &s->segs[g]);
    }
    s->n_stats = base;
    s->stats_known = 1;
    if (s->err == 0 && base > s->row_limit) set_error(s, ERR_TOO_MANY_ROWS, -1);
}

/* After the framing: the chunks of every line in file order, their first event rows, and
   the bound on the stat rows; returns -1 when out of memory. */
static int plan_chunks(Space *s) {
    int64_t n_chunks = 0, n_segs = 0;
    for (int64_t i = 0; i < s->n_jobs; i++) n_chunks += s->jobs[i].n_chunks;
    for (int64_t g = 0; g < s->n_segs; g++)
        n_segs += s->segs[g].job >= 0 ? s->jobs[s->segs[g].job].n_chunks : 1;
    Chunk *chunks = (Chunk *)tfp_calloc((size_t)n_chunks + 1, sizeof(Chunk));
    Seg *segs = (Seg *)tfp_calloc((size_t)n_segs + 1, sizeof(Seg));
    if (!chunks || !segs) {
        free(chunks);
        free(segs);
        return -1;
    }
    int64_t c = 0, k = 0, events = 0, bound = 0;
    for (int64_t g = 0; g < s->n_segs; g++) {
        Seg *seg = &s->segs[g];
        if (seg->job < 0) {
            segs[k++] = *seg;
            bound += seg->hi - seg->lo;
            continue;
        }
        Job *j = &s->jobs[seg->job];
        for (int64_t i = 0; i < j->n_chunks; i++, c++) {
            chunks[c] = j->chunks[i];
            chunks[c].ev_first = events;
            events += chunks[c].n_ev;
            bound += chunks[c].ub;
            memset(&segs[k], 0, sizeof(Seg));
            segs[k].chunk = c;
            segs[k++].job = -1;
        }
    }
    free(s->chunks);
    free(s->segs);
    s->chunks = chunks;
    s->n_chunks = s->cap_chunks = n_chunks;
    s->segs = segs;
    s->n_segs = s->cap_segs = n_segs;
    s->n_events = events;
    s->st_bound = bound;
    return 0;
}

/* Phase 1's sweep of the space's fields in this thread: planes (their metadata, staged stats
   and lines) and space strings. */
GUARDED_WORK static void sweep(Space *s) {
    const uint8_t *buf = s->b;
    const int64_t n = s->n;
    W w = {buf, &s->staged, NULL, -1};
    int64_t pos = 0, field, stop;
    int wt;
    while (pos < n) {
        int64_t fs = pos;
        pos = tag(buf, pos, n, &field, &wt);
        if (pos >= 0) {
            if (wt == 2 && field == 1) {
                pos = length(buf, pos, n, &stop);
                if (pos >= 0) pos = plane(s, &w, pos, stop);
            } else if (wt == 2 && (field == 2 || field == 3 || field == 4)) {
                pos = length(buf, pos, n, &stop);
                if (pos >= 0) {
                    int64_t row = tab_add(&s->X);
                    if (row < 0) {
                        pos = ERR_NO_MEMORY;
                    } else {
                        tab_at(&s->X, row)[X_FIELD] = field;
                        tab_at(&s->X, row)[X_OFF] = pos;
                        tab_at(&s->X, row)[X_LEN] = stop - pos;
                        pos = stop;
                    }
                }
            } else {
                pos = skip(buf, pos, n, wt);
            }
        }
        if (pos < 0) {
            set_error(s, pos, w.err_pos >= 0 ? w.err_pos : fs);
            break;
        }
    }
}

/* Phase 1's sweep over the whole buffer: planes, metadata and staged stats in this thread
   (the lines are framed by tfp_space_frame, ``threads`` unused here).  Returns the handle
   (NULL when out of memory); ``info`` (N_INFO) receives the counts known so far and the first
   error (C_ERR 0: none).  ``progress`` (PR_*, may be NULL)
   is updated as the walk goes; with ``release`` set the buffer is a read-only file mapping
   whose walked pages may be handed back. */
/* row_limit: the most rows of each table of this host (events, stats, lines, metadata; at
   most INT32_MAX, which <= 0 means: the 32-bit columns address them); tests lower it to
   reach the error with a small file. */
EXPORT void *tfp_space_open(const uint8_t *buf, int64_t n, int64_t chunk_bytes, int64_t release,
                            int64_t threads, int64_t row_limit, int64_t *progress,
                            int64_t *info) {
    Space *s = (Space *)tfp_calloc(1, sizeof(Space));
    if (!s) return NULL;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return NULL;
    }
    s->b = buf;
    s->n = n;
    s->chunk_bytes = chunk_bytes > 0 ? chunk_bytes : (16 << 20);
    s->release = release != 0;
    s->row_limit = row_limit > 0 && row_limit < INT32_MAX ? row_limit : INT32_MAX;
    s->progress = progress;
    s->P.cols = P_COLS;
    s->L.cols = L_COLS;
    s->M.cols = M_COLS;
    s->SM.cols = SM_COLS;
    s->CH.cols = CH_COLS;
    s->X.cols = X_COLS;
    s->err_pos = -1;
    if (progress) {
        progress[PR_PHASE] = 1;
        progress[PR_DONE] = 0;
        progress[PR_TOTAL] = n;
    }
    (void)threads;
    guard_install();
    GUARDED(buf, n, sweep(s), set_error(s, ERR_UNREADABLE, -1));
    fill_info(s, info);
    return s;
}

/* Whether lines are counted while they are framed (tfp_set_frame_counts; tests turn it off
   to have the walk learn the stat rows as it goes). */
static int frame_counts = 1;

/* Set whether the framing counts the stats of the lines it may (1) or of none (0); returns
   the previous setting. */
EXPORT int64_t tfp_set_frame_counts(int64_t on) {
    int64_t old = frame_counts;
    frame_counts = on != 0;
    return old;
}

typedef struct {
    int64_t bytes, job;
} JobSize;

static int larger_first(const void *a, const void *b) {
    const JobSize *x = (const JobSize *)a, *y = (const JobSize *)b;
    if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
    return x->job < y->job ? -1 : x->job > y->job;
}

/* Before the framing: the jobs taken largest first (so the threads finish together), and
   which count their stats as they frame: each line no larger than a thread's share of every
   line's bytes (counting a larger line there would leave its thread framing alone; its
   chunks are counted side by side after, by tfp_space_count, where that is asked). */
static void plan_jobs(Space *s, int64_t threads) {
    int64_t total = 0;
    for (int64_t i = 0; i < s->n_jobs; i++) total += s->jobs[i].end - s->jobs[i].pos;
    int64_t share = threads > 1 ? total / threads : total;
    for (int64_t i = 0; i < s->n_jobs; i++)
        s->jobs[i].count = frame_counts && s->jobs[i].end - s->jobs[i].pos <= share;
    free(s->job_order);
    s->job_order = NULL;
    JobSize *sizes = (JobSize *)malloc((size_t)(s->n_jobs + 1) * sizeof(JobSize));
    int64_t *order = (int64_t *)malloc((size_t)(s->n_jobs + 1) * sizeof(int64_t));
    if (!sizes || !order) { /* (then in file order) */
        free(sizes);
        free(order);
        return;
    }
    for (int64_t i = 0; i < s->n_jobs; i++) {
        sizes[i].bytes = s->jobs[i].end - s->jobs[i].pos;
        sizes[i].job = i;
    }
    qsort(sizes, (size_t)s->n_jobs, sizeof(JobSize), larger_first);
    for (int64_t i = 0; i < s->n_jobs; i++) order[i] = sizes[i].job;
    free(sizes);
    s->job_order = order;
}

/* whether every chunk's stats were counted while framing */
static int all_counted(const Space *s) {
    for (int64_t c = 0; c < s->n_chunks; c++)
        if (!s->chunks[c].counted) return 0;
    return 1;
}

/* Phase 1, the lines framed on ``threads`` threads (after tfp_space_open; the handle's lines
   are known then).  With ``keep`` (one flag per line) the walk selects: only the events of
   kept lines overlapping their line's window [lo, hi] (offsets in ps, relative to the line's
   timestamp: off <= hi and off + duration >= lo) get rows, and every line's events in the
   file and their span are noted in L (L_EVENTS, L_FIRST_PS, L_LAST_PS).  The stats of the
   lines framed are counted with them where plan_jobs says (every line of a selecting walk).
   ``info`` is filled again: every count exact, T_ST too once every chunk's stats are counted
   (else the bound on the stat rows), the first error. */
EXPORT void tfp_space_frame(void *h, int64_t threads, const uint8_t *keep, const int64_t *lo,
                            const int64_t *hi, int64_t *info) {
    Space *s = (Space *)h;
    guard_install();
    int64_t nl = s->L.n > 0 ? s->L.n : 1;
    if (keep && !s->keep) {
        s->keep = (uint8_t *)tfp_malloc((size_t)nl);
        s->lo = (int64_t *)tfp_malloc((size_t)nl * sizeof(int64_t));
        s->hi = (int64_t *)tfp_malloc((size_t)nl * sizeof(int64_t));
        if (!s->keep || !s->lo || !s->hi) {
            set_error(s, ERR_NO_MEMORY, -1);
            fill_info(s, info);
            return;
        }
        memcpy(s->keep, keep, (size_t)s->L.n);
        memcpy(s->lo, lo, (size_t)s->L.n * sizeof(int64_t));
        memcpy(s->hi, hi, (size_t)s->L.n * sizeof(int64_t));
    }
    s->next = 0;
    plan_jobs(s, threads);
    if (s->err != ERR_UNREADABLE) run_threads(frame_worker, s, threads);
    for (int64_t i = 0; i < s->n_jobs; i++)
        if (s->jobs[i].err) set_error(s, s->jobs[i].err, s->jobs[i].err_pos);
    if (plan_chunks(s) != 0) set_error(s, ERR_NO_MEMORY, -1);
    /* the 32-bit columns address rows, lines, metadata rows and string lengths */
    if (s->err == 0 && (s->n_events > s->row_limit || s->L.n > s->row_limit ||
                        s->M.n > s->row_limit || s->SM.n > s->row_limit))
        set_error(s, ERR_TOO_MANY_ROWS, -1);
    if (s->err == 0 && all_counted(s)) assign_bases(s); /* every stat row known */
    fill_info(s, info);
}

/* The small tables of phase 1, copied into the caller's (rows x cols) int64 arrays. */
EXPORT void tfp_space_tables(void *h, int64_t *P, int64_t *L, int64_t *M, int64_t *SM,
                             int64_t *CH, int64_t *X) {
    Space *s = (Space *)h;
    Tab *tabs[6] = {&s->P, &s->L, &s->M, &s->SM, &s->CH, &s->X};
    int64_t *out[6] = {P, L, M, SM, CH, X};
    for (int i = 0; i < 6; i++)
        if (tabs[i]->n) memcpy(out[i], tabs[i]->d, (size_t)(tabs[i]->n * tabs[i]->cols) * 8);
}

/* ---- phase 1b: stats framing left uncounted counted (where the bound is not reserved) ---- */

GUARDED_WORK static void count_chunk(Space *s, Chunk *c) {
    const uint8_t *b = s->b;
    int64_t pos = c->pos, end = c->end, field, stop, n = 0, seen = 0;
    int wt;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos >= 0 && wt == 2 && field == 4) {
            pos = length(b, pos, end, &stop);
            int64_t bad = 0;
            if (pos >= 0 && s->keep && !event_kept(s, c->line, pos, stop, &bad))
                pos = bad ? bad : stop; /* not kept: its stats are not walked */
            else if (pos >= 0) {
                int64_t inner = pos, k = count_stats(b, pos, stop, &inner);
                if (k < 0) {
                    c->err = k;
                    c->err_pos = inner;
                    return;
                }
                n += k;
                pos = stop;
            }
        } else if (pos >= 0) {
            pos = skip(b, pos, end, wt);
        }
        if (pos < 0) {
            c->err = pos;
            c->err_pos = fs;
            return;
        }
        if ((++seen & 0xFFFF) == 0 && CANCELLED()) {
            c->err = ERR_CANCELLED;
            c->err_pos = -1;
            return;
        }
    }
    c->n_st = n;
}

static void *count_worker(void *arg) {
    Space *s = (Space *)arg;
    for (;;) {
        int64_t i = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
        if (i >= s->n_chunks) break;
        Chunk *c = &s->chunks[i];
        if (c->counted) continue; /* counted while framing */
        GUARDED(s->b, s->n, count_chunk(s, c), (c->err = ERR_UNREADABLE, c->err_pos = -1));
    }
    return NULL;
}

/* Phase 1b: count the stats of every chunk the framing did not count on ``threads`` threads,
   so every stat row is known before the walk; ``info`` is filled again (T_ST exact, the first
   error if any). */
EXPORT void tfp_space_count(void *h, int64_t threads, int64_t *info) {
    Space *s = (Space *)h;
    guard_install();
    if (s->err == 0 && !s->stats_known) {
        s->next = 0;
        run_threads(count_worker, s, threads);
        for (int64_t c = 0; c < s->n_chunks; c++)
            if (s->chunks[c].err) set_error(s, s->chunks[c].err, s->chunks[c].err_pos);
        assign_bases(s);
    }
    fill_info(s, info);
}

/* ---- phase 2: events and stats walked, chunks side by side ------------------------------ */

static void walk_chunk(Space *s, Chunk *c, StatCols d, int64_t cap, int64_t *ev_counts) {
    StatBuf *st = &c->st;
    st->fixed = 1;
    st->owner = d.owner;
    st->okind = d.okind;
    st->kind = d.kind;
    st->value = d.value;
    st->name = d.name;
    st->name_bytes = s->st_name_bytes;
    st->code_of_srow = s->code_of_srow;
    st->n_srows = s->n_srows;
    st->missing = s->missing_stat;
    /* codes are below n_srows, or the missing code (at most n_srows) */
    st->name_counts = (int64_t *)tfp_calloc((size_t)s->n_srows + 1, sizeof(int64_t));
    if (!st->name_counts) {
        c->err = ERR_NO_MEMORY;
        c->err_pos = -1;
        return;
    }
    st->cap = cap;
    W w = {s->b, st, &s->smmaps[c->plane], -1};
    const Lookup *evmap = &s->evmaps[c->plane];
    const uint8_t *b = s->b;
    int64_t pos = c->pos, end = c->end, row = c->ev_first, field, stop;
    const int64_t rows_end = c->ev_first + c->n_ev;
    int wt;
    while (pos < end) {
        int64_t fs = pos;
        pos = tag(b, pos, end, &field, &wt);
        if (pos >= 0) {
            if (wt == 2 && field == 4) {
                pos = length(b, pos, end, &stop);
                int64_t bad = 0;
                if (pos >= 0 && s->keep && !event_kept(s, c->line, pos, stop, &bad)) {
                    pos = bad ? bad : stop; /* (an event between two kept ones) */
                    if (pos < 0) {
                        c->err = pos;
                        c->err_pos = fs;
                        return;
                    }
                    continue;
                }
                if (pos >= 0 && row >= rows_end) pos = ERR_CHANGED; /* never past its rows */
                if (pos >= 0)
                    pos = event(&w, &s->out, evmap, &c->ex, ev_counts, pos, stop, row++,
                                c->line);
            } else {
                pos = skip(b, pos, end, wt);
            }
        }
        if (pos < 0) {
            c->err = pos;
            c->err_pos = w.err_pos >= 0 ? w.err_pos : fs;
            return;
        }
    }
    /* rows left unwritten: the bytes differ from the framing (or the counting) pass */
    if (row != rows_end || (s->stats_known && st->n != c->n_st)) {
        c->err = ERR_CHANGED;
        c->err_pos = c->pos;
    }
}

/* staged rows [lo, hi) of a segment into the caller's stat columns */
static void copy_staged(Space *s, const Seg *seg) {
    const StatBuf *src = &s->staged;
    int64_t m = seg->hi - seg->lo, lo = seg->lo, base = seg->base;
    if (m <= 0) return;
    memcpy(s->st_owner + base, src->owner + lo, (size_t)m * sizeof(int32_t));
    memcpy(s->st_okind + base, src->okind + lo, (size_t)m);
    memcpy(s->st_kind + base, src->kind + lo, (size_t)m);
    memcpy(s->st_value + base, src->value + lo, (size_t)m * sizeof(int64_t));
    for (int64_t i = 0; i < m; i++) {
        int32_t r = src->meta[lo + i];
        int32_t code = r < 0 || r >= s->n_srows ? s->missing_stat : s->code_of_srow[r];
        code_store(s->st_name, s->st_name_bytes, base + i, code);
    }
}

static StatCols columns_at(Space *s, int64_t base) {
    StatCols d = {s->st_owner + base, s->st_okind + base, s->st_kind + base, s->st_value + base,
                  (char *)s->st_name + base * s->st_name_bytes};
    return d;
}

/* a free stage of at least ``rows`` rows, marked busy (called under mu); -1 when out of
   memory.  Stages are made as large as the largest chunk needs, so a stage once written is
   reused, never made again (new pages cost a fault each). */
static int64_t stage_take(Space *s, int64_t rows) {
    if (rows < s->stage_rows) rows = s->stage_rows;
    int64_t pick = -1;
    for (int64_t i = 0; i < s->n_stages; i++) {
        if (s->stages[i].busy) continue;
        if (s->stages[i].cap >= rows) {
            pick = i;
            break;
        }
        if (pick < 0) pick = i;
    }
    if (pick < 0) {
        Stage *g = GROW(s->stages, Stage, s->n_stages + 1);
        if (!g) return -1;
        s->stages = g;
        memset(&g[s->n_stages], 0, sizeof(Stage));
        pick = s->n_stages++;
    }
    Stage *g = &s->stages[pick];
    if (g->cap < rows) {
        stage_columns_free(g);
        size_t n = (size_t)rows + 1;
        StatCols *d = &g->col;
        d->owner = (int32_t *)tfp_malloc(n * sizeof(int32_t));
        d->okind = (int8_t *)tfp_malloc(n);
        d->kind = (int8_t *)tfp_malloc(n);
        d->value = (int64_t *)tfp_malloc(n * sizeof(int64_t));
        d->name = tfp_malloc(n * (size_t)s->st_name_bytes);
        g->cap = rows;
        if (!d->owner || !d->okind || !d->kind || !d->value || !d->name) {
            stage_columns_free(g);
            return -1;
        }
    }
    g->busy = 1;
    return pick;
}

/* the frontier over every segment walked in a row, each giving the next its first stat row
   (called under mu) */
static void advance_frontier(Space *s) {
    while (s->frontier < s->n_segs && s->seg_done[s->frontier]) {
        const Seg *seg = &s->segs[s->frontier];
        s->frontier_rows = seg->base + seg_rows(s, seg);
        if (s->frontier + 1 < s->n_segs) s->segs[s->frontier + 1].base = s->frontier_rows;
        s->frontier++;
    }
}

/* Segment ``g`` is walked: the frontier moves over every walked segment in a row (each
   giving the next its first stat row), then every staged chunk it passed is copied into the
   caller's columns by this thread (each claimed under mu, copied outside it). */
static void segment_done(Space *s, int64_t g) {
    pthread_mutex_lock(&s->mu);
    s->seg_done[g] = 1;
    advance_frontier(s);
    int64_t n_st = s->chunks[s->segs[g].chunk].n_st;
    if (n_st > s->chunk_rows_max) s->chunk_rows_max = n_st;
    __atomic_store_n(&s->soon_rows, s->frontier_rows + (s->threads + 1) * s->chunk_rows_max,
                     __ATOMIC_RELAXED);
    for (;;) {
        while (s->copy_from < s->frontier && (s->segs[s->copy_from].chunk < 0 ||
                                              s->chunks[s->segs[s->copy_from].chunk].stage < 0))
            s->copy_from++;
        if (s->copy_from >= s->frontier) break;
        const Seg *seg = &s->segs[s->copy_from++];
        Chunk *c = &s->chunks[seg->chunk];
        int64_t i = c->stage, n = c->n_st, base = seg->base;
        StatCols from = s->stages[i].col;
        c->stage = -1;
        pthread_mutex_unlock(&s->mu);
        if (n > 0 && base + n <= s->st_cap) {
            StatCols to = columns_at(s, base);
            memcpy(to.owner, from.owner, (size_t)n * sizeof(int32_t));
            memcpy(to.okind, from.okind, (size_t)n);
            memcpy(to.kind, from.kind, (size_t)n);
            memcpy(to.value, from.value, (size_t)n * sizeof(int64_t));
            memcpy(to.name, from.name, (size_t)(n * s->st_name_bytes));
        } else if (n > 0 && !c->err) {
            c->err = ERR_CHANGED;
            c->err_pos = c->pos;
        }
        pthread_mutex_lock(&s->mu);
        s->stages[i].busy = 0;
    }
    pthread_mutex_unlock(&s->mu);
}

static void walk_segment(Space *s, int64_t g, int64_t *counts) {
    Chunk *c = &s->chunks[s->segs[g].chunk];
    if (CANCELLED()) {
        c->err = ERR_CANCELLED;
        c->err_pos = -1;
        return;
    }
    /* at most this many stats (exact when counted) */
    int64_t cap = s->stats_known ? c->n_st : c->ub, base = -1;
    StatCols d;
    pthread_mutex_lock(&s->mu);
    if (g <= s->frontier) { /* its first stat row is known */
        base = s->segs[g].base;
        if (base + cap > s->st_cap) cap = s->st_cap - base > 0 ? s->st_cap - base : 0;
        d = columns_at(s, base);
    } else {
        c->stage = stage_take(s, cap);
        if (c->stage >= 0) d = s->stages[c->stage].col;
    }
    pthread_mutex_unlock(&s->mu);
    if (base < 0 && c->stage < 0) {
        c->err = ERR_NO_MEMORY;
        c->err_pos = -1;
        return;
    }
    walk_chunk(s, c, d, cap, counts);
    if (!s->stats_known) c->n_st = c->st.n;
}

/* the walked chunk of segment ``g`` is done with: its pages handed back, its stats placed */
static void segment_end(Space *s, int64_t g) {
    Chunk *c = &s->chunks[s->segs[g].chunk];
    release_pages(s, c->pos, c->end);
    progress_add(s, c->end - c->pos);
    segment_done(s, g);
}

typedef struct { /* one thread of phase 2: its counts per name code, the segment it walks */
    Space *s;
    int64_t *counts;
    volatile int64_t g;
} EvThread;

/* Walk segments until none is left.  The fault guard is set once around this loop, not per
   chunk: the walk compiled inside a function calling sigsetjmp ran more instructions. */
GUARDED_WORK static void events_loop(EvThread *t) {
    Space *s = t->s;
    for (;;) {
        int64_t g = __atomic_fetch_add(&s->next, 1, __ATOMIC_RELAXED);
        if (g >= s->n_segs) break;
        if (s->segs[g].chunk < 0) continue; /* staged rows: copied once every row is known */
        t->g = g;
        walk_segment(s, g, t->counts);
        t->g = -1;
        segment_end(s, g);
    }
}

static void *events_worker(void *arg) {
    Space *s = (Space *)arg;
    /* this thread's events per name code, added to the space's when it is done */
    int64_t *counts = NULL;
    if (s->ev_counts) {
        counts = (int64_t *)tfp_calloc((size_t)s->out.n_codes, sizeof(int64_t));
        if (!counts) __atomic_store_n(&s->ev_counts_lost, 1, __ATOMIC_RELAXED);
    }
    EvThread t = {s, counts, -1};
    for (int more = 1; more;) {
        more = 0;
        GUARDED(s->b, s->n, events_loop(&t), more = 1);
        if (more) { /* segment t.g read past the file's end: its chunk fails, the walk goes on */
            Chunk *c = &s->chunks[s->segs[t.g].chunk];
            c->err = ERR_UNREADABLE;
            c->err_pos = -1;
            if (!s->stats_known) c->n_st = c->st.n;
            segment_end(s, t.g);
            t.g = -1;
        }
    }
    if (counts) {
        for (int64_t k = 0; k < s->out.n_codes; k++)
            if (counts[k]) __atomic_fetch_add(&s->ev_counts[k], counts[k], __ATOMIC_RELAXED);
        free(counts);
    }
    return NULL;
}

/* Phase 2: walk every chunk's events and stats into the caller's columns.  Events: line
   int32; metadata row int8, int16 or int32 (``meta_bytes``); name code uint8, uint16 or int32
   (``name_bytes``: code_of_row[metadata row], ``missing`` for events whose metadata is not in
   their plane); start int64 (the offset as stored); duration int64.  Stats (``st_cap`` rows:
   at least T_ST of the last info, the bound or, after tfp_space_count, the count): owner
   int32, owner kind int8, name code uint8, uint16 or int32 (``sname_bytes``: code_of_srow[stat-
   metadata row], ``smissing`` when missing), kind int8, value int64 (str/bytes: their buffer
   offset; refs: the stat-metadata row).  With ``n_codes`` > 0 (above every event name code),
   events are counted per name code for tfp_space_finish.  ``info`` is filled again (T_ST the
   stats written, text and extra counts; the first error, if any). */
EXPORT void tfp_space_events(void *h, int64_t threads, int32_t *line, void *meta,
                             int64_t meta_bytes, void *name, int64_t name_bytes,
                             const int32_t *code_of_row, int32_t missing, int64_t n_codes,
                             int64_t *start,
                             int64_t *dur, int32_t *owner, int8_t *okind, void *sname,
                             int64_t sname_bytes, int8_t *kind, int64_t *value,
                             int64_t st_cap, const int32_t *code_of_srow, int64_t n_srows,
                             int32_t smissing, int64_t *info) {
    Space *s = (Space *)h;
    guard_install();
    EvOut o = {line,        meta,    name,   start,  dur, meta_bytes, name_bytes,
               code_of_row, missing, n_codes};
    s->out = o;
    s->st_owner = owner;
    s->st_okind = okind;
    s->st_name = sname;
    s->st_name_bytes = sname_bytes;
    s->st_kind = kind;
    s->st_value = value;
    s->st_cap = st_cap;
    s->code_of_srow = code_of_srow;
    s->n_srows = n_srows;
    s->missing_stat = smissing;
    free(s->ev_counts);
    s->ev_counts = n_codes > 0 ? (int64_t *)tfp_calloc((size_t)n_codes, sizeof(int64_t)) : NULL;
    s->ev_counts_lost = 0;
    free(s->seg_done);
    s->seg_done = (uint8_t *)tfp_calloc((size_t)s->n_segs + 1, 1);
    if (!s->seg_done) {
        set_error(s, ERR_NO_MEMORY, -1);
        fill_info(s, info);
        return;
    }
    /* staged rows are known from the start; counted stats have every first row known */
    for (int64_t g = 0; g < s->n_segs; g++)
        s->seg_done[g] = s->stats_known || s->segs[g].chunk < 0;
    s->stage_rows = 0;
    for (int64_t c = 0; c < s->n_chunks; c++)
        if (s->chunks[c].ub > s->stage_rows) s->stage_rows = s->chunks[c].ub;
    /* (counted: the frontier passes every segment, giving each the first row it has) */
    s->frontier = s->copy_from = s->frontier_rows = s->chunk_rows_max = 0;
    if (s->n_segs) {
        s->segs[0].base = 0;
        advance_frontier(s);
    }
    s->soon_rows = s->frontier_rows;
    s->threads = threads;
    s->next = 0;
    if (s->progress) {
        s->progress[PR_DONE] = 0;
        s->progress[PR_PHASE] = 3;
    }
    /* the columns are faulted in ahead of the writers: the stat columns with the events when
       their rows are known, else (their rows reserved to the bound) up to the rows the
       writers will soon reach */
    int64_t stat_rows = s->stats_known ? s->n_stats : st_cap;
    PopColumn stat_cols[5] = {{(char *)owner, stat_rows, 4},
                              {(char *)okind, stat_rows, 1},
                              {(char *)sname, stat_rows, sname_bytes},
                              {(char *)kind, stat_rows, 1},
                              {(char *)value, stat_rows, 8}};
    Populate pop = {{{(char *)line, s->n_events, 4},
                     {(char *)meta, s->n_events, meta_bytes},
                     {(char *)name, s->n_events, name_bytes},
                     {(char *)start, s->n_events, 8},
                     {(char *)dur, s->n_events, 8}},
                    5, 0, 0, NULL, NULL};
    Populate ahead = {{{0}}, 0, 0, 0, NULL, &s->soon_rows};
    Populate *stat_pop = s->stats_known ? &pop : &ahead;
    for (int k = 0; k < 5; k++) stat_pop->cols[stat_pop->n_cols++] = stat_cols[k];
    populate_begin(&pop);
    populate_begin(&ahead); /* (nothing when it has no columns) */
    run_threads(events_worker, s, threads);
    populate_end(&pop);
    populate_end(&ahead);
    for (int64_t c = 0; c < s->n_chunks; c++)
        if (s->chunks[c].err) set_error(s, s->chunks[c].err, s->chunks[c].err_pos);
    stages_free(s);
    if (!s->stats_known) assign_bases(s);
    if (s->err == 0 && s->n_stats > st_cap) set_error(s, ERR_CHANGED, 0);
    if (s->err == 0)
        for (int64_t g = 0; g < s->n_segs; g++)
            if (s->segs[g].chunk < 0) copy_staged(s, &s->segs[g]);
    fill_info(s, info);
}

/* ---- phase 3: text stats and extras ----------------------------------------------------- */

/* The text stats' (row, length) and the event extras (rows x EX_COLS) in file order, the
   number of event stats per stat name code (``name_counts``: n_srows + 1 entries, zeroed),
   the number of events per line (``line_counts``, zeroed) and, when phase 2 counted them,
   per event name code (``ev_counts``: its n_codes entries; left as they are when not
   counted, e.g. out of memory: the caller fills them with -1 first). */
EXPORT void tfp_space_finish(void *h, int32_t *tx_row, int32_t *tx_len, int64_t *ex,
                             int64_t *name_counts, int64_t *line_counts, int64_t *ev_counts) {
    Space *s = (Space *)h;
    int64_t t = 0, x = 0;
    for (int64_t c = 0; c < s->n_chunks; c++) line_counts[s->chunks[c].line] += s->chunks[c].n_ev;
    if (ev_counts && s->ev_counts && !s->ev_counts_lost)
        memcpy(ev_counts, s->ev_counts, (size_t)s->out.n_codes * sizeof(int64_t));
    for (int64_t c = 0; c < s->n_chunks; c++)
        if (s->chunks[c].st.name_counts)
            for (int64_t k = 0; k <= s->n_srows; k++)
                name_counts[k] += s->chunks[c].st.name_counts[k];
    for (int64_t g = 0; g < s->n_segs; g++) {
        Seg *seg = &s->segs[g];
        const StatBuf *src = seg->chunk >= 0 ? &s->chunks[seg->chunk].st : &s->staged;
        int64_t lo = seg->chunk >= 0 ? 0 : seg->lo;
        int64_t tx_lo = seg->chunk >= 0 ? 0 : seg->tx_lo;
        int64_t tx_hi = seg->chunk >= 0 ? src->ntx : seg->tx_hi;
        for (int64_t k = tx_lo; k < tx_hi; k++, t++) {
            tx_row[t] = (int32_t)(seg->base + src->tx_row[k] - lo);
            tx_len[t] = src->tx_len[k];
        }
        if (seg->chunk >= 0) {
            Tab *e = &s->chunks[seg->chunk].ex;
            if (e->n) memcpy(ex + x * EX_COLS, e->d, (size_t)(e->n * EX_COLS) * sizeof(int64_t));
            x += e->n;
        }
    }
}

EXPORT void tfp_space_close(void *h) {
    if (h) space_free((Space *)h);
}
