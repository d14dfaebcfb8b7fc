"""What the C code and Python share: the walker's tables and their columns, stat value kinds,
stat owners, the number of step-time event types, the error codes with what they mean, and
the library's exported functions.

This module is the one source of both sides: ``layout.h`` is generated from it
(``python -m tfprof_nb._native.layout`` rewrites it; a test checks it is current).  Every C
file includes it, so the compiler checks each exported definition against its prototype here;
:mod:`tfprof_nb._native` sets the ctypes signatures from the same prototypes
(:func:`signatures`), and Python reads columns by name (``L[:, COLUMNS["L"].plane]``) and
errors by name (``ERR.NO_MEMORY``) instead of by number.
"""

from __future__ import annotations

import ctypes
import re
import sys
from pathlib import Path
from types import SimpleNamespace

__all__ = ["TABLES", "COUNTERS", "PROGRESS", "SMALL_TABLES", "COLUMNS", "KINDS", "OWNERS",
           "N_STEP_TYPES", "ERRORS", "ERR", "MESSAGES", "TIME_LIMIT_PS", "API", "signatures",
           "prototypes", "table", "header_text", "HEADER"]

# the walker's record tables, in the order of its counts (``info`` of tfp_space_open)
TABLES = ("P", "L", "M", "SM", "CH", "X", "EV", "EX", "ST", "TX")
# what follows the table counts in ``info``: chunks of events walked in parallel, the first
# error (code, byte offset), stats whose metadata id is not in their plane, reference stats
COUNTERS = ("CHUNKS", "ERR", "ERR_POS", "STAT_NO_META", "REFS")
# the walker's progress array: phase (1 scanning, 2 decoding, 3 assembling), bytes done, total
PROGRESS = ("PHASE", "DONE", "TOTAL")

# the small int64 tables (one row of these columns per record); the others are columns
SMALL_TABLES = {
    "P": ("id", "name_off", "name_len"),  # planes
    "L": ("plane", "id", "display_id", "name_off", "name_len", "dname_off", "dname_len",
          "timestamp_ns", "events", "first_ps", "last_ps", "duration_ps"),
    # lines (events: in the file, whatever is kept; first_ps, last_ps: their earliest start and
    # latest end relative to the line's timestamp, found only by a selecting walk)
    "M": ("plane", "key", "id", "name_off", "name_len", "dname_off", "dname_len", "meta_off",
          "meta_len"),  # event metadata
    "SM": ("plane", "key", "id", "name_off", "name_len", "desc_off", "desc_len"),  # stat metadata
    "CH": ("meta_row", "child"),  # event metadata children
    "X": ("field", "off", "len"),  # space strings (field 2 errors, 3 warnings, 4 hostnames)
    "EX": ("row", "what", "value"),  # event extras (what 0: num_occurrences, 1: unresolved id)
}

# XStat value kinds (StatTable.kind) and who owns a stat (StatTable.owner_kind)
KINDS = ("none", "double", "uint64", "int64", "str", "bytes", "ref")
OWNERS = ("event", "event_metadata", "plane")

# step-time event types: analysis.steps.breakdown numbers its types below this
N_STEP_TYPES = 18

# the negative codes the C code returns: (name, code, what it means, said after the file's name)
ERRORS = (
    ("TRUNCATED_VARINT", -1,
     "a varint runs past the end of its message (truncated or corrupt data)"),
    ("VARINT_TOO_LONG", -2, "a varint is longer than 10 bytes (corrupt data)"),
    ("LENGTH_OVERRUN", -3,
     "a length-delimited field runs past the end of its message (truncated or corrupt data)"),
    ("FIXED_OVERRUN", -4,
     "a fixed-width field runs past the end of its message (truncated or corrupt data)"),
    ("BAD_WIRE_TYPE", -5, "a field has an invalid or unsupported wire type (corrupt data)"),
    ("FIELD_ZERO", -6, "a field number is 0 (corrupt data)"),
    ("CAPACITY", -7, "holds more records than its first pass counted (corrupt data)"),
    ("BAD_TAG", -8, "a field tag is out of range (corrupt data)"),
    ("NO_MEMORY", -9, "out of memory"),
    ("CANCELLED", -10, "interrupted"),
    ("CHANGED", -11, "changed while it was read (the events differ from the first pass): read "
                     "it again once it is written"),
    ("UNREADABLE", -12, "could not be read while it was decoded (it shrank, or its file system "
                        "failed the read)"),
    ("TOO_MANY_ROWS", -13, "too many events for one host (limit 2^31)"),
    ("TIME_RANGE", -14, "an event's time is out of range: it lasts a negative time, or starts "
                        "or ends more than 2^61 ps (26.7 days) from the profile's start "
                        "(corrupt times)"),
    ("TOO_LONG", -15, "a string or bytes stat is 2^31 bytes long or longer (the limit of one "
                      "value)"),
    ("UNSORTED", -20, "intervals not sorted by their starts"),
)
ERR = SimpleNamespace(**{name: code for name, code, _ in ERRORS})
MESSAGES = {code: message for _, code, message in ERRORS}

# every event's start and end, relative to its host's origin, lie within +-TIME_LIMIT_PS (the
# decoder refuses a file otherwise): kernels may double a time or subtract two without
# overflowing int64
TIME_LIMIT_PS = 1 << 61

# the library's exported functions (the definitions carry EXPORT in the *.c files named)
API = """
/* runtime.c */
const void *tfp_cancel_scope(const void *token);
int64_t tfp_cancel_set(void *token);
int64_t tfp_cancel_get(const void *token);
int64_t tfp_cancel_probe(int64_t threads);
int64_t tfp_set_populate_min(int64_t bytes);
/* walk.c */
void *tfp_space_open(const uint8_t *buf, int64_t n, int64_t chunk_bytes, int64_t release,
    int64_t threads, int64_t row_limit, int64_t *progress, int64_t *info);
void tfp_space_frame(void *h, int64_t threads, const uint8_t *keep, const int64_t *lo,
    const int64_t *hi, int64_t *info);
void tfp_space_tables(void *h, int64_t *P, int64_t *L, int64_t *M, int64_t *SM, int64_t *CH,
    int64_t *X);
void tfp_space_count(void *h, int64_t threads, int64_t *info);
void tfp_space_events(void *h, int64_t threads, int32_t *line, void *meta, int64_t meta_bytes,
    void *name, int64_t name_bytes, const int32_t *code_of_row, int32_t missing,
    int64_t n_codes, int64_t *start, int64_t *dur, int32_t *owner, int8_t *okind, void *sname,
    int64_t sname_bytes, int8_t *kind, int64_t *value, int64_t st_cap,
    const int32_t *code_of_srow, int64_t n_srows, int32_t smissing, int64_t *info);
void tfp_space_finish(void *h, int32_t *tx_row, int32_t *tx_len, int64_t *ex,
    int64_t *name_counts, int64_t *line_counts, int64_t *ev_counts);
void tfp_space_close(void *h);
int64_t tfp_set_frame_counts(int64_t on);
/* strings.c */
int64_t tfp_intern_text(const uint8_t *buf, int64_t n_buf, int64_t n_text,
    const int32_t *tx_row, const int32_t *tx_len, const int8_t *st_kind, int64_t *st_value,
    int64_t *rep_off, int32_t *rep_len, int8_t *rep_kind, int64_t release);
/* guard.c */
int64_t tfp_copy_spans(const uint8_t *buf, int64_t size, const int64_t *off,
    const int64_t *len, int64_t n, uint8_t *out);
/* strings.c */
void tfp_resolve_refs(const int8_t *st_kind, int64_t n, int64_t *st_value,
    const int32_t *name_code_of_row, int64_t base, int64_t missing, int64_t threads);
int64_t tfp_set_pass_block(int64_t rows);
int64_t tfp_set_intern_window(int64_t bytes);
int64_t tfp_add_gathered_i64(int64_t *values, const int32_t *rows, int64_t n,
    const int64_t *table, const int64_t *dur, int64_t *span, int64_t threads);
/* sort.c */
int64_t tfp_argsort_i64(const int64_t *keys, int64_t n, int32_t *order, int32_t *tmp);
int64_t tfp_argsort_i32(const int32_t *keys, int64_t n, int32_t *order, int32_t *tmp);
int64_t tfp_sort_pairs_gather(const int32_t *src, const int32_t *pos, const int32_t *val,
    int64_t n, int32_t *out_key, int32_t *out_val);
int64_t tfp_select_rows(const void *code, int64_t code_bytes, const int8_t *kind, int64_t n,
    int32_t value, int8_t kind_value, int32_t *out, int64_t cap);
int64_t tfp_is_nesting_order(const int32_t *line, const int64_t *begin, const int64_t *dur,
    int64_t n);
/* graph.c */
int64_t tfp_nest_strict(const int32_t *order1, int64_t n1, const int32_t *order2, int64_t n2,
    int64_t n_first, const int32_t *line1, const int64_t *begin1, const int64_t *dur1,
    const int32_t *line2, const int64_t *begin2, const int64_t *dur2, const uint8_t *skip,
    int32_t *parent, int64_t threads);
void tfp_nest_loose(const int32_t *order, int64_t n, const int32_t *line, const int64_t *begin,
    const int64_t *dur, int32_t *parent, int32_t *depth, int64_t *child_ps, int32_t *stack);
int64_t tfp_nest_query(const int32_t *order, int64_t n, const int32_t *line,
    const int64_t *begin, const int64_t *dur, const uint8_t *skip, const uint8_t *line_ok,
    const int32_t *q, int64_t m, int32_t *parent_out, const void *name_code,
    int64_t code_bytes, const uint8_t *exec_name, const uint8_t *call_flag, int64_t levels,
    uint8_t *found, int64_t threads);
int64_t tfp_csr(const int32_t *src, const int32_t *dst, int64_t e, int64_t n, int32_t *off,
    int32_t *tgt);
int64_t tfp_spread_groups(const int32_t *roots, int64_t n_roots, const int8_t *root_level,
    int64_t n_real, int64_t n, const int32_t *order, const int32_t *pos, const int32_t *line,
    const uint8_t *skip, const int32_t *parent, const int32_t *x_dst, const int32_t *x_src,
    int64_t n_x, const int32_t *s_key, const int32_t *s_dst, int64_t n_s, int32_t *group,
    int32_t *root_of_group);
int64_t tfp_threadpool_regions(int64_t m, const uint8_t *is_start, const int32_t *line,
    const int64_t *t, const int64_t *ctx, int32_t *r_line, int64_t *r_begin, int64_t *r_end,
    int64_t *r_ctx);
int64_t tfp_regions_from_rows(const int32_t *starts, const int64_t *ctx, const uint8_t *has,
    int64_t ns, const int32_t *stops, int64_t nt, const int32_t *line, const int64_t *begin,
    int32_t *r_line, int64_t *r_begin, int64_t *r_end, int64_t *r_ctx);
/* steps.c */
int64_t tfp_step_breakdown(int64_t n, const int32_t *rows, const int8_t *type,
    const int32_t *group, const int32_t *step_of_group, int64_t n_groups, const int64_t *begin,
    const int64_t *dur, int64_t n_steps, const int64_t *step_begin, const int64_t *step_end,
    int64_t *out, uint8_t *present, int64_t threads);
/* sort.c */
int64_t tfp_nonzero_i32(const uint8_t *mask, int64_t n, int32_t *out);
int64_t tfp_rows_where_i8(const int8_t *a, int64_t n, int8_t value, int64_t equal,
    int32_t *out, int64_t cap);
void tfp_span(const int64_t *begin, const int64_t *dur, int64_t n, int64_t *out);
/* intervals.c */
int64_t tfp_iv_combine(const int64_t *ab, const int64_t *ae, int64_t na, const int64_t *bb,
    const int64_t *be, int64_t nb, int64_t mode, int64_t *out_b, int64_t *out_e);
int64_t tfp_iv_union(const int64_t *begin, const int64_t *end, int64_t n, const int32_t *order,
    int64_t *out_b, int64_t *out_e);
/* stats.c */
int64_t tfp_stats_at(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
    const int8_t *kind, const int64_t *raw, const int32_t *owner, int64_t n,
    const int32_t *first_of_code, const int32_t *n_of_code, int64_t n_codes,
    const int32_t *rows, const int64_t *off, int64_t n_queries, int64_t *values, uint8_t *hit,
    int64_t *cursor);
int64_t tfp_stats_seek(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
    const int8_t *kind, const int64_t *raw, const int32_t *owner, int64_t n,
    const int64_t *run_lo, const int64_t *run_hi, int64_t n_runs, const int32_t *codes,
    int64_t k, const int32_t *rows, int64_t m, int64_t *values, uint8_t *hit);
int64_t tfp_int_stats(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
    const int8_t *kind, const int64_t *raw, const int32_t *owner, int64_t n,
    const int8_t *slot_of_code, int64_t n_codes, const int64_t *rows_addr,
    const int64_t *values_addr, const int64_t *caps, int64_t *counts, int32_t *last_owner,
    int64_t n_slots);
/* select.c */
int64_t tfp_code_lookup_u8(const void *code, int64_t code_bytes, int64_t n,
    const uint8_t *table, uint8_t *out);
int64_t tfp_code_gather_i32(const void *code, int64_t code_bytes, int64_t n,
    const int32_t *table, int64_t n_table, int32_t fill, int32_t *out);
int64_t tfp_take_rows(const void *col, int64_t n, int64_t width, const int32_t *rows,
    int64_t m, void *out);
int64_t tfp_mark_values_at(const int32_t *col, int64_t n, const int32_t *rows, int64_t m,
    uint8_t *flags, int64_t n_flags);
int64_t tfp_code_rows(const void *code, int64_t code_bytes, int64_t n, const uint8_t *table,
    const uint8_t *also, int32_t *out, int64_t cap);
int64_t tfp_code_rows_multi(const void *code, int64_t code_bytes, int64_t n,
    const int8_t *slot, int32_t **out, const int64_t *cap, int64_t *counts);
int64_t tfp_stat_name_counts(const void *name_code, int64_t code_bytes,
    const int8_t *owner_kind, int64_t n, int64_t *counts);
int64_t tfp_code_counts(const void *code, int64_t code_bytes, int64_t n, int64_t *counts);
int64_t tfp_group_sums(const int64_t *group, const double *value, int64_t n,
    int64_t n_groups, double *sum, double *comp);
int64_t tfp_take_text(const int64_t *t_off, const uint8_t *t_data, int64_t n_table,
    const int64_t *code, int64_t n, int64_t *out_off, uint8_t *out_data);
int64_t tfp_line_name_rows(const int32_t *line, const void *code, int64_t code_bytes,
    int64_t n, const uint8_t *line_ok, const uint8_t *name_ok, int32_t *out, int64_t cap);
/* stats.c */
int64_t tfp_sparse_lookup(const int32_t *rows, const void *values, int64_t value_bytes,
    int64_t n, const int32_t *query, int64_t m, int64_t *out, uint8_t *hit);
/* links.c */
int64_t tfp_join_keys(const int32_t *a_rows, const int64_t *a_k0, const int64_t *a_k1,
    int64_t na, const int32_t *b_rows, const int64_t *b_k0, const int64_t *b_k1, int64_t nb,
    int64_t limit, int64_t threads, void **handle);
int64_t tfp_context_links(const void *name_code, int64_t code_bytes, const int8_t *owner_kind,
    const int8_t *kind, const int64_t *raw, const int32_t *owner, int64_t n, int32_t pt,
    int32_t p, int32_t ct, int32_t c, int64_t cap_a, int64_t cap_b, const int32_t *x_rows,
    const int64_t *x_k0, const int64_t *x_k1, int64_t n_extra, int64_t limit, int64_t threads,
    int64_t passes, void **handle);
void tfp_join_take(void *handle, int32_t *src, int32_t *dst);
int64_t tfp_keys_in(const int64_t *a_k0, const int64_t *a_k1, int64_t na, const int64_t *b_k0,
    const int64_t *b_k1, int64_t nb, uint8_t *found);
void tfp_join_free(void *handle);
int64_t tfp_join_duplicates(const void *handle);
/* stats.c */
int64_t tfp_is_sorted_by(const int32_t *line, const int64_t *t, int64_t n);
/* steps.c */
int64_t tfp_op_stack_walk(const int32_t *act, int64_t n_act, const int32_t *inst_line,
    const int64_t *inst_begin, const int64_t *inst_end, const int32_t *inst_key,
    const int32_t *inst_type, int64_t *occ, int64_t *time_ps, int64_t *self_ps,
    int32_t *first_type, int64_t *line_op_ps, int64_t *line_first, int64_t *line_last);
int64_t tfp_op_walk_rows(const int32_t *rows, int64_t m, const int32_t *line,
    const int64_t *begin, const int64_t *dur, const int32_t *inst_key,
    const int32_t *inst_type, int64_t *occ, int64_t *time_ps, int64_t *self_ps,
    int32_t *first_type, int64_t *line_op_ps, int64_t *line_first, int64_t *line_last);
int64_t tfp_host_step_rows(const int32_t *line, const void *code, int64_t code_bytes,
    int64_t n, const uint8_t *line_ok, const int32_t *group, const uint8_t *explicit_name,
    const uint8_t *not_compute, const int8_t *kind_of, const int32_t *flag_rows,
    const uint8_t *flag_bits, int64_t n_flags, int32_t *out_rows, int8_t *out_kind,
    int32_t *out_markers, int64_t *counts);
/* memory.c */
int64_t tfp_inherit_from_allocations(int64_t n, const uint8_t *is_alloc,
    const int64_t *address, int64_t *source);
int64_t tfp_active_at_peak(int64_t n, const uint8_t *is_alloc, const int64_t *address,
    const int64_t *step, const int64_t *time, const int64_t *alloc_bytes, int64_t peak_time,
    int64_t peak_step, uint8_t *active);
/* timeline.c */
int64_t tfp_tl_window(const double *start, const float *dur, const int64_t *seg_lo,
    const int64_t *seg_hi, int64_t nseg, double t0, double t1, double px_per_us, double min_px,
    int64_t cap, double *b_start, double *b_end, int64_t *b_first, int64_t *b_count,
    int64_t *seg_off);
int64_t tfp_tl_rows_in(const double *start, const float *dur, const int64_t *seg_lo,
    const int64_t *seg_hi, int64_t nseg, double t0, double t1, int64_t cap, int64_t *out);
void tfp_tl_rows(const int32_t *order, int64_t n, const int32_t *line, const int64_t *begin,
    const int64_t *dur, int32_t *row, int64_t *busy_end, int32_t *busy_row,
    int32_t *free_rows);
/* critical.c */
int64_t tfp_cp_walk(const int64_t *begin, const int64_t *end, const int32_t *parent,
    const int32_t *res, const int8_t *cat, const uint8_t *dev, const int32_t *start_src,
    const int8_t *start_kind, const int32_t *end_src, const int8_t *end_kind, int64_t n_res,
    const int32_t *keys, const int64_t *lo, const int64_t *hi, const int64_t *codes,
    int64_t n_win, const int64_t *t0, const int64_t *t1, void **handle);
void tfp_cp_take(const void *handle, int32_t *win, int64_t *start, int64_t *end, int32_t *res,
    int8_t *cat, int8_t *kind, int64_t *node, int64_t *waited);
void tfp_cp_free(void *handle);
/* depgraph.c */
int64_t tfp_cp_inherit(const int32_t *parent, const uint8_t *seed, int64_t n,
    int64_t max_depth, int32_t *owner);
int64_t tfp_cp_latest(const int64_t *src, const int64_t *dst, int64_t m, const int64_t *end,
    int64_t n_nodes, int64_t *out);
int64_t tfp_cp_asof(const int64_t *r_id, const int64_t *r_t, int64_t nr, const int64_t *q_id,
    const int64_t *q_t, int64_t nq, const int32_t *q_order, int64_t *out);
int64_t tfp_cp_flows(const int64_t *src, const int64_t *dst, const uint8_t *is_element,
    int64_t m, const int64_t *begin, const int64_t *end, const uint8_t *dev, int64_t n,
    const int64_t *codes, int32_t *start_src, int8_t *start_kind, int32_t *end_src,
    int8_t *end_kind, int8_t *category);
void tfp_cp_wake_ups(int64_t n, const int32_t *parent, const uint8_t *dev,
    const int64_t *begin, const int64_t *end, const int32_t *res, int32_t *start_src,
    int8_t *start_kind);
int64_t tfp_cp_input_inside(const int32_t *parent, const uint8_t *dev, int64_t n,
    int64_t input_code, int64_t compute_code, int8_t *category);
int64_t tfp_cp_exec_work(int64_t n, const int32_t *parent, const int64_t *end,
    const int64_t *seeds, const int32_t *seed_rank, int64_t n_seeds, int64_t n_ranks,
    int64_t max_depth, const uint8_t *is_data, int64_t input_code, int8_t *category,
    const int32_t *q_rank, const int64_t *q_t, const int32_t *q_order, int64_t nq,
    int64_t *out);
/* replay.c */
int64_t tfp_cp_replay_visit(const double *times, int64_t n, const int64_t *src,
    const int64_t *dst, const double *gap, int64_t m, double *out);
"""

_CTYPES = {"int64_t": ctypes.c_int64, "int32_t": ctypes.c_int32, "int8_t": ctypes.c_int8,
           "uint8_t": ctypes.c_uint8, "double": ctypes.c_double, "void": None}
_PROTOTYPE = re.compile(r"^(?P<ret>[\w\s]+?\**)\s*\b(?P<name>tfp_\w+)\((?P<args>[^)]*)\)$")


def _c_type(declaration: str) -> str:
    """The type of a C declaration without its name: ``const int32_t *rows`` -> ``const
    int32_t *``; ``int64_t n`` -> ``int64_t``."""
    text = " ".join(declaration.split())
    if "[" in text or "(" in text:  # arrays and function pointers: write them as pointers
        raise ValueError(f"not a plain parameter: {declaration!r} (write it as a pointer)")
    if "*" in text:
        return text[:text.rindex("*") + 1].replace(" *", "*").replace("*", " *").strip()
    words = text.split()
    return " ".join(words[:-1]) if len(words) > 1 else text


def prototypes(text: str = API) -> dict[str, tuple[str, list[str]]]:
    """{function: (return type, [argument types])} of C prototypes (``text``: declarations
    ending in ``;``, ``/* comments */`` ignored), types written as :func:`_c_type` writes
    them."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    out = {}
    for decl in text.split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        m = _PROTOTYPE.match(decl)
        if not m:
            raise ValueError(f"not a prototype: {decl!r}")
        args = [] if m["args"].strip() in ("", "void") else \
            [_c_type(a) for a in m["args"].split(",")]
        out[m["name"]] = (_c_type(m["ret"] + " x"), args)
    return out


def _ctype(c_type: str):
    if "*" in c_type:
        return ctypes.c_void_p
    base = c_type.replace("const ", "").strip()
    if base not in _CTYPES:
        raise ValueError(f"no ctypes type for {c_type!r}: use one of {sorted(_CTYPES)} or a "
                         "pointer")
    return _CTYPES[base]


def signatures(text: str = API) -> dict[str, tuple[object, list[object]]]:
    """{function: (ctypes restype, [ctypes argtypes])} of the prototypes in ``text`` (default
    :data:`API`): every pointer is a ``c_void_p`` (arrays are passed by address); a type
    without a ctypes twin here is an error, never a guess."""
    return {name: (_ctype(ret), [_ctype(a) for a in args])
            for name, (ret, args) in prototypes(text).items()}


COLUMNS = {t: SimpleNamespace(**{c: i for i, c in enumerate(cols)})
           for t, cols in SMALL_TABLES.items()}


def table(name: str) -> int:
    """The index of the walker's table ``name`` (``T_<name>`` in C)."""
    return TABLES.index(name)


HEADER = Path(__file__).resolve().parent / "layout.h"


def header_text() -> str:
    """The text of ``layout.h``."""
    out = ["/* Generated from tfprof_nb/_native/layout.py by `python -m tfprof_nb._native.layout`:",
           "   edit that file, not this one. */",
           "#ifndef TFPROF_LAYOUT_H", "#define TFPROF_LAYOUT_H", "", "#include <stdint.h>", ""]
    out.append("enum { " + ", ".join(f"T_{t}" for t in TABLES) + ", N_TABLES };")
    out.append("enum { " + ", ".join(f"C_{c} = N_TABLES + {i}" for i, c in enumerate(COUNTERS))
               + f", N_INFO = N_TABLES + {len(COUNTERS)} }};")
    out.append("enum { " + ", ".join(f"PR_{c}" for c in PROGRESS) + " };")
    for t, cols in SMALL_TABLES.items():
        out.append(f"#define {t}_COLS {len(cols)}")
        out.append("enum { " + ", ".join(f"{t}_{c.upper()} = {i}" for i, c in enumerate(cols))
                   + " };")
    out.append("enum { " + ", ".join(f"KIND_{k.upper()}" for k in KINDS) + " };")
    out.append("enum { " + ", ".join(f"OWNER_{o.upper()}" for o in OWNERS) + " };")
    out.append(f"#define N_TYPES {N_STEP_TYPES}")
    out.append("enum { " + ", ".join(f"ERR_{name} = {code}" for name, code, _ in ERRORS) + " };")
    out.append(f"#define TFP_TIME_LIMIT_PS ((int64_t)1 << {TIME_LIMIT_PS.bit_length() - 1})")
    out += ["", "/* the exported functions (their definitions carry EXPORT) */"]
    out += [line for line in API.strip().splitlines()]
    out += ["", "#endif", ""]
    return "\n".join(out)


if __name__ == "__main__":
    HEADER.write_text(header_text())
    sys.stdout.write(f"wrote {HEADER}\n")
