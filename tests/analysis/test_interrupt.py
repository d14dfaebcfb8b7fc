"""Interrupting a long load or analysis: Ctrl-C (SIGINT) or Jupyter's stop button stops the call
within a second, the process stays usable (threads stopped, no cancel left on this thread, another
load and analysis work), and a notebook shows the work's progress meanwhile.

The profile is a real CPU capture composed to BIG_BYTES (benchmarks/compose_profile.py), once
per session, so that loading and analysing it take a few seconds on the test machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import xplane_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from compose_profile import compose_long_host  # noqa: E402

BIG_BYTES = 600_000_000  # loads in 0.7-2 s: a 150 MB file loaded in 0.2 s, before the interrupt
ROOT = Path(__file__).resolve().parents[2]

# The child: waits for "go" lines on stdin between stages, reports on stdout as JSON lines.
_CHILD = r"""
import json, signal, sys, threading, time
import tfprof_nb as tp
from tfprof_nb import _native, _progress

_progress.DELAY_S = 0  # show progress from the start (it waits a second otherwise)
got = []

def on_sigint(sig, frame):
    got.append((time.perf_counter(), time.process_time()))
    raise KeyboardInterrupt

signal.signal(signal.SIGINT, on_sigint)
big, small = sys.argv[1], sys.argv[2]
tp.load(small, progress=False).analyse()  # modules imported (an interrupted import breaks)
base_threads = threading.active_count()

def say(**kw):
    print(json.dumps(kw), flush=True)

def interrupted(call):
    got.clear()
    try:
        call()
    except KeyboardInterrupt:
        return {"interrupted": True, "stop_s": time.perf_counter() - got[-1][0],
                "stop_cpu_s": time.process_time() - got[-1][1]}
    return {"interrupted": False}

say(stage="loading")
out = interrupted(lambda: tp.load(big, progress=True))
say(stage="load", **out)
prof = tp.load(big, progress=False)
say(stage="analysing")
out = interrupted(prof.analyse)
say(stage="analyse", **out)
for _ in range(40):  # the workers are gone
    if threading.active_count() <= base_threads:
        break
    time.sleep(0.05)
threads = threading.active_count() - base_threads
cancel_was_set = _native.cancel_requested() or _native.lib().tfp_cancel_probe(4) > 0
again = tp.load(small, progress=False).analyse()
# the interrupted profile computes what it lacks when asked, as a fresh one does
same = prof.steps.equals(tp.Profile(prof._results.hosts).steps)
say(stage="after", extra_threads=threads, cancel_was_set=cancel_was_set,
    steps=len(again.steps), same_steps=bool(same), big_steps=len(prof.steps))
"""


# Two threads: B loads and analyses the big profile while the main thread's load of it is
# stopped by SIGINT; then a kernel called directly, B's result, and an uninterrupted run.
_TWO_THREADS = r"""
import json, os, signal, sys, threading, time
# Python's own Ctrl-C handler, as a user's Python has: a child started by a process that
# ignores SIGINT inherits it ignored and Python then installs none (the fresh-clone suite's
# run once: the SIGINT did nothing, the load ended normally)
signal.signal(signal.SIGINT, signal.default_int_handler)
import tfprof_nb as tp
from tfprof_nb.analysis.runtime.decoding import decode as decoding
from tfprof_nb.analysis.runtime.scheduling import local_hosts as engine

big, small = sys.argv[1], sys.argv[2]
small_prof = tp.load(small, progress=False)
small_prof.analyse()
stat = small_prof.stat("step_num")
runs = {}  # thread name: the runs (run_in_threads calls) it started
real = engine.run_in_threads
changed = threading.Condition()

sent = threading.Event()  # the SIGINT was sent

# The main thread's work, and B's analysis, each item kept from ending before the SIGINT is
# sent: on a loaded machine either could end first (the signal meeting the next statement, or
# B done before the main thread's load is interrupted).
def held_till_sent(fn):
    def work(x):
        out = fn(x)
        sent.wait(300)
        return out
    return work

def spy(fn, *args, **kwargs):
    me = threading.current_thread().name
    with changed:
        runs.setdefault(me, []).append(time.perf_counter())
        changed.notify_all()
        held = me == "MainThread" or (me == "B" and len(runs[me]) >= 2)
    return real(held_till_sent(fn) if held else fn, *args, **kwargs)

engine.run_in_threads = decoding.run_in_threads = spy

def started(name, count):
    with changed:
        assert changed.wait_for(lambda: len(runs.get(name, ())) >= count, timeout=300)

box = {}

def other():
    try:
        prof = tp.load(big, progress=False)
        box["steps"] = prof.steps
        box["ops"] = prof.op_stats
    except BaseException as exc:
        box["error"] = repr(exc)

b = threading.Thread(target=other, name="B")
b.start()
started("B", 2)  # B's load done, its analysis running

def ctrl_c():
    started("MainThread", 1)  # the main thread's load running
    time.sleep(0.3)  # well inside its work
    box["b_running"] = b.is_alive()
    os.kill(os.getpid(), signal.SIGINT)
    sent.set()

threading.Thread(target=ctrl_c).start()
try:
    tp.load(big, progress=False)
    interrupted = False
except KeyboardInterrupt:
    interrupted = True
direct = small_prof.stat("step_num").equals(stat)  # a kernel called directly, at once
b.join()
ref = tp.load(big, progress=False)
print(json.dumps({"interrupted": interrupted, "direct": bool(direct),
                  "b_running": box["b_running"], "b_error": box.get("error"),
                  "b_steps": len(box.get("steps", ())),
                  "b_same": "error" not in box and bool(box["steps"].equals(ref.steps))
                  and bool(box["ops"].equals(ref.op_stats))}), flush=True)
"""


def test_sigint_stops_only_the_load_it_interrupted(big_profile, cpu_file):
    """Ctrl-C on one thread's load while another thread loads and analyses: the interrupted
    load raises KeyboardInterrupt, the other finishes with the results an uninterrupted run
    gives, and a kernel called directly right after the interrupt runs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _TWO_THREADS, str(big_profile), str(cpu_file)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["interrupted"] and report["b_running"], report
    assert report["b_error"] is None, report
    assert report["direct"], report
    assert report["b_steps"] > 0 and report["b_same"], report


@pytest.fixture(scope="module")
def big_profile(cpu_logdir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("big") / "plugins" / "profile" / "run1" / "vm.xplane.pb"
    compose_long_host(xplane_files(cpu_logdir)[0], out, BIG_BYTES)
    return out


def _wait_for(proc, stage: str, timeout: float = 300) -> dict:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        line = proc.stdout.readline()
        if not line:
            break
        report = json.loads(line)
        if report["stage"] == stage:
            return report
    raise AssertionError(f"child never reached {stage!r}: {proc.stderr.read()[-3000:]}")


def test_sigint_stops_load_and_analysis_within_a_second(big_profile, cpu_file):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(big_profile), str(cpu_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        for stage in ("load", "analyse"):
            _wait_for(proc, "loading" if stage == "load" else "analysing")
            time.sleep(0.3)  # well inside the work
            proc.send_signal(signal.SIGINT)
            report = _wait_for(proc, stage)
            assert report["interrupted"], f"{stage} ended before the interrupt"
            # within a second; on a machine whose cores are all taken the stop may wait for
            # a core past that (seen: 1.07 s beside three CPU-bound processes), so there the
            # process's CPU time from the Ctrl-C to the caller is what shows it stopped at once
            assert report["stop_s"] < 1.0 or report["stop_s"] < 3.0 \
                and report["stop_cpu_s"] < 0.5, report
        after = _wait_for(proc, "after")
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
    assert after["extra_threads"] == 0
    assert after["cancel_was_set"] is False
    assert after["steps"] > 0  # the same process loads and analyses again
    assert after["same_steps"] and after["big_steps"] > 0
    err = proc.stderr.read()
    assert "[tfprof_nb] loading" in err  # progress=True outside a notebook: a text line


def test_jupyter_stop_button_and_progress_bar(big_profile, cpu_file):
    """In a real kernel: the load shows a progress bar (an output updated in place) and the stop
    button (an interrupt request) ends the cell with KeyboardInterrupt within a second; the
    next cell runs."""
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3",
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        kc.execute_interactive("import tfprof_nb as tp, tfprof_nb._progress as p; "
                               f"tp.load({str(cpu_file)!r}).analyse(); p.DELAY_S = 0",
                               timeout=300)
        # the cell notes when the interrupt reaches it (ipykernel sets its own handler before
        # each cell, so this one is set inside it): the stop is timed in the kernel, where a
        # loaded machine does not add the messages' way back to this process
        msg_id = kc.execute(
            "import signal, time\n_got = []\n"
            "def _note(sig, frame):\n    _got.append(time.perf_counter())\n"
            "    raise KeyboardInterrupt\n"
            "signal.signal(signal.SIGINT, _note)\n"
            "try:\n"
            f"    prof = tp.load({str(big_profile)!r}).analyse()\n"
            "finally:\n"
            "    _stop_s = time.perf_counter() - _got[-1] if _got else None\n"
            "    signal.signal(signal.SIGINT, signal.default_int_handler)")
        bar = interrupted_at = error = None
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            msg = kc.get_iopub_msg(timeout=60)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "display_data" and content["transient"].get("display_id") and \
                    content["data"].get("text/plain", "").startswith("[tfprof_nb]"):
                bar = content  # a progress line, updated in place through its display id
            if bar is not None and interrupted_at is None:
                time.sleep(0.3)  # the stop button, well inside the work
                km.interrupt_kernel()
                interrupted_at = time.monotonic()
            if kind == "error" and error is None:
                error = (content["ename"], time.monotonic() - interrupted_at)
            if kind == "status" and content["execution_state"] == "idle":
                break
        assert bar is not None, "no progress bar was shown"
        assert error is not None, "the cell ended without being interrupted"
        assert error[0] == "KeyboardInterrupt" and error[1] < 30, error
        out = []
        reply = kc.execute_interactive(
            f"print(_stop_s, len(tp.load({str(cpu_file)!r}, progress=False).steps))",
            timeout=300, output_hook=lambda m: out.append(m["content"].get("text", "")))
        assert reply["content"]["status"] == "ok"
        stop_s, steps = "".join(out).split()
        assert float(stop_s) < 1.0 and int(steps) > 0, (stop_s, steps)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
