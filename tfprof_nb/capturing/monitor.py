"""``tp.Monitor``: a long training run profiled in windows while it trains.

The pieces: ``monitor_options`` (options a ``%%tfprof`` cell or the defaults fill in),
``monitor_schedule`` (which step opens a window), ``monitor_budget`` (how long a window
waits so that the windows' measured cost stays within ``max_overhead_pct``),
``monitor_stepping`` (how a loop's steps arrive), ``monitor_driver`` (the training thread:
sessions and step markers), ``monitor_saving`` (a closed window saved off the training
thread), ``monitor_analysis`` (the background thread: each window's profile reduced to its
row), ``monitor_log`` (the rows: ``history``), ``monitor_rule`` (when a window regresses),
``monitor_keras`` (Keras' callback protocol), ``monitor_cell_guard`` (a window a cell left
open), ``monitor_display`` (its view, chart and status) and ``monitor_chart`` (the view's
chart, built in the worker process).  The view (``tfprof_nb.widgets.monitor_view``) is
handed the history; it never sees the monitor.
"""

from __future__ import annotations

import functools
import os
import threading
import time

from ..errors import CaptureError
from . import context
from .backends import check_backend
from .monitor_analysis import Analyser, WindowProfiles, analyse_window
from .monitor_cell_guard import CellGuard
from .monitor_display import Display
from .monitor_driver import WindowDriver
from .monitor_keras import KerasHooks
from .monitor_log import WindowLog
from .monitor_options import Settings, schedule_of, tracer_of
from .monitor_rule import RegressionRule
from .monitor_schedule import DEFAULT_MAX_PENDING, check_pending
from .monitor_stepping import Stepping
from .monitor_worker import prestart
from .monitor_steps import StepTimer
from .session import LocalSession, publish_run, split_logdir

__all__ = ["Monitor"]


class Monitor(Settings, Stepping, Display, KerasHooks):
    """Profile a window of ``steps`` training steps every ``every_steps`` steps (or every
    ``every_seconds`` seconds) after ``warmup`` steps, while training runs; each window is
    analysed on a background thread.

        mon = tp.Monitor(every_steps=500, steps=10)
        mon.show()                                        # updates as windows arrive
        model.fit(ds, epochs=20, callbacks=[mon])         # Keras, TensorFlow or JAX backend
        for batch in mon.iterate(ds):                     # or a custom loop
            train_step(batch)
        mon.history                                       # one row per window
        mon.window(3)                                     # window 3's Profile
        mon.step_times                                    # one row per step of the run

    Steps are counted over the whole run (fits and loops after one another continue the
    count); each window's steps are marked (``step_name``, ``step_num`` = that count) and its
    files go to ``logdir/window_NNNN/plugins/profile/<run>/`` (``logdir``: a fresh temporary
    directory by default; a URL uploads each window once analysed).  With the default
    spacing (no ``every_steps`` or ``every_seconds`` given, here or by ``%%tfprof``) a window
    opens no sooner than keeps the training time the windows cost (measured on the step
    timer: steps slower than training's own pace while a window is traced, saved and
    analysed) under ``max_overhead_pct`` of the run, 2 % (the row of a window that waited
    says why; see :mod:`~tfprof_nb.capturing.monitor_budget`); give it to apply a budget to a
    spacing of your own.  Windows open on
    schedule whatever the analysis thread is doing (at the lowest CPU priority); a window
    due while ``max_pending`` saved windows still wait for their analysis is dropped, its
    row saying so (status ``dropped``).  Between the windows the step timer
    (``step_timer``) times every step (``step_times``; ``track(output)`` times a JAX step to
    its output's readiness), flags spikes, their period and recompiles; ``catch_spikes``
    opens each window just before an expected spike once a period is found.  A window's
    error (the profiler would not start or save, its profile could not be read, another
    tfprof_nb session runs: a monitor never stops one) is kept in its row, never raised into
    training; after 3 windows in a row failed with the same error no
    more open (the status says why).  A window's session starts one unmarked step before its
    first step.  When training raises or ends inside a window, the window stops with the
    steps that ran (a window that ends before its first step leaves no row); a Keras epoch
    that ends when its data runs out does not stop it.  ``wait()`` waits for the analyses.
    Regressions: see :mod:`~tfprof_nb.capturing.monitor_rule` (``baseline_windows``,
    ``regression_pct``).  ``backend`` as in :class:`~tfprof_nb.Capture` (a Keras fit follows
    Keras' backend).  ``sample_ms``: the hardware sampler's period in each window (as
    :class:`~tfprof_nb.Capture`; 0 turns it off).  Inside ``%%tfprof --every K``, unset
    options come from the magic.
    """

    def __init__(self, every_steps: int | None = None, steps: int | None = None,
                 warmup: int | None = None, logdir: str | None = None, *,
                 every_seconds: float | None = None, backend: str | None = None,
                 max_windows: int | None = None, baseline_windows: int = 3,
                 regression_pct: float = 10.0, step_name: str = "train",
                 max_pending: int = DEFAULT_MAX_PENDING, step_timer: bool = True,
                 catch_spikes: bool = False,
                 host_tracer_level: int | None = None, python_tracer_level: int | None = None,
                 device_tracer_level: int | None = None, sample_ms: int | None = None,
                 max_overhead_pct: float | None = None):
        ctx = context.current()
        self._schedule = schedule_of(ctx, every_steps, every_seconds, steps, warmup, max_windows,
                                     max_overhead_pct)
        self._tracer = tracer_of(ctx, {"host_tracer_level": host_tracer_level,
                                     "python_tracer_level": python_tracer_level,
                                     "device_tracer_level": device_tracer_level,
                                     "sample_ms": sample_ms})
        self._local, self._url = split_logdir(logdir or (ctx.logdir if ctx else None))
        self.logdir = self._url or self._local
        self._requested = check_backend(backend or (ctx.backend if ctx else "auto"))
        self._backend = self._requested
        self._source = ctx.source if ctx else None
        self._log = WindowLog(RegressionRule(baseline_windows, regression_pct,
                                             self._schedule.steps))
        if self._url is not None:
            _start_fsspec_loop()
        self._analyser = Analyser()
        prestart()  # the analysis process imports while training warms up
        self.profiles = WindowProfiles(lambda: len(self._log), self._run_of)
        self._timer = StepTimer(step_timer)
        if catch_spikes:
            if not step_timer:
                raise ValueError("catch_spikes needs the step timer (step_timer=True)")
            self._schedule.catch_spikes = True
            self._timer.on_period = self._heard_period
        self._driver = WindowDriver(self._schedule, self._log, self._session,
                                    self._queue_analysis, self._queue_refresh, step_name,
                                    check_pending(max_pending), self._timer)
        self._views: list = []
        self._cell_guard = CellGuard(self._driver)
        if ctx is not None:
            ctx.monitors.append(self)
            if ctx.show_monitor is not None:
                ctx.show_monitor(self)

    # ---- what it found ------------------------------------------------------------------
    @property
    def history(self):
        """One row per window (a DataFrame): ``window``, ``status`` (profiling, pending,
        analysed, failed, dropped), ``first_step``/``last_step``/``steps`` (its marked steps),
        ``time_s`` (when its profiler session opened, an unmarked step before ``first_step``;
        seconds from the run's first step), ``wall_s`` (from its first marked step's start to
        its last step's end by the loop's clock, the profiler's stop left out),
        ``median_step_ms``, ``vs_baseline_pct`` and ``regressed``, the mean ms per step of each
        step-time category (``*_ms``; these over the profile's marked steps), ``input_pct``,
        ``duty_cycle_pct`` (NaN without a device), ``memory_peak_bytes`` (NaN without memory
        events), ``top_op`` and ``top_op_pct`` (the op with the most self time over the
        window's whole profile, the unmarked step too, and its share of its side's op time
        without IDLE: XProf's TensorFlow stats' rule), ``backend``, ``run`` (the window's run
        directory or URL), ``note`` and ``error``."""
        return self._log.frame()

    @property
    def step_times(self):
        """One row per training step of the whole run, in windows and between them (a
        DataFrame): ``step``, ``start_s``/``end_s`` (from the first step's start, as the
        history's ``time_s``), ``duration_ms``, ``in_window`` and ``window`` (-1: none),
        ``compile_ms`` (time compiling or tracing during the step) and ``flag``
        (comma-separated: ``spike``, ``periodic(P)``, ``compile``, ``recompile``,
        ``profiler``); see :mod:`~tfprof_nb.capturing.monitor_steps` and
        :mod:`~tfprof_nb.capturing.monitor_spikes` for what they mean.  Empty with
        ``step_timer=False``."""
        return self._timer.frame(self._driver.t0)[0]

    @property
    def spike_period(self):
        """The period at which the run's spikes recur (``monitor_spikes.Period``: ``period``
        steps, at steps ``phase`` mod ``period``), None while none is found."""
        return self._timer.frame(self._driver.t0)[1]

    def track(self, output):
        """Hand the step's output (any array it returns, its loss is enough) to the step
        timer, and return it: the step ends when that output is ready on the device, not
        when the host dispatched it (JAX's asynchronous dispatch); waited for on a thread
        of the timer's, never on the training thread."""
        self._timer.track(output)
        return output

    @property
    def counts(self) -> dict[str, int]:
        """How many windows are ``profiling``, ``pending``, ``analysed``, ``failed`` and
        ``dropped`` (cheap enough to ask at every step)."""
        statuses = self._log.statuses()
        return {s: statuses.count(s)
                for s in ("profiling", "pending", "analysed", "failed", "dropped")}

    @property
    def baseline(self):
        """The regression rule's baseline (``monitor_rule.Baseline``), None until the first
        windows are analysed."""
        return self._log.baseline()

    @property
    def rule(self) -> str:
        """When a window is flagged as a regression, in words, with the baseline's numbers
        once there is one."""
        return self._log.rule.describe(self._log.baseline())

    def window(self, index: int):
        """Window ``index``'s :class:`~tfprof_nb.Profile` (as ``profiles[index]``)."""
        return self.profiles[index]

    def wait(self, timeout: float | None = None):
        """Wait until every stopped window is analysed (at most ``timeout`` seconds);
        return the history."""
        end = None if timeout is None else time.monotonic() + timeout
        if self._driver.saver.join(timeout):  # the last window's save queues its analysis
            self._analyser.wait(None if end is None else max(0.0, end - time.monotonic()))
        return self.history

    # ---- the driver's and the analyser's hooks ----------------------------------------
    def _session(self, index: int) -> LocalSession:
        """Window ``index``'s profiler session (not started)."""
        if threading.current_thread() is threading.main_thread():
            self._cell_guard.guard(index)
        session = LocalSession(os.path.join(self._local, f"window_{index:04d}"), self._tracer,
                               "tp.Monitor", self._backend, None, self._source)
        session.trace_json = False  # JAX: only the .xplane.pb (jax_xplane_stop): a cheaper stop
        return session

    def _queue_analysis(self, index: int, run_dir) -> None:
        publish = None if self._url is None else functools.partial(
            publish_run, url=f"{self._url.rstrip('/')}/window_{index:04d}")

        def job():
            self._refresh()  # the window shows as pending
            analyse_window(self._log, index, run_dir, self.profiles, publish)
            self._refresh()

        self._analyser.submit(job)

    def _heard_period(self, period) -> None:
        """The step timer's search found ``period`` (or none): the schedule aims at it."""
        self._schedule.spike = period

    def _queue_refresh(self) -> None:
        if self._views:
            self._analyser.submit(self._refresh)

    def _keras_backend(self, name: str) -> None:
        """A Keras fit starts: with ``backend="auto"``, profile with Keras' backend."""
        if self._requested == "auto" and name in ("jax", "tensorflow"):
            self._backend = name

    def _run_of(self, index: int):
        if self._driver.window_index != index:  # a closed window: its save has ended
            self._driver.saver.join()
        row = self._log.row(index)
        if row["status"] == "failed":
            raise CaptureError(f"window {index} failed: {row['error']}")
        if row["status"] == "dropped":
            raise CaptureError(f"window {index} was {row['note']}")
        if row["status"] == "profiling":
            raise CaptureError(f"window {index} is still being profiled")
        return row["run"]


def _start_fsspec_loop() -> None:
    """Start fsspec's event-loop thread (``fsspecIO``, one per process) from this thread if
    it is not running: the analysis thread that uploads a URL logdir's windows runs at the
    lowest priority, which a thread it started would keep for the whole process."""
    try:
        from fsspec.asyn import get_loop
    except ImportError:  # the upload says what is missing
        return
    get_loop()


