"""The tools ``tfprof mcp`` serves: each a name, a description, a JSON schema for its arguments
and a function ``run(load, arguments) -> dict`` (``load(path)`` gives a profile).

Every tool calls the command it stands for (:mod:`.summary`, :mod:`.tables`, and the
functions of ``sql_cmd``, ``check_cmd``, ``diff_cmd``, ``report_cmd``, ``export_cmd``), so
its numbers are the command's.  Tables come back as JSON records (:func:`.formats.records`:
numbers as numbers, NaN as null), at most ``limit`` rows, with how many rows matched.
:mod:`.table_query` filters and sorts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .check_cmd import LIMITS, check_limits, parse_bytes, run_check
from .formats import records
from .tables import table, table_list, table_names

__all__ = ["TOOLS", "Tool", "rows_document"]

DEFAULT_LIMIT, MAX_LIMIT = 50, 1000


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    schema: dict
    run: Callable[[Callable, dict], dict]


def _object(required: tuple = (), **properties) -> dict:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}


_PATH = {"type": "string", "description": "the profile: a logdir (its newest run), a run "
         "directory, an .xplane.pb file or a URL (s3://, gs://, https://); loaded once and "
         "kept for the next calls"}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
          "description": f"the most rows to return (default {DEFAULT_LIMIT}, at most "
                         f"{MAX_LIMIT}); rows_matched says how many there are"}
_TOP = {"type": "integer", "minimum": 0, "default": 10,
        "description": "how many ops (and kernels) to list (default 10)"}
_TEXT_LIST = {"type": "array", "items": {"type": "string"}}


def rows_document(frame, limit: int, **facts) -> dict:
    """``facts``, then the first ``limit`` rows of ``frame`` as records with how many there
    are: ``rows_matched``, ``rows_returned``, ``columns``, ``rows``."""
    shown = frame.head(limit)
    doc = {**facts, "rows_matched": len(frame), "rows_returned": len(shown),
           "columns": [str(c) for c in frame.columns], "rows": records(shown)}
    if len(shown) < len(frame):
        doc["note"] = (f"{len(frame):,} rows matched; the first {len(shown):,} are here "
                       "(raise limit, or filter and sort to see others)")
    return doc


def _summary(load, a: dict) -> dict:
    from .summary import summarise

    return summarise(load(a["path"]), top=a.get("top", 10))


def _list_tables(load, a: dict) -> dict:
    return {"tables": table_list()}


def _table(load, a: dict) -> dict:
    from .table_query import select_rows

    prof, name = load(a["path"]), a["name"]
    if name not in table_names():
        raise KeyError(f"unknown table {name!r}: choose from {', '.join(table_names())}")
    frame = table(prof, name)
    total = len(frame)
    frame = select_rows(prof, name, frame, a.get("filters", ()), a.get("where"),
                        a.get("sort"), a.get("ascending", False), a.get("columns"))
    return rows_document(frame, a.get("limit", DEFAULT_LIMIT), table=name, rows_total=total)


def _sql(load, a: dict) -> dict:
    from .sql_cmd import query_frame

    frame = query_frame(load(a["path"]), a["query"])
    return rows_document(frame, a.get("limit", DEFAULT_LIMIT), query=a["query"])


def _check(load, a: dict) -> dict:
    limits = {key: a.get(key) for _, key, _ in LIMITS}
    peak = a.get("max_memory_peak_bytes")
    limits["max_memory_peak_bytes"] = parse_bytes(peak) if isinstance(peak, str) else peak
    limits["max_regression_pct"] = a.get("max_regression_pct")
    limits = check_limits(limits, a.get("baseline") is not None)
    base = load(a["baseline"]) if a.get("baseline") is not None else None
    result = run_check(load(a["path"]), base, limits, a.get("step_statistic", "median"),
                       a.get("allow_missing", False), a["path"], a.get("baseline"))
    return {**result.to_dict(), "verdict": result.verdict()}


def _diff(load, a: dict) -> dict:
    from .diff_cmd import diff_document

    return diff_document(load(a["base"]), load(a["new"]), a.get("top", 10))


def _report(load, a: dict) -> dict:
    from .report_cmd import write_report

    return write_report(load(a["path"]), a["output"], a.get("title"))


def _export(load, a: dict) -> dict:
    from .export_cmd import export_trace, trace_kind

    kind = trace_kind(a["output"], a.get("format"))
    return export_trace(load(a["path"]), a["output"], kind)


def _counters(load, a: dict) -> dict:
    from .table_query import match_columns

    prof, limit = load(a["path"]), a.get("limit", DEFAULT_LIMIT)
    wanted = {k: a[k] for k in ("host", "device", "counter") if a.get(k) is not None}
    samples = match_columns(prof.counters, wanted)
    keys = ["host", "device", "counter", "unit", "source"]
    series = samples.groupby(keys, observed=True, sort=False).size() \
        .rename("samples").reset_index()
    doc = {"series": records(series), "samples": rows_document(samples, limit)}
    if a.get("op_counters", True):
        ops = match_columns(prof.op_counters, wanted)
        doc["op_counters"] = rows_document(ops, limit)
    return doc


def _what_if(load, a: dict) -> dict:
    from .what_if_cmd import what_if_document

    scale = a["scale"]
    if not scale:
        raise ValueError("scale needs at least one key, e.g. {\"input\": 0.5}")
    return what_if_document(load(a["path"]), scale, a.get("path_rows", 20))


def _measures(load, a: dict) -> dict:
    measures = load(a["path"]).measures
    return {"measures": records(measures.reset_index())}


_CHECK_PROPERTIES = {key: {"type": "number", "description": text} for _, key, text in LIMITS}
_CHECK_PROPERTIES.update(
    max_memory_peak_bytes={"type": ["number", "string"], "description": "the largest "
                           "allocator's peak memory in use: bytes, or text such as 8GiB, "
                           "500MB"},
    step_statistic={"enum": ["median", "mean", "p90", "p95", "p99", "max"],
                    "description": "the step-time statistic max_step_ms limits (default "
                                   "median)"},
    baseline={"type": "string", "description": "a baseline profile for max_regression_pct"},
    max_regression_pct={"type": "number", "description": "the median step time's slowdown "
                        "from baseline beyond both profiles' noise band"},
    allow_missing={"type": "boolean", "description": "a limit whose measure the profile "
                   "lacks is not a failure (still listed as unknown)"})

_TABLE_ARGS = dict(
    path=_PATH,
    name={"type": "string", "enum": table_names(), "description": "the table (list_tables "
          "says what each holds)"},
    filters={**_TEXT_LIST, "description": "conditions all rows must meet, each COLUMN OP "
             "VALUE with OP one of = != > >= < <= ~ (~: contains, any case), e.g. "
             "[\"category=convolution\", \"total_self_time_us>100\"]"},
    where={"type": "string", "description": "a DuckDB WHERE clause over the table's columns "
           "(instead of or beside filters), e.g. \"hlo_op_name LIKE '%dot%'\""},
    columns={**_TEXT_LIST, "description": "the columns to return (default: all)"},
    sort={"type": "string", "description": "the column to sort by"},
    ascending={"type": "boolean", "default": False,
               "description": "sort smallest first (default: largest first)"},
    limit=_LIMIT)

TOOLS = {t.name: t for t in (
    Tool("summary", "A profile's summary (what `tfprof summary --json` prints): hosts, devices "
         "and duty cycle, steps and their step-time breakdown (mean ms and % per category), "
         "the input-bound verdict, headline measures, top host and device ops by self time, "
         "findings with evidence and fixes. Start here.",
         _object(("path",), path=_PATH, top=_TOP), _summary),
    Tool("list_tables", "Every table `table` and `sql` read, with one line on what it holds.",
         _object(), _list_tables),
    Tool("table", "Rows of one table of a profile (the DataFrame prof.<name> holds; units in "
         "column names: _us, _ms, _bytes, _pct), filtered, sorted and cut to limit rows; says "
         "how many rows matched. The slowest XLA ops: name=hlo_stats, sort="
         "total_self_time_us; TensorFlow ops: name=op_stats, sort=total_self_time_us.",
         _object(("path", "name"), **_TABLE_ARGS), _table),
    Tool("sql", "A DuckDB query over every event, stat and table of a profile (prof.sql; the "
         "tables are list_tables' names), at most limit rows of its result.",
         _object(("path", "query"), path=_PATH, query={"type": "string"}, limit=_LIMIT),
         _sql),
    Tool("check", "Check a profile against performance limits (as `tfprof check`): each "
         "limit's measured value, status (passed, failed, unknown) and evidence; ok is true "
         "when all pass. Give at least one limit.",
         _object(("path",), path=_PATH, **_CHECK_PROPERTIES), _check),
    Tool("diff", "How profile new differs from base (as `tfprof diff --json`): verdict on the "
         "median step time with its noise band, the part the ops explain, mean step per "
         "category, ops matched across recompiles with the largest change, HLO diff, "
         "kernels.",
         _object(("base", "new"), base=_PATH, new=_PATH, top=_TOP), _diff),
    Tool("report", "Write the offline HTML report (the whole dashboard in one file) to output; "
         "returns its absolute path and size.",
         _object(("path", "output"), path=_PATH, output={"type": "string"},
                 title={"type": "string"}), _report),
    Tool("export", "Write every event as a trace file for ui.perfetto.dev or chrome://tracing: "
         "format perfetto or chrome (default: by output's extension, .pftrace or .json/.json.gz"
         "); returns its absolute path.",
         _object(("path", "output"), path=_PATH, output={"type": "string"},
                 format={"enum": ["perfetto", "chrome"]}), _export),
    Tool("counters", "Hardware counters sampled beside the trace (prof.counters: GPU "
         "utilisation, clocks, power, memory, PCIe; host CPU and memory; the profile's own "
         "counter lines): the series with their sample counts, the samples, and each op's "
         "counters during its executions (prof.op_counters), filtered by host, device, counter.",
         _object(("path",), path=_PATH, host={"type": "string"},
                 device={"type": "string", "description": "e.g. GPU:0, or host"},
                 counter={"type": "string", "description": "e.g. sm_clock_mhz"},
                 op_counters={"type": "boolean", "default": True}, limit=_LIMIT), _counters),
    Tool("what_if", "Predict each step with some durations scaled (prof.what_if, as `tfprof "
         "what-if --json`): the profile's dependency graph replayed with the matched events' "
         "own time times the factor (same program, durations only). Keys: step-time "
         "categories (input, host_compute, device_compute, kernel_launch, idle, ...) or name "
         "globs (fusion*). Returns the measured and predicted median step, each step with a "
         "range, what each key matched, the new critical path.",
         _object(("path", "scale"), path=_PATH,
                 scale={"type": "object", "additionalProperties": {"type": "number",
                                                                   "minimum": 0},
                        "description": "key -> factor, e.g. {\"input\": 0.5, \"fusion*\": "
                                       "0.8} (0.5: twice as fast, 0: gone)"},
                 path_rows={"type": "integer", "minimum": 0, "default": 20,
                            "description": "rows of the new critical path to return"}),
         _what_if),
    Tool("measures", "The headline measures (prof.measures): step time, input wait, duty "
         "cycle, idle time and the like, each with its value, unit, scope (which devices, "
         "which time), rule and XProf's figure where XProf's rule differs.",
         _object(("path",), path=_PATH), _measures),
)}
