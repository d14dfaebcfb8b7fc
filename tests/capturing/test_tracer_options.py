"""Tracer options reach the profilers: told apart by the events they change, with real
TensorFlow (a ``%%tfprof`` cell in a fresh process, TensorFlow's C++ log on) and real JAX.

TensorFlow 2.21's bindings used to drop every option ("... expects an i value", four lines
a capture) and each level gave the same events; see ``tfprof_nb.capturing.options.TfInt``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tfprof_nb as tp

HERE = Path(__file__).resolve().parent
# the Python tracer's events: "$<file>:<line> <function>" (or "$<unknown> <function>")
PYTHON_EVENT = re.compile(r"^\$\S.* \S+$")


@pytest.fixture(scope="module")
def magic_levels():
    """``(results by cell, stderr)`` of ``levels_worker.py``."""
    env = dict(os.environ)
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    done = subprocess.run([sys.executable, str(HERE / "levels_worker.py")], env=env,
                          capture_output=True, text=True, timeout=300, cwd=HERE)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_tensorflow_takes_the_options_without_warnings(magic_levels):
    levels, stderr = magic_levels
    log = "\n".join(levels["log"])  # the profiler's lines, held out of the cells' output
    assert "Profiler session started" in log  # the C++ log was on
    assert "Profiler session started" not in stderr
    for text in (log, stderr):
        assert "expects an" not in text and "Unrecognised key" not in text


def test_host_tracer_levels_record_more_at_each_level(magic_levels):
    levels, _ = magic_levels
    one, two, three = levels["host1"], levels["python0"], levels["host3"]  # python0: level 2
    assert set(one["names"]) < set(two["names"]) < set(three["names"])
    assert one["events"] < two["events"] < three["events"]
    ops = [n for n in two["names"] if re.match(r"(gradient_tape/)?MatMul:", n)]
    assert ops and not set(ops) & set(one["names"])  # TF ops: from level 2
    assert "Identity:Identity" in set(three["names"]) - set(two["names"])  # cheap ops: 3


def test_python_tracer_level_1_records_python_calls(magic_levels):
    levels, _ = magic_levels
    off = [n for n in levels["python0"]["names"] if n.startswith("$")]
    on = [n for n in levels["python1"]["names"] if PYTHON_EVENT.match(n)]
    assert off == []
    assert "$<tfprof cell>:1 <module>" in on  # the cell's own code, as Python ran it
    assert levels["python1"]["events"] > 5 * levels["python0"]["events"]


def test_tensorflow_waits_delay_ms_before_tracing(tf):
    """TensorFlow's local session ignores delay_ms; the capture waits, as JAX's session does."""
    calls: list[float] = []
    start = time.perf_counter()
    tp.capture(lambda batch: calls.append(time.perf_counter()), range(3), steps=1, warmup=0,
               progress=False, backend="tensorflow", delay_ms=400)
    assert calls[0] - start >= 0.4


jax = pytest.importorskip("jax")


def _jax_events(step, **options):
    w = jax.numpy.ones((16, 16))
    with tp.Capture(steps=2, warmup=1, progress=False, backend="jax", **options) as cap:
        for _ in cap.iterate(range(5)):
            w = step(w)
            w.block_until_ready()
    return cap.profile.events["name"].astype(str)


def test_jax_takes_host_and_python_levels():
    @jax.jit
    def step(w):
        return w - 0.01 * jax.grad(lambda v: jax.numpy.sum(jax.numpy.tanh(v @ v)))(w)

    off = _jax_events(step, host_tracer_level=0)
    host = _jax_events(step, host_tracer_level=1)
    python = _jax_events(step, host_tracer_level=1, python_tracer_level=1)
    assert len(off) == 0  # level 0: no host events at all, step markers included
    assert "train" in set(host) and not host.str.startswith("$").any()
    assert python.map(lambda n: bool(PYTHON_EVENT.match(n))).sum() > 10
