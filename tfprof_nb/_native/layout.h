/* Generated from tfprof_nb/_native/layout.py by `python -m tfprof_nb._native.layout`:
   edit that file, not this one. */
#ifndef TFPROF_LAYOUT_H
#define TFPROF_LAYOUT_H

#include <stdint.h>

enum { T_P, T_L, T_M, T_SM, T_CH, T_X, T_EV, T_EX, T_ST, T_TX, N_TABLES };
enum { C_CHUNKS = N_TABLES + 0, C_ERR = N_TABLES + 1, C_ERR_POS = N_TABLES + 2, C_STAT_NO_META = N_TABLES + 3, C_REFS = N_TABLES + 4, N_INFO = N_TABLES + 5 };
enum { PR_PHASE, PR_DONE, PR_TOTAL };
#define P_COLS 3
enum { P_ID = 0, P_NAME_OFF = 1, P_NAME_LEN = 2 };
#define L_COLS 12
enum { L_PLANE = 0, L_ID = 1, L_DISPLAY_ID = 2, L_NAME_OFF = 3, L_NAME_LEN = 4, L_DNAME_OFF = 5, L_DNAME_LEN = 6, L_TIMESTAMP_NS = 7, L_EVENTS = 8, L_FIRST_PS = 9, L_LAST_PS = 10, L_DURATION_PS = 11 };
#define M_COLS 9
enum { M_PLANE = 0, M_KEY = 1, M_ID = 2, M_NAME_OFF = 3, M_NAME_LEN = 4, M_DNAME_OFF = 5, M_DNAME_LEN = 6, M_META_OFF = 7, M_META_LEN = 8 };
#define SM_COLS 7
enum { SM_PLANE = 0, SM_KEY = 1, SM_ID = 2, SM_NAME_OFF = 3, SM_NAME_LEN = 4, SM_DESC_OFF = 5, SM_DESC_LEN = 6 };
#define CH_COLS 2
enum { CH_META_ROW = 0, CH_CHILD = 1 };
#define X_COLS 3
enum { X_FIELD = 0, X_OFF = 1, X_LEN = 2 };
#define EX_COLS 3
enum { EX_ROW = 0, EX_WHAT = 1, EX_VALUE = 2 };
enum { KIND_NONE, KIND_DOUBLE, KIND_UINT64, KIND_INT64, KIND_STR, KIND_BYTES, KIND_REF };
enum { OWNER_EVENT, OWNER_EVENT_METADATA, OWNER_PLANE };
#define N_TYPES 18
enum { ERR_TRUNCATED_VARINT = -1, ERR_VARINT_TOO_LONG = -2, ERR_LENGTH_OVERRUN = -3, ERR_FIXED_OVERRUN = -4, ERR_BAD_WIRE_TYPE = -5, ERR_FIELD_ZERO = -6, ERR_CAPACITY = -7, ERR_BAD_TAG = -8, ERR_NO_MEMORY = -9, ERR_CANCELLED = -10, ERR_CHANGED = -11, ERR_UNREADABLE = -12, ERR_TOO_MANY_ROWS = -13, ERR_TIME_RANGE = -14, ERR_TOO_LONG = -15, ERR_UNSORTED = -20 };
#define TFP_TIME_LIMIT_PS ((int64_t)1 << 61)

/* the exported functions (their definitions carry EXPORT) */
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

#endif
