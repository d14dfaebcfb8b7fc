/* Joining events on equal keys (producer -> consumer context links, executor -> iterator,
   launch -> kernel) with a radix-partitioned hash join.

   Both sides are gathered as (key, id) entries straight into partitions by their keys' hash
   (chunks of entries chained per partition: no pass to partition them after), so each
   partition's hash table stays in cache.  The result is the a entries of each b entry's key,
   for every b entry in b's order and, within one, in a's order (entries are numbered
   increasing within a side), so the edges come sorted by destination without a sort.  It is
   computed in two calls: tfp_join_* finds each b entry's match (one a entry, or a list for
   the few keys with several) and returns a handle and the number of edges; tfp_join_take
   writes the edges into the caller's arrays and frees the handle.

   Ids from a file can repeat without bound (20,000 launches sharing one correlation id): a
   negative ``limit`` gives each b entry only one a entry of its key, the first (JOIN_FIRST:
   the smallest a id) or the last (JOIN_LAST: the largest; xprof's rule for the ids it links
   one parent by), so the edges are at most the b entries; tfp_join_duplicates counts the a
   entries left out that way.  A positive ``limit`` skips the keys both sides have ``limit``
   or more entries of (xprof's rule for contexts), so a key gives at most limit - 1 edges per
   entry of its larger side. */
#include "common.h"

#define JOIN_FIRST (-1) /* ``limit`` values: one a entry per b entry (see above) */
#define JOIN_LAST (-2)

typedef struct { /* a keyed entry; ``id`` orders a side.  k0 is kept in 32 bits: the value
                    itself while every k0 fits, else a code numbering the values (k0_code) */
    int64_t k1;
    int32_t k0, id;
} Ent;

#define CHUNK_ENTS 1024 /* entries per chunk (16 KB) */
#define SLAB_CHUNKS 64  /* chunks per allocation (1 MB) */

typedef struct Chunk { /* entries of one partition, in the order they came */
    struct Chunk *next;
    int64_t n; /* set when the chunk is full or sealed (side_seal): while entries come, the
                  partition's count says where the next goes (no load of a chunk's header
                  per entry: a cache miss each, 40 % of the context links' scan) */
    Ent e[CHUNK_ENTS];
} Chunk;

typedef struct { /* one side's entries, by partition */
    Chunk **first, **last; /* per partition */
    int64_t *count;        /* entries per partition */
    Chunk **slabs;         /* the chunks' memory: SLAB_CHUNKS chunks each */
    int64_t n_slabs, cap_slabs, used; /* used: chunks handed out (slab after slab) */
} Side;

typedef struct {
    int bits;          /* partitions: 1 << bits, by the top bits of the key's hash */
    Side a, b;         /* the entries of both sides */
    int64_t na, nb, cap_a, cap_b;
    int64_t nb_total;  /* b entries over every pass (b ids number them) */
    int32_t *b_rows;   /* the output row of each b entry (b ids index it) */
    int32_t *match;    /* per b entry: an a row, -1 none, or -2 - offset into ``more`` */
    int32_t *more;     /* count, then rows, for keys with several a entries */
    int64_t n_more, cap_more, n_edges;
    int64_t n_dups;    /* JOIN_FIRST, JOIN_LAST: a entries left out (another of their key) */
    int wide;          /* a k0 past 32 bits came: every k0 is stored as its code in ``codes`` */
    I64Map codes;
    int64_t n_codes, min_code; /* min_code: INT64_MIN's code (-1: none yet) */
} Join;

static inline uint64_t key_hash(int64_t a, int64_t b) {
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)b + 0x632BE59BD9B4E019ULL);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

/* Every partition's last chunk told how many entries it holds (join_add leaves it). */
static void side_seal(Side *s, int64_t parts) {
    for (int64_t p = 0; p < parts; p++)
        if (s->last[p]) {
            int64_t k = s->count[p] & (CHUNK_ENTS - 1);
            s->last[p]->n = k ? k : CHUNK_ENTS;
        }
}

/* the code of value k0 (a new one for a value not seen); -1 when out of memory */
static int k0_code(Join *j, int64_t k0, int32_t *out) {
    if (k0 == INT64_MIN) { /* (not a key the map can hold) */
        if (j->min_code < 0) {
            if (j->n_codes >= INT32_MAX) return -1;
            j->min_code = j->n_codes++;
        }
        *out = (int32_t)j->min_code;
        return 0;
    }
    int64_t c = i64map_get(&j->codes, k0, -1);
    if (c < 0) {
        if (j->n_codes >= INT32_MAX || i64map_put(&j->codes, k0, j->n_codes) != 0) return -1;
        c = j->n_codes++;
    }
    *out = (int32_t)c;
    return 0;
}

/* The first k0 past 32 bits: from now on every k0 is stored as its code, the entries stored
   so far (their k0 the value itself) recoded; -1 when out of memory. */
static int go_wide(Join *j) {
    if (i64map_init(&j->codes, 1024) != 0) return -1;
    j->wide = 1;
    j->min_code = -1;
    int64_t parts = (int64_t)1 << j->bits;
    side_seal(&j->a, parts);
    side_seal(&j->b, parts);
    for (int side = 0; side < 2; side++)
        for (int64_t p = 0; p < parts; p++)
            for (Chunk *c = (side ? &j->b : &j->a)->first[p]; c; c = c->next)
                for (int64_t i = 0; i < c->n; i++)
                    if (k0_code(j, c->e[i].k0, &c->e[i].k0) != 0) return -1;
    return 0;
}

/* The side's next chunk (from its slabs); NULL when out of memory. */
static Chunk *chunk_new(Side *s) {
    int64_t slab = s->used / SLAB_CHUNKS;
    if (slab == s->n_slabs) {
        if (s->n_slabs == s->cap_slabs) {
            int64_t cap = s->cap_slabs ? 2 * s->cap_slabs : 16;
            Chunk **t = (Chunk **)tfp_realloc(s->slabs, (size_t)cap * sizeof(Chunk *));
            if (!t) return NULL;
            s->slabs = t;
            s->cap_slabs = cap;
        }
        Chunk *m = (Chunk *)tfp_malloc((size_t)SLAB_CHUNKS * sizeof(Chunk));
        if (!m) return NULL;
        s->slabs[s->n_slabs++] = m;
    }
    Chunk *c = &s->slabs[slab][s->used++ % SLAB_CHUNKS];
    c->next = NULL;
    c->n = 0;
    return c;
}

static int side_init(Side *s, int64_t parts) {
    memset(s, 0, sizeof(*s));
    s->first = (Chunk **)tfp_calloc((size_t)parts, sizeof(Chunk *));
    s->last = (Chunk **)tfp_calloc((size_t)parts, sizeof(Chunk *));
    s->count = (int64_t *)tfp_calloc((size_t)parts, sizeof(int64_t));
    return s->first && s->last && s->count ? 0 : -1;
}

static void side_clear(Side *s, int64_t parts) { /* (its chunks are handed out again) */
    memset(s->first, 0, (size_t)parts * sizeof(Chunk *));
    memset(s->last, 0, (size_t)parts * sizeof(Chunk *));
    memset(s->count, 0, (size_t)parts * sizeof(int64_t));
    s->used = 0;
}

static void side_free(Side *s) {
    for (int64_t i = 0; i < s->n_slabs; i++) free(s->slabs[i]);
    free(s->slabs);
    free(s->first);
    free(s->last);
    free(s->count);
    memset(s, 0, sizeof(*s));
}

/* Copy partition p's entries into *buf (grown as needed); returns their number, -1 when out
   of memory. */
static int64_t side_gather(const Side *s, int64_t p, Ent **buf, int64_t *cap) {
    int64_t n = s->count[p];
    if (n > *cap) {
        free(*buf);
        *cap = 2 * n;
        *buf = (Ent *)tfp_malloc((size_t)*cap * sizeof(Ent));
        if (!*buf) {
            *cap = 0;
            return -1;
        }
    }
    int64_t k = 0;
    for (const Chunk *c = s->first[p]; c; c = c->next) {
        memcpy(*buf + k, c->e, (size_t)c->n * sizeof(Ent));
        k += c->n;
    }
    return n;
}

/* Add an entry to side a or b, in the partition of its key (hashed as given: a k0 coded
   later stays in its partition). */
static inline int join_add(Join *j, int side_b, int64_t k0, int64_t k1, int32_t id) {
    if (side_b ? j->nb >= j->cap_b : j->na >= j->cap_a) return -1;
    int64_t p = j->bits ? (int64_t)(key_hash(k0, k1) >> (64 - j->bits)) : 0;
    int32_t key0 = (int32_t)k0;
    if (!j->wide && (int64_t)key0 != k0 && go_wide(j) != 0) return -1;
    if (j->wide && k0_code(j, k0, &key0) != 0) return -1;
    Side *s = side_b ? &j->b : &j->a;
    Chunk *c = s->last[p];
    int64_t k = s->count[p] & (CHUNK_ENTS - 1); /* (chunks fill one after the other) */
    if (k == 0) { /* no chunk yet, or the last one full */
        Chunk *fresh = chunk_new(s);
        if (!fresh) return -1;
        if (c) {
            c->n = CHUNK_ENTS;
            c->next = fresh;
        } else {
            s->first[p] = fresh;
        }
        s->last[p] = c = fresh;
    }
    Ent *x = &c->e[k];
    x->k0 = key0;
    x->k1 = k1;
    x->id = id;
    s->count[p]++;
    if (side_b) j->nb++;
    else j->na++;
    return 0;
}

static void join_free(Join *j) {
    if (!j) return;
    side_free(&j->a);
    side_free(&j->b);
    free(j->b_rows);
    free(j->match);
    free(j->more);
    if (j->wide) i64map_free(&j->codes);
    free(j);
}

/* a handle for at most ``cap_a`` a entries and ``cap_b`` b entries, partitioned so that a
   partition holds about 32 K a entries (at most 4096 partitions) */
static Join *join_new(int64_t cap_a, int64_t cap_b) {
    Join *j = (Join *)tfp_calloc(1, sizeof(Join));
    if (!j) return NULL;
    j->cap_a = cap_a;
    j->cap_b = cap_b;
    while (j->bits < 12 && (cap_a >> j->bits) > 32768) j->bits++;
    int64_t parts = (int64_t)1 << j->bits;
    j->b_rows = (int32_t *)tfp_malloc(((size_t)cap_b + 1) * sizeof(int32_t));
    if (side_init(&j->a, parts) != 0 || side_init(&j->b, parts) != 0 || !j->b_rows) {
        join_free(j);
        return NULL;
    }
    return j;
}

/* one worker's lists of a entries for keys with several, and its number of edges */
typedef struct {
    int32_t *more;
    int64_t n_more, cap_more, n_edges, n_dups;
} Lists;

static int more_add(Lists *l, int32_t v) {
    if (l->n_more == l->cap_more) {
        int64_t cap = l->cap_more ? 2 * l->cap_more : 1024;
        int32_t *m = (int32_t *)tfp_realloc(l->more, (size_t)cap * sizeof(int32_t));
        if (!m) return -1;
        l->more = m;
        l->cap_more = cap;
    }
    l->more[l->n_more++] = v;
    return 0;
}

/* Scratch of one partition's join: a table of key ids, per key its first a entry, a count,
   a chain through the a entries, and b counts. */
typedef struct {
    int32_t *slot, *first, *a_count, *b_count, *next, *list, *key_of;
    int64_t cap_slot, cap_keys, cap_b;
} Scratch;

static int scratch_fit(Scratch *s, int64_t na, int64_t nb) {
    int64_t slots = 16;
    while (slots < 2 * na + 2) slots <<= 1;
    if (slots > s->cap_slot) {
        free(s->slot);
        s->slot = (int32_t *)tfp_malloc((size_t)slots * sizeof(int32_t));
        s->cap_slot = s->slot ? slots : 0;
    }
    if (na + 1 > s->cap_keys) {
        int64_t cap = 2 * (na + 1);
        free(s->first);
        free(s->a_count);
        free(s->b_count);
        free(s->next);
        free(s->list);
        s->first = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->a_count = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->b_count = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->next = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->list = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->cap_keys = (s->first && s->a_count && s->b_count && s->next && s->list) ? cap : 0;
    }
    if (nb + 1 > s->cap_b) {
        int64_t cap = 2 * (nb + 1);
        free(s->key_of);
        s->key_of = (int32_t *)tfp_malloc((size_t)cap * sizeof(int32_t));
        s->cap_b = s->key_of ? cap : 0;
    }
    return s->cap_slot && s->cap_keys && s->cap_b ? 0 : -1;
}

static void scratch_free(Scratch *s) {
    free(s->slot);
    free(s->first);
    free(s->a_count);
    free(s->b_count);
    free(s->next);
    free(s->list);
    free(s->key_of);
}

static int cmp_i32(const void *x, const void *y) {
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return (a > b) - (a < b);
}

/* JOIN_FIRST / JOIN_LAST (``mode``): each b entry of the partition matched to one a entry of
   its key, the smallest or the largest id (found once per key, kept in ``list``); the other
   a entries of the key counted. */
static int one_matches(Join *j, Lists *l, const Ent *pa, const Ent *pb, int64_t nb,
                       Scratch *s, int64_t mode) {
    for (int64_t i = 0; i < nb; i++) {
        int32_t key = s->key_of[i];
        if (key < 0) continue;
        if (s->list[key] < 0) {
            int32_t best = pa[s->first[key]].id;
            for (int32_t e = s->next[s->first[key]]; e >= 0; e = s->next[e])
                if (mode == JOIN_LAST ? pa[e].id > best : pa[e].id < best) best = pa[e].id;
            s->list[key] = best;
            l->n_dups += s->a_count[key] - 1;
        }
        j->match[pb[i].id] = s->list[key];
        l->n_edges++;
    }
    return 0;
}

/* Join a's entries pa[0..na) and b's pb[0..nb) (one partition): fill match[] for the b
   entries; returns -1 when out of memory. */
static int join_partition(Join *j, Lists *l, int64_t t, int64_t n_threads, const Ent *pa,
                          int64_t na, const Ent *pb, int64_t nb, Scratch *s, int64_t limit) {
    if (na == 0 || nb == 0) return 0; /* (match is -1 until set) */
    if (scratch_fit(s, na, nb) != 0) return -1;
    int64_t slots = 16;
    while (slots < 2 * na + 2) slots <<= 1;
    uint64_t mask = (uint64_t)slots - 1;
    for (int64_t i = 0; i < slots; i++) s->slot[i] = -1;
    int32_t n_keys = 0;
    /* keys of a: each key's entries chained (``first``, ``next``) */
    for (int64_t i = 0; i < na; i++) {
        const Ent *x = &pa[i];
        uint64_t q = key_hash(x->k0, x->k1) & mask;
        int32_t key = -1;
        while (s->slot[q] >= 0) {
            const Ent *y = &pa[s->first[s->slot[q]]];
            if (y->k0 == x->k0 && y->k1 == x->k1) {
                key = s->slot[q];
                break;
            }
            q = (q + 1) & mask;
        }
        s->next[i] = -1;
        if (key < 0) {
            key = n_keys++;
            s->slot[q] = key;
            s->first[key] = (int32_t)i;
            s->list[key] = (int32_t)i; /* the last entry so far */
            s->a_count[key] = 0;
            s->b_count[key] = 0;
        } else {
            s->next[s->list[key]] = (int32_t)i;
            s->list[key] = (int32_t)i;
        }
        s->a_count[key]++;
    }
    for (int64_t i = 0; i < nb; i++) {
        const Ent *x = &pb[i];
        uint64_t q = key_hash(x->k0, x->k1) & mask;
        int32_t key = -1;
        while (s->slot[q] >= 0) {
            const Ent *y = &pa[s->first[s->slot[q]]];
            if (y->k0 == x->k0 && y->k1 == x->k1) {
                key = s->slot[q];
                break;
            }
            q = (q + 1) & mask;
        }
        s->key_of[i] = key;
        if (key >= 0) s->b_count[key]++;
    }
    /* a key's list in ``more`` is written once, when a b entry first needs it, in a's order
       (ids increase with it; the partition pass did not keep it) */
    for (int32_t k = 0; k < n_keys; k++) s->list[k] = -1;
    if (limit < 0) return one_matches(j, l, pa, pb, nb, s, limit);
    for (int64_t i = 0; i < nb; i++) {
        int32_t key = s->key_of[i];
        if (key < 0) continue;
        if (limit > 0 && s->a_count[key] >= limit && s->b_count[key] >= limit) continue;
        int32_t id = pb[i].id;
        if (s->a_count[key] == 1) {
            j->match[id] = pa[s->first[key]].id;
            l->n_edges++;
            continue;
        }
        if (s->list[key] < 0) {
            if (l->n_more * n_threads + t > INT32_MAX - 2) return -1;
            s->list[key] = (int32_t)(l->n_more * n_threads + t); /* this worker's list */
            if (more_add(l, s->a_count[key]) != 0) return -1;
            int64_t at = l->n_more;
            for (int32_t e = s->first[key]; e >= 0; e = s->next[e])
                if (more_add(l, pa[e].id) != 0) return -1;
            qsort(l->more + at, (size_t)s->a_count[key], sizeof(int32_t), cmp_i32);
        }
        j->match[id] = -2 - s->list[key];
        l->n_edges += s->a_count[key];
    }
    return 0;
}

typedef struct { /* the join work of join_pass, shared by its threads */
    Join *j;
    int64_t parts, limit, n_threads, part, tid, rc;
    Lists *lists;
} JoinWork;

static void *join_worker(void *arg) {
    JoinWork *w = (JoinWork *)arg;
    int64_t t = __atomic_fetch_add(&w->tid, 1, __ATOMIC_RELAXED);
    Lists *l = &w->lists[t];
    Scratch s;
    memset(&s, 0, sizeof(s));
    Ent *pa = NULL, *pb = NULL;
    int64_t cap_pa = 0, cap_pb = 0;
    for (;;) {
        int64_t p = __atomic_fetch_add(&w->part, 1, __ATOMIC_RELAXED);
        if (p >= w->parts || __atomic_load_n(&w->rc, __ATOMIC_RELAXED)) break;
        int64_t na = side_gather(&w->j->a, p, &pa, &cap_pa);
        int64_t nb = side_gather(&w->j->b, p, &pb, &cap_pb);
        int rc = na < 0 || nb < 0 ? -1
                 : CANCELLED() ? ERR_CANCELLED
                 : join_partition(w->j, l, t, w->n_threads, pa, na, pb, nb, &s, w->limit);
        if (rc) __atomic_store_n(&w->rc, rc, __ATOMIC_RELAXED);
    }
    free(pa);
    free(pb);
    scratch_free(&s);
    return NULL;
}

/* every worker's lists appended to the join's list; this pass's match entries (those of the
   b entries now in j->b) renumbered to it */
static int merge_lists(Join *j, Lists *lists, int64_t n_threads) {
    int64_t base[64], total = j->n_more;
    for (int64_t t = 0; t < n_threads; t++) {
        base[t] = total;
        total += lists[t].n_more;
        j->n_edges += lists[t].n_edges;
        j->n_dups += lists[t].n_dups;
    }
    if (total > INT32_MAX - 2) return -1;
    int32_t *more = (int32_t *)tfp_realloc(j->more, ((size_t)total + 1) * sizeof(int32_t));
    if (!more) return -1;
    j->more = more;
    for (int64_t t = 0; t < n_threads; t++)
        if (lists[t].n_more)
            memcpy(j->more + base[t], lists[t].more, (size_t)lists[t].n_more * sizeof(int32_t));
    j->n_more = total;
    if (total == base[0]) return 0; /* (no key with several a entries this pass) */
    int64_t parts = (int64_t)1 << j->bits;
    for (int64_t p = 0; p < parts; p++)
        for (const Chunk *c = j->b.first[p]; c; c = c->next)
            for (int64_t i = 0; i < c->n; i++) {
                int32_t id = c->e[i].id, m = j->match[id];
                if (m > -2) continue;
                int64_t code = -2 - (int64_t)m;
                j->match[id] = (int32_t)(-2 - (base[code % n_threads] + code / n_threads));
            }
    return 0;
}

/* match the b entries of one pass (ids into j->match): the partitions joined on ``threads``
   threads.  Returns 0 or < 0. */
static int64_t join_pass(Join *j, int64_t limit, int64_t threads) {
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    JoinWork w;
    memset(&w, 0, sizeof(w));
    w.j = j;
    w.parts = (int64_t)1 << j->bits;
    side_seal(&j->a, w.parts);
    side_seal(&j->b, w.parts);
    w.limit = limit;
    w.n_threads = threads;
    w.lists = (Lists *)tfp_calloc((size_t)threads, sizeof(Lists));
    int64_t rc = 0;
    if (!w.lists) {
        rc = -1;
    } else if (CANCELLED()) {
        rc = ERR_CANCELLED;
    } else {
        run_threads(join_worker, &w, threads);
        rc = w.rc;
        if (rc == 0 && merge_lists(j, w.lists, threads) != 0) rc = -1;
    }
    for (int64_t t = 0; w.lists && t < threads; t++) free(w.lists[t].more);
    free(w.lists);
    return rc;
}

/* room for the match of ``n`` b entries (ids 0..n-1), every one -1 (none) until matched */
static int match_alloc(Join *j, int64_t n) {
    j->match = (int32_t *)tfp_malloc(((size_t)n + 1) * sizeof(int32_t));
    if (!j->match) return -1;
    memset(j->match, 0xFF, ((size_t)n + 1) * sizeof(int32_t));
    return 0;
}

/* the entries are not needed once every pass is joined */
static void entries_free(Join *j) {
    side_free(&j->a);
    side_free(&j->b);
}

static int64_t finish(Join *j, int64_t limit, int64_t threads, void **handle) {
    j->nb_total = j->nb;
    int64_t rc = match_alloc(j, j->nb) != 0 ? -1 : join_pass(j, limit, threads);
    entries_free(j);
    if (rc == 0) rc = j->n_edges;
    if (rc < 0) {
        join_free(j);
        *handle = NULL;
        return rc;
    }
    *handle = j;
    return rc;
}

/* Join a (rows, k0, k1) and b (rows, k0, k1): see the top of this file.  Keys where both
   sides have ``limit`` or more entries are skipped (limit 0: none; JOIN_FIRST, JOIN_LAST: one
   a entry per b entry).  Returns the number of edges and a handle for tfp_join_take
   (negative: out of memory or cancelled). */
EXPORT int64_t tfp_join_keys(const int32_t *a_rows, const int64_t *a_k0, const int64_t *a_k1,
                             int64_t na, const int32_t *b_rows, const int64_t *b_k0,
                             const int64_t *b_k1, int64_t nb, int64_t limit, int64_t threads,
                             void **handle) {
    Join *j = join_new(na, nb);
    *handle = NULL;
    if (!j) return -1;
    for (int64_t i = 0; i < na; i++)
        if (join_add(j, 0, a_k0[i], a_k1[i], a_rows[i]) != 0) goto oom;
    for (int64_t i = 0; i < nb; i++) {
        if (join_add(j, 1, b_k0[i], b_k1[i], (int32_t)i) != 0) goto oom;
        j->b_rows[i] = b_rows[i];
    }
    return finish(j, limit, threads, handle);
oom:
    join_free(j);
    return -1;
}

static inline int in_pass(int64_t k0, int64_t k1, int64_t pass, int64_t passes) {
    return passes == 1 || (int64_t)(key_hash(k0, k1) & (uint64_t)(passes - 1)) == pass;
}

/* One pass of tfp_context_links: the entries of the keys in ``pass`` (of ``passes``) into
   j->a and j->b, b ids numbering every consumer in order (j->nb_total of them); the rows of
   the consumers are written on the first pass.  ``slot_of`` gives each name code below
   ``n_codes`` its stat (0 pt, 1 p, 2 ct, 3 c; -1 none).  Only the four stats are looked at:
   an event is complete when one of them belongs to the next event (stat rows are in event
   order) or the table ends.  Returns 0, -1 (full) or ERR_CANCELLED. */
static int64_t context_scan(Join *j, const void *name_code, int64_t code_bytes,
                            const int8_t *owner_kind, const int8_t *kind, const int64_t *raw,
                            const int32_t *owner, int64_t n, const int8_t *slot_of,
                            int64_t n_codes, const int32_t *x_rows, const int64_t *x_k0,
                            const int64_t *x_k1, int64_t n_extra, int64_t pass,
                            int64_t passes) {
    int64_t v[4] = {0, 0, 0, 0}, gb = 0;
    int have = 0; /* bits: pt, p, ct, c */
    int32_t cur = -1;
    j->na = j->nb = 0;
    side_clear(&j->a, (int64_t)1 << j->bits);
    side_clear(&j->b, (int64_t)1 << j->bits);
    for (int64_t i = 0;; i++) {
        int32_t o = -1;
        int slot = -1;
        if (i < n) {
            if (CANCEL_POLL(i)) return ERR_CANCELLED;
            int64_t code = CODE_AT(name_code, code_bytes, i);
            if ((uint64_t)code >= (uint64_t)n_codes) continue;
            slot = slot_of[code];
            if (slot < 0 || owner_kind[i] != 0) continue;
            o = owner[i];
        }
        if (o != cur) { /* the event before is complete */
            if ((have & 3) == 3 && in_pass(v[0], v[1], pass, passes) &&
                join_add(j, 0, v[0], v[1], cur) != 0)
                return -1;
            if ((have & 12) == 12) {
                if (gb >= j->cap_b) return -1;
                if (in_pass(v[2], v[3], pass, passes) &&
                    join_add(j, 1, v[2], v[3], (int32_t)gb) != 0)
                    return -1;
                if (pass == 0) j->b_rows[gb] = cur;
                gb++;
            }
            have = 0;
            cur = o;
        }
        if (i >= n) break;
        int64_t value;
        if (!stat_int_value(kind[i], raw[i], &value)) continue;
        v[slot] = value;
        have |= 1 << slot;
    }
    for (int64_t i = 0; i < n_extra; i++) {
        if (gb >= j->cap_b) return -1;
        if (in_pass(x_k0[i], x_k1[i], pass, passes) &&
            join_add(j, 1, x_k0[i], x_k1[i], (int32_t)gb) != 0)
            return -1;
        if (pass == 0) j->b_rows[gb] = x_rows[i];
        gb++;
    }
    j->nb_total = gb;
    return 0;
}

/* Producer -> consumer links of events, read straight from the stat table: events carrying
   integer stats ``pt`` and ``p`` (name codes) produce (pt, p); events carrying ``ct`` and
   ``c`` consume (ct, c) (the last value of a stat an event carries twice; doubles
   truncated); ``n_extra`` extra consumers (rows, k0, k1) follow the events.  ``cap_b``
   bounds the consumers; ``passes`` shares of the keys are joined one after the other (see
   context_scan).  Returns the number of edges (a: producer rows, b: consumer rows) and a
   handle for tfp_join_take. */
EXPORT int64_t tfp_context_links(const void *name_code, int64_t code_bytes,
                                 const int8_t *owner_kind, const int8_t *kind,
                                 const int64_t *raw, const int32_t *owner, int64_t n,
                                 int32_t pt, int32_t p, int32_t ct, int32_t c, int64_t cap_a,
                                 int64_t cap_b, const int32_t *x_rows, const int64_t *x_k0,
                                 const int64_t *x_k1, int64_t n_extra, int64_t limit,
                                 int64_t threads, int64_t passes, void **handle) {
    int32_t codes[4] = {pt, p, ct, c};
    int64_t n_codes = 0;
    for (int k = 0; k < 4; k++)
        if (codes[k] + (int64_t)1 > n_codes) n_codes = codes[k] + (int64_t)1;
    int8_t *slot_of = (int8_t *)tfp_malloc((size_t)n_codes + 1);
    Join *j = join_new(cap_a, cap_b + n_extra);
    *handle = NULL;
    if (!slot_of || !j || match_alloc(j, cap_b + n_extra) != 0) goto oom;
    memset(slot_of, -1, (size_t)n_codes + 1);
    for (int k = 3; k >= 0; k--) /* (a code named twice takes its first stat) */
        if (codes[k] >= 0) slot_of[codes[k]] = (int8_t)k;
    /* keys are split by bits of their hash into passes (1, 2 or 4) joined one after the
       other: a pass touches only its share of the entry arrays, so the join's memory is that
       share */
    if (passes != 2 && passes != 4) passes = 1;
    int64_t rc = 0;
    for (int64_t pass = 0; pass < passes && rc == 0; pass++) {
        rc = context_scan(j, name_code, code_bytes, owner_kind, kind, raw, owner, n, slot_of,
                          n_codes, x_rows, x_k0, x_k1, n_extra, pass, passes);
        if (rc == 0) rc = join_pass(j, limit, threads);
    }
    free(slot_of);
    entries_free(j);
    if (rc < 0) {
        join_free(j);
        return rc;
    }
    *handle = j;
    return j->n_edges;
oom:
    free(slot_of);
    join_free(j);
    return -1;
}

/* The edges of a join (src: a rows, dst: b rows) in b's order, then the handle is freed. */
EXPORT void tfp_join_take(void *handle, int32_t *src, int32_t *dst) {
    Join *j = (Join *)handle;
    int64_t k = 0;
    for (int64_t i = 0; i < j->nb_total; i++) {
        int32_t m = j->match[i];
        if (m == -1) continue;
        if (m >= 0) {
            src[k] = m;
            dst[k++] = j->b_rows[i];
            continue;
        }
        const int32_t *list = j->more + (-2 - m);
        for (int32_t t = 0; t < list[0]; t++) {
            src[k] = list[1 + t];
            dst[k++] = j->b_rows[i];
        }
    }
    join_free(j);
}

EXPORT void tfp_join_free(void *handle) { join_free((Join *)handle); }

/* JOIN_FIRST / JOIN_LAST: the a entries left out because another entry of their key was
   taken (only keys some b entry has); call before tfp_join_take. */
EXPORT int64_t tfp_join_duplicates(const void *handle) {
    return ((const Join *)handle)->n_dups;
}

/* Membership of two-part keys: found[i] = whether (a_k0[i], a_k1[i]) is one of the nb keys
   of b (a hash set of b's keys; probes by a's entries).  Returns 0, -1 when out of memory or
   ERR_CANCELLED. */
EXPORT int64_t tfp_keys_in(const int64_t *a_k0, const int64_t *a_k1, int64_t na,
                           const int64_t *b_k0, const int64_t *b_k1, int64_t nb,
                           uint8_t *found) {
    if (nb > INT32_MAX) return -1;
    int64_t slots = 16;
    while (slots < 2 * nb + 2) slots <<= 1;
    uint64_t mask = (uint64_t)slots - 1;
    int32_t *slot = (int32_t *)tfp_malloc((size_t)slots * sizeof(int32_t));
    if (!slot) return -1;
    for (int64_t i = 0; i < slots; i++) slot[i] = -1;
    for (int64_t i = 0; i < nb; i++) {
        uint64_t q = key_hash(b_k0[i], b_k1[i]) & mask;
        while (slot[q] >= 0 && !(b_k0[slot[q]] == b_k0[i] && b_k1[slot[q]] == b_k1[i]))
            q = (q + 1) & mask;
        if (slot[q] < 0) slot[q] = (int32_t)i;
    }
    for (int64_t i = 0; i < na; i++) {
        if (CANCEL_POLL(i)) {
            free(slot);
            return ERR_CANCELLED;
        }
        uint64_t q = key_hash(a_k0[i], a_k1[i]) & mask;
        uint8_t hit = 0;
        while (slot[q] >= 0) {
            int32_t s = slot[q];
            if (b_k0[s] == a_k0[i] && b_k1[s] == a_k1[i]) {
                hit = 1;
                break;
            }
            q = (q + 1) & mask;
        }
        found[i] = hit;
    }
    free(slot);
    return 0;
}
