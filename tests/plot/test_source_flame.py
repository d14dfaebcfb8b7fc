"""prof.plot.source_flame against the stack tree it draws (real GPU and TPU captures)."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.source_lines import stack_tree

from ..conftest import DATA


@pytest.mark.parametrize("name", ["jax_h200_nocmdbuf.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_flame_draws_the_stack_tree(name):
    prof = tp.load(DATA / name)
    fig = prof.plot.source_flame()
    assert isinstance(fig, go.Figure) and len(fig.data) == 1
    icicle = fig.data[0]
    tree = stack_tree(prof.source_stacks, all_frames=False)
    assert icicle.type == "icicle" and icicle.branchvalues == "total"
    assert list(icicle.ids) == tree.node.tolist()
    assert list(icicle.parents) == tree.parent.fillna("").tolist()
    np.testing.assert_allclose(icicle["values"], tree.time_us)
    assert icicle["values"][0] == pytest.approx(prof.hlo_stats.total_self_time_us.sum())
    # profile strings are text: "<locals>", "<embedded module '_launcher'>" escaped
    assert list(icicle.labels) == [html.escape(n, quote=False) for n in tree["name"]]
    assert not any("<" in str(v) for v in icicle.labels)
    assert not any("<" in str(v) for row in icicle.customdata for v in row[:2])
    assert any("&lt;locals&gt;" in str(v) for v in icicle.labels)
    total = prof.hlo_stats.total_self_time_us.sum() / 1e3
    assert f"{total:,.3f} ms of device ops" in fig.layout.title.text
    assert fig.layout.meta["kind"] == "source_flame"
    assert fig.layout.meta["left_out"] == tree.attrs["left_out"]
    assert "left out: the outer " in fig.layout.title.text
    assert len(prof.plot.source_flame(all_frames=True).data[0].ids) > len(icicle.ids)


def test_flame_colours_no_source_grey_and_themes():
    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    fig = prof.plot.source_flame(theme="dark")
    labels = list(fig.data[0].labels)
    grey = fig.data[0].marker.colors[labels.index("(no source: XLA op without source metadata)")]
    assert grey == "#bab0ac"
    assert fig.layout.meta["tfprof_theme"] == "dark"


def test_flame_of_a_profile_without_xla_ops_is_empty(gpu_fixture_file):
    fig = tp.load(gpu_fixture_file).plot.source_flame()
    assert len(fig.data) == 1 and list(fig.data[0].ids) == ["0"]  # the root alone


def test_the_title_says_whose_time_it_sums_and_why_none():
    """TPU v6e: the stacks sum four TensorCores' op time (315 s in a 98.6 s profile): the
    title says so; BERT (no XLA program): it says why nothing is placed, not '0.000 ms'."""
    tpu = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    assert ", summed over 4 devices)" in tpu.plot.source_flame().layout.title.text
    bert = tp.load(DATA / "gpu_bert_multiworker").plot.source_flame()
    title = bert.layout.title.text
    assert title.startswith("Device time by Python stack: none to show<br><sub>no XLA ops")
    assert "0.000 ms" not in title
