"""A monitor's windows analysed in a process of their own, so that the analysis never holds
the training process's GIL.

Loading a window and reducing it to its row is mostly Python and pandas: on a thread of the
training process it holds the GIL, and a training thread coming back from each 1.8 ms JAX
step waited up to the GIL's switch interval (5 ms) for it, whatever the analysis thread's
nice value.  Here one worker process per training process (this module run by ``_BOOT``,
started with the first monitor, at the lowest priority: Linux's SCHED_IDLE, else nice 19;
shared by the monitors) loads each window's run and sends back its values and step times
(small, pickled over its pipes); the window's Profile is loaded in the training process only
when asked for (``Monitor.window``); it also builds a monitor view's chart from the step
timer's rows (``monitor_chart``: :func:`ask_chart`).  A window whose analysis fails gets its
error text; a worker that dies is started again for the next window; where no worker starts
(:func:`analyse_run` raises ``WorkerUnavailable``), the caller analyses on its thread.
"""

from __future__ import annotations

import atexit
import gc
import os
import pickle
import struct
import subprocess
import sys
import threading

__all__ = ["AnalysisFailed", "WorkerUnavailable", "analyse_run", "ask_chart", "prestart"]

_HEADER = struct.Struct("<Q")
# the worker's command: it takes the lowest priority before it imports anything (its imports
# take a core for a second or two while training warms up), then runs this module.  Linux's
# SCHED_IDLE: a core nothing else wants (a training thread that wakes takes it back at once;
# nice 19, the fallback, still takes a 1.5 % share of a busy core).  It ignores SIGINT: a
# terminal's Ctrl-C reaches every process of its group, and the training process decides
# what an interrupt ends (the worker ends when its input closes)
_BOOT = ("import os, signal\n"
         "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
         "try:\n    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
         "except (OSError, AttributeError):\n"
         "    try:\n        os.nice(19)\n    except (OSError, AttributeError):\n        pass\n"
         f"import runpy\nrunpy.run_module({__name__!r}, run_name='__main__', alter_sys=True)\n")


class WorkerUnavailable(RuntimeError):
    """The worker process could not be started or answer."""


class AnalysisFailed(Exception):
    """The window's analysis raised in the worker; the message is its ``Type: message``."""


def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        raise EOFError
    (size,) = _HEADER.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Worker:
    """The worker process and the lock that keeps one request at a time on its pipes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        paths = [p for p in sys.path if p]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
        try:
            return subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    env=env, close_fds=True)
        except OSError as err:
            raise WorkerUnavailable(str(err)) from err

    def ensure(self) -> None:
        """Start the process unless it runs (the caller holds the lock)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()

    def ask(self, request):
        with self.lock:
            self.ensure()
            try:
                _send(self.proc.stdin, request)
                return _receive(self.proc.stdout)
            except (OSError, ValueError, EOFError, pickle.UnpicklingError) as err:
                # (ValueError: its pipe closed, as this process exits)
                self.proc.kill()
                self.proc = None
                raise WorkerUnavailable(f"the analysis process ended ({err!r})") from err


_WORKER = _Worker()


@atexit.register
def _end_worker() -> None:
    """Close the worker's input (it ends) as this process exits."""
    proc = _WORKER.proc
    if proc is not None and proc.poll() is None:
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()


def prestart() -> None:
    """Start the worker process now (it imports while training warms up); never raises."""
    if not _WORKER.lock.acquire(blocking=False):
        return  # a window is being analysed: it runs
    try:
        _WORKER.ensure()
    except WorkerUnavailable:  # the first window says so, analysed here
        pass
    finally:
        _WORKER.lock.release()


def analyse_run(run_dir) -> tuple[dict, object]:
    """``(values, step_ms)`` of the window saved in ``run_dir`` (``monitor_values.
    window_values``), computed by the worker process; an analysis error is raised as
    ``AnalysisFailed`` with its text, a worker that cannot answer as ``WorkerUnavailable``."""
    kind, *answer = _WORKER.ask(str(run_dir))
    if kind == "error":
        raise AnalysisFailed(answer[0])
    return answer[0], answer[1]


def ask_chart(request: dict):
    """``monitor_chart.chart_answer(request)``, computed by the worker process (an error
    there is raised as ``AnalysisFailed``, a worker that cannot answer as
    ``WorkerUnavailable``)."""
    kind, *answer = _WORKER.ask(("chart", request))
    if kind == "error":
        raise AnalysisFailed(answer[0])
    return answer[0]


def _answer(request):
    """The answer to one request: a run directory's ``("ok", values, step_ms)``, a chart's
    ``("ok", chart)``, or ``("error", text)``."""
    from ..loading import load
    from .monitor_chart import chart_answer
    from .monitor_log import error_text
    from .monitor_values import window_values

    try:
        if isinstance(request, tuple) and request[0] == "chart":
            return ("ok", chart_answer(request[1]))
        values, step_ms = window_values(load(request, progress=False))
        return ("ok", values, step_ms)
    except Exception as err:  # the window's row (the view's error) says why
        return ("error", error_text(err))


def _warm() -> None:
    """Import what a window's analysis needs (a second of CPU) as the worker starts, while
    training warms up, instead of in the first window's analysis; an import that fails is
    said there (it raises again)."""
    try:
        from ..analysis.runtime import registry
        from ..loading import load  # noqa: F401
        from . import monitor_chart, monitor_values  # noqa: F401

        registry.analyses()
    except Exception:
        pass


def _serve(stdin, stdout) -> None:
    """The worker's loop: a request in, its answer out (:func:`_answer`), until its input
    closes.  After the first answer every object so far (modules, caches) is frozen out of
    the garbage collector's sight (``gc.freeze``): its collections during a window's
    analysis then scan that window's objects only (3 -> 0.7 ms of CPU a window)."""
    frozen = False
    while True:
        try:
            request = _receive(stdin)
        except EOFError:
            return
        _send(stdout, _answer(request))
        if not frozen:
            gc.collect()
            gc.freeze()
            frozen = True


if __name__ == "__main__":  # started with _BOOT
    answers = os.fdopen(os.dup(1), "wb")  # the pipe; whatever else prints goes to stderr
    os.dup2(2, 1)
    _warm()
    _serve(sys.stdin.buffer, answers)
