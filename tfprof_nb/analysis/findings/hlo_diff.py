"""What changed in the XLA programs of two runs, read from their HLO protos: fusions split or
merged, copies and transposes added or removed, computations run more times
(rematerialisation), collectives, each program's memory peak; each item with the time per
step it accounts for (the per-step deltas of its ops, :mod:`.op_changes`).

Programs are paired by name with digits left out; instructions are compared by their
identity (:mod:`.hlo_identity`).  Of the fusions whose computation is only in one run, those
the op table pairs (:mod:`.op_matching`: the same op changed, the same framework op or the
same framework ops fused) are one fusion whose computation changed (``fusions changed``), so
the diff and the op table name one pairing.  A base fusion gone is ``split``
when two or more new fusions hold some of its framework ops and none other; two or more base
fusions gone are ``merged`` when one new fusion holds all their framework ops and more than
any one of them; a fusion is told in one split or merge at most (the smallest first); the
other fusions are ``fusions removed`` or ``fusions added``.  A computation is
``rematerialised`` when its fingerprint occurs more times in the new program than in the
base (at least once there).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["HLO_DIFF_COLUMNS", "COLLECTIVES", "hlo_diff"]

HLO_DIFF_COLUMNS = ["program", "change", "detail", "a_count", "b_count", "time_us",
                    "a_bytes", "b_bytes"]
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all",
               "collective-permute", "collective-broadcast", "ragged-all-to-all")
_PLUMBING = frozenset({"parameter", "constant", "get-tuple-element", "tuple", "bitcast"})


def _op_time(changes: pd.DataFrame, program: str) -> tuple[dict, dict]:
    """({base op: us per step}, {new op: us per step}) of ``program``'s ops."""
    mine = changes[changes.program == program]
    a = dict(zip(mine.a_op[mine.a_op != ""], mine.a[mine.a_op != ""]))
    b = dict(zip(mine.b_op[mine.b_op != ""], mine.b[mine.b_op != ""]))
    return a, b


def _time(names_a, names_b, times: tuple) -> float:
    return float(sum(times[1].get(n, 0.0) for n in names_b) -
                 sum(times[0].get(n, 0.0) for n in names_a))


def _row(program, change, detail, a_count, b_count, time_us, a_bytes=np.nan, b_bytes=np.nan):
    return {"program": program, "change": change, "detail": detail, "a_count": a_count,
            "b_count": b_count, "time_us": time_us, "a_bytes": a_bytes, "b_bytes": b_bytes}


def _kind_rows(program, a, b, times) -> list[dict]:
    """Copies, transposes and collectives: their counts and time in both programs."""
    out = []
    kinds = (("copies", lambda d: (d.opcode == "copy") | (d.root == "copy")),
             ("transposes", lambda d: (d.opcode == "transpose") | (d.root == "transpose")),
             ("collectives", lambda d: d.opcode.str.replace(r"-(start|done)$", "", regex=True)
              .isin(COLLECTIVES)))
    for change, pick in kinds:
        na, nb = a.hlo_op[pick(a)], b.hlo_op[pick(b)]
        if len(na) != len(nb) or (change == "collectives" and len(na)):
            out.append(_row(program, change, f"{len(na)} -> {len(nb)} {change}", len(na),
                            len(nb), _time(na, nb, times)))
    return out


def _fused_sets(d: pd.DataFrame) -> dict:
    fusions = d[(d.opcode == "fusion") & (d.fused_ops != "")]
    return {n: frozenset(f.split("\n")) for n, f in zip(fusions.hlo_op, fusions.fused_ops)}


def _matched(changes: pd.DataFrame, program: str, gone: dict,
             new: dict) -> list[tuple[str, str]]:
    """(base, new) fusions the op table pairs (``changes``' a_op and b_op) where the base's
    computation is gone or the new one's is new, in base name order."""
    mine = changes[(changes.program == program) & (changes.a_op != "") & (changes.b_op != "")]
    pairs = [(x, y) for x, y in zip(mine.a_op, mine.b_op) if x in gone or y in new]
    return sorted(pairs)


def _parts(whole: dict, pieces: dict) -> list[tuple[str, list[str]]]:
    """(fusion of ``whole``, the fusions of ``pieces`` that hold some of its framework ops
    and none other: two or more), each piece in one at most, the smallest wholes first."""
    out, taken = [], set()
    for name in sorted(whole, key=lambda n: (len(whole[n]), n)):
        parts = sorted(n for n, ops in pieces.items() if n not in taken and ops < whole[name])
        if len(parts) >= 2:
            out.append((name, parts))
            taken.update(parts)
    return out


def _fusion_rows(program, a, b, times, changes) -> list[dict]:
    """Fusions changed (paired by the op table, another computation), split (one base
    fusion's framework ops now in several) or merged (see the module doc)."""
    prints_a, prints_b = set(a.fingerprint), set(b.fingerprint)
    gone = _fused_sets(a[~a.fingerprint.isin(prints_b)])
    new = _fused_sets(b[~b.fingerprint.isin(prints_a)])
    out = []
    pairs = _matched(changes, program, gone, new)
    if pairs:
        names_a, names_b = [x for x, _ in pairs], [y for _, y in pairs]
        out.append(_row(program, "fusions changed",
                        ", ".join(x if x == y else f"{x} -> {y}" for x, y in pairs),
                        len(pairs), len(pairs), _time(names_a, names_b, times)))
    told_a, told_b = set(names_a) if pairs else set(), set(names_b) if pairs else set()
    gone = {n: ops for n, ops in gone.items() if n not in told_a}
    new = {n: ops for n, ops in new.items() if n not in told_b}
    for name, parts in _parts(gone, new):
        out.append(_row(program, "fusion split", f"{name} -> {', '.join(parts)}",
                        1, len(parts), _time([name], parts, times)))
        told_a.add(name)
        told_b.update(parts)
    merged = _parts(new, {n: ops for n, ops in gone.items() if n not in told_a})
    for name, parts in merged:
        out.append(_row(program, "fusions merged", f"{', '.join(parts)} -> {name}",
                        len(parts), 1, _time(parts, [name], times)))
        told_a.update(parts)
        told_b.add(name)
    for change, names, told, side in (("fusions removed", gone, told_a, 0),
                                      ("fusions added", new, told_b, 1)):
        rest = sorted(set(names) - told)
        if rest:
            count = (len(rest), 0) if side == 0 else (0, len(rest))
            out.append(_row(program, change, ", ".join(rest), *count,
                            _time(rest, [], times) if side == 0 else _time([], rest, times)))
    return out


def _remat_rows(program, a, b, times) -> list[dict]:
    """Computations (by fingerprint) that occur more times in the new program."""
    a, b = a[~a.opcode.isin(_PLUMBING)], b[~b.opcode.isin(_PLUMBING)]
    count_a, count_b = a.fingerprint.value_counts(), b.fingerprint.value_counts()
    out = []
    for fp, nb in count_b.items():
        na = int(count_a.get(fp, 0))
        if 0 < na < nb:
            names_a, names_b = a.hlo_op[a.fingerprint == fp], b.hlo_op[b.fingerprint == fp]
            first, opcode = names_b.iloc[0], b.opcode[b.fingerprint == fp].iloc[0]
            # (the time is all of theirs; the op table gives each op its own)
            out.append(_row(program, "rematerialised", f"{first} ({opcode}) and {nb - 1} more "
                            f"of the same computation: computed {nb} times, was {na}; the "
                            f"time is all {nb}'s", na, nb, _time(names_a, names_b, times)))
    return out


def _memory_rows(program, memory: tuple) -> list[dict]:
    """The program's peak heap (memory space 0) in both runs, where both have one."""
    peaks = []
    for m in memory:
        rows = m[(m.module_key == program) & (m.memory_space == 0)] if len(m) else m
        peaks.append(float(rows.peak_heap_bytes.max()) if len(rows) else np.nan)
    if any(p != p for p in peaks) or peaks[0] == peaks[1]:
        return []
    return [_row(program, "memory peak", f"peak heap {peaks[0]:,.0f} -> {peaks[1]:,.0f} bytes",
                 np.nan, np.nan, np.nan, peaks[0], peaks[1])]


def hlo_diff(identity: tuple, changes: pd.DataFrame, memory: tuple = ()) -> pd.DataFrame:
    """HLO_DIFF_COLUMNS: the changes of each program both runs ran (``identity``: both runs'
    :mod:`.hlo_identity` tables; ``changes``: :func:`.op_changes.op_changes`' table, times in
    us per step; ``memory``: both runs' program memory tables with a ``module_key``)."""
    a_all, b_all = identity
    ran = set(changes.program[changes.kind == "xla"]) if len(changes) else set()
    out = []
    for program in sorted(ran & set(a_all.module_key) & set(b_all.module_key)):
        a, b = a_all[a_all.module_key == program], b_all[b_all.module_key == program]
        times = _op_time(changes, program)
        out += _fusion_rows(program, a, b, times, changes) + _kind_rows(program, a, b, times)
        out += _remat_rows(program, a, b, times)
        out += _memory_rows(program, memory) if len(memory) == 2 else []
    table = pd.DataFrame(out, columns=HLO_DIFF_COLUMNS)
    return table.astype({"a_count": float, "b_count": float, "time_us": float})
