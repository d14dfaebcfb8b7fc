"""Profiling N steps of a custom training loop after a warm-up."""

from __future__ import annotations

import warnings
from contextlib import nullcontext

from .._words import counted
from ..errors import CaptureWarning
from . import context
from .backends import check_backend
from .options import TracerOptions, check_steps
from .progress import StepProgress
from .session import LocalSession

__all__ = ["Capture", "capture", "DEFAULT_STEPS", "DEFAULT_WARMUP"]

# The profiler guide's advice: skip the first steps (tracing, warm caches), profile about 10.
DEFAULT_STEPS = 10
DEFAULT_WARMUP = 3
_PROFILER_NAMES = {"jax": "JAX's profiler", "tensorflow": "TensorFlow's profiler"}


class StepWindow:
    """Counts steps, starts the profiler after the warm-up, marks each profiled step with a
    step marker (``step_name``, ``step_num=n``, ``_r=1``: TensorFlow's ``Trace`` or JAX's
    ``StepTraceAnnotation``) and stops after the last one.  Shared by the loop API and the
    Keras callback."""

    def __init__(self, steps, warmup, logdir, tracer: TracerOptions, step_name: str,
                 progress: bool, owner: str, backend: str = "auto", fn=None,
                 source: str | None = None):
        self.steps, self.warmup = check_steps(steps, warmup)
        self.tracer = tracer
        self.step_name = step_name
        self.session = LocalSession(logdir, tracer, owner, backend, fn, source)
        self.progress = StepProgress(self.steps, self.warmup, enabled=progress)
        self.done = 0  # steps begun and ended
        self.profiled = 0
        self.profile = None
        self.run_dir = None
        self._trace = None
        self._finished = False

    @property
    def logdir(self) -> str:
        return self.session.logdir

    @property
    def total(self) -> int:
        return self.warmup + self.steps

    def begin_step(self) -> None:
        n = self.done
        if n == self.warmup and not self.session.running and not self._finished:
            self.session.start()
        if self.session.running and self.warmup <= n < self.total:
            self._trace = self.session.step_marker(self.step_name, n)
            self._trace.__enter__()
        self.progress.update(n)

    def end_step(self) -> None:
        self._close_trace()
        if self.session.running and self.done >= self.warmup:
            self.profiled += 1
        self.done += 1
        if self.done >= self.total and self.session.running:
            self.finish()

    def input_marker(self):
        """A context manager marking the fetch of a profiled step's batch as input (the
        backends' ``INPUT_MARKER``); nothing outside the profiled steps."""
        if self._trace is not None and self.session.running:
            return self.session.input_marker()
        return nullcontext()

    def abandon_step(self) -> None:
        """The step did not run (no more data): drop its marker."""
        self._close_trace()

    def _close_trace(self) -> None:
        if self._trace is not None:
            trace, self._trace = self._trace, None
            trace.__exit__(None, None, None)

    def finish(self, exc: BaseException | None = None):
        """Stop and save if running; load the profile.  Never masks ``exc``."""
        if self._finished:
            return self.profile
        self._finished = True
        self._close_trace()
        if not self.session.running:
            return None
        try:
            self.run_dir = self.session.stop()
            from ..loading import load

            self.profile = load(self.run_dir)
        except Exception as err:
            if exc is None:
                raise
            warnings.warn(f"could not save the partial profile: {err}", CaptureWarning,
                          stacklevel=3)
            return None
        ctx = context.current()
        if ctx is not None:
            ctx.runs.append(self.run_dir)
            ctx.profiles.append(self.profile)
        what = counted(self.profiled, "step") + ("" if exc is None else " before the error")
        self.progress.finish(f"profiled {what} with {_PROFILER_NAMES[self.session.backend]}; "
                             f"files in {self.run_dir}")
        if exc is not None:
            _attach(exc, self.profile, self.run_dir, self.profiled)
        elif self.profiled < self.steps:
            warnings.warn(f"only {self.profiled} of {self.steps} steps were profiled (the loop "
                          f"ended early); the profile keeps what ran", CaptureWarning,
                          stacklevel=4)
        return self.profile


def make_window(steps, warmup, logdir, tracer_levels: dict, step_name: str, progress,
                owner: str, backend: str | None = None, fn=None) -> StepWindow:
    """A StepWindow from user options; unset ones come from a running ``%%tfprof`` cell, then
    from the defaults (``backend``: ``"auto"``)."""
    ctx = context.current()
    tracer = dict(ctx.tracer) if ctx else {}
    tracer.update({k: v for k, v in tracer_levels.items() if v is not None})
    if backend is not None:
        check_backend(backend)
    return StepWindow(
        steps if steps is not None else (ctx.steps if ctx else DEFAULT_STEPS),
        warmup if warmup is not None else (ctx.warmup if ctx else DEFAULT_WARMUP),
        logdir or (ctx.logdir if ctx else None), TracerOptions(**tracer), step_name,
        progress if progress is not None else (ctx.progress if ctx else True), owner,
        backend if backend is not None else (ctx.backend if ctx else "auto"), fn,
        ctx.source if ctx else None)


class WindowResults:
    """What a finished step window gives: the profile and where its files are."""

    _window: StepWindow

    @property
    def profile(self):
        """The captured :class:`~tfprof_nb.Profile` (None until the window is done)."""
        return self._window.profile

    @property
    def run_dir(self):
        """Directory holding the raw ``.xplane.pb`` file(s)."""
        return self._window.run_dir

    @property
    def logdir(self) -> str:
        return self._window.logdir

    @property
    def steps(self) -> int:
        return self._window.steps

    @property
    def warmup(self) -> int:
        return self._window.warmup

    @property
    def steps_profiled(self) -> int:
        return self._window.profiled

    @property
    def backend(self) -> str | None:
        """The profiler used, ``"jax"`` or ``"tensorflow"`` (None until it started)."""
        return self._window.session.backend


def _attach(exc: BaseException, profile, run_dir, profiled: int) -> None:
    try:
        exc.tfprof_profile = profile
    except Exception:  # some exception types refuse new attributes
        pass
    if hasattr(exc, "add_note"):
        exc.add_note(f"tfprof_nb: the partial profile ({counted(profiled, 'step')}) was saved "
                     f"in {run_dir}; it is attached as .tfprof_profile")


class Capture(WindowResults):
    """Profile ``steps`` steps of a training loop after ``warmup`` steps.

        with tp.Capture(steps=10, warmup=3) as cap:
            for batch in cap.iterate(dataset):
                train_step(batch)
        cap.profile

    ``iterate`` takes the next element *inside* each step's trace, so the input pipeline is
    attributed to the step (the profiler guide shows why the other order misleads the input
    analysis), and marks that fetch as input (a host event ``IteratorGetNext (loop input)``,
    which XProf's step breakdown and this package's count as waiting for input), so input made
    in Python is measured.  For loops that fetch data themselves, use ``with cap.step(): ...``
    per step, and ``with cap.input(): batch = ...`` around the fetch.
    If the loop raises, the profiler is stopped, the partial profile saved and attached to the
    exception (``exc.tfprof_profile``) and to ``cap.profile``; the exception propagates
    unchanged.  Inside a ``%%tfprof`` cell, unset options come from the magic.

    ``backend``: ``"tensorflow"``, ``"jax"`` or ``"auto"`` (default): JAX when JAX is imported
    and TensorFlow is not, else TensorFlow (decided when profiling starts, after the warm-up;
    see :mod:`tfprof_nb.capturing.backends`); pass ``"jax"`` when both are imported.  A JAX
    capture uses ``jax.profiler`` and marks steps with ``StepTraceAnnotation``; it never
    imports TensorFlow.

    ``sample_ms`` (default 50; 0 turns it off): while the profiler runs, a thread samples the
    host's CPU use (the machine's and this process's), this process's resident memory, the
    memory available and, where present, each NVIDIA GPU's (NVML) or TPU's (libtpu)
    utilisation, memory, power and clocks every ``sample_ms`` ms; the samples are written
    beside the profile as ``<host>.hardware.npz`` in :attr:`run_dir`.
    """

    def __init__(self, steps: int | None = None, warmup: int | None = None,
                 logdir: str | None = None, *, host_tracer_level: int | None = None,
                 python_tracer_level: int | None = None,
                 device_tracer_level: int | None = None, delay_ms: int | None = None,
                 sample_ms: int | None = None, step_name: str = "train",
                 progress: bool | None = None, backend: str | None = None, _fn=None):
        self._window = make_window(
            steps, warmup, logdir,
            {"host_tracer_level": host_tracer_level, "python_tracer_level": python_tracer_level,
             "device_tracer_level": device_tracer_level, "delay_ms": delay_ms,
             "sample_ms": sample_ms},
            step_name, progress, owner="tp.Capture", backend=backend, fn=_fn)
        self._in_with = False

    # ---- driving --------------------------------------------------------------------------
    def __enter__(self) -> "Capture":
        self._in_with = True
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self._in_with = False
        self._window.finish(exc)
        return False

    def iterate(self, iterable, *, continue_after: bool = False):
        """Yield ``warmup + steps`` elements of ``iterable``, one step each.

        With ``continue_after`` the remaining elements follow, unprofiled.
        """
        win = self._window
        it = iter(iterable)
        while win.done < win.total:
            win.begin_step()
            try:
                with win.input_marker():
                    item = next(it)
            except StopIteration:
                win.abandon_step()
                win.finish()
                return
            try:
                yield item
            except GeneratorExit:
                # The loop was left early, by break or by an exception (the generator is closed
                # before any enclosing ``with`` sees the exception).  Inside ``with`` the exit
                # finishes with the right exception; outside, save what ran now.
                if not self._in_with:
                    win.finish()
                raise
            win.end_step()
        if continue_after:
            yield from it

    def step(self):
        """Context manager marking one training step."""
        return _Step(self._window)

    def input(self):
        """Context manager marking the fetch of a step's batch as input, for loops that fetch
        their own data: ``with cap.step(): with cap.input(): batch = next(loader)`` (what
        ``iterate`` does for you); nothing outside the profiled steps."""
        return self._window.input_marker()

    def stop(self):
        """Stop now (e.g. after breaking out of the loop) and return the profile."""
        return self._window.finish()


class _Step:
    def __init__(self, window: StepWindow):
        self.window = window

    def __enter__(self):
        self.window.begin_step()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None:
            self.window.end_step()
        else:
            self.window.finish(exc)
        return False


def capture(fn, data, steps: int | None = None, warmup: int | None = None, **options):
    """Call ``fn(batch)`` for each batch of ``data`` through a :class:`Capture`; return the
    Profile.  ``options`` are those of :class:`Capture` (``sample_ms``: the hardware
    sampler's period, its file beside the profile); with ``backend="auto"`` a jitted JAX
    ``fn`` is profiled with JAX."""
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {type(fn).__name__}")
    with Capture(steps, warmup, _fn=fn, **options) as cap:
        for batch in cap.iterate(data):
            fn(batch)
    return cap.profile
