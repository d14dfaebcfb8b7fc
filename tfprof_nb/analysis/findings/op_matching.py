"""Which op of one run is which op of another: XLA ops by what they compute, TensorFlow ops
by name and type.

A recompile renumbers XLA's instructions (``loop_add_fusion.3`` becomes ``.7``), so XLA ops
are matched by their identity (:mod:`.hlo_identity`) in rounds, each over the ops still
unmatched, within the program of the same name (digits left out):

1. ``same computation``: opcode, fusion kind, shapes, fingerprint, framework op and source;
2. ``same computation, moved``: the same without framework op and source (code moved);
3. ``same op, changed``: opcode, fusion kind, framework op, source and shape (what it fuses
   changed: the fingerprint differs);
4. ``same framework op``: opcode, framework op and source (shapes changed too);
5. ``same framework ops fused``: fusions whose fused instructions come from the same framework
   ops (what the HLO diff calls a fusion changed);
6. ``same name``: ops without an HLO proto to read, by name.

Ops alike in a round are paired in the order they run in their computation.  TensorFlow ops
(and XLA ops of programs whose protos the profile lacks) are matched by side, name and type
(``same name``).  What no round matches is ``removed`` (only in the base) or ``added``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .hlo_identity import module_key

__all__ = ["OP_ROW_COLUMNS", "ROUNDS", "match_ops", "op_rows"]

OP_ROW_COLUMNS = ["key", "kind", "side", "program_id", "module", "module_key", "op",
                  "category", "total_us", "position", "opcode", "kind_of_fusion", "shape",
                  "operands", "framework_op", "source", "fingerprint", "root", "fused_ops"]
_IDENTITY = ["position", "opcode", "kind_of_fusion", "shape", "operands", "framework_op",
             "source", "fingerprint", "root", "fused_ops"]
ROUNDS = (
    ("same computation", ["opcode", "kind_of_fusion", "shape", "operands", "fingerprint",
                          "framework_op", "source"]),
    ("same computation, moved", ["opcode", "kind_of_fusion", "shape", "operands",
                                 "fingerprint"]),
    ("same op, changed", ["opcode", "kind_of_fusion", "framework_op", "source", "shape"]),
    ("same framework op", ["opcode", "framework_op", "source"]),
    ("same framework ops fused", ["opcode", "fused_ops"]),  # (fusions that name some)
)
_FUSED_ONLY = "same framework ops fused"  # (the round that pairs only fusions naming ops)


def _xla_rows(hlo_stats: pd.DataFrame, identity: pd.DataFrame) -> pd.DataFrame:
    """One row per XLA op that ran (``hlo_stats`` rows of programs other than 0), with its
    identity where the profile's HLO protos name it."""
    ops = hlo_stats[hlo_stats.program_id.astype("int64") != 0]
    ops = ops.groupby(["program_id", "hlo_op_name"], sort=False, as_index=False).agg(
        module=("module", "first"), category=("category", "first"),
        total_us=("total_self_time_us", "sum"))
    ident = identity.rename(columns={"hlo_op": "hlo_op_name", "kind": "kind_of_fusion"})
    out = ops.merge(ident.drop(columns=["module", "category"]),
                    on=["program_id", "hlo_op_name"], how="left")
    out["module_key"] = out.module_key.fillna(out.module.map(module_key))
    out[_IDENTITY] = out[_IDENTITY].astype(object).where(out[_IDENTITY].notna(), "")
    out["position"] = pd.to_numeric(out.position, errors="coerce").fillna(-1).astype("int64")
    out["kind"], out["side"] = "xla", "Device"
    out["op"] = out.hlo_op_name
    out["key"] = "xla|" + out.program_id.astype(str) + "|" + out.op.astype(str)
    return out[OP_ROW_COLUMNS]


def _tf_rows(op_stats: pd.DataFrame, hlo_stats: pd.DataFrame) -> pd.DataFrame:
    """One row per TensorFlow op of ``op_stats`` (without IDLE) that is no XLA op: device
    rows naming an XLA op's framework op are that op's time, counted in its HLO op."""
    ops = op_stats[op_stats.operation != "IDLE"]
    framework = set(hlo_stats.framework_op_name.astype(str).str.rsplit(":", n=1).str[0]) \
        if len(hlo_stats) and (hlo_stats.program_id.astype("int64") != 0).any() else set()
    xla_ran = bool(framework)
    ops = ops[~((ops.host_or_device == "Device") & (xla_ran | ops.operation.isin(framework)))]
    out = pd.DataFrame({"side": ops.host_or_device.to_numpy(dtype=object),
                        "op": ops.operation.to_numpy(dtype=object),
                        "category": ops["type"].to_numpy(dtype=object),
                        "total_us": ops.total_self_time_us.to_numpy(dtype=float)})
    out["kind"], out["program_id"], out["module"], out["module_key"] = "tf", -1, "", ""
    for c in _IDENTITY:
        out[c] = -1 if c == "position" else ""
    out["key"] = "tf|" + out.side + "|" + out.op.astype(str)
    return out[OP_ROW_COLUMNS]


def op_rows(hlo_stats: pd.DataFrame, identity: pd.DataFrame,
            op_stats: pd.DataFrame) -> pd.DataFrame:
    """OP_ROW_COLUMNS: every op of one profile once, XLA ops (``kind`` "xla", keyed by
    program and instruction) then TensorFlow ops (``kind`` "tf", by side and name)."""
    parts = [_xla_rows(hlo_stats, identity) if len(hlo_stats) else None,
             _tf_rows(op_stats, hlo_stats) if len(op_stats) else None]
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in OP_ROW_COLUMNS})
    return pd.concat(parts, ignore_index=True).drop_duplicates("key")


def _pair(a: pd.DataFrame, b: pd.DataFrame, cols: list[str], label: str) -> pd.DataFrame:
    """The pairs of rows of ``a`` and ``b`` equal in ``cols``, paired in position order."""
    keys = ["kind", "side", "module_key"] + cols
    a = a.sort_values(["position", "key"]).assign(_n=lambda d: d.groupby(keys).cumcount())
    b = b.sort_values(["position", "key"]).assign(_n=lambda d: d.groupby(keys).cumcount())
    m = a[keys + ["_n", "key"]].merge(b[keys + ["_n", "key"]], on=keys + ["_n"],
                                      suffixes=("_a", "_b"))
    return pd.DataFrame({"a_key": m.key_a, "b_key": m.key_b, "matched_by": label})


def match_ops(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """``a_key``, ``b_key``, ``matched_by``: every op of ``a`` and ``b`` (:func:`op_rows`)
    once, paired where a round matches them (see the module doc); unmatched ones with the
    other key empty and ``matched_by`` "removed" (only in ``a``) or "added"."""
    pairs = []
    resolved_a, resolved_b = a[a.fingerprint != ""], b[b.fingerprint != ""]
    for label, cols in ROUNDS:
        if label == _FUSED_ONLY:
            found = _pair(resolved_a[resolved_a.fused_ops != ""],
                          resolved_b[resolved_b.fused_ops != ""], cols, label)
        else:
            found = _pair(resolved_a, resolved_b, cols, label)
        pairs.append(found)
        resolved_a = resolved_a[~resolved_a.key.isin(found.a_key)]
        resolved_b = resolved_b[~resolved_b.key.isin(found.b_key)]
    done_a = set(np.concatenate([p.a_key.to_numpy() for p in pairs]))
    done_b = set(np.concatenate([p.b_key.to_numpy() for p in pairs]))
    rest_a = a[~a.key.isin(done_a) & (a.fingerprint == "")]
    rest_b = b[~b.key.isin(done_b) & (b.fingerprint == "")]
    pairs.append(_pair(rest_a, rest_b, ["op", "category"], "same name"))
    out = pd.concat(pairs, ignore_index=True)
    removed = a.key[~a.key.isin(out.a_key)]
    added = b.key[~b.key.isin(out.b_key)]
    return pd.concat([out, pd.DataFrame({"a_key": removed, "b_key": "",
                                         "matched_by": "removed"}),
                      pd.DataFrame({"a_key": "", "b_key": added, "matched_by": "added"})],
                     ignore_index=True)
