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
