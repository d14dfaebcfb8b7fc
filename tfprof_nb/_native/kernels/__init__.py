"""numpy-facing wrappers of the native kernels: arrays in, arrays out, dtypes checked.

Row numbers are int32 (a host holds fewer than 2**31 events), times int64 picoseconds.

One module per area (order, stats, codes, nesting, joins, steps, intervals, memory,
timeline); every wrapper is imported from here (``from tfprof_nb._native.kernels import argsort``).
"""

from __future__ import annotations

from ._calls import check, N_TYPES, ERR_CANCELLED
from .order_kernel import (
    argsort, sort_pairs, is_sorted_by, nesting_order, nesting_order_or_none, tl_rows, span,
    nonzero, rows_where, select_rows)
from .stats_kernel import int_stat, int_stats, stats_at, stat_name_counts, line_name_rows
from .codes_kernel import (
    code_counts, group_sums, take_text, code_lookup, take_rows, values_at, code_gather, code_rows,
    code_rows_multi, sparse_lookup)
from .nesting_kernel import (
    nest_strict, nest_query, nest_loose, csr, spread_groups, threadpool_regions,
    regions_from_rows)
from .joins_kernel import keys_in, join_on_keys, join_on_ids, join_one_on_ids, context_links
from .steps_kernel import step_breakdown, op_stack_walk, op_walk_rows, host_step_rows
from .intervals_kernel import interval_union, interval_combine
from .memory_kernel import inherit_from_allocations, active_at_peak
from .timeline_kernel import tl_window, tl_rows_in

__all__ = ["check", "N_TYPES", "ERR_CANCELLED", "argsort", "sort_pairs", "is_sorted_by",
           "nesting_order", "nesting_order_or_none", "tl_rows", "span", "nonzero",
           "rows_where", "select_rows", "int_stat", "int_stats", "stats_at",
           "stat_name_counts", "line_name_rows", "code_counts", "group_sums", "take_text",
           "code_lookup", "take_rows", "values_at", "code_gather", "code_rows", "code_rows_multi",
           "sparse_lookup", "nest_strict", "nest_query", "nest_loose", "csr",
           "spread_groups", "threadpool_regions", "regions_from_rows", "keys_in",
           "join_on_keys", "join_on_ids", "join_one_on_ids", "context_links",
           "step_breakdown", "op_stack_walk", "op_walk_rows", "host_step_rows",
           "interval_union", "interval_combine", "inherit_from_allocations",
           "active_at_peak", "tl_window", "tl_rows_in"]
