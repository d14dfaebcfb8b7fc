"""The profilers a local capture drives: TensorFlow's and JAX's.

Both write the same XSpace files (``logdir/plugins/profile/<run>/<host>.xplane.pb``) and both
mark a step the same way (a trace event with ``_r=1`` and ``step_num``), so everything after
the capture is shared.  Both also mark a loop's fetch of its next batch (``iterate``,
``input()``) with a host event named :data:`INPUT_MARKER` (no ``:``): a name starting
``IteratorGetNext``, which the step breakdown's rule (XProf's and this package's alike)
counts as the host waiting for input, so input made in Python (a generator, numpy, a
DataLoader) is measured as input instead of being lost in the host's other work.  Each backend
imports its framework only when a capture starts; a JAX capture never imports TensorFlow.

``backend="auto"`` (the default) chooses JAX when the step function is a jitted JAX function
or when JAX is imported and TensorFlow is not (a ``%%tfprof`` cell's code counts too: ``jax``
without ``tensorflow``/``tf.``); everything else is profiled with TensorFlow.  A process that
imported both (JAX training on a tf.data pipeline, say) gets TensorFlow's profiler unless it
asks for ``backend="jax"``: each profiler sees only its own framework's work.  Where
neither is imported nor named, ``"auto"`` takes the one installed (TensorFlow first).

tfprof_nb installs neither framework (no extra does: a second TensorFlow beside a user's
``tensorflow[and-cuda]`` would break both); :func:`require` raises CaptureError naming the
package to install when the framework a capture needs is missing.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import time
import warnings

from ..errors import CaptureError, CaptureWarning
from .options import TracerOptions

__all__ = ["BACKENDS", "INPUT_MARKER", "INSTALL", "check_backend", "choose_backend",
           "get_backend", "installed", "is_jax_function", "require"]

BACKENDS = ("auto", "jax", "tensorflow")
# the host event around a loop's fetch of its next batch (see the module doc)
INPUT_MARKER = "IteratorGetNext (loop input)"
_JAX_CODE = re.compile(r"\bjax\b|\bjnp\.")
_TF_CODE = re.compile(r"\btensorflow\b|\btf\.")
# what to install for each framework (none is a dependency of tfprof_nb)
INSTALL = {
    "tensorflow": 'pip install tensorflow (NVIDIA GPUs: pip install "tensorflow[and-cuda]"; '
                  "CPU only: pip install tensorflow-cpu)",
    "jax": 'pip install "jax[cpu]" (NVIDIA GPUs: pip install "jax[cuda12]")',
}
_NAMES = {"tensorflow": "TensorFlow", "jax": "JAX"}


def check_backend(name) -> str:
    """Validate a backend name (``"auto"``, ``"jax"`` or ``"tensorflow"``)."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))}, "
                         f"got {name!r}")
    return name


def is_jax_function(fn) -> bool:
    """Whether ``fn`` is a jitted (or pmapped) JAX function; never imports JAX."""
    kind = type(fn)
    return kind.__module__.split(".")[0] == "jaxlib" and kind.__name__ in (
        "PjitFunction", "PmapFunction")


def choose_backend(name: str = "auto", fn=None, source: str | None = None) -> str:
    """``"jax"`` or ``"tensorflow"`` for a capture asked for with backend ``name`` (see the
    module's docstring for what ``"auto"`` looks at)."""
    if check_backend(name) != "auto":
        return name
    if fn is not None and is_jax_function(fn):
        return "jax"
    jax = _imported("jax") or bool(source and _JAX_CODE.search(source))
    tf = _imported("tensorflow") or bool(source and _TF_CODE.search(source))
    if jax != tf:
        return "jax" if jax else "tensorflow"
    if not jax and not installed("tensorflow") and installed("jax"):
        return "jax"  # neither imported nor named: the one this environment has
    return "tensorflow"


def _imported(module: str) -> bool:
    return sys.modules.get(module) is not None


def installed(module: str) -> bool:
    """Whether ``module`` (``"tensorflow"``, ``"jax"``) can be imported here; never imports
    it."""
    if _imported(module):
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked installation
        return False


def require(backend: str, requested: str = "auto", what: str | None = None) -> str:
    """``backend`` when its framework is installed, else CaptureError naming what to install
    (both frameworks when ``requested`` was ``"auto"`` and neither is there).  ``what`` names
    the action in the message (default: capturing)."""
    if installed(backend):
        return backend
    other = "jax" if backend == "tensorflow" else "tensorflow"
    if requested == "auto" and not installed(other):
        err = CaptureError(
            f"{what or 'capturing'} needs TensorFlow or JAX in this environment, and neither "
            f"is installed (tfprof_nb installs neither, so that it never replaces the build "
            f"you chose): {INSTALL['tensorflow']}, or {INSTALL['jax']}")
        err.hint = "install TensorFlow or JAX in the kernel's environment, then restart it"
    else:
        name = _NAMES[backend]
        what = what or f"capturing with backend={backend!r}"
        err = CaptureError(f"{what} needs {name}, which is not installed in this "
                           f"environment: {INSTALL[backend]}")
        err.hint = f"install {name} in the kernel's environment, then restart it"
    raise err


class TensorFlowProfiler:
    """``tf.profiler.experimental``: start, stop, step markers.

    The tracer levels reach the session as :class:`~.options.TfInt` values (TensorFlow 2.21
    drops plain ints); ``delay_ms`` is waited here before the session starts, as JAX's
    session does, since TensorFlow's local session ignores it."""

    name = "tensorflow"

    def start(self, logdir: str, options: TracerOptions) -> None:
        import tensorflow as tf

        if options.delay_ms:  # TF's local session ignores delay_ms; JAX's waits like this
            time.sleep(options.delay_ms / 1000)
        try:
            tf.profiler.experimental.start(logdir, options=options.to_tf(with_delay=False))
        except tf.errors.AlreadyExistsError:
            raise CaptureError(
                "a TensorFlow profiler session is already running in this process (started "
                "by tf.profiler, TensorBoard's callback or a profiler server request); "
                "TensorFlow allows one at a time. It was left running: stop it with "
                "tf.profiler.experimental.stop() and try again.") from None

    def stop(self, trace_json: bool = True) -> None:
        """Stop and save (TensorFlow's own files whatever ``trace_json`` says)."""
        import tensorflow as tf

        tf.profiler.experimental.stop()

    def step_marker(self, name: str, step_num: int):
        import tensorflow as tf

        return tf.profiler.experimental.Trace(name, step_num=step_num, _r=1)

    def input_marker(self):
        import tensorflow as tf

        return tf.profiler.experimental.Trace(INPUT_MARKER)


class JaxProfiler:
    """``jax.profiler``: ``start_trace``/``stop_trace`` and ``StepTraceAnnotation``."""

    name = "jax"

    def start(self, logdir: str, options: TracerOptions) -> None:
        import jax

        if options.device_tracer_level == 0:
            warnings.warn("JAX's profiler has no device tracer switch: devices are traced "
                          "(device_tracer_level=0 is ignored)", CaptureWarning, stacklevel=5)
        jax_options = jax.profiler.ProfileOptions()
        jax_options.host_tracer_level = options.host_tracer_level
        jax_options.python_tracer_level = options.python_tracer_level
        if options.delay_ms:  # the session waits until then before it starts tracing
            jax_options.start_timestamp_ns = time.time_ns() + options.delay_ms * 1_000_000
        try:
            jax.profiler.start_trace(logdir, profiler_options=jax_options)
            self._logdir = logdir
        except RuntimeError as err:
            if "already" not in str(err):
                raise
            raise CaptureError(
                "a JAX profiler trace is already running in this process (started by "
                "jax.profiler.start_trace, jax.profiler.trace or a profiler server request); "
                "JAX allows one at a time. It was left running: stop it with "
                "jax.profiler.stop_trace() and try again.") from None

    def stop(self, trace_json: bool = True) -> None:
        """Stop and save; ``trace_json=False``: only the ``.xplane.pb``, no
        ``.trace.json.gz`` (less CPU under the GIL: :mod:`.jax_xplane_stop`)."""
        import jax

        from .jax_xplane_stop import stop_to_xplane

        if trace_json or not stop_to_xplane(self._logdir):
            jax.profiler.stop_trace()

    def step_marker(self, name: str, step_num: int):
        import jax

        return jax.profiler.StepTraceAnnotation(name, step_num=step_num)

    def input_marker(self):
        import jax

        return jax.profiler.TraceAnnotation(INPUT_MARKER)


_PROFILERS = {"tensorflow": TensorFlowProfiler, "jax": JaxProfiler}


def get_backend(name: str):
    """The profiler of a chosen backend (``"jax"`` or ``"tensorflow"``)."""
    try:
        return _PROFILERS[name]()
    except KeyError:
        raise ValueError(f"no profiler backend {name!r}; known: {sorted(_PROFILERS)}") from None
