"""Parsed HLO modules kept by their bytes (``xspace.hlo_proto.parse_hlo_proto``): a profile's
programs read again (another analysis, another load, a monitor's next window) are the same
modules, and what the XLA op table derives from them is kept with them; on a real GPU
profile's protos."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pandas as pd

import tfprof_nb as tp
from tfprof_nb.xspace import hlo_proto
from tfprof_nb.xspace.hlo_proto import programs_of_space

DATA = Path(__file__).resolve().parents[1] / "data"


def test_programs_read_again_are_the_same_modules_with_their_op_rows():
    first = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb", progress=False)
    ops = first.result("xla_ops")[0]["ops"]
    second = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb", progress=False)
    (host,) = first.hosts
    a, _, _ = programs_of_space(first.spaces[host])
    b, _, _ = programs_of_space(second.spaces[host])
    assert a and all(a[pid] is b[pid] for pid in a)
    resolved = ops[ops.resolved.astype(bool)]
    assert len(resolved)
    rows = {name for m in a.values() for key, memo in m.memo.items()
            if key[0] == "op rows" for name in memo}
    assert set(resolved.hlo_op) <= rows  # the op rows kept with their modules
    pd.testing.assert_frame_equal(second.result("xla_ops")[0]["ops"], ops)
    with_buffers, _, _ = programs_of_space(first.spaces[host], buffers=True)
    assert all(with_buffers[pid] is not a[pid] for pid in a)  # parsed apart


def test_kept_modules_stay_under_their_budget(monkeypatch):
    """Past the budget the least recently used modules go; a proto bigger than the budget
    is never kept."""
    monkeypatch.setattr(hlo_proto, "_parsed", OrderedDict())  # (none kept from other tests)
    prof = tp.load(DATA / "mi300x_jax08_gemm.xplane.pb", progress=False)
    space = prof.spaces[prof.hosts[0]]
    monkeypatch.setattr(hlo_proto, "_KEPT_PROTO_BYTES", 1)
    modules, _, _ = programs_of_space(space, buffers=True)
    assert len(modules) > 1 and not hlo_proto._parsed  # each proto is over 1 byte
    monkeypatch.setattr(hlo_proto, "_KEPT_PROTO_BYTES", 1 << 30)
    programs_of_space(space, buffers=True)
    sizes = [size for _, size in hlo_proto._parsed.values()]  # every proto's bytes
    assert len(sizes) == len(modules)
    budget = max(sizes) * 3 // 2
    monkeypatch.setattr(hlo_proto, "_KEPT_PROTO_BYTES", budget)
    monkeypatch.setattr(hlo_proto, "_parsed", OrderedDict())
    programs_of_space(space, buffers=True)
    kept = [size for _, size in hlo_proto._parsed.values()]
    assert 1 <= len(kept) < len(modules) and sum(kept) <= budget
