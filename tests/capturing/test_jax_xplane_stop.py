"""JAX's trace stopped with only its .xplane.pb written (``jax_xplane_stop``), with real JAX."""

from __future__ import annotations

import pytest

from tfprof_nb.capturing.jax_xplane_stop import stop_to_xplane
from tfprof_nb.capturing.session import run_dirs

jax = pytest.importorskip("jax")


def test_without_a_running_trace_nothing_is_stopped_or_written(tmp_path):
    assert stop_to_xplane(str(tmp_path)) is False
    assert not run_dirs(tmp_path)


def test_the_trace_is_stopped_and_only_its_xplane_written(tmp_path):
    """The run holds the .xplane.pb alone, and JAX's own profiler state is free again (a
    new trace starts and stops the usual way)."""
    f = jax.jit(lambda w: jax.numpy.tanh(w @ w))
    w = jax.numpy.ones((32, 32))
    jax.profiler.start_trace(str(tmp_path / "a"))
    with jax.profiler.StepTraceAnnotation("train", step_num=0):
        f(w).block_until_ready()
    assert stop_to_xplane(str(tmp_path / "a")) is True
    (run,) = run_dirs(tmp_path / "a")
    names = [p.name for p in run.iterdir()]
    assert len(names) == 1 and names[0].endswith(".xplane.pb")
    assert (run / names[0]).stat().st_size > 0
    jax.profiler.start_trace(str(tmp_path / "b"))  # raises if the state was left running
    jax.profiler.stop_trace()
    assert run_dirs(tmp_path / "b")
