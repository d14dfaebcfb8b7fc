"""Capture a real JAX GPU profile with hardware counters for tests/data: tfprof_nb's hardware
sampler (NVML through ``nvidia-ml-py``, psutil) beside the profile, and CUPTI's PM sampling
(``gpu_pm_sample_counters``) inside it.

    python tests/make_jax_gpu_counters_profile.py OUTDIR [STEPS [SAMPLE_MS]]

Not run by the test suite (CI has no GPU): this is how ``tests/data/jax_h200_counters/`` was
made on a lent NVIDIA H200.  It needs only JAX, NumPy, psutil and nvidia-ml-py (the sampler's
modules are loaded without the rest of tfprof_nb, which the GPU machine does not have).  The
model is ``make_jax_gpu_profile``'s transformer with command buffers off (every kernel
launched on its own).  PM sampling is tried with a few metric sets, the first one the
profiler accepts kept; what happened is printed.  It also times a loop of short steps with the sampler
on and off (ABBA), the sampler's cost on a GPU machine.
"""

from __future__ import annotations

import glob
import importlib
import os
import shutil
import sys
import tempfile
import time
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.join(os.path.dirname(_HERE), "tfprof_nb")
PM_METRIC_SETS = (
    "sm__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,"
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg",
    "sm__cycles_active.sum",
)


def sampler_class():
    """``HardwareSampler`` without importing tfprof_nb's ``__init__`` (and its needs)."""
    for name, path in (("tfprof_nb", _PACKAGE), ("tfprof_nb.xspace", f"{_PACKAGE}/xspace"),
                       ("tfprof_nb.capturing", f"{_PACKAGE}/capturing")):
        module = types.ModuleType(name)
        module.__path__ = [path]
        sys.modules.setdefault(name, module)
    return importlib.import_module("tfprof_nb.capturing.hardware_sampler").HardwareSampler


def _trace(jax, logdir, pm_metrics, run):
    options = jax.profiler.ProfileOptions()
    options.host_tracer_level = 2
    if pm_metrics:
        options.advanced_configuration = {"gpu_pm_sample_counters": pm_metrics,
                                          "gpu_pm_sample_interval_us": 500}
    jax.profiler.start_trace(logdir, profiler_options=options)
    try:
        run()
    finally:
        jax.profiler.stop_trace()
    files = glob.glob(f"{logdir}/plugins/profile/*/*.xplane.pb")
    assert len(files) == 1, files
    return files[0]


def _trace_with_pm(jax, train, steps):
    """The profile of ``steps`` steps with the first PM metric set the profiler accepts."""
    for metrics in (*PM_METRIC_SETS, None):
        logdir = tempfile.mkdtemp(prefix="jax_counters_")
        try:
            path = _trace(jax, logdir, metrics, lambda: train(steps, 100))
        except Exception as exc:  # noqa: BLE001 - said, then the next set
            print(f"tracing with PM metrics {metrics!r} failed: {type(exc).__name__}: {exc}")
            continue
        data = open(path, "rb").read()
        named = data.count(metrics.split(",")[0].encode()) if metrics else 0
        print(f"PM metrics {metrics!r}: the first named {named} times in the profile")
        return path, metrics
    raise RuntimeError("no capture")


def capture(outdir: str, steps: int = 20, sample_ms: int = 10) -> None:
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_gpu_enable_command_buffer=").strip()
    sys.path.insert(0, _HERE)
    import jax
    import numpy as np
    from make_jax_gpu_profile import _batch, _model

    params, step, vocab, seq = _model(jax, jax.numpy)
    rng = np.random.default_rng(0)
    state = {"params": params}

    def train(n, first=0):
        for i in range(n):
            with jax.profiler.StepTraceAnnotation("train", step_num=first + i):
                x, y = _batch(np, rng, vocab, seq, 64, False)
                state["params"], value = step(state["params"], jax.device_put(x),
                                              jax.device_put(y))
                value.block_until_ready()

    train(3)
    sampler = sampler_class()(sample_ms).start()
    t0 = time.perf_counter()
    try:
        path, metrics = _trace_with_pm(jax, train, steps)
    finally:
        sampler.stop()
    written = sampler.write(os.path.dirname(path))
    os.makedirs(outdir, exist_ok=True)
    for f in [path, *written]:
        shutil.copy(f, os.path.join(outdir, os.path.basename(f)))
    samples = sampler.samples()
    print(f"capture: {steps} steps in {time.perf_counter() - t0:.2f} s, "
          f"{os.path.getsize(path)} bytes, PM metrics {metrics!r}, {len(samples)} samples of "
          f"{sorted(set(samples.series_counter))}, notes {samples.meta['notes']}, devices "
          f"{samples.meta['devices']}, sampler cpu {samples.meta['sampler_cpu_s']} s, "
          f"jax {jax.__version__}, {jax.devices()[0].device_kind}", flush=True)
    overhead(jax, sampler_class())


def overhead(jax, sampler_cls, rounds: int = 4, steps: int = 400) -> None:
    """Wall time of ``steps`` short steps with the sampler at 50 ms on and off (ABBA)."""
    import jax.numpy as jnp

    f = jax.jit(lambda a: jnp.tanh(a @ a) * 0.5)
    a = jnp.ones((512, 512), jnp.float32)
    f(a).block_until_ready()

    def loop():
        t = time.perf_counter()
        for _ in range(steps):
            f(a).block_until_ready()
        return time.perf_counter() - t

    times = {True: [], False: []}
    for on in [False, True, True, False] * (rounds // 2):
        sampler = sampler_cls(50).start() if on else None
        times[on].append(loop())
        if sampler:
            sampler.stop()
    off, on = min(times[False]), min(times[True])
    print(f"sampler overhead: {steps} steps of {1e3 * off / steps:.3f} ms: off "
          f"{off:.4f} s, on {on:.4f} s, ratio {on / off:.4f} (best of {rounds // 2 * 2})")


if __name__ == "__main__":
    capture(sys.argv[1], *(int(a) for a in sys.argv[2:4]))
