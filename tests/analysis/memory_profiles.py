"""Profiles and xprof's memory viewer for the program memory tests: the real TPU and AMD GPU
profiles under tests/data, real XLA:CPU captures (tests/analysis/xla_profiles.py) and a
synthetic XSpace of hand-made buffer assignments (tests/make_memory_profile.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "data"
MAKER = Path(__file__).resolve().parents[1] / "make_memory_profile.py"
REAL = ["tpu_v6e_jax_inference", "mi300x_jax08_gemm", "mi300x_jax08_conv"]
MIB = 2.0**20
_MADE: dict = {}
_ORACLE: dict = {}


def real(name: str) -> Path:
    """A real profile under tests/data (origin and licence: tests/data/README.md)."""
    return DATA / f"{name}.xplane.pb"


def synthetic(tmp_path_factory) -> Path:
    """The synthetic XSpace of tests/make_memory_profile.py (made once per session)."""
    if "synthetic" not in _MADE:
        out = tmp_path_factory.mktemp("memory") / "synthetic.xplane.pb"
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        subprocess.run([sys.executable, str(MAKER), str(out)], check=True, env=env,
                       timeout=300, capture_output=True)
        _MADE["synthetic"] = out
    return _MADE["synthetic"]


def memory_viewer(path: Path, memory_space: int = 0) -> dict:
    """{``module(program_id)``: xprof's memory viewer JSON, or None where it fails} for
    every program of ``path`` (xprof first writes each HLO proto beside a copy of the file,
    as its ``tool_names`` request does, then answers per module)."""
    key = (str(path), memory_space)
    if key not in _ORACLE:
        from xprof.convert.raw_to_tool_data import xspace_to_tool_data, xspace_to_tool_names

        out = {}
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / Path(path).name
            shutil.copy(path, copy)
            xspace_to_tool_names([str(copy)])
            for proto in sorted(Path(tmp).glob("*.hlo_proto.pb")):
                module = proto.name[:-len(".hlo_proto.pb")]
                raw, _ = xspace_to_tool_data([str(copy)], "memory_viewer", {
                    "use_saved_result": False, "module_name": module,
                    "memory_space": memory_space})
                out[module] = json.loads(raw) if raw else None
        _ORACLE[key] = out
    return _ORACLE[key]


def _mib(x) -> float:
    return float(x) * MIB


def assert_matches(ours, theirs: dict, small: int = 16 * 1024) -> None:
    """``ours`` (a ProgramMemory) equals xprof's memory viewer JSON: peak heap (padded and
    unpadded) and its position, the heap and unpadded heap after every event, the events'
    instructions, the buffers live at the peak (id, size, unpadded size, name with shape index,
    shape, framework op, allocation type, opcode, lifetime) with those under ``small`` bytes
    summed as xprof does, and the allocation totals."""
    name = ours.name
    assert abs(ours.peak_heap_bytes - _mib(theirs.get("peakHeapMib", 0))) < 1, name
    assert abs(ours.peak_unpadded_heap_bytes
               - _mib(theirs.get("peakUnpaddedHeapMib", 0))) < 1, name
    assert max(ours.peak_position, 0) == theirs.get("peakHeapSizePosition", 0), name
    heap = np.asarray(theirs.get("heapSizes", []), float) * MIB
    unpadded = np.asarray(theirs.get("unpaddedHeapSizes", []), float) * MIB
    assert len(heap) == (len(ours.heap) + 1 if len(ours.heap) else 0), name
    if len(heap):  # xprof: the heap before each event, then after the last one
        h = ours.heap
        np.testing.assert_allclose(heap[1:], h.heap_bytes.to_numpy(float), atol=1)
        np.testing.assert_allclose(heap[0], h.heap_bytes.iloc[0] - h.delta_bytes.iloc[0],
                                   atol=1)
        np.testing.assert_allclose(unpadded[1:], h.unpadded_heap_bytes.to_numpy(float),
                                   atol=1)
        assert theirs["hloInstructionNames"][:-1] == h.hlo_op_name.astype(str).tolist()
    spans = theirs.get("logicalBufferSpans", {})
    big = ours.buffers[ours.buffers.size_bytes >= small]
    mine = sorted(
        (int(b.logical_buffer_id), int(b.size_bytes), int(b.unpadded_size_bytes),
         b.hlo_op_name + b.shape_index, b.buffer_shape, b.framework_op, b.allocation_type, b.opcode,
         None if b.indefinite else (int(b.alloc_position), int(b.free_position)))
        for b in big.itertuples())
    ref = sorted(
        (o.get("logicalBufferId", 0), round(_mib(o["logicalBufferSizeMib"])),
         round(_mib(o.get("unpaddedShapeMib", 0))), o["instructionName"], o["shapeString"],
         o.get("tfOpName", ""), o["groupName"], o["opCode"],
         _span(spans.get(str(o.get("logicalBufferId", 0)))))
        for o in theirs.get("maxHeap", []) if o.get("logicalBufferId", 0) != -1)
    assert mine == ref, name
    small_ref = sum(_mib(o["logicalBufferSizeMib"]) for o in theirs.get("maxHeap", [])
                    if o.get("logicalBufferId", 0) == -1)
    assert abs(ours.buffers.size_bytes[ours.buffers.size_bytes < small].sum()
               - small_ref) < 1, name
    # the whole-program buffers, small ones included: xprof lists every buffer of their
    # allocations with its shape
    listed = {int(lb.get("id", 0)): (lb["hloName"], lb["shape"])
              for a in theirs.get("indefiniteLifetimes", []) for lb in a["logicalBuffers"]}
    whole = ours.buffers[ours.buffers.indefinite]
    assert {(int(b.logical_buffer_id), b.hlo_op_name, b.buffer_shape)
            for b in whole.itertuples()} <= {(k, *v) for k, v in listed.items()}, name
    for ours_name, ref_name in (("total_allocation_bytes", "totalBufferAllocationMib"),
                                ("indefinite_bytes", "indefiniteBufferAllocationMib"),
                                ("entry_parameters_bytes", "entryComputationParametersMib"),
                                ("maybe_live_out_bytes", "maybeLiveOutMib"),
                                ("non_reusable_bytes", "nonReusableMib")):
        assert abs(getattr(ours, ours_name) - _mib(theirs.get(ref_name, 0))) < 1, \
            (name, ours_name)


def _span(span):
    """xprof's lifetime of a heap buffer; None for buffers without one (whole program)."""
    return None if span is None else (span.get("start", 0), span.get("limit", 0))
