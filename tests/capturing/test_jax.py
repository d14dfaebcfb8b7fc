"""Capturing JAX: tp.Capture, tp.capture and %%tfprof drive jax.profiler, with real JAX (CPU).

JAX-only processes (subprocesses) must never import TensorFlow.  The other tests run JAX in
the test process, which may also hold TensorFlow from other tests: they name the backend
(with both imported, "auto" means TensorFlow).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import tfprof_nb as tp

from .conftest import step_markers

jax = pytest.importorskip("jax")
jnp = jax.numpy

TRAIN_STEP = """
import jax, jax.numpy as jnp

@jax.jit
def train_step(w, x):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.01 * grad, loss

w, x = jnp.ones((32, 32)), jnp.ones((64, 32))
"""


def _python(code: str, timeout: float = 120) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_jax_loop_capture_never_imports_tensorflow(tmp_path):
    """A jitted loop under tp.Capture and tp.capture, in a process that never imported
    TensorFlow: JAX's profiler, N marked steps give N steps, no TensorFlow afterwards."""
    res = _python(TRAIN_STEP + f"""
import json, sys
import tfprof_nb as tp

with tp.Capture(steps=4, warmup=2, logdir={str(tmp_path)!r}, progress=False) as cap:
    for i in cap.iterate(range(100)):
        w, loss = train_step(w, x)
        float(loss)
steps = cap.profile.steps

def step(batch):
    global w
    w, _ = train_step(w, x)

prof = tp.capture(step, range(10), steps=3, warmup=1, progress=False)
print(json.dumps({{"backend": cap.backend, "steps": steps.index.tolist(),
                  "names": steps.step_name.tolist(), "source": steps.source.unique().tolist(),
                  "files": sorted(p.name for p in cap.run_dir.iterdir()),
                  "function_steps": prof.steps.index.tolist(),
                  "tensorflow": "tensorflow" in sys.modules}}))
""")
    assert res["backend"] == "jax" and res["tensorflow"] is False
    assert res["steps"] == [2, 3, 4, 5] and res["source"] == ["markers"]
    assert res["names"] == [f"train {i}" for i in (2, 3, 4, 5)]
    assert any(f.endswith(".xplane.pb") for f in res["files"])
    assert res["function_steps"] == [1, 2, 3]


def test_keras_profiler_follows_the_keras_backend():
    """Keras 3 on JAX: KerasProfiler profiles with JAX, without importing TensorFlow."""
    res = _python("""
import os, sys, json
os.environ["KERAS_BACKEND"] = "jax"
import numpy as np, keras
import tfprof_nb as tp
x = np.random.rand(320, 8).astype("float32"); y = np.random.rand(320, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile("sgd", "mse")
cb = tp.KerasProfiler(steps=3, warmup=2, progress=False)
model.fit(x, y, batch_size=32, epochs=1, verbose=0, callbacks=[cb])
steps = cb.profile.steps
print(json.dumps({"backend": cb.backend, "steps": steps.index.tolist(),
                  "tensorflow": "tensorflow" in sys.modules}))
""")
    assert res == {"backend": "jax", "steps": [2, 3, 4], "tensorflow": False}


def test_remote_capture_of_a_jax_worker(tmp_path):
    """tp.start_server in a JAX-only worker starts JAX's profiler server (no TensorFlow);
    capture_remote traces it with TensorFlow's client and finds the worker's marked steps."""
    from ..conftest import worker_ports

    (port,) = worker_ports(1)  # its hardware endpoint's port + 1 free too
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(TRAIN_STEP + f"""
import sys, time
import tfprof_nb as tp
tp.start_server({port})
w, loss = train_step(w, x)  # compiled before the capture starts (slow on a busy machine)
float(loss)
print("ready", "tensorflow" in sys.modules, flush=True)
for i in range(100000):
    with jax.profiler.StepTraceAnnotation("train", step_num=i):
        w, loss = train_step(w, x)
        float(loss)
    time.sleep(0.002)
""")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert worker.stdout.readline().split() == ["ready", "False"]
        prof = tp.capture_remote([f"127.0.0.1:{port}"], duration_ms=1000, logdir=str(tmp_path))
    finally:
        worker.kill()
        worker.wait()

    assert prof.framework.name == "jax"
    assert len(prof.steps) >= 5 and (prof.steps.source == "markers").all()
    # the worker's hardware samples (its sampler since tp.start_server) beside its profile
    (xplane,) = tmp_path.glob("plugins/profile/*/*.xplane.pb")
    assert xplane.with_name(xplane.name.replace(".xplane.pb", ".hardware.npz")).exists()


def test_auto_backend_choice(tmp_path):
    """auto: JAX for a jitted step function or when JAX is imported without TensorFlow (or
    a cell uses JAX and not TensorFlow); TensorFlow otherwise (checked in a fresh process)."""
    res = _python("""
import json, sys
from tfprof_nb.capturing.backends import choose_backend
out = {"nothing": choose_backend(), "jax_cell": choose_backend(source="import jax")}
import jax
out["jax_only"] = choose_backend()
import tensorflow
out["both"] = choose_backend()
out["both_cell_tf"] = choose_backend(source="x = tf.ones([2])")
fn = jax.jit(lambda v: v)
out["jitted"] = choose_backend(fn=fn)
out["plain"] = choose_backend(fn=lambda v: v)
fn(1.0)
out["jax_ran"] = choose_backend()
out["explicit"] = choose_backend("tensorflow", fn=fn)
print(json.dumps(out))
""")
    assert res == {"nothing": "tensorflow", "jax_cell": "jax", "jax_only": "jax",
                   "both": "tensorflow", "both_cell_tf": "tensorflow", "jitted": "jax",
                   "plain": "tensorflow", "jax_ran": "tensorflow", "explicit": "tensorflow"}
    from tfprof_nb.capturing.backends import choose_backend, is_jax_function

    assert is_jax_function(jax.jit(lambda v: v)) and not is_jax_function(lambda v: v)
    with pytest.raises(ValueError, match="backend must be one of"):
        choose_backend("torch")


@pytest.fixture()
def train_step():
    @jax.jit
    def step(w, x):
        loss, grad = jax.value_and_grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.01 * grad, loss

    state = {"w": jnp.ones((32, 32)), "x": jnp.ones((64, 32))}

    def run(_batch=None):
        state["w"], loss = step(state["w"], state["x"])
        return loss

    return run


def test_error_mid_capture_keeps_partial_profile(train_step):
    class Boom(RuntimeError):
        pass

    cap = tp.Capture(steps=5, warmup=1, progress=False, backend="jax")
    with pytest.raises(Boom) as info:
        with cap:
            for i in cap.iterate(range(100)):
                if i == 3:
                    raise Boom("bad batch")
                train_step()
    assert info.value.tfprof_profile is cap.profile and cap.backend == "jax"
    assert step_markers(cap.profile) == [1, 2, 3]  # step 3 began, then raised
    assert cap.steps_profiled == 2
    assert any("partial profile" in n for n in info.value.__notes__)
    prof = tp.capture(train_step, range(5), steps=1, warmup=0, progress=False,  # stopped
                      backend="jax")
    assert step_markers(prof) == [0]


def test_jax_trace_already_running_is_left_alone(train_step, tmp_path):
    jax.profiler.start_trace(str(tmp_path / "other"))
    try:
        with pytest.raises(tp.CaptureError, match="JAX profiler trace is already running"):
            with tp.Capture(steps=1, warmup=0, progress=False, backend="jax") as cap:
                for _ in cap.iterate(range(3)):
                    train_step()
    finally:
        jax.profiler.stop_trace()  # still ours to stop: it was left running
    assert list((tmp_path / "other").glob("plugins/profile/*/*.xplane.pb"))


def test_captures_into_one_logdir_within_a_second_keep_every_profile(train_step, tmp_path):
    """JAX also names a run by the second it saves in and writes into an existing one."""
    from tfprof_nb.capturing.session import run_dirs

    runs = [tp.capture(train_step, range(3), steps=1, warmup=0, logdir=str(tmp_path),
                       progress=False, backend="jax") for _ in range(3)]
    dirs = run_dirs(tmp_path)
    assert len(dirs) == 3 and {Path(r.source[0]).parent for r in runs} == dirs
    for run in runs:
        assert step_markers(tp.load(Path(run.source[0]).parent)) == [0]


def test_progress_and_tracer_options(train_step, capsys):
    with tp.Capture(steps=2, warmup=1, backend="jax", python_tracer_level=1) as cap:
        for _ in cap.iterate(range(10)):
            train_step()
    err = capsys.readouterr().err
    assert "warm-up 1/1" in err and "profiling step 2/2" in err and str(cap.run_dir) in err
    assert "with JAX's profiler" in err
    python_events = cap.profile.events.name.astype(str).str.startswith("$")
    assert python_events.any()  # the Python tracer was on
    start = time.perf_counter()
    with pytest.warns(tp.CaptureWarning, match="no device tracer switch"):
        tp.capture(train_step, range(3), steps=1, warmup=0, progress=False, backend="jax",
                   device_tracer_level=0, delay_ms=300)
    assert time.perf_counter() - start >= 0.3  # the session waited before it started
    with pytest.raises(ValueError, match="host_tracer_level"):
        tp.Capture(host_tracer_level=9, backend="jax")
    with pytest.raises(ValueError, match="backend must be one of"):
        tp.Capture(backend="torch")


MAGIC_SETUP = TRAIN_STEP + """
import json, sys
import tfprof_nb as tp

def markers(p):
    roots, ev = p.stat("_r"), p.events
    steps = p.stat("step_num")
    idx = steps.index.intersection(roots.index)
    return sorted(steps.loc[idx].tolist())
"""


@pytest.fixture(scope="module")
def magic_cells(tmp_path_factory):
    """%%tfprof cells of JAX code in a real IPython kernel (as tests/test_magic.py does)."""
    from ..test_magic import _run

    cells = [
        "%load_ext tfprof_nb",
        MAGIC_SETUP,
        "%%tfprof --steps 3 --warmup 1 --out loop --no-show\n"
        "with tp.Capture(progress=False) as cap:\n"
        "    for i in cap.iterate(range(10)):\n"
        "        w, loss = train_step(w, x)",
        "print(json.dumps({'markers': markers(loop), 'backend': cap.backend}))",
        # a cell without step markers: profiled whole, steps inferred from the jitted call
        "%%tfprof --out whole --no-show\n"
        "for i in range(5):\n"
        "    w, loss = train_step(w, x)\n"
        "    float(loss)",
        "print(json.dumps({'n': len(whole.steps), 'source': whole.steps.source.iloc[0]}))",
        # the user's own StepTraceAnnotation markers, any name
        "%%tfprof --out annotated --no-show --backend jax\n"
        "for i in range(4):\n"
        "    with jax.profiler.StepTraceAnnotation('batch', step_num=i):\n"
        "        w, loss = train_step(w, x)\n"
        "        float(loss)",
        "print(json.dumps({'names': annotated.steps.step_name.tolist()}))",
        "%%tfprof --steps 5 --warmup 1 --out failed --no-show\n"
        "with tp.Capture(progress=False) as cap:\n"
        "    for i in cap.iterate(range(10)):\n"
        "        if i == 3:\n"
        "            raise ValueError('bad batch')\n"
        "        w, loss = train_step(w, x)",
        "print(json.dumps({'markers': markers(failed)}))",
        "%tfprof --backend torch --no-show train_step(w, x)",
        "print(json.dumps({'tensorflow': 'tensorflow' in sys.modules}))",
    ]
    return _run(cells, tmp_path_factory.mktemp("magic_jax"))


def _json(nb, i) -> dict:
    from ..test_magic import _text

    return json.loads(_text(nb.cells[i]))


def test_magic_step_window_on_a_jax_loop(magic_cells):
    assert _json(magic_cells, 3) == {"markers": [1, 2, 3], "backend": "jax"}


def test_magic_whole_jax_cell_infers_steps(magic_cells):
    assert _json(magic_cells, 5) == {"n": 5,
                                     "source": "inferred: repeated 'PjitFunction(train_step)'"}


def test_magic_keeps_the_users_step_annotations(magic_cells):
    assert _json(magic_cells, 7) == {"names": [f"batch {i}" for i in range(4)]}


def test_magic_failing_jax_cell_keeps_the_partial_profile(magic_cells):
    from ..test_magic import _text

    assert "bad batch" in _text(magic_cells.cells[8])
    assert _json(magic_cells, 9) == {"markers": [1, 2, 3]}


def test_magic_bad_backend_and_no_tensorflow(magic_cells):
    from ..test_magic import _text

    assert "invalid choice: 'torch'" in _text(magic_cells.cells[10])
    assert _json(magic_cells, 11) == {"tensorflow": False}
