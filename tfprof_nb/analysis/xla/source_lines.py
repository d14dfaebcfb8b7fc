"""Device time by the user's code: ``prof.source_lines`` (one row per source location: file,
line, function) and ``prof.source_stacks`` (one row per Python stack), and the stack tree the
flame chart draws (:func:`stack_tree`).

Both are read from ``hlo_stats``' public columns: every HLO op's self time goes to its
``source`` (``file:line`` of its metadata: the innermost frame of the user's code JAX and
TensorFlow write) and its ``source_stack`` (the whole Python stack: XLA lists it innermost
frame first, the TPU runtime's stat outermost first; the end that is the op's ``source`` tells
which).  Ops without a location keep their time in rows of their own, by why (``no_source``):
TensorFlow ops outside XLA (eager ops, TensorFlow's executor: TensorFlow records no source for
them), ops the profile's HLO protos do not name (``resolved`` False: no metadata to read), and
XLA ops whose metadata has no source (ops XLA inserts: copies, parameter layouts; a fusion
without a source of its own takes its fused root's, else the one place all its fused
instructions share: ``attrs["located_by_fused_us"]``).  So either
table sums to the device op time (``hlo_stats``' self time; ``attrs["device_op_time_us"]``)
and shares are of it.  Function names come from the HLO protos' stack frame index (the host
step), keyed by file, line and column; "" where no proto names the frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...xspace.hlo_proto import programs_of_space
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from .ops import source_of

__all__ = ["ANALYSES", "Functions", "SourceInfo", "SOURCE_LINE_COLUMNS", "SOURCE_STACK_COLUMNS", "TREE_COLUMNS",
           "NO_SOURCE", "host_source_functions", "combine_source_functions", "parse_frame",
           "source_lines_table", "source_stacks_table", "stack_tree", "frame_label",
           "source_line_ops"]

_COMMON = ["self_time_us", "self_time_pct", "cumulative_self_time_pct", "ops", "occurrences",
           "top_hlo_op", "no_source"]
SOURCE_LINE_COLUMNS = ["rank", "file", "line", "function"] + _COMMON
SOURCE_STACK_COLUMNS = ["rank", "stack", "functions", "frames", "file", "line",
                        "function"] + _COMMON
TREE_COLUMNS = ["node", "parent", "name", "file", "line", "column", "function", "depth",
                "time_us", "self_time_us", "time_pct", "no_source"]
# why an op has no source location (the ``no_source`` column; "" where it has one)
NO_SOURCE = {"tensorflow": "TensorFlow op outside XLA",
             "unresolved": "op not in the profile's HLO protos",
             "metadata": "XLA op without source metadata"}
_WHY = {NO_SOURCE["tensorflow"]: "; TensorFlow ops run outside XLA (eagerly or in a "
                                 "tf.function graph) carry no source: TensorFlow records "
                                 "none for them",
        NO_SOURCE["unresolved"]: "; without an HLO instruction there is no metadata to read"}
_FUNCTION_COLUMNS = ["file", "line", "column", "function"]
_FUSED_COLUMNS = ["program_id", "hlo_op", "source", "source_stack"]
_ROOT = "All device ops"


def parse_frame(frame: str) -> tuple[str, int, int]:
    """(file, line, column) of a frame ``file:line:column`` or ``file:line`` (-1 for a part
    it lacks; a file name may hold colons)."""
    parts = frame.rsplit(":", 2)
    if len(parts) == 3 and parts[1].lstrip("-").isdigit() and parts[2].lstrip("-").isdigit():
        return parts[0], int(parts[1]), int(parts[2])
    parts = frame.rsplit(":", 1)
    if len(parts) == 2 and parts[1].lstrip("-").isdigit():
        return parts[0], int(parts[1]), -1
    return frame, -1, -1


def _stack_functions(index) -> list[tuple]:
    """(file, line, column, function) of every file location of a stack frame index."""
    files, functions = list(index.file_names), list(index.function_names)

    def name(names, i):
        return names[i - 1] if 0 < i <= len(names) else ""
    return [(name(files, loc.file_name_id), int(loc.line), int(loc.column),
             name(functions, loc.function_name_id)) for loc in index.file_locations]


def _fused_source(module, instr) -> tuple[str, str] | None:
    """(``file:line``, stack) of a fusion whose own metadata has no source: its fused root's,
    else the one location every fused instruction with a source shares (None: no such)."""
    for comp in module.called(instr):
        root = module.root_of(comp)
        file, line, stack = source_of(module, root) if root is not None else ("", -1, "")
        if file:
            return f"{file}:{line}", stack
        found = [(f"{f}:{li}", st) for f, li, st in
                 (source_of(module, i) for i in comp.instructions) if f]
        if found and len({w for w, _ in found}) == 1:
            return found[0]
    return None


def _fused_sources(modules: dict) -> pd.DataFrame:
    """program_id, hlo_op, source, source_stack of the fusions located by what they fuse."""
    rows = []
    for pid, module in modules.items():
        for name, instr in module.instructions.items():
            if instr.opcode == "fusion" and not source_of(module, instr)[0]:
                found = _fused_source(module, instr)
                if found:
                    rows.append((pid, name, *found))
    return pd.DataFrame(rows, columns=_FUSED_COLUMNS)


def host_source_functions(hd: HostData, shift_ps: int = 0) -> dict:
    """The function of every frame the host's HLO protos know (file, line, column) and the
    fusions without a source of their own that their fused instructions locate."""
    modules, _, _ = programs_of_space(hd.space)
    rows = [r for m in modules.values() for r in _stack_functions(m.proto.stack_frame_index)]
    return {"functions": pd.DataFrame(rows, columns=_FUNCTION_COLUMNS).drop_duplicates(),
            "fused": _fused_sources(modules)}


class Functions:
    """Function names by frame: exact (file, line, column), else the first at (file, line)."""

    def __init__(self, table: pd.DataFrame):
        named = table[table.function != ""]
        self.exact = {(f, int(li), int(c)): fn for f, li, c, fn in
                      named[_FUNCTION_COLUMNS].itertuples(index=False)}
        self.by_line: dict = {}
        for (f, li, _), fn in self.exact.items():
            self.by_line.setdefault((f, li), fn)

    def __call__(self, file: str, line: int, column: int = -1) -> str:
        return self.exact.get((file, line, column)) or self.by_line.get((file, line), "")


@dataclass
class SourceInfo:
    """What the HLO protos add to hlo_stats' columns: function names by frame, and the
    source of fusions located by what they fuse ({(program id, op): (file:line, stack)})."""

    functions: Functions
    fused: dict = field(default_factory=dict)


def combine_source_functions(parts: dict) -> SourceInfo:
    """Every host's frames and fusions, one lookup (a program's first host wins)."""
    def table(key, columns):
        found = [p[key] for p in parts.values() if len(p[key])]
        return pd.concat(found, ignore_index=True) if found else pd.DataFrame(columns=columns)
    fused = table("fused", _FUSED_COLUMNS)
    return SourceInfo(Functions(table("functions", _FUNCTION_COLUMNS)), {
        (int(pid), op): (src, stack) for pid, op, src, stack in fused.itertuples(index=False)})


def _fill_fused(stats: pd.DataFrame, fused: dict | None) -> tuple[pd.DataFrame, np.ndarray]:
    """``stats`` with the source of fusions their fused instructions locate, and which rows
    got one that way."""
    empty = ((stats.source.fillna("") == "") & (stats.source_stack.fillna("") == "")
             & stats.resolved.astype(bool)).to_numpy()
    if not fused or not empty.any():
        return stats, np.zeros(len(stats), dtype=bool)
    pid = pd.to_numeric(pd.Series(stats.program_id.to_numpy(), dtype=object), errors="coerce")
    found = [fused.get((int(p), str(op))) if e and p == p else None for p, op, e in
             zip(pid, stats.hlo_op_name, empty)]
    filled = np.array([f is not None for f in found], dtype=bool)
    stats = stats.copy()
    stats["source"] = [f[0] if f else s for f, s in zip(found, stats.source.fillna(""))]
    stats["source_stack"] = [f[1] if f else s for f, s in
                             zip(found, stats.source_stack.fillna(""))]
    return stats, filled


def _no_source(stats: pd.DataFrame) -> np.ndarray:
    """Why each op of ``stats`` has no source location ("" where it has one)."""
    program = pd.to_numeric(pd.Series(stats.program_id.to_numpy(), dtype=object),
                            errors="coerce").to_numpy()
    why = np.where(program == 0, NO_SOURCE["tensorflow"],
                   np.where(~stats.resolved.to_numpy(dtype=bool), NO_SOURCE["unresolved"],
                            NO_SOURCE["metadata"]))
    has = (stats.source.fillna("") != "") | (stats.source_stack.fillna("") != "")
    return np.where(has.to_numpy(), "", why).astype(object)


def _frames(source: str, stack: str) -> tuple[str, ...]:
    """An op's stack, outermost frame first (the op's own location last)."""
    frames = [f for f in stack.split("\n") if f]
    if not frames:
        return (source,) if source else ()
    if not (source and _at(frames[-1]) == source and _at(frames[0]) != source):
        frames.reverse()  # XLA's order: innermost first
    return tuple(frames)


def _at(frame: str) -> str:
    """A frame's location ``file:line`` (its column left out)."""
    file, line, _ = parse_frame(frame)
    return f"{file}:{line}"


def _op_rows(stats: pd.DataFrame, functions: Functions) -> pd.DataFrame:
    """One row per op: its frames (outermost first) and their functions, its location
    (``file:line``), why it has none, time and count."""
    source = stats.source.fillna("").astype(str).to_numpy(dtype=object)
    stack = stats.source_stack.fillna("").astype(str).to_numpy(dtype=object)
    codes, uniq = pd.factorize(pd.Series(list(zip(source, stack)), dtype=object))
    frames = [_frames(s, k) for s, k in uniq]
    named = ["\n".join(functions(*parse_frame(f)) for f in fs) for fs in frames]
    where = np.array([s or (_at(f[-1]) if f else "") for (s, _), f in zip(uniq, frames)],
                     dtype=object)
    return pd.DataFrame({
        "stack": np.array(["\n".join(f) for f in frames], dtype=object)[codes],
        "functions": np.array(named, dtype=object)[codes],
        "frames": np.array([len(f) for f in frames], dtype=np.int64)[codes],
        "location": where[codes], "no_source": _no_source(stats),
        "self_time_us": stats.total_self_time_us.to_numpy(dtype=float),
        "occurrences": stats.occurrences.to_numpy(dtype=np.int64),
        "hlo_op": stats.hlo_op_name.astype(str).to_numpy(dtype=object)})


def _grouped(ops: pd.DataFrame, keys: list[str], total_us: float) -> pd.DataFrame:
    """Time, share, ops, occurrences and the hottest op per ``keys`` (ops hottest first)."""
    ops = ops.sort_values("self_time_us", ascending=False, kind="stable")
    out = ops.groupby(keys, sort=False).agg(
        self_time_us=("self_time_us", "sum"), ops=("hlo_op", "size"),
        occurrences=("occurrences", "sum"), top_hlo_op=("hlo_op", "first")).reset_index()
    out = out.sort_values(["self_time_us"] + keys, ascending=[False] + [True] * len(keys),
                          kind="stable").reset_index(drop=True)
    pct = out.self_time_us / total_us * 100 if total_us else out.self_time_us * 0.0
    out["self_time_pct"], out["cumulative_self_time_pct"] = pct, pct.cumsum()
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out


def _located(out: pd.DataFrame, functions: Functions, column: str) -> pd.DataFrame:
    """``out`` with file, line and function of its ``column`` (a frame or a location)."""
    parsed = [parse_frame(v) if v else ("", -1, -1) for v in out[column]]
    out["file"] = [p[0] for p in parsed]
    out["line"] = np.array([p[1] for p in parsed], dtype=np.int64)
    out["function"] = [functions(*p) if p[0] else "" for p in parsed]
    return out


def _with_attrs(out: pd.DataFrame, ops: pd.DataFrame, total_us: float,
                by_fused: float = 0.0) -> pd.DataFrame:
    out.attrs["device_op_time_us"] = total_us
    out.attrs["located_by_fused_us"] = by_fused
    out.attrs["reasons"] = _reasons(ops, total_us) + ([
        f"{by_fused / 1e3:,.3f} ms ({by_fused / total_us * 100:.1f}%) of device op time is "
        "located by the instructions fused into its ops (the fusions carry no source of "
        "their own)"] if by_fused else [])
    return out


def _reasons(ops: pd.DataFrame, total_us: float) -> list[str]:
    """Sentences on the time without a source location, by why, with the hottest ops."""
    lines = []
    missing = ops[ops.no_source != ""].sort_values("self_time_us", ascending=False,
                                                   kind="stable")
    for why, rows in missing.groupby("no_source", sort=False):
        us = rows.self_time_us.sum()
        tops = ", ".join(rows.hlo_op.head(3)) + (", ..." if len(rows) > 3 else "")
        share = f"{us / total_us * 100:.1f}%" if total_us > 0 else "no time"
        lines.append(f"{us / 1e3:,.3f} ms ({share}) of device op time "
                     f"has no source location: {why} ({len(rows)} op{'s' * (len(rows) > 1)}: {tops})"
                     + _WHY.get(why, ""))
    if ops.empty:
        lines.append("no XLA ops in this profile: device time by source line needs XLA "
                     "programs (JAX, tf.function(jit_compile=True), Keras 3)")
    return lines


def _prepared(stats: pd.DataFrame, functions: Functions, fused: dict | None):
    """(total us, op rows, us located through fused instructions) of ``stats``."""
    total = float(stats.total_self_time_us.sum()) if len(stats) else 0.0
    stats, filled = _fill_fused(stats, fused)
    ops = _op_rows(stats, functions)
    return total, ops, float(ops.self_time_us[filled].sum())


def source_lines_table(stats: pd.DataFrame, functions: Functions,
                       fused: dict | None = None) -> pd.DataFrame:
    """One row per source location (SOURCE_LINE_COLUMNS), hottest first, plus one row per
    reason ops have none; sums to ``stats``' self time.  ``fused``: the source of fusions
    without their own ({(program id, op): (file:line, stack)})."""
    total, ops, by_fused = _prepared(stats, functions, fused)
    ops["location"] = np.where(ops.no_source != "", "", ops.location)
    out = _located(_grouped(ops, ["location", "no_source"], total), functions, "location")
    return _with_attrs(out[SOURCE_LINE_COLUMNS], ops, total, by_fused)


def source_stacks_table(stats: pd.DataFrame, functions: Functions,
                        fused: dict | None = None) -> pd.DataFrame:
    """One row per Python stack (SOURCE_STACK_COLUMNS; ``stack``: its frames outermost first,
    one ``file:line:column`` a line; ``functions``: theirs, a line each, "" where unknown),
    hottest first; file, line and function of its innermost frame; plus one row per reason
    ops have none."""
    total, ops, by_fused = _prepared(stats, functions, fused)
    out = _grouped(ops, ["stack", "functions", "frames", "location", "no_source"], total)
    out = _located(out, functions, "location")
    return _with_attrs(out[SOURCE_STACK_COLUMNS], ops, total, by_fused)


def frame_label(file: str, line: int, function: str) -> str:
    """A frame as the flame chart names it: ``function (file name:line)``."""
    where = f"{file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{line}" if line >= 0 else file
    return f"{function} ({where})" if function else where


def _tree_paths(stacks: pd.DataFrame) -> tuple[dict, dict]:
    """({path: its self time}, {path: (file, line, column, function) of its last frame, or
    why it has no source}) of every stack and its prefixes; a path is a tuple of frames,
    the stacks without a source one frame each under the root."""
    time: dict = {(): 0.0}
    info: dict = {}
    for stack, functions, no_source, us in stacks[
            ["stack", "functions", "no_source", "self_time_us"]].itertuples(index=False):
        if no_source or not stack:
            path = (f"(no source: {no_source or NO_SOURCE['metadata']})",)
            info[path] = no_source or NO_SOURCE["metadata"]
        else:
            path = tuple(stack.split("\n"))
            names = functions.split("\n")
            for k, frame in enumerate(path):
                info.setdefault(path[:k + 1], (*parse_frame(frame), names[k]))
        for k in range(1, len(path) + 1):
            time.setdefault(path[:k], 0.0)
        time[path] += float(us)
    return time, info


def _tree_row(path: tuple, info, ids: dict, inclusive: dict, self_time: dict,
              total: float) -> tuple:
    if not path:
        file, line, column, function, why, name = "", -1, -1, "", "", _ROOT
    elif isinstance(info, str):
        file, line, column, function, why, name = "", -1, -1, "", info, path[-1]
    else:
        (file, line, column, function), why = info, ""
        name = frame_label(file, line, function)
    return (ids[path], ids[path[:-1]] if path else None, name, file, line, column, function,
            len(path), inclusive[path], self_time[path],
            inclusive[path] / total * 100 if total else 0.0, why)


def _shared_outer_frames(stacks: pd.DataFrame) -> int:
    """How many outer frames every stack with a source shares, less the innermost of them
    (a notebook's stacks all start with the kernel's 19 frames, a script's with its main)."""
    located = stacks["stack"][(stacks.no_source == "") & (stacks["stack"] != "")]
    split = [s.split("\n") for s in located]
    if not split:
        return 0
    shared = 0
    while all(len(f) > shared and f[shared] == split[0][shared] for f in split):
        shared += 1
    return max(shared - 1, 0)


def _without_outer(stacks: pd.DataFrame, count: int) -> pd.DataFrame:
    out = stacks.copy()
    for col in ("stack", "functions"):
        out[col] = ["\n".join(v.split("\n")[count:]) if v else v for v in out[col]]
    return out


def stack_tree(stacks: pd.DataFrame, all_frames: bool = True) -> pd.DataFrame:
    """The stacks of ``source_stacks`` as a tree (TREE_COLUMNS): the root (all device ops),
    then one node per path of frames from the outermost (ids: "0" the root, parents first);
    ``time_us`` its inclusive time, ``self_time_us`` that of the stacks ending there,
    ``name`` ``function (file name:line)``; ops without a source one node each under the
    root, named by why.  Without ``all_frames``, the outer frames every stack shares are left
    out but the innermost of them (``attrs["left_out"]``: their names, outermost first)."""
    left_out = [] if all_frames or stacks.empty else \
        stacks["stack"][stacks.no_source == ""].iloc[0].split("\n")[
            :_shared_outer_frames(stacks)]
    if left_out:
        names = stacks["functions"][stacks.no_source == ""].iloc[0].split("\n")
        stacks = _without_outer(stacks, len(left_out))
        left_out = [frame_label(*parse_frame(f)[:2], n) for f, n in zip(left_out, names)]
    self_time, info = _tree_paths(stacks)
    paths = sorted(self_time, key=len)
    ids = {p: str(i) for i, p in enumerate(paths)}
    inclusive = dict(self_time)
    for p in reversed(paths):
        if p:
            inclusive[p[:-1]] += inclusive[p]
    rows = [_tree_row(p, info.get(p), ids, inclusive, self_time, inclusive[()])
            for p in paths]
    tree = pd.DataFrame(rows, columns=TREE_COLUMNS)
    tree.attrs["left_out"] = left_out
    return tree


def _source_lines(parts: dict, hlo_stats: pd.DataFrame, source_functions) -> pd.DataFrame:
    return source_lines_table(hlo_stats, source_functions.functions, source_functions.fused)


def _source_stacks(parts: dict, hlo_stats: pd.DataFrame, source_functions) -> pd.DataFrame:
    return source_stacks_table(hlo_stats, source_functions.functions, source_functions.fused)


ANALYSES = (
    Analysis("source_functions", host=host_source_functions, combine=combine_source_functions,
             shifted=False, host_cost=0.05),
    Analysis("source_lines", combine=_source_lines, needs=("hlo_stats", "source_functions")),
    Analysis("source_stacks", combine=_source_stacks, needs=("hlo_stats", "source_functions")),
)


def source_line_ops(stats: pd.DataFrame, info: SourceInfo) -> pd.DataFrame:
    """The HLO ops behind each row of ``source_lines``: file, line, program_id (text),
    hlo_op, self_time_us of every op located at a line, as the table sums them."""
    _, ops, _ = _prepared(stats, info.functions, info.fused)
    keep = ((ops.no_source == "") & (ops.location != "")).to_numpy()
    parsed = [parse_frame(v) for v in ops.location[keep]]
    return pd.DataFrame({"file": [p[0] for p in parsed],
                         "line": np.array([p[1] for p in parsed], dtype=np.int64),
                         "program_id": stats.program_id.astype(str).to_numpy()[keep],
                         "hlo_op": ops.hlo_op.to_numpy()[keep],
                         "self_time_us": ops.self_time_us.to_numpy()[keep]})
