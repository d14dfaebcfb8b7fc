"""prof.plot.program_memory against the ProgramMemory it draws (real and synthetic profiles)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

import tfprof_nb as tp
from tfprof_nb.plot.program_memory_figures import ALLOCATION_COLORS

from ..analysis.memory_profiles import real, synthetic

MIB = 2.0**20


@pytest.fixture(scope="module")
def conv():
    return tp.load(real("mi300x_jax08_conv"))


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return tp.load(synthetic(tmp_path_factory))


def _traces(fig, kind):
    return [t for t in fig.data if t.type == kind]


def test_heap_and_peak_are_the_tables(conv):
    memory = conv.program_memory("jit_forward_3d_conv")
    fig = conv.plot.program_memory("jit_forward_3d_conv")
    assert isinstance(fig, go.Figure) and fig.layout.meta["kind"] == "program_memory"
    heap, unpadded, peak = _traces(fig, "scatter")
    h = memory.heap
    assert list(heap.x) == h.position.tolist()
    np.testing.assert_allclose(np.asarray(heap.y) * MIB, h.heap_bytes.to_numpy(float))
    np.testing.assert_allclose(np.asarray(unpadded.y) * MIB,
                               h.unpadded_heap_bytes.to_numpy(float))
    assert [row[1] for row in heap.customdata] == h.hlo_op_name.astype(str).tolist()
    assert [row[4] for row in heap.customdata] == h.heap_bytes.tolist()
    assert list(peak.x) == [memory.peak_position]
    assert peak.y[0] * MIB == memory.peak_heap_bytes == h.heap_bytes.max()
    assert fig.layout.meta["peak_heap_bytes"] == memory.peak_heap_bytes
    assert fig.layout.meta["program_id"] == str(memory.program_id)


def test_bars_are_the_largest_buffers_at_the_peak(conv):
    memory = conv.program_memory("jit_forward_3d_conv")
    top = 4
    fig = conv.plot.program_memory("jit_forward_3d_conv", top=top)
    bars = _traces(fig, "bar")
    drawn = {}
    for bar in bars:
        assert bar.marker.color == ALLOCATION_COLORS[bar.name]
        for x, label, custom in zip(bar.x, bar.y, bar.customdata):
            drawn[label] = (x * MIB, custom)
    shown = memory.buffers.head(top)
    assert len(drawn) == top
    for rank, row in enumerate(shown.itertuples(), start=1):
        size, custom = drawn[f"{rank}. {row.hlo_op_name}{row.shape_index}"]
        assert size == row.size_bytes == custom[5]
        assert (custom[0], custom[1], custom[4], custom[7]) == (
            row.hlo_op_name, row.buffer_shape, row.allocation_type, row.logical_buffer_id)
    # the largest buffer first (at the top of the horizontal bars)
    assert list(fig.layout.yaxis2.categoryarray)[-1].startswith("1. ")


def test_every_buffer_bar_has_its_label(conv):
    """Twenty buffers: every bar labelled (crowded, plotly drops every second label), the
    chart as tall as its bars need."""
    fig = conv.plot.program_memory("jit_forward_3d_conv", top=20)
    names = list(fig.layout.yaxis2.categoryarray)
    assert list(fig.layout.yaxis2.tickvals) == names and fig.layout.yaxis2.tickmode == "array"
    share = fig.layout.yaxis2.domain[1] - fig.layout.yaxis2.domain[0]
    assert share * fig.layout.height >= 18 * len(names)  # room for each label


def test_program_without_heap_trace_and_without_buffer_assignment(synth):
    fig = tp.load(real("tpu_v6e_jax_inference")).plot.program_memory("jit__psum")
    assert not _traces(fig, "scatter") and {b.name for b in _traces(fig, "bar")} == {
        "Output", "Parameter"}
    bare = synth.plot.program_memory("no_buffers")
    assert not bare.data and "no buffer assignment" in bare.layout.meta["reasons"][0]
    with pytest.raises(ValueError, match="unknown program"):
        synth.plot.program_memory("nope")


def test_long_heaps_keep_their_extremes_and_text_stays_text(synth):
    memory = synth.program_memory("random_5")
    fig = synth.plot.program_memory("random_5", max_points=8, theme="dark")
    heap = _traces(fig, "scatter")[0]
    assert len(heap.x) < len(memory.heap) and memory.peak_position in heap.x
    values = memory.heap.heap_bytes.to_numpy(float)
    np.testing.assert_allclose(np.asarray(heap.y) * MIB, values[np.asarray(heap.x)])
    assert max(heap.y) * MIB == memory.peak_heap_bytes
    assert fig.layout.font.color == "#dddddd"
    shown = synth.plot.program_memory("share_after_free")
    ops = [c[3] for b in _traces(shown, "bar") for c in b.customdata]
    assert "jit(f)/&lt;b&gt;a&lt;/b&gt;" in ops  # markup in op names is shown as text
