"""Live monitor overhead: a whole training run's wall time with ``tp.Monitor`` (its defaults)
against the same run without it, alternated in one process.

    python benchmarks/bench_monitor.py [--pairs 3] [--steps 3000] [--only keras|jax]
                                       [--max-pending N] [--batch 128] [--every N]
                                       [--breakdown]

(a) Keras 3 ``model.fit`` (TensorFlow backend) of an MLP on a tf.data pipeline for
``--steps`` steps, with ``callbacks=[tp.Monitor()]`` or without; (b) a jitted JAX training
loop of as many steps (``--batch`` rows a batch: fewer, shorter steps),
``for x in mon.iterate(batches)`` or a bare ``for``.  The monitor's defaults: a window
of 10 steps every 500 steps (further apart where the last window cost training more than
2 % of its time since: ``monitor_budget``; ``--every N`` gives the spacing, which turns the
budget off) after 3 warm-up steps, each window saved on a thread of its own
and analysed in a worker process.  Runs alternate in ABBA order (bare,
monitored, monitored, bare, ...) after one unmeasured run of each, so drift and warm caches
fall on both sides alike.  Reports each run's wall time, the medians, their ratio (goal:
under 1.03), the windows profiled and the analyses' time after training ended
(``mon.wait()``: not part of the run's wall time, shown apart).
On a loaded machine the analyses (at the lowest priority) lag and windows are dropped, which
makes a run cheaper: each run's windows are reported (``windows_per_run``), and
``--max-pending 100`` keeps every window (no drop) to measure the cost of all of them.
``--breakdown`` (JAX) also times every step and says where each window's cost falls
(``breakdown``: the training time lost in each phase against the steps just before the
window, a baseline under the same load, so it holds up better than the whole runs' ratio on
a shared machine), and the analysis worker's CPU time per window (``/proc``, in 10 ms
ticks: a median over the windows).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")


def keras_runner(steps: int):
    """run(monitor or None) -> seconds of one ``fit`` of ``steps`` steps."""
    import keras
    import tensorflow as tf

    ds = tf.data.Dataset.range(10**9).map(
        lambda i: (tf.random.stateless_normal([128, 256], seed=[i, 1]),
                   tf.random.stateless_uniform([128], seed=[i, 2], maxval=10,
                                               dtype=tf.int32))).prefetch(4)
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(10)])
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))

    def run(mon) -> float:
        t0 = time.perf_counter()
        model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0,
                  callbacks=[mon] if mon is not None else [])
        return time.perf_counter() - t0
    return run


def jax_runner(steps: int, batch: int = 128):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    k1, k2 = jax.random.split(key)
    params = [jax.random.normal(k1, (256, 512)) * 0.05, jax.random.normal(k2, (512, 10)) * 0.05]

    @jax.jit
    def train_step(params, x):
        def loss(p):
            return jnp.mean((jnp.tanh(x @ p[0]) @ p[1]) ** 2)
        g = jax.grad(loss)(params)
        return [p - 0.01 * d for p, d in zip(params, g)]

    def batches():
        i = 0
        while True:
            i += 1
            yield jax.random.normal(jax.random.PRNGKey(i), (batch, 256))

    state = {"params": params}
    stamps = np.zeros(steps + 1)  # each step's start, then the run's end (--breakdown)

    def run(mon) -> float:
        t0 = time.perf_counter()
        it = batches()
        loop = mon.iterate(it) if mon is not None else it
        p = state["params"]
        for n, x in enumerate(loop):
            stamps[n] = time.perf_counter()
            p = train_step(p, x)
            jax.block_until_ready(p)
            if n + 1 >= steps:
                break
        state["params"] = p
        stamps[-1] = time.perf_counter()
        return time.perf_counter() - t0
    run.stamps = stamps
    return run


PHASES = ("open", "marked", "close", "saving", "analysis")


class Spans:
    """When each window's save (``LocalSession.stop`` on the saving thread) and analysis (the
    worker's answer) ran: perf_counter spans, noted by wrapping the two calls; the worker
    process's CPU time (user + system, from /proc) during each analysis; and the training
    process's CPU in the two calls (their threads' own: the save, and the analysis thread's
    request and answer)."""

    def __init__(self):
        from tfprof_nb.capturing import monitor_worker, session

        self.saves, self.analyses, self.worker_cpu = [], [], []
        self.thread_cpu = {"save": [], "receive": []}
        for owner, attr, spans, key in (
                (session.LocalSession, "stop", self.saves, "save"),
                (monitor_worker._Worker, "ask", self.analyses, "receive")):
            setattr(owner, attr, self._timed(getattr(owner, attr), spans, key))

    def _timed(self, call, spans, key):
        def timed(*args, **kwargs):
            worker = args[0] if spans is self.analyses else None
            t0, cpu, own = time.perf_counter(), _cpu_s(worker), time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                spans.append((t0, time.perf_counter()))
                self.thread_cpu[key].append(time.thread_time() - own)
                if worker is not None and cpu is not None and _cpu_s(worker) is not None:
                    self.worker_cpu.append(_cpu_s(worker) - cpu)
        return timed


def _cpu_s(worker) -> float | None:
    """The worker process's CPU seconds so far (None: no worker, or no /proc)."""
    proc = getattr(worker, "proc", None)
    try:
        with open(f"/proc/{proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (AttributeError, OSError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def breakdown(stamps, hist, saves, analyses) -> list[dict]:
    """Per window, the training time lost (ms) in each phase against the median of the 200
    steps before the window (the same load): ``open`` (the step its session starts in),
    ``marked`` (its steps but the last), ``close`` (its last step, which hands the session
    to the saving thread), ``saving`` (steps while it is saved), ``analysis`` (steps while
    the worker analyses it, the save done); each row's ``masks`` (the phases' steps) serve
    the control (:func:`control`)."""
    gaps, starts = np.diff(stamps), stamps[:-1]
    idx = np.arange(len(gaps))
    rows = []
    for k, (first, last) in enumerate(zip(hist.first_step, hist.last_step)):
        first, last = int(first), int(last)
        masks = {"open": idx == first - 1, "marked": (idx >= first) & (idx < last),
                 "close": idx == last}
        if k < len(saves) and k < len(analyses):
            (a, z), (a2, z2) = saves[k], analyses[k]
            masks["saving"] = (starts + gaps > a) & (starts < z) & (idx > last)
            masks["analysis"] = (starts + gaps > a2) & (starts < z2) & (idx > last) \
                & ~masks["saving"]
        rows.append(_lost(gaps, first, masks) | {"masks": masks, "first": first})
    return rows


def _lost(gaps, first: int, masks: dict) -> dict:
    base = np.median(gaps[max(0, first - 201):first - 1])
    return {p: 1e3 * float((gaps[m] - base).sum()) for p, m in masks.items()}


def control(stamps, rows: list[dict]) -> list[dict]:
    """The same sums over a bare run's same steps: what the load alone gives (the sums of
    long phases lean positive on a loaded machine, where steps' times are skewed)."""
    gaps = np.diff(stamps)
    return [_lost(gaps, r["first"], r["masks"]) for r in rows]


def measure(name: str, run, pairs: int, backend: str, max_pending: int | None = None,
            spans: Spans | None = None, every: int | None = None) -> dict:
    import tfprof_nb as tp

    extra = {} if max_pending is None else {"max_pending": max_pending}
    if every is not None:  # a spacing given: no cost budget (monitor_budget)
        extra["every_steps"] = every

    phases: list[dict] = []
    controls: list[dict] = []
    last: list[dict] = []  # the last monitored run's rows

    def monitored() -> tuple[float, float, int]:
        mon = tp.Monitor(logdir=tempfile.mkdtemp(prefix="bench_monitor_"), backend=backend,
                         **extra)
        if spans is not None:
            spans.saves.clear()
            spans.analyses.clear()
        wall = run(mon)
        t0 = time.perf_counter()
        mon.wait()
        hist = mon.history
        if spans is not None and hasattr(run, "stamps"):
            last[:] = breakdown(run.stamps, hist[hist.status == "analysed"], spans.saves,
                                spans.analyses)
            phases.extend(last)
        bad = hist[~hist.status.isin(["analysed", "dropped"])]
        if len(bad):
            raise SystemExit(f"{name}: windows not analysed:\n{bad[['window', 'status', 'error']]}")
        if (hist.status == "dropped").any():  # their analyses lagged: said, not measured
            print(f"{name}: {int((hist.status == 'dropped').sum())} window(s) dropped",
                  file=sys.stderr)
        return wall, time.perf_counter() - t0, int((hist.status == "analysed").sum())

    run(None)
    monitored()  # warm both sides: compiles, the profiler's first start
    bare, mon, drain, windows, per_run = [], [], [], 0, []
    for i in range(pairs):  # ABBA: a drift over the session falls on both sides alike
        for side in (("bare", "mon") if i % 2 == 0 else ("mon", "bare")):
            if side == "bare":
                bare.append(run(None))
                if last:  # the last monitored run's windows
                    controls.extend(control(run.stamps, last))
                continue
            wall, after, windows = monitored()
            per_run.append(windows)
            mon.append(wall)
            drain.append(after)
        print(f"{name} pair {i + 1}: bare {bare[-1]:.2f} s, monitored {mon[-1]:.2f} s "
              f"({windows} windows, analyses {drain[-1]:.2f} s after the run)", file=sys.stderr)
    mb, mm = statistics.median(bare), statistics.median(mon)
    out = {}
    if spans is not None and spans.worker_cpu:  # (the first windows' worker imports too)
        out["worker_cpu_ms_per_window"] = 1e3 * statistics.median(spans.worker_cpu)
        out["training_process_cpu_ms_per_window"] = {
            k: 1e3 * statistics.median(v) for k, v in spans.thread_cpu.items() if v}
    if phases:  # (the warm-up run's windows too)
        for key, rows in (("phase_ms_per_window", phases), ("control_ms_per_window", controls)):
            out[key] = {p: statistics.median(r.get(p, np.nan) for r in rows) for p in PHASES}
    return out | {"bare_s": bare, "monitored_s": mon, "after_run_s": drain, "windows": windows,
            "windows_per_run": per_run,
            "median_bare_s": mb, "median_monitored_s": mm, "ratio": mm / mb,
            "per_window_ms": 1e3 * (mm - mb) / max(statistics.median(per_run), 1),
            "pair_ratios": [m / b for m, b in zip(mon, bare)]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--only", choices=("keras", "jax"))
    ap.add_argument("--max-pending", type=int, default=None,
                    help="the monitor's max_pending (default: its default, 2)")
    ap.add_argument("--batch", type=int, default=128,
                    help="JAX: rows per batch (smaller: shorter steps; 1.8 ms is the goal's)")
    ap.add_argument("--every", type=int, default=None,
                    help="a window every N steps, given (default: the monitor's default "
                         "spacing, 500 steps or further apart under its 2 %% cost budget; "
                         "given, there is no budget)")
    ap.add_argument("--breakdown", action="store_true",
                    help="JAX: also the training time lost per window in each phase (median "
                         "over the windows, against the steps just before each window)")
    args = ap.parse_args(argv)
    spans = Spans() if args.breakdown else None
    out = {}
    if args.only in (None, "keras"):
        out["keras_fit_tf"] = measure("keras", keras_runner(args.steps), args.pairs, "tensorflow",
                                     args.max_pending, every=args.every)
    if args.only in (None, "jax"):
        out["jax_loop"] = measure("jax", jax_runner(args.steps, args.batch), args.pairs, "jax",
                                  args.max_pending, spans, args.every)
    for r in out.values():
        r["bare_step_ms"] = 1e3 * r["median_bare_s"] / args.steps
    print(json.dumps(out, indent=1))
    for name, r in out.items():
        print(f"{name}: bare {r['median_bare_s']:.2f} s, monitored {r['median_monitored_s']:.2f}"
              f" s ({r['bare_step_ms']:.2f} ms a step bare), ratio {r['ratio']:.3f} (goal "
              f"< 1.03), {r['windows']} windows, "
              f"{r['per_window_ms']:.0f} ms per window; pair ratios "
              f"{', '.join(f'{x:.3f}' for x in r['pair_ratios'])}; windows per run "
              f"{r['windows_per_run']}")
        if "worker_cpu_ms_per_window" in r:
            print(f"{name}: the worker's CPU per window (median): "
                  f"{r['worker_cpu_ms_per_window']:.1f} ms; the training process's, on its "
                  "monitor threads: " + ", ".join(
                      f"{k} {v:.1f} ms"
                      for k, v in r["training_process_cpu_ms_per_window"].items()))
        if "phase_ms_per_window" in r:
            for key, what in (("phase_ms_per_window", "ms lost per window by phase (median)"),
                              ("control_ms_per_window", "the bare runs' same steps")):
                print(f"{name}: {what}: " + ", ".join(
                    f"{p} {v:.1f}" for p, v in r[key].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
