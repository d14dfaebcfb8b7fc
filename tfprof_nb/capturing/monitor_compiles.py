"""The compile clock of a monitor's step timer: seconds spent compiling so far in this
process, read at each step's start and end (a step during which it moved compiled).

What is observable cheaply, without wrapping the user's functions:

* JAX: ``jax.monitoring`` reports the duration of each tracing to a jaxpr, each lowering to
  MLIR and each backend compile (``/jax/core/compile/*_duration`` events); one listener per
  process adds them up.  A step that traced or compiled anything (a ``jit`` cache miss: a new
  shape, dtype or static argument) moves the clock.
* TensorFlow: TensorFlow's own monitoring counter of the time ``tf.function`` spends building
  graphs (``/tensorflow/core/tf_function/graph_building_time_usecs``, kept in
  ``tracing_compilation``), which grows at each tracing or retracing.  It is TensorFlow's
  internal module: where it is missing (another version) the clock reads nothing for
  TensorFlow.

Neither framework is imported here: each is looked for when a step starts, once it has been
imported by the training code.  Reading the clock costs a dictionary look-up and, with
TensorFlow, one counter read (about a microsecond).
"""

from __future__ import annotations

import sys
import threading

__all__ = ["CompileClock", "JAX_COMPILE_EVENTS"]

JAX_COMPILE_EVENTS = frozenset({
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
})

_jax_seconds = [0.0]  # compile seconds JAX reported in this process (one listener adds them)
_jax_lock = threading.Lock()
_jax_listening = [False]


def _on_jax_duration(event: str, duration_secs: float, **_) -> None:
    if event in JAX_COMPILE_EVENTS:
        _jax_seconds[0] += duration_secs


def _listen_to_jax() -> bool:
    """Register the process's one JAX listener (JAX imported); whether it listens."""
    with _jax_lock:
        if not _jax_listening[0]:
            try:
                from jax import monitoring
                monitoring.register_event_duration_secs_listener(_on_jax_duration)
            except (ImportError, AttributeError):  # a JAX without jax.monitoring
                return False
            _jax_listening[0] = True
    return True


def _tf_cell():
    """TensorFlow's graph-building time counter's cell (TensorFlow imported), or None."""
    try:
        from tensorflow.python.eager.polymorphic_function import tracing_compilation
        return tracing_compilation._graph_building_time_counter.get_cell()
    except (ImportError, AttributeError):  # another TensorFlow: no retracing clock
        return None


class CompileClock:
    """Seconds compiled so far (``now()``), JAX's and TensorFlow's together."""

    def __init__(self):
        self._jax = False
        self._tf = None
        self._tf_looked = False

    def now(self) -> float:
        """Compile seconds so far (both frameworks, those imported yet)."""
        if not self._jax and "jax" in sys.modules:
            self._jax = _listen_to_jax()
        if not self._tf_looked and "tensorflow" in sys.modules:
            self._tf_looked, self._tf = True, _tf_cell()
        seconds = _jax_seconds[0]
        if self._tf is not None:
            seconds += self._tf.value() / 1e6
        return seconds
