"""``%tfprof`` / ``%%tfprof``: profile a training cell (or one statement) and show the result."""

from __future__ import annotations

import inspect
import re
import threading

from IPython.core import magic_arguments
from IPython.core.magic import Magics, line_cell_magic, magics_class

from .capturing import context
from .capturing.backends import BACKENDS
from .capturing.loop import DEFAULT_STEPS, DEFAULT_WARMUP
from .capturing.options import DEFAULT_SAMPLE_MS, TracerOptions, check_steps
from .capturing.session import LocalSession, new_logdir

__all__ = ["TfprofMagics"]

# Cells that call one of these get a step window; any other cell is profiled whole.
_STEP_API = re.compile(r"\.fit\s*\(|\.iterate\s*\(|\.step\s*\(|\bcapture\s*\(|\bCapture\s*\(")
_VALUE_OPTIONS = {"--steps", "--warmup", "--logdir", "--host-tracer-level",
                  "--python-tracer-level", "--device-tracer-level", "--delay-ms", "--out",
                  "--remote", "--duration-ms", "--backend", "--every", "--sample-ms"}


def split_line(line: str) -> tuple[str, str]:
    """Split a line magic into (options, statement): options come first, each ``--name`` with
    its value when it takes one; the statement is the rest of the line, untouched."""
    pos, n = 0, len(line)
    expect_value = False
    while pos < n:
        while pos < n and line[pos].isspace():
            pos += 1
        end = pos
        while end < n and not line[end].isspace():
            end += 1
        token = line[pos:end]
        if not token:
            break
        if expect_value:
            expect_value = False
        elif token.startswith("-"):
            name = token.split("=", 1)[0]
            expect_value = name in _VALUE_OPTIONS and "=" not in token
        else:
            return line[:pos], line[pos:]
        pos = end
    return line, ""


@magics_class
class TfprofMagics(Magics):
    """The ``tfprof`` line and cell magic."""

    @magic_arguments.magic_arguments()
    @magic_arguments.argument("--steps", type=int, default=DEFAULT_STEPS,
                              help="steps to profile (default %(default)s)")
    @magic_arguments.argument("--warmup", type=int, default=DEFAULT_WARMUP,
                              help="steps to skip first (default %(default)s)")
    @magic_arguments.argument("--logdir", default=None,
                              help="where the raw profile goes (default: a fresh temp dir)")
    @magic_arguments.argument("--host-tracer-level", type=int, default=2,
                              help="host (CPU) events: 0 none, 1 annotations and step "
                                   "markers, 2 + TF ops and runtime (default), 3 + cheap ops "
                                   "(Identity, _Arg) and executor detail (JAX on CPU: 1-3 "
                                   "record the same)")
    @magic_arguments.argument("--python-tracer-level", type=int, default=0,
                              help="1 records every Python call as a '$file:line function' "
                                   "event (slow; default %(default)s)")
    @magic_arguments.argument("--device-tracer-level", type=int, default=1,
                              help="1 traces GPU/TPU activity, 0 does not (default "
                                   "%(default)s; JAX has no switch: 0 is ignored, with a "
                                   "warning)")
    @magic_arguments.argument("--delay-ms", type=int, default=0,
                              help="wait this long before tracing starts (default "
                                   "%(default)s)")
    @magic_arguments.argument("--sample-ms", type=int, default=DEFAULT_SAMPLE_MS,
                              help="sample the host's CPU and memory and each GPU/TPU's "
                                   "utilisation, memory, power and clocks every N ms while "
                                   "profiling, into <host>.hardware.npz beside the profile "
                                   "(default %(default)s; 0 off)")
    @magic_arguments.argument("--out", default="_tfprof",
                              help="variable that receives the Profile (default %(default)s)")
    @magic_arguments.argument("--no-show", action="store_true",
                              help="do not display the result")
    @magic_arguments.argument("--whole-cell", action="store_true",
                              help="profile the whole cell, marking steps where fit or "
                                   "tp iterators run")
    @magic_arguments.argument("--remote", default=None,
                              help="grpc://host:port[,grpc://host:port...] workers to trace "
                                   "while the cell runs")
    @magic_arguments.argument("--duration-ms", type=int, default=2000,
                              help="trace duration for --remote (default %(default)s)")
    @magic_arguments.argument("--every", type=int, default=None,
                              help="monitor the cell's training (tp.Monitor): a window of "
                                   "--steps steps every K steps, analysed while training "
                                   "runs, shown as windows arrive; --out receives the monitor")
    @magic_arguments.argument("--backend", default="auto", choices=BACKENDS,
                              help="profiler: jax, tensorflow or auto (default: JAX when JAX "
                                   "is imported or used in the cell and TensorFlow is not)")
    @line_cell_magic
    def tfprof(self, line: str, cell: str | None = None):
        """Profile a training cell with the TensorFlow or JAX profiler and show the result.

        %%tfprof --steps 10 --warmup 3
        model.fit(ds, epochs=1)

        A Keras ``fit`` in the cell gets a profiler callback for the step window, and
        ``tp.Capture`` step loops use the window as their defaults; a cell with neither is
        profiled whole (steps are then inferred from the repeated tf.function or jitted call).
        ``--every K`` monitors the cell's training instead (``tp.Monitor``): a Keras ``fit``
        gets a monitor, a ``tp.Monitor()`` made in the cell takes the magic's options; a
        window of ``--steps`` steps every K steps, each analysed while training runs, the
        monitor shown as windows arrive and stored in ``--out``.  ``--backend auto`` profiles JAX code with ``jax.profiler`` (without importing
        TensorFlow) and everything else with TensorFlow's profiler.  The Profile is stored in
        ``--out`` (default ``_tfprof``), also when the cell raises (then it holds the partial
        profile).  ``%tfprof [options] statement`` profiles one statement.
        """
        if cell is None:
            options, code = split_line(line)
        else:
            options, code = line, cell
        if re.search(r"(^|\s)(-h|--help)(\s|$)", options):
            print(self.tfprof.__doc__)
            return None
        args = magic_arguments.parse_argstring(self.tfprof, options)
        steps, warmup = check_steps(args.steps, args.warmup)
        if args.every is not None:
            _check_every(args, steps)
        tracer = TracerOptions(args.host_tracer_level, args.python_tracer_level,
                               args.device_tracer_level, args.delay_ms, args.sample_ms)
        if not args.out.isidentifier():
            raise ValueError(f"--out must be a Python identifier, got {args.out!r}")
        self._out_name = args.out
        source = self.shell.transform_cell(code) if code.strip() else ""
        ctx = context.CellContext(steps, warmup, args.logdir or new_logdir(),
                                  {k: getattr(tracer, k) for k in
                                   ("host_tracer_level", "python_tracer_level",
                                    "device_tracer_level", "delay_ms", "sample_ms")},
                                  backend=args.backend, source=code)
        if args.every is not None:
            return self._run_monitored(args, ctx, source)
        if args.remote:
            profile = self._run_remote(args, tracer, ctx, source)
        elif args.whole_cell or not _STEP_API.search(code):
            profile = self._run_whole(tracer, ctx, source)
        else:
            profile = self._run_steps(ctx, source)
        if profile is None:
            print("tfprof_nb: nothing was profiled: no Keras fit or tp.Capture step ran in "
                  "this cell (use --whole-cell to profile the whole cell)")
            return None
        return self._publish(args, profile)

    # ---- modes ----------------------------------------------------------------------------
    def _exec(self, source: str) -> None:
        if source:
            exec(compile(source, "<tfprof cell>", "exec"), self.shell.user_ns)

    def _run_whole(self, tracer, ctx, source):
        session = LocalSession(ctx.logdir, tracer, owner="%%tfprof", backend=ctx.backend,
                               source=ctx.source).start()
        try:
            with context.cell_context(ctx):
                self._exec(source)
        except BaseException as exc:
            profile = self._stop_and_load(session)
            _attach_partial(exc, profile)
            self._store_partial(profile)
            raise
        return self._stop_and_load(session)

    def _run_steps(self, ctx, source):
        injected: list = []
        restore = _inject_keras_profiler(injected) if re.search(r"\.fit\s*\(", source) else None
        try:
            with context.cell_context(ctx):
                self._exec(source)
        except BaseException as exc:
            for cb in injected:  # errors outside train_function: save what ran
                cb._window.finish(exc)
            profile = ctx.profiles[-1] if ctx.profiles else None
            if profile is not None:
                _attach_partial(exc, profile)
                self._store_partial(profile)
            raise
        finally:
            if restore:
                restore()
        for cb in injected:
            cb._window.finish()
        return ctx.profiles[-1] if ctx.profiles else None

    def _run_monitored(self, args, ctx, source):
        """``--every K``: the cell runs with monitors (see the magic's docstring); each is
        stopped when the cell ends and the first goes to ``--out`` (once its windows are
        analysed, unless the cell raised)."""
        from .capturing.monitor import Monitor

        ctx.every = args.every
        if not args.no_show:
            from IPython.display import display

            ctx.show_monitor = lambda mon: display(mon.show())
        restore = _inject_callback(Monitor, lambda: ctx.monitors[0] if ctx.monitors
                                   else Monitor()) if re.search(r"\.fit\s*\(", source) \
            else None
        try:
            with context.cell_context(ctx):
                self._exec(source)
        finally:
            if restore:
                restore()
            for mon in ctx.monitors:
                mon.stop()
            if ctx.monitors:
                self.shell.user_ns[args.out] = ctx.monitors[0]
        if not ctx.monitors:
            print("tfprof_nb: nothing was monitored: no Keras fit or tp.Monitor ran in this "
                  "cell")
            return None
        ctx.monitors[0].wait()
        return None

    def _run_remote(self, args, tracer, ctx, source):
        from .capturing.remote import capture_remote

        result: dict = {}

        def trace():
            try:
                result["profile"] = capture_remote(
                    args.remote, args.duration_ms, ctx.logdir,
                    host_tracer_level=tracer.host_tracer_level,
                    python_tracer_level=tracer.python_tracer_level,
                    device_tracer_level=tracer.device_tracer_level, delay_ms=tracer.delay_ms)
            except BaseException as err:
                result["error"] = err

        worker = threading.Thread(target=trace, name="tfprof-remote", daemon=True)
        worker.start()
        self._exec(source)
        worker.join()
        if "error" in result:
            raise result["error"]
        return result["profile"]

    # ---- results ------------------------------------------------------------------------
    def _stop_and_load(self, session):
        from .loading import load

        return load(session.stop())

    def _store_partial(self, profile) -> None:
        self.shell.user_ns[self._out_name] = profile

    def _publish(self, args, profile):
        self.shell.user_ns[args.out] = profile
        if not args.no_show:
            from IPython.display import display

            print(profile.summary())
            print(f"raw files: {', '.join(profile.source)}")
            print(f"stored in `{args.out}`")
            display(profile)  # the dashboard (plain text where widgets are unavailable)
        return None


def _check_every(args, steps: int) -> None:
    """``--every``'s value and the options it cannot go with, checked before the cell runs."""
    if args.every < 1:
        raise ValueError(f"--every must be a positive number of steps, got {args.every}")
    if args.every < steps:
        raise ValueError(f"--every ({args.every}) must be at least --steps ({steps}): a "
                         f"window of --steps steps is profiled every --every steps")
    conflicting = [name for name, given in (("--remote", args.remote),
                                            ("--whole-cell", args.whole_cell)) if given]
    if conflicting:
        raise ValueError(f"--every cannot be combined with {' or '.join(conflicting)}: "
                         f"--every monitors the cell's training in windows of --steps steps")


def _attach_partial(exc: BaseException, profile) -> None:
    if profile is None or getattr(exc, "tfprof_profile", None) is not None:
        return
    try:
        exc.tfprof_profile = profile
    except Exception:
        pass


def _inject_keras_profiler(injected: list):
    """Make every ``keras.Model.fit`` in the cell carry a KerasProfiler (unless it has one)."""
    from .capturing.keras_callback import KerasProfiler

    def make():
        cb = KerasProfiler()
        injected.append(cb)
        return cb

    return _inject_callback(KerasProfiler, make)


def _inject_callback(kind: type, make):
    """Make every ``keras.Model.fit`` in the cell carry a callback of ``kind`` (``make()``
    gives it) unless it has one; returns the function that undoes it."""
    import keras

    original = keras.Model.fit
    signature = inspect.signature(original)

    def fit(self, *args, **kwargs):
        bound = signature.bind_partial(self, *args, **kwargs)
        callbacks = list(bound.arguments.get("callbacks") or [])
        if not any(isinstance(c, kind) for c in callbacks):
            callbacks.append(make())
            bound.arguments["callbacks"] = callbacks
        return original(*bound.args, **bound.kwargs)

    fit.__wrapped__ = original
    keras.Model.fit = fit

    def restore():
        keras.Model.fit = original

    return restore
