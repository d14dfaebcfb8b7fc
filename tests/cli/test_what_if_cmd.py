"""``tfprof what-if`` on a real capture (an H200 run whose batches were built in Python under
a ``train`` annotation): its JSON carries ``prof.what_if``'s numbers, its text says them, a
factor of 1 predicts every step as measured, and a malformed ``--scale`` is one line, exit 2."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import tfprof_nb as tp

from ..conftest import DATA
from ..test_cli import tfprof, tfprof_json

INPUT_BOUND = DATA / "jax_h200_inputbound.xplane.pb"


@pytest.fixture(scope="module")
def prof():
    return tp.load(INPUT_BOUND)


def test_json_is_what_if_predictions(prof):
    doc = tfprof_json("what-if", INPUT_BOUND, "--scale", "train=0.25", "--scale",
                      "fusion*=0.8")
    want = prof.what_if({"train": 0.25, "fusion*": 0.8})
    assert doc["scale"] == {"train": 0.25, "fusion*": 0.8}
    steps = pd.DataFrame(doc["steps"])
    assert steps.step.tolist() == want.step.tolist()
    assert steps.predicted_ms.tolist() == pytest.approx(want.predicted_ms.tolist())
    assert (steps.low_ms <= steps.predicted_ms).all() and \
        (steps.predicted_ms <= steps.high_ms).all()
    med = doc["median"]
    assert med["predicted_ms"] == pytest.approx(want.predicted_ms.median())
    assert med["measured_ms"] == pytest.approx(prof.steps.duration_ms.median())
    assert med["predicted_ms"] < 0.5 * med["measured_ms"]  # (the Python batch was 3/4 of it)
    assert doc["matched"]["train"]["events"] == want.attrs["matched"]["train"]["nodes"] > 0
    assert doc["matched"]["fusion*"]["events"] > 0
    assert re.match(r"On their critical paths, the \d+ steps are bound by ", doc["sentence"])
    assert 0 < len(doc["critical_path"]) <= 20 <= doc["critical_path_rows"]
    assert doc["critical_path_times"].startswith("replayed: ")  # (not prof.critical_path's)
    assert any("Durations only" in n for n in doc["notes"])


def test_text_and_an_unchanged_replay(prof):
    same = tfprof_json("what-if", INPUT_BOUND, "--scale", "input=1", "--path-rows", "0")
    steps = pd.DataFrame(same["steps"])
    assert steps.predicted_ms.tolist() == pytest.approx(steps.measured_ms.tolist(), abs=1e-6)
    assert same["critical_path"] == []
    text = tfprof("what-if", INPUT_BOUND, "--scale", "train=0.5").stdout
    med = prof.what_if({"train": 0.5}).predicted_ms.median()
    assert "What if train x0.5:" in text and f"{med:.3f} ms predicted" in text
    assert "train: 10 events" in text and "Note: Durations only" in text


def test_the_median_says_its_steps_and_on_a_pod_whose_time():
    """One host: the steps counted; a pod: each host's steps in their own time (the other
    pages' step time is a step at its slowest host, longer)."""
    one = tfprof("what-if", INPUT_BOUND, "--scale", "train=0.5").stdout
    n = len(tp.load(INPUT_BOUND).steps)
    assert "ms predicted (-" in one and one.splitlines()[1].endswith(f", of the {n} steps")
    pod = DATA / "tf_two_workers_loaded"
    doc = tfprof_json("what-if", pod, "--scale", "input=0")
    steps = tp.load(pod).steps
    assert doc["median"]["measured_ms"] == pytest.approx(steps.duration_ms.median())
    assert doc["median"]["scope"] == f"of the {len(steps)} steps of 2 hosts, each in its " \
        "own host's time"
    assert doc["median"]["scope"] in tfprof("what-if", pod, "--scale", "input=0").stdout


@pytest.mark.parametrize("scale, words", [("train", "expected KEY=FACTOR"),
                                          ("train=fast", "is not a number"),
                                          ("train=-1", "finite and >= 0")])
def test_a_malformed_scale_is_one_line_exit_2(scale, words):
    run = tfprof("what-if", INPUT_BOUND, "--scale", scale, code=2)
    assert words in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_the_matched_time_is_what_the_factor_scales():
    """Two TF workers: host_compute's events nest (train_step inside train), so the sum of
    their durations (about 6.4 s on hosts of 1.5 s each) is not what x0.5 halves: the
    matched time is their own time, each event less its children (the replay's rule, the
    same as node_self_ms for one name); 'idle' counts the gaps between a thread's events it
    scales (it said '0 events, 0.000 ms')."""
    from tfprof_nb.analysis.critical.what_if import node_self_ms

    pod = tp.load(DATA / "tf_two_workers_loaded")
    doc = tfprof_json("what-if", DATA / "tf_two_workers_loaded", "--scale", "train_step=0.5",
                      "--scale", "idle=0")
    step = doc["matched"]["train_step"]
    assert step["of"] == "events"
    assert step["measured_ms"] == pytest.approx(float(node_self_ms(pod, "train_step").sum()))
    events = pod.events
    whole = events[events.name.astype(str) == "train_step"].duration_us.sum() / 1e3
    assert step["measured_ms"] < 0.9 * whole  # (its children's time is not its own)
    idle = doc["matched"]["idle"]
    assert idle["of"] == "gaps" and idle["events"] > 0 and idle["measured_ms"] > 0
    text = tfprof("what-if", DATA / "tf_two_workers_loaded", "--scale", "idle=0").stdout
    assert f"idle: {idle['events']:,} gaps between the events of a thread or stream" in text
