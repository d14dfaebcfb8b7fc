"""GPU kernel stats: one row per (kernel, launch configuration, TensorFlow op).

Kernels are the GPU events with a ``kernel_details`` stat.  ``kernel_details`` comes in several
formats and all are read:

* current: ``regs:32 static_shared:1024 dynamic_shared:2048 grid:2,3,4 block:128,2,1 occ_pct:50``
* older TensorFlow: ``regs:38 shm:0 grid:160,1,1 block:1024,1,1`` (``shm`` = static shared)
* TF <= 2.3: ``registers_per_thread:32\\nstatic_shared_memory_usage:100\\n...grid_x:5...``

Deliberate differences from the reference converter: it ignores ``shm`` and the long keys (it
reports 0 shared memory and default dims for them), and it only flags Tensor Core kernels when
the plane names its vendor; a plane with a CUDA compute capability is taken as NVIDIA here.
Values that do not fit 32 bits (seen in some old profiles with mangled fields) are ignored, as
in the reference.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ..._native.kernels import argsort
from ...constants import GPU_PLANE_PREFIX, TPU_PLANE_PREFIX
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis
from ..trace.tf_ops import parse_tf_op

__all__ = ["ANALYSES", "KERNEL_COLUMNS", "combine_kernels", "host_kernels", "kernel_rows",
           "parse_kernel_details"]

KERNEL_COLUMNS = ["host", "rank", "kernel_name", "registers_per_thread", "shmem_bytes",
                  "static_shmem_bytes", "dynamic_shmem_bytes", "block_dim", "grid_dim",
                  "occupancy_pct", "is_op_tensor_core_eligible", "is_kernel_using_tensor_core",
                  "op_name", "occurrences", "total_duration_us", "avg_duration_us",
                  "min_duration_us", "max_duration_us"]
_U32 = 2**32
_NVIDIA_TC = ("16816", "c1688", "conv1x1", "conv2d_c1_k1", "dgrad_1x1_stride_2x2",
              "direct_group", "first_layer_wgrad_kernel", "h1688", "h884", "hmma", "i16832",
              "i8816", "s884", "s1688", "xmma_gemm", "xmma_implicit_gemm", "xmma_sparse_conv",
              "xmma_sparse_gemm", "xmma_warp_specialized_implicit_gemm")
# XLA's Triton GEMM fusions count on AMD only: XProf marks them on ROCm, not on CUDA; ck_tile's
# attention kernels by their tile shapes' names (the patterns XProf 2.24.2's library holds)
_AMD_TC = ("mfma", "wmma", "attn_fwd", "gemm_fusion", "TileFmhaShape<", "TileFmhaBwdShape<")
# Tensile / hipBLASLt GEMMs on matrix cores name their matrix instruction: Cijk_..._MI16x16x16
_AMD_TC_GEMM = re.compile(r"^(?:Custom_)?Cijk_.*_MI\d+x\d+")
_TC_OP_SUFFIX = ("Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "Conv3D",
                 "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter",
                 "DepthwiseConv2dNativeBackpropInput", "/MatMul", "FusedMatMul", "/CudnnRNN",
                 "XlaDot", "XlaDotV2")
_TC_OP_PART = ("BatchMatMul", "CudnnRNNV", "CudnnRNNForward", "CudnnRNNBackprop", "dot_general",
               "conv_general_dilated")
_LONG_KEYS = {"registers_per_thread": "regs", "static_shared_memory_usage": "static_shared",
              "dynamic_shared_memory_usage": "dynamic_shared"}


def _u32(text: str) -> int | None:
    text = text.strip()
    if not re.fullmatch(r"\+?\d+", text):
        return None
    value = int(text)
    return value if value < _U32 else None


def parse_kernel_details(details: str) -> dict:
    """Launch parameters from a ``kernel_details`` string (any known format)."""
    out = {"regs": 0, "static_shared": 0, "dynamic_shared": 0, "block": (1, 1, 1),
           "grid": (1, 1, 1), "occ_pct": 0.0}
    dims = {}
    tokens = [t.split(":") for t in re.split(r"[ \n]", details)]
    tokens = [t for t in tokens if len(t) == 2]
    # mangled old profiles pack two fields per value (regs:17179869185): trust no shm there
    mangled = any(re.fullmatch(r"\d+", v.strip()) and int(v) >= _U32 for _, v in tokens)
    for key, value in tokens:
        if key == "shm" and mangled:
            continue
        key = _LONG_KEYS.get(key, "static_shared" if key == "shm" else key)
        if key in ("regs", "static_shared", "dynamic_shared"):
            v = _u32(value)
            if v is not None:
                out[key] = v
        elif key in ("block", "grid"):
            xyz = [_u32(v) for v in value.split(",")]
            if len(xyz) == 3 and all(v is not None for v in xyz):
                out[key] = tuple(xyz)
        elif key == "occ_pct":
            try:
                out["occ_pct"] = float(np.float32(float(value)))
            except ValueError:
                pass
        elif re.fullmatch(r"(block|grid)_[xyz]", key):
            v = _u32(value)
            if v is not None:
                dims[key] = v
    for kind in ("block", "grid"):
        if any(f"{kind}_{a}" in dims for a in "xyz"):
            out[kind] = tuple(dims.get(f"{kind}_{a}", 1) for a in "xyz")
    return out


def _uses_tensor_core(name: str, vendor: str) -> bool:
    if vendor == "Nvidia":
        return any(p in name for p in _NVIDIA_TC)
    if vendor == "AMD":
        return any(p in name for p in _AMD_TC) or bool(_AMD_TC_GEMM.match(name))
    return False


def _op_eligible(op_name: str) -> bool:
    return op_name.endswith(_TC_OP_SUFFIX) or any(p in op_name for p in _TC_OP_PART)


def _einsum_eligible(equation: str | None) -> bool:
    if not equation or equation.count("->") != 1:
        return False
    return len(equation.split("->")[0].split(",")) == 2


def _vendor(hd: HostData) -> list[str]:
    """Vendor per plane: its ``device_vendor`` stat, else NVIDIA when it has a compute
    capability (CUDA only)."""
    out = []
    for i in range(len(hd.plane_names)):
        stats = hd.space.plane_stats(i)
        vendor = stats.get("device_vendor")
        if not vendor and "compute_cap_major" in stats:
            vendor = "Nvidia"
        out.append(vendor if isinstance(vendor, str) else "")
    return out


def _kernel_rows(hd: HostData) -> tuple[np.ndarray, np.ndarray, object]:
    """(rows, kernel_details codes, the stat) of the kernels: device events (TPU planes if
    any, else GPU planes; derived lines left out) with a non-empty ``kernel_details``."""
    planes = pd.Series(hd.plane_names, dtype=object)
    device_planes = planes.str.startswith(TPU_PLANE_PREFIX + ":")
    if not device_planes.any():
        device_planes = planes.str.startswith(GPU_PLANE_PREFIX + ":")
    details = hd.str_stat("kernel_details")
    if not device_planes.any():
        return np.empty(0, np.int64), np.empty(0, np.int32), details
    device = hd.line_mask(device_planes.to_numpy()[hd.space.line_plane])
    rows = np.flatnonzero(device & ~hd.derived_line_mask() & (hd.duration > 0))
    d_code, has = details.lookup(rows)
    nonempty = np.array([bool(v) for v in details.table], dtype=bool)
    keep = has & (nonempty[d_code] if len(nonempty) else False)
    return rows[keep], d_code[keep], details


def kernel_rows(hd: HostData) -> np.ndarray:
    """int64 rows of the kernels these stats count (see :func:`_kernel_rows`)."""
    return _kernel_rows(hd)[0].astype(np.int64)


def _xla_op_names(hd: HostData, rows: np.ndarray,
                  xla_ops: dict | None) -> tuple[np.ndarray, list]:
    """(int64 code per kernel, names): the framework op (XLA metadata's ``op_name``) of each
    kernel of an XLA op whose HLO proto names it (XProf's kernel op name) is names[code];
    code -1 elsewhere.  Decided once per distinct (program, hlo_op) pair, or, for kernels run
    inside command buffers, (program, the op they are attributed to)."""
    codes = np.full(len(rows), -1, dtype=np.int64)
    ops = None if xla_ops is None else xla_ops.get("ops")
    if ops is None or ops.empty or not len(rows):
        return codes, []
    gpu = ops[(ops.device_type == "GPU") & ops.resolved.fillna(False).astype(bool)]
    names = {(int(p), h): str(v).rsplit(":", 1)[0] if v else ""
             for p, h, v in zip(gpu.program_id, gpu.hlo_op, gpu.provenance.fillna(""))}
    hlo = hd.str_stat("hlo_op")
    code, has = hlo.lookup(rows)
    pid, has_pid = hd.int_stat("program_id").lookup(rows)
    known = np.flatnonzero(has & has_pid)
    if not len(known):
        return codes, []
    short = [str(v).split("::")[-1] for v in hlo.table]
    # one int64 key per (program, hlo_op code) pair: programs are few, codes dense
    pids, pid_inverse = np.unique(pid[known], return_inverse=True)
    pair = pid_inverse.astype(np.int64) * (len(hlo.table) + 1) + code[known]
    distinct, inverse = np.unique(pair, return_inverse=True)
    found = [names.get((int(pids[k // (len(hlo.table) + 1)]), short[k % (len(hlo.table) + 1)]))
             for k in distinct.tolist()]
    labels = sorted({f for f in found if f is not None})
    label_code = {f: i for i, f in enumerate(labels)}
    per_pair = np.array([label_code.get(f, -1) if f is not None else -1 for f in found],
                        dtype=np.int64)
    codes[known] = per_pair[inverse.reshape(-1)]
    _buffer_kernel_ops(codes, labels, rows, pid, names, xla_ops.get("command_buffers"))
    return codes, labels


def _buffer_kernel_ops(codes: np.ndarray, labels: list, rows: np.ndarray, pid: np.ndarray,
                       names: dict, buffers: dict | None) -> None:
    """Kernels run inside command buffers: the framework op of the HLO op each is attributed
    to (``buffers``: the XLA partial's rows and ops, :mod:`..xla.command_buffers`), in place."""
    if not buffers or not len(buffers["rows"]):
        return
    at = pd.Index(buffers["rows"]).get_indexer(rows)
    inside = np.flatnonzero(at >= 0)
    if not len(inside):
        return
    label_code = {f: i for i, f in enumerate(labels)}
    pairs = pd.DataFrame({"p": pid[inside], "o": buffers["op"][at[inside]]})
    uniq = pairs.drop_duplicates()
    found = [names.get((int(p), o)) for p, o in zip(uniq.p.tolist(), uniq.o.tolist())]
    for f in found:
        if f is not None and f not in label_code:
            label_code[f] = len(labels)
            labels.append(f)
    inverse = pd.MultiIndex.from_frame(uniq).get_indexer(pd.MultiIndex.from_frame(pairs))
    per_pair = np.array([label_code[f] if f is not None else -1 for f in found], np.int64)
    codes[inside] = per_pair[inverse]


def _combo_values(hd: HostData, combos: pd.DataFrame, details, tf_op, eq) -> pd.DataFrame:
    """Kernel name, launch parameters, Tensor Core flags and op name per distinct kernel."""
    vendor = _vendor(hd)
    parsed = [parse_kernel_details(v) for v in details.table]
    ops, eqs = tf_op.text(combos["op"].to_numpy()), eq.text(combos["eq"].to_numpy())
    values = []
    for name_code, plane, d, op, equation, xla in zip(
            combos["name"].tolist(), combos["plane"].tolist(), combos["details"].tolist(),
            ops, eqs, combos["xla"].tolist()):
        p = parsed[d]
        name = hd.names[name_code]
        op = op if isinstance(op, str) else ""
        op_name = parse_tf_op(op)[1].split(":")[0] if op else ""
        uses_tc = _uses_tensor_core(name, vendor[plane])
        eligible = bool(op) and (_einsum_eligible(equation if isinstance(equation, str)
                                                  else None)
                                 or _op_eligible(op_name) or uses_tc)
        if xla is not None:  # an XLA kernel: its HLO instruction's framework op
            op_name = xla
            eligible = eligible or _op_eligible(xla)
        values.append((name, *p["grid"], *p["block"], p["regs"], p["static_shared"],
                       p["dynamic_shared"], uses_tc, eligible, op_name, p["occ_pct"]))
    return pd.DataFrame(values, columns=["kernel_name", "g0", "g1", "g2", "b0", "b1", "b2",
                                         "regs", "static", "dynamic", "uses_tc", "eligible",
                                         "op_name", "occ"])


def _combinations(keys: dict, ns: np.ndarray) -> pd.DataFrame:
    """One row per distinct combination of the integer ``keys`` columns (each at least -1), in
    order of first appearance, with its kernels' occurrences and total, min and max ``ns``."""
    columns = list(keys.values())
    sizes = [int(c.max()) + 2 for c in columns]  # (values from -1)
    if float(np.prod(np.array(sizes, float))) >= 2.0 ** 62:  # no int64 key: pandas groups
        return pd.DataFrame({**keys, "ns": ns}).groupby(list(keys), sort=False).agg(
            occurrences=("ns", "size"), total=("ns", "sum"), min=("ns", "min"),
            max=("ns", "max")).reset_index()
    key = np.zeros(len(ns), np.int64)
    for column, size in zip(columns, sizes):
        key *= size
        key += column.astype(np.int64) + 1
    group = pd.factorize(key)[0].astype(np.int32)  # numbered by first appearance
    del key
    # a group's first row is where the highest group number so far goes up (by one)
    first = np.flatnonzero(np.diff(np.maximum.accumulate(group), prepend=-1))
    order = argsort(group)
    starts = np.flatnonzero(np.diff(group[order], prepend=-1))
    ns = ns[order]
    return pd.DataFrame({**{name: column[first] for name, column in keys.items()},
                         "occurrences": np.diff(np.append(starts, len(ns))),
                         "total": np.add.reduceat(ns, starts),
                         "min": np.minimum.reduceat(ns, starts),
                         "max": np.maximum.reduceat(ns, starts)})


def host_kernels(hd: HostData, shift_ps: int = 0, xla_ops: dict | None = None) -> pd.DataFrame:
    """Kernel stats of one host (rows not ranked; see :func:`combine_kernels`); ``xla_ops``:
    the host's XLA partial, naming the framework op of XLA kernels."""
    rows, d_code, details = _kernel_rows(hd)
    if not len(rows):
        return pd.DataFrame()
    tf_op, eq = hd.str_stat("tf_op"), hd.str_stat("equation")
    op_code, has_op = tf_op.lookup(rows)
    eq_code, has_eq = eq.lookup(rows)
    # the XLA framework op by code (-1: none; a sentinel string would not survive pandas'
    # string columns, which drop NUL characters)
    xla_code, xla_names = _xla_op_names(hd, rows, xla_ops)
    keys = {"name": hd.name_code[rows], "plane": hd.space.line_plane[hd.space.events.line[rows]],
            "details": d_code, "op": np.where(has_op, op_code, -1),
            "eq": np.where(has_eq, eq_code, -1), "xla": xla_code}
    # everything but the duration is decided once per distinct combination
    combos = _combinations(keys, hd.duration[rows] // 1000)
    combos["xla"] = pd.Series([xla_names[c] if c >= 0 else None for c in combos.xla],
                              dtype=object)
    df = pd.concat([_combo_values(hd, combos, details, tf_op, eq),
                    combos[["occurrences", "total", "min", "max"]]], axis=1)
    return _report(hd.name, df)


def _report(host: str, df: pd.DataFrame) -> pd.DataFrame:
    """Rows merged per (kernel, launch parameters, flags, op), longest total first."""
    key = ["kernel_name", "g0", "g1", "g2", "b0", "b1", "b2", "regs", "static", "dynamic",
           "uses_tc", "eligible", "op_name"]
    agg = df.groupby(key, sort=False).agg(occ_pct=("occ", "first"),
                                          occurrences=("occurrences", "sum"),
                                          total=("total", "sum"), min=("min", "min"),
                                          max=("max", "max")).reset_index()
    agg = agg.sort_values(["total"] + key, ascending=[False] + [True] * len(key),
                          kind="stable").reset_index(drop=True)
    return pd.DataFrame({
        "host": host, "kernel_name": agg.kernel_name,
        "registers_per_thread": agg.regs, "shmem_bytes": agg.static + agg.dynamic,
        "static_shmem_bytes": agg.static, "dynamic_shmem_bytes": agg.dynamic,
        "block_dim": agg.b0.astype(str) + "," + agg.b1.astype(str) + "," + agg.b2.astype(str),
        "grid_dim": agg.g0.astype(str) + "," + agg.g1.astype(str) + "," + agg.g2.astype(str),
        "occupancy_pct": agg.occ_pct, "is_op_tensor_core_eligible": agg.eligible,
        "is_kernel_using_tensor_core": agg.uses_tc, "op_name": agg.op_name,
        "occurrences": agg.occurrences, "total_duration_us": agg.total / 1e3,
        "avg_duration_us": (agg.total // agg.occurrences) / 1e3,
        "min_duration_us": agg["min"] / 1e3, "max_duration_us": agg["max"] / 1e3})


def combine_kernels(parts: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Kernel stats of all hosts, sorted by total duration (rows of different hosts are not
    merged; ``host`` says which host ran them)."""
    tables = [t for t in parts.values() if not t.empty]
    if not tables:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in KERNEL_COLUMNS})
    table = pd.concat(tables, ignore_index=True)
    table = table.sort_values("total_duration_us", ascending=False, kind="stable") \
        .reset_index(drop=True)
    table.insert(1, "rank", np.arange(1, len(table) + 1))
    return table[KERNEL_COLUMNS]


ANALYSES = (Analysis("kernel_stats", host=host_kernels, combine=combine_kernels,
                     host_needs=("xla_ops",)),)
