"""The README's main job: `python -m tfprof_nb.demo` profiles a Keras model on CPU and writes
an offline report and a report notebook."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat

import tfprof_nb as tp

from .reporting.offline_page import OfflinePage


def test_demo_writes_a_report_that_opens_offline(tmp_path):
    out = tmp_path / "demo_out"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    run = subprocess.run([sys.executable, "-m", "tfprof_nb.demo", "--out", str(out),
                          "--steps", "6"], capture_output=True, text=True, timeout=600, env=env,
                         check=True)
    assert "offline report:" in run.stdout and "steps (markers)" in run.stdout
    # the demo prints what `tfprof summary` prints for its logdir: steps, the breakdown, the
    # input verdict, top ops, findings
    cli = subprocess.run([sys.executable, "-m", "tfprof_nb", "summary", str(out / "logdir"),
                          "--no-progress"], capture_output=True, text=True, timeout=300,
                         env=env, check=True)
    assert cli.stdout.strip() and cli.stdout.strip() in run.stdout
    for part in ("Step-time breakdown (mean per step", "Input ", "Top host ops"):
        assert part in cli.stdout
    nbformat.validate(nbformat.read(str(out / "report.ipynb"), as_version=4))
    _host_compute_halved_shortens_every_step(out / "logdir", env)
    with OfflinePage(out / "report.html") as page:
        cards = page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                        ".map(c => c.textContent)")
        steps = len(tp.load(out / "logdir").steps)  # edge steps are dropped, as xprof does
        assert f"Steps{steps} (step markers)" in cards and steps >= 4, cards
        assert page.blocked == [] and page.console_errors == []


def _host_compute_halved_shortens_every_step(logdir, env):
    """On a CPU Keras run, host compute is nearly all of a step: with it halved, no step may
    come out longer (a replay that kept tf.data's get-next op or its prefetch producer at
    their measured times made every other step longer, up to +56 %)."""
    run = subprocess.run([sys.executable, "-m", "tfprof_nb", "what-if", str(logdir), "--scale",
                          "host_compute=0.5", "--json"], capture_output=True, text=True,
                         timeout=300, env=env, check=True)
    doc = json.loads(run.stdout)
    assert doc["steps"] and all(s["predicted_ms"] < s["measured_ms"] for s in doc["steps"]), \
        doc["steps"]
    assert doc["median"]["predicted_ms"] < 0.85 * doc["median"]["measured_ms"], doc["median"]
