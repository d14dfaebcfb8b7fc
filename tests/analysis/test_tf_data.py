"""tf.data bottleneck analysis on real pipelines."""

from __future__ import annotations

import numpy as np

import tfprof_nb as tp
from tfprof_nb.analysis.tf.data import SLOW_CALL_US

from ..conftest import DATA


def test_sequential_map_is_the_bottleneck_of_an_input_bound_pipeline(cpu_slowmap_logdir):
    prof = tp.load(cpu_slowmap_logdir)
    td = prof.tf_data
    assert td.summary["is_input_bound"]
    (b,) = td.bottlenecks.itertuples()
    assert b.iterator_name == "Map"
    assert b.iterator_long_name == "Iterator::Root::Map"
    assert "num_parallel_calls=tf.data.AUTOTUNE" in b.suggestion_text
    assert "no prefetch" in b.suggestion_text
    # the steps agree: the program waits for input
    assert prof.input_pipeline.summary["classification"] == "host"


def test_pipeline_summary_and_graph(cpu_file):
    td = tp.load(cpu_file).tf_data
    (p,) = td.pipelines.itertuples()
    assert p.kind == "host" and p.calls == 8  # one root call per step
    assert p.min_latency_us <= p.avg_latency_us <= p.max_latency_us
    assert p.slow_calls == int((_latencies(cpu_file) > SLOW_CALL_US).sum())
    slowest = td.graph[td.graph["rank"] == 0]
    root = slowest[slowest.name == "Root"].iloc[0]
    assert root.total_us == np.float64(p.max_latency_us)
    # self times along the blocking path on the call's own thread add up to the root call
    # (a producer stage the call linked, MapAndBatch on its background thread in some
    # captures, counts its whole run there: it may have started long before the call)
    crit = slowest[slowest.critical & slowest.name.isin(["Root", "Prefetch"])]
    assert crit.self_us.sum() <= root.total_us + 1e-6
    assert slowest.bottleneck.sum() == 1
    assert slowest[slowest.bottleneck].iloc[0].critical


def test_suggestion_says_upstream_only_where_the_graph_draws_it(cpu_file):
    """The custom loop's slowest call waits in its Prefetch, whose producer (MapAndBatch, on
    a background thread) this TensorFlow does not link to the call: the suggestion names
    that stage and says the graph does not show it, never "look upstream" at nothing."""
    td = tp.load(cpu_file).tf_data
    (b,) = td.bottlenecks.itertuples()
    slowest = td.graph[(td.graph["rank"] == 0) & (td.graph.pipeline == b.pipeline)]
    drawn = slowest.iterator_id[slowest.bottleneck].iloc[0]
    feeders = slowest[slowest.parent_id == drawn]
    if (slowest.name == "MapAndBatch").any():  # this call's element linked to its producer
        assert "the graph does not show them" not in b.suggestion_text
        assert b.iterator_name == "MapAndBatch" or "in the graph" in b.suggestion_text
        return
    if len(feeders):  # a TensorFlow that links the producer: the graph shows the stage
        assert "in the graph" in b.suggestion_text
        return
    assert "in the graph" not in b.suggestion_text and "upstream" not in b.suggestion_text
    assert "the graph does not show them" in b.suggestion_text
    below = tp.load(cpu_file).events.name.astype(str)
    assert f"({b.iterator_long_name}::" in b.suggestion_text
    assert below.str.startswith(b.iterator_long_name + "::").any()


def _latencies(xplane):
    prof = tp.load(xplane)
    ev = prof.events
    roots = ev[ev.name == "Iterator::Root"]
    return roots.duration_us.to_numpy()


def test_gpu_fixture_device_pipelines(gpu_fixture_file):
    td = tp.load(gpu_fixture_file).tf_data
    assert set(td.pipelines.kind) == {"device"}
    assert td.bottlenecks.empty and not td.summary["is_input_bound"]
    # the graph draws them: the message says what they are, never "no tf.data activity"
    assert "No tf.data activity" not in td.summary["message"]
    assert td.summary["message"].startswith(
        f"Only device-side tf.data pipelines ({len(td.pipelines)} prefetching")


def test_profile_without_tf_data(tmp_path):
    import subprocess
    import sys

    code = ("import os,sys; os.environ['TF_CPP_MIN_LOG_LEVEL']='2'; import tensorflow as tf\n"
            "tf.profiler.experimental.start(sys.argv[1])\n"
            "for i in range(3): tf.reduce_sum(tf.ones([8, 8]))\n"
            "tf.profiler.experimental.stop()\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, capture_output=True,
                   timeout=300)
    td = tp.load(tmp_path).tf_data
    assert td.pipelines.empty and td.bottlenecks.empty and "pipeline" in td.pipelines.columns
    assert not td.summary["is_input_bound"]


def test_the_message_counts_the_slow_pipelines():
    """Two TF workers, a host pipeline each, both with calls over 50 us: the message counts
    them and their slow calls (it said 'A tf.data pipeline is slower'), and says the graph
    draws each one's 20 slowest calls."""

    prof = tp.load(DATA / "tf_two_workers_loaded")
    td = prof.tf_data
    pipes = td.pipelines
    assert len(pipes) == 2 and (pipes.slow_calls > 0).all()
    roots = prof.events[prof.events.name == "Iterator::Root"]
    assert int((roots.duration_us > SLOW_CALL_US).sum()) == int(pipes.slow_calls.sum())
    each = ", ".join(f"{int(r.slow_calls):,} of {int(r.calls):,}" for r in pipes.itertuples())
    assert td.summary["message"] == (
        f"2 tf.data pipelines have calls slower than 50 us ({each} calls): each slow "
        "pipeline's bottleneck and a suggestion are listed; each one's graph draws its 20 "
        "slowest calls.")
    assert int(td.graph["rank"].max()) == 19
    # one pipeline of 12 calls (tests/data/tf_cpu_epochs): its graph draws them all, said so
    # (it read "its 20 slowest calls")
    small = tp.load(DATA / "tf_cpu_epochs.xplane.pb").tf_data
    assert int(small.pipelines.calls.iloc[0]) == 12 == int(small.graph["rank"].max()) + 1
    assert small.summary["message"].endswith("; its graph draws all of its calls.")


def test_an_id_taken_by_a_later_iterator_is_another_pipeline():
    """Keras 2's fit with validation data (tests/data/tf_keras2_validation): TensorFlow gave
    the first epoch's validation iterator and the second epoch's training iterator one id.
    They are two pipelines, told apart by their dataset (the root calls' ``name`` stat), not
    one of 20 calls whose bottleneck is a stage the validation pipeline does not have."""
    prof = tp.load(DATA / "tf_keras2_validation.xplane.pb")
    pipes = prof.tf_data.pipelines
    ev = prof.events
    roots = ev[ev.name == "Iterator::Root"]
    pairs = prof.stat("id").reindex(roots.index).astype(str) + " " + \
        prof.stat("name").reindex(roots.index).astype(str)
    assert len(pipes) == pairs.nunique() == 4 > prof.stat("id").reindex(roots.index).nunique()
    shared = pipes[pipes.root_id.duplicated(keep=False)]
    assert len(shared) == 2 and shared.dataset.nunique() == 2
    counted = pairs.value_counts()
    for p in pipes.itertuples():
        assert p.calls == counted[f"{p.root_id} {p.dataset}"]
    assert f"{len(pipes)} tf.data pipelines have calls slower" in prof.tf_data.summary["message"]


def test_a_map_fused_with_its_batch_is_said_sequential_when_it_was():
    """Keras 3 on a plain ``.map()`` then ``.batch()`` (tests/data/keras3_steps_per_execution):
    tf.data fused them into MapAndBatch (its ``name`` stat: fused(MapDataset...)); the map
    still runs one element at a time, so the advice is the sequential map's, not "this
    parallel map"."""
    td = tp.load(DATA / "keras3_steps_per_execution.xplane.pb").tf_data
    assert len(td.bottlenecks) and set(td.bottlenecks.iterator_name) == {"MapAndBatch"}
    assert set(td.pipelines.dataset) == {"fused(MapDataset:1,BatchDatasetV2:2)"}
    for text in td.bottlenecks.suggestion_text:
        assert text.startswith("tf.data fused the .map() with the .batch()")
        assert "runs sequentially" in text and "parallel map" not in text
