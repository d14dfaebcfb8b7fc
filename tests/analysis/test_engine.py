"""The per-host engine in this process: partial results per host, hosts that cannot be read,
a failing host, and the memory check before loading."""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime import registry
from tfprof_nb.analysis.runtime.decoding import decode as decoding
from tfprof_nb.analysis.runtime.scheduling import local_hosts, priority, ready_queue
from tfprof_nb.errors import HostAnalysisError


@pytest.fixture()
def pod_dir(tmp_path, cpu_file, gpu_fixture_file):
    """Three hosts: two copies of a CPU capture and the GPU fixture."""
    shutil.copy(cpu_file, tmp_path / "worker-0.xplane.pb")
    shutil.copy(cpu_file, tmp_path / "worker-1.xplane.pb")
    shutil.copy(gpu_fixture_file, tmp_path / "worker-2.xplane.pb")
    return tmp_path


def test_tables_are_the_hosts_partials_combined(pod_dir, cpu_file):
    prof = tp.load(pod_dir)
    single = tp.load(cpu_file)
    steps = prof.steps
    assert set(steps.host) == {"worker-0", "worker-1", "worker-2"}
    one = steps[steps.host == "worker-0"].drop(columns="host")
    pd.testing.assert_frame_equal(one, single.steps.drop(columns="host"))
    parts = prof._results.partials("steps")
    assert list(parts) == prof.hosts
    assert sum(len(p) for p in parts.values()) == len(steps)
    # host-side op stats add up over the two identical CPU hosts
    ops = prof.op_stats_table(include_idle=False)
    ours = ops[ops.host_or_device == "Host"].set_index("operation")
    theirs = single.op_stats_table(include_idle=False).set_index("operation")
    cpu_only = theirs[theirs.host_or_device == "Host"].index.intersection(ours.index)
    gpu_host_ops = set(tp.load(pod_dir / "worker-2.xplane.pb").op_stats.operation)
    solely_cpu = [op for op in cpu_only if op not in gpu_host_ops]
    assert solely_cpu
    np.testing.assert_allclose(ours.loc[solely_cpu, "occurrences"],
                               2 * theirs.loc[solely_cpu, "occurrences"])
    # memory timeline event ids point at the right global rows
    assert prof.memory_timeline.event_id.isin(prof.events.index).all()


def test_every_step_is_registered_and_small(cpu_file):
    prof = tp.load(cpu_file)
    hd = prof._results.hosts.data[prof.hosts[0]]
    host_steps = [n for n in registry.order(registry.analyses()) if registry.get(n).host]
    for step in host_steps:
        needs = {n: registry.run_host_step(hd, n, 0) for n in registry.get(step).host_needs}
        registry.run_host_step(hd, step, 0, **needs)
    assert {"info", "steps", "host_ops", "device_ops", "kernel_stats", "memory",
            "tf_data", "xla_ops", "framework"} <= set(host_steps)
    with pytest.raises(ValueError, match="unknown analysis"):
        registry.run_host_step(hd, "no such step")
    # derived per-event arrays do not outlive a step (the line keys are kept for the batch)
    assert all(not isinstance(v, np.ndarray) or len(v) < len(hd) or key == "line"
               for key, v in hd._cache.items())
    prof.analyse(release=False)
    assert "parent" not in hd._cache


def test_corrupt_host_is_left_out_and_named(pod_dir):
    (pod_dir / "worker-1.xplane.pb").write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.warns(tp.LoadWarning, match="worker-1"):
        prof = tp.load(pod_dir)
    assert prof.hosts == ["worker-0", "worker-2"]
    assert list(prof.load_errors) == ["worker-1"]
    assert "worker-1.xplane.pb" in prof.load_errors["worker-1"]
    assert "worker-1" in prof.summary() and "not loaded" in prof.summary()
    assert set(prof.steps.host) == {"worker-0", "worker-2"}
    with pytest.raises(tp.ProfileFormatError, match="worker-1.xplane.pb"):
        tp.load(pod_dir, on_error="raise")


def test_no_readable_host_is_an_error(tmp_path):
    (tmp_path / "a.xplane.pb").write_bytes(b"%PDF-1.4 not a profile")
    with pytest.raises(tp.ProfileFormatError, match="no host could be read"):
        tp.load(tmp_path)


def test_a_failing_host_is_named_and_the_others_are_kept(pod_dir):
    prof = tp.load(pod_dir, on_error="raise")
    prof._results.partials("info")
    # the decoded columns of one host are damaged after loading (a bug in our code would look
    # the same): its analysis fails, the others still have their results
    hd = prof._results.hosts.data["worker-1"]
    hd.space.events.line = hd.space.events.line[:10]
    with pytest.raises(HostAnalysisError) as info:
        prof.steps
    assert info.value.host == "worker-1" and info.value.step == "steps"
    assert "worker-1" in str(info.value)
    kept = prof._results.hosts._partials
    assert ("steps", "worker-0") in kept and ("steps", "worker-2") in kept


def test_too_big_for_this_machine_fails_before_decoding(pod_dir, monkeypatch):
    monkeypatch.setattr(decoding, "available_memory", lambda: 4096)
    with pytest.raises(MemoryError, match="client=") as info:
        tp.load(pod_dir)
    assert "3 host files" in str(info.value)


def test_meanwhile_runs_on_the_calling_thread_while_the_workers_work():
    """run_in_threads' ``meanwhile`` runs once, on the caller, while the workers run (a worker
    waits for it to start); one that raises stops the workers and raises."""
    import threading

    from tfprof_nb._interrupt import run_in_threads

    started, seen = threading.Event(), []

    def work(x):
        assert started.wait(5)  # (would time out if meanwhile ran only after the workers)
        return x * 2

    def meanwhile():
        seen.append(threading.current_thread() is threading.main_thread())
        started.set()

    assert run_in_threads(work, [1, 2, 3], 2, meanwhile=meanwhile) == [2, 4, 6]
    assert seen == [True]

    gate = threading.Event()

    def slow(x):
        gate.wait(5)
        return x

    def fails():
        raise ValueError("meanwhile failed")

    with pytest.raises(ValueError, match="meanwhile failed"):
        run_in_threads(slow, [1, 2], 2, meanwhile=fails, grace=0.1)
    gate.set()


def test_a_load_imports_the_analyses_while_it_decodes(cpu_file):
    """In a fresh process, tp.load hands the hosts to the decoding threads before pandas and
    the analyses are imported, and imports them meanwhile (run_in_threads' ``meanwhile``):
    when the decode starts, pandas is not imported; when the load returns, it is and the
    profile works."""
    import subprocess
    import sys

    code = (
        "import sys, tfprof_nb as tp\n"
        "from tfprof_nb.analysis.runtime.decoding import decode as decoding\n"
        "seen = []\n"
        "real = decoding.run_in_threads\n"
        "def spy(fn, items, *a, meanwhile=None, **k):\n"
        "    seen.append(('pandas' in sys.modules, meanwhile is not None))\n"
        "    return real(fn, items, *a, meanwhile=meanwhile, **k)\n"
        "decoding.run_in_threads = spy\n"
        "prof = tp.load(sys.argv[1])\n"
        "print(seen == [(False, True)], 'pandas' in sys.modules, len(prof.steps) > 0)\n")
    out = subprocess.run([sys.executable, "-c", code, str(cpu_file)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True", "True"]


def _take_soon(queue, seconds: float = 5.0):
    """queue.take() on a thread: (thread, box) where box gets the result."""
    import threading

    box: list = []
    thread = threading.Thread(target=lambda: box.append(queue.take()), daemon=True)
    thread.start()
    thread.join(seconds)
    return thread, box


def test_ready_queue_hands_out_ready_steps_costliest_chain_first():
    import threading

    # gpu_time needs steps (which needs tpu) and launch_links (done before); host_ops needs
    # nothing
    todo = [("host_ops", "h"), ("gpu_time", "h"), ("steps", "h"), ("tpu", "h")]
    partials: dict = {("launch_links", "h"): "links"}
    queue = ready_queue.ReadyQueue(todo, partials, threading.Lock())
    assert queue.take() == ("tpu", "h")  # the head of the costliest chain
    assert queue.take() == ("host_ops", "h")  # steps waits on tpu: ready work goes first
    waiting, box = _take_soon(queue, 0.3)  # only steps and gpu_time are left: both wait
    assert waiting.is_alive() and box == []
    queue.finish(("tpu", "h"), value="tpu partial")
    waiting.join(5)
    assert box == [("steps", "h")] and partials[("tpu", "h")] == "tpu partial"
    queue.finish(("host_ops", "h"), value=1)
    queue.finish(("steps", "h"), value=2)
    assert queue.take() == ("gpu_time", "h")
    queue.finish(("gpu_time", "h"), value=3)
    assert queue.take() is None and queue.finished() == 4 and queue.errors(todo) == {}


def test_ready_queue_ranks_chains_by_host_cost():
    """Steps that others wait on go first only as far as their chain costs more: the GPU
    launch links (needed by gpu_time) before XLA ops (needed by kernel stats) before host
    ops, and the cheap info step last."""
    import threading

    todo = [("info", "h"), ("host_ops", "h"), ("xla_ops", "h"), ("launch_links", "h"),
            ("gpu_time", "h"), ("kernel_stats", "h")]
    queue = ready_queue.ReadyQueue(todo, {("tpu", "h"): {}, ("steps", "h"): None},
                               threading.Lock())
    assert [queue.take() for _ in range(4)] == [("launch_links", "h"), ("xla_ops", "h"),
                                                ("host_ops", "h"), ("info", "h")]
    queue.finish(("xla_ops", "h"))
    queue.finish(("launch_links", "h"))
    assert [queue.take() for _ in range(2)] == [("gpu_time", "h"), ("kernel_stats", "h")]
    steps = {s for s, _ in todo}
    cost = {s: registry.get(s).host_cost for s in steps}
    assert ready_queue.chain_cost("launch_links", steps) == cost["launch_links"] + cost["gpu_time"]
    assert ready_queue.chain_cost("info", steps) == cost["info"]


def test_ready_queue_marks_the_costliest_chain_as_critical():
    """The critical path: the pair heading the costliest chain, then at each step its
    costliest dependent on the same host; nothing off it, nothing of another host."""
    import threading

    todo = [(s, h) for h in ("h", "g") for s in ("host_ops", "tf_data", "launch_links",
                                                  "gpu_time", "steps", "tpu", "info")]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock())
    head = queue.take()
    chain = [p for p in todo if queue.critical(p)]
    assert head == ("tpu", "h") and sorted(chain) == [("gpu_time", "h"), ("steps", "h"),
                                                      ("tpu", "h")]
    for step, _ in chain:  # each one needs the one before
        if step != head[0]:
            assert any(s in registry.get(step).host_needs for s, _ in chain if s != step)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice: Linux")
def test_yielding_lowers_only_this_thread_and_the_threads_it_starts():
    import threading

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def child():
        seen["child"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def worker():
        priority.yield_to_critical_path()
        priority.yield_to_critical_path()  # (again: no change)
        seen["worker"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        t = threading.Thread(target=child)
        t.start()
        t.join()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == {"worker": max(base, priority.YIELDING_NICE),
                    "child": max(base, priority.YIELDING_NICE)}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice: Linux")
def test_one_hosts_steps_off_the_critical_path_yield_their_core(cpu_file, monkeypatch):
    """With one host's steps side by side, the critical path's steps run at the process'
    priority and the others at a lower one; the results are those of a serial run."""
    import threading

    monkeypatch.setattr(local_hosts.LocalHosts, "_steps_in_parallel", lambda self: True)
    monkeypatch.setattr(local_hosts.os, "cpu_count", lambda: 2)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    nice: dict = {}
    run = registry.run_host_step

    def recording(hd, name, *args, **kwargs):
        nice[name] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return run(hd, name, *args, **kwargs)

    monkeypatch.setattr(local_hosts.registry, "run_host_step", recording)
    prof = tp.load(cpu_file).analyse(release=False)
    assert nice["steps"] == base and nice["info"] == base
    assert nice["host_ops"] == nice["tf_data"] == max(base, priority.YIELDING_NICE)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
    monkeypatch.setattr(local_hosts.registry, "run_host_step", run)
    monkeypatch.setattr(local_hosts.LocalHosts, "_steps_in_parallel", lambda self: False)
    pd.testing.assert_frame_equal(prof.steps, tp.load(cpu_file).analyse().steps)


def test_ready_queue_fails_the_steps_after_a_failed_need_without_running_them():
    import threading

    todo = [("gpu_time", "h"), ("steps", "h"), ("tpu", "h"), ("tpu", "g")]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock())
    assert queue.take() == ("tpu", "h") and queue.take() == ("tpu", "g")
    queue.finish(("tpu", "h"), error=ValueError("broken plane"))
    queue.finish(("tpu", "g"), value={})
    assert queue.take() is None  # steps and gpu_time of h cannot run
    errors = queue.errors(todo)
    assert list(errors) == [("gpu_time", "h"), ("steps", "h"), ("tpu", "h")]
    assert "'tpu' failed" in str(errors[("steps", "h")])
    assert "'steps' failed" in str(errors[("gpu_time", "h")])


def test_ready_queue_stops_handing_out_work_once_stopped():
    import threading

    todo = [("host_ops", "h"), ("tf_data", "h")]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock())
    assert queue.take() == ("host_ops", "h")
    queue.stop()  # a worker failed: the others stop too
    assert queue.take() is None


def test_ready_queue_starts_no_step_while_running_ones_and_helpers_take_every_core():
    """A step that splits its work onto a helper thread holds two cores: on two cores the
    next step waits for the helper to end (or a step to finish), and then starts."""
    import threading

    from tfprof_nb._interrupt import helper_thread, helper_threads

    todo = [("host_ops", h) for h in "abc"]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=2)
    assert queue.take() == ("host_ops", "a")
    with helper_thread():
        assert helper_threads() == 1
        waiting, box = _take_soon(queue, 0.3)
        assert waiting.is_alive() and box == []  # one step and its helper: both cores
    waiting.join(5)
    assert box == [("host_ops", "b")] and helper_threads() == 0
    waiting, box = _take_soon(queue, 0.3)  # two steps running: both cores
    assert waiting.is_alive() and box == []
    queue.finish(("host_ops", "a"), value=1)
    waiting.join(5)
    assert box == [("host_ops", "c")]
    # without a number of cores, ready steps are handed out whatever runs
    free = ready_queue.ReadyQueue(todo, {}, threading.Lock())
    with helper_thread():
        assert [free.take() for _ in todo] == todo


def test_ready_queue_fills_the_cores_the_critical_path_leaves_with_steps_off_it():
    """With ``fill`` (one host's steps side by side), steps off the critical path start even
    while the critical path and its helper take every core (they run at a lower priority),
    at most cores - 1 of them and never more than two; the critical path's next step never
    waits for them."""
    import threading

    from tfprof_nb._interrupt import helper_thread

    todo = [("host_ops", "h"), ("tf_data", "h"), ("framework", "h"), ("tpu", "h"),
            ("steps", "h")]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=3, fill=True)
    assert queue.take() == ("tpu", "h") and queue.critical(("tpu", "h"))
    with helper_thread(), helper_thread():  # the critical path holds all three cores
        fillers = [queue.take(), queue.take()]
        assert fillers == [("host_ops", "h"), ("tf_data", "h")]
        assert not any(queue.critical(p) for p in fillers)
        waiting, box = _take_soon(queue, 0.3)  # two fillers (three cores) already
        assert waiting.is_alive() and box == []
    queue.finish(("tpu", "h"), value={})
    waiting.join(5)  # steps (critical) starts beside the two fillers at once
    assert box == [("steps", "h")]
    queue.finish(fillers[0], value=1)
    assert queue.take() == ("framework", "h")
    two = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=2, fill=True)
    assert two.take() == ("tpu", "h") and two.take() == ("host_ops", "h")
    waiting, box = _take_soon(two, 0.3)  # one filler on two cores
    assert waiting.is_alive() and box == []
    two.finish(("host_ops", "h"), value=1)
    waiting.join(5)
    assert box == [("tf_data", "h")]
    # many cores: still at most _FILL_MAX_STEPS steps off the critical path at once
    many = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=16, fill=True)
    assert ready_queue.FILL_MAX_STEPS == 2
    assert many.take() == ("tpu", "h")
    assert [many.take(), many.take()] == [("host_ops", "h"), ("tf_data", "h")]
    waiting, box = _take_soon(many, 0.3)  # framework waits though 13 cores are free
    assert waiting.is_alive() and box == []
    many.finish(("tpu", "h"), value={})
    waiting.join(5)
    assert box == [("steps", "h")]  # the critical path never waits for them
    many.finish(("tf_data", "h"), value=1)
    assert many.take() == ("framework", "h")
    # without fill, the same batch starts nothing while the cores are taken
    plain = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=2)
    assert plain.take() == ("tpu", "h")
    with helper_thread():
        waiting, box = _take_soon(plain, 0.3)
        assert waiting.is_alive() and box == []
    waiting.join(5)
    assert box == [("host_ops", "h")]


def test_ready_queue_gives_every_core_to_steps_off_the_critical_path_once_it_is_done():
    """On two cores one step off the critical path runs beside it; once the critical path's
    steps are all done, two run at once (never more than two): a 1 GB host's overview ran
    its last small steps one at a time on one core while the other idled."""
    import threading

    todo = [("host_ops", "h"), ("tf_data", "h"), ("framework", "h"), ("tpu", "h"),
            ("steps", "h")]
    two = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=2, fill=True)
    assert two.take() == ("tpu", "h") and two.take() == ("host_ops", "h")
    two.finish(("tpu", "h"), value={})
    assert two.take() == ("steps", "h")  # (critical: starts at once)
    waiting, box = _take_soon(two, 0.3)  # the critical path runs: one filler on two cores
    assert waiting.is_alive() and box == []
    two.finish(("steps", "h"), value=None)  # the critical path is done
    waiting.join(5)
    assert box == [("tf_data", "h")]  # beside host_ops, which still runs
    waiting, box = _take_soon(two, 0.3)  # two at once, not three
    assert waiting.is_alive() and box == []
    two.finish(("host_ops", "h"), value=1)
    waiting.join(5)
    assert box == [("framework", "h")]


def test_analyse_combines_results_while_host_steps_they_do_not_need_run(cpu_file,
                                                                         monkeypatch):
    """analyse() combines a result as soon as the host steps it needs are done: here
    tf_data's host step waits for host_ops' combine, which a combine after every host step
    would never reach in time; the results equal a sequential run's."""
    import dataclasses
    import threading

    monkeypatch.setattr(local_hosts.LocalHosts, "_steps_in_parallel", lambda self: True)
    combined = threading.Event()
    unit = registry.get("host_ops")

    def combine(parts, **needs):
        combined.set()
        return unit.combine(parts, **needs)

    monkeypatch.setitem(registry.analyses(), "host_ops", dataclasses.replace(unit,
                                                                            combine=combine))
    run = registry.run_host_step
    waited = []

    def tf_data_waits(hd, name, *args, **kwargs):
        if name == "tf_data":
            waited.append(combined.wait(30))
        return run(hd, name, *args, **kwargs)

    monkeypatch.setattr(local_hosts.registry, "run_host_step", tf_data_waits)
    overlapped = tp.load(cpu_file).analyse(release=False)
    assert waited == [True]
    monkeypatch.setattr(local_hosts.registry, "run_host_step", run)
    serial = tp.load(cpu_file)
    for name in ("host_ops", "tf_data", "steps", "input_pipeline"):
        a, b = overlapped.result(name), serial.result(name)
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(overlapped.op_stats, serial.op_stats)


def test_steps_run_beside_the_steps_they_do_not_need(cpu_file, monkeypatch):
    """On a big host (forced here) a step waiting on a short need does not hold up the
    others: every step's result equals a run on one thread."""
    import threading

    monkeypatch.setattr(local_hosts.LocalHosts, "_steps_in_parallel", lambda self: True)
    seen: dict = {}
    run = registry.run_host_step

    def recording(hd, name, *args, **kwargs):
        seen[name] = threading.current_thread()  # (a thread's ident may be reused later)
        return run(hd, name, *args, **kwargs)

    monkeypatch.setattr(local_hosts.registry, "run_host_step", recording)
    parallel = tp.load(cpu_file).analyse(release=False)
    # info runs first, alone (the time shifts need it); both workers ran the other steps
    assert len({t for step, t in seen.items() if step != "info"}) == 2
    monkeypatch.setattr(local_hosts.LocalHosts, "_steps_in_parallel", lambda self: False)
    monkeypatch.setattr(local_hosts.registry, "run_host_step", run)
    serial = tp.load(cpu_file).analyse(release=False)
    pd.testing.assert_frame_equal(parallel.steps, serial.steps)
    pd.testing.assert_frame_equal(parallel.op_stats, serial.op_stats)


def test_ready_queue_is_woken_by_what_lets_a_step_start(monkeypatch):
    """A waiting take() is woken by what lets a pair start (a helper thread's work ending, a
    pair finishing, the batch stopping), not by looking again: with the wait's timeout (the
    cancel token's check) made an hour, each one wakes it at once."""
    import threading

    from tfprof_nb._interrupt import helper_thread

    monkeypatch.setattr(ready_queue, "_CANCEL_CHECK", 3600.0)
    todo = [("host_ops", h) for h in "abc"]
    queue = ready_queue.ReadyQueue(todo, {}, threading.Lock(), cores=2)
    assert queue.take() == ("host_ops", "a")
    with helper_thread():
        waiting, box = _take_soon(queue, 0.2)
        assert waiting.is_alive() and box == []
    waiting.join(2)
    assert box == [("host_ops", "b")]
    waiting, box = _take_soon(queue, 0.2)
    assert waiting.is_alive() and box == []
    queue.finish(("host_ops", "a"), value=1)
    waiting.join(2)
    assert box == [("host_ops", "c")]
    chain = ready_queue.ReadyQueue([("steps", "h"), ("tpu", "h")], {}, threading.Lock())
    assert chain.take() == ("tpu", "h")
    waiting, box = _take_soon(chain, 0.2)  # steps waits on tpu
    assert waiting.is_alive() and box == []
    chain.stop()
    waiting.join(2)
    assert box == [None]


def test_results_run_any_backend_of_the_hosts_protocol(cpu_file):
    """Results asks a backend only what the Hosts protocol declares: a toy backend running
    each batch on this thread gives LocalHosts' tables; every batch's shifts are {host: ps}
    (empty while no step left to run is shifted) and ``meanwhile`` combines as steps end."""
    from tfprof_nb.analysis.runtime.hostdata.host import HostData
    from tfprof_nb.analysis.runtime.scheduling.hosts import Hosts
    from tfprof_nb.analysis.runtime.results import Results
    from tfprof_nb.xspace import read_xspace

    class Serial(Hosts):
        def __init__(self, spaces):
            super().__init__()
            self.data = {n: HostData(n, s) for n, s in spaces.items()}
            self.batches: list = []

        names = property(lambda self: list(self.data))

        def space(self, host):
            return self.data[host].space

        def release(self):
            pass

        def _run_pairs(self, todo, shifts, meanwhile):
            self.batches.append((todo, dict(shifts)))
            for step, host in todo:
                needs = {n: self._partials[(n, host)] for n in registry.get(step).host_needs}
                self._partials[(step, host)] = registry.run_host_step(
                    self.data[host], step, shifts.get(host, 0), **needs)
                if meanwhile is not None:
                    meanwhile()

    spaces = {"a": read_xspace(cpu_file), "b": read_xspace(cpu_file)}
    toy, local = Results(Serial(spaces)), Results(local_hosts.LocalHosts(spaces))
    toy.compute(["op_stats", "steps"])
    for name in ("steps", "op_stats", "shifts"):
        _same = pd.testing.assert_frame_equal if name != "shifts" else np.testing.assert_equal
        _same(toy[name], local[name])
    (first, unshifted), *rest = toy.hosts.batches
    assert {s for s, _ in first} == {"info"} and unshifted == {}
    assert rest and all(set(shifts) == {"a", "b"} for _, shifts in rest)
    assert toy.hosts.partials("steps").keys() == {"a", "b"} and not toy.hosts.remote


def test_a_memory_error_in_the_last_step_stops_the_batch(monkeypatch):
    """A host step that runs out of memory ends the batch with its MemoryError, even when it
    is the last step pending (the queue was never told it ended, and the caller waited on
    forever)."""
    import threading
    from pathlib import Path

    from tfprof_nb.analysis.runtime.results import Results
    from tfprof_nb.xspace import read_xspace

    space = read_xspace(Path(__file__).resolve().parents[1] / "data" /
                        "mi300x_jax08_gemm.xplane.pb")
    res = Results(local_hosts.LocalHosts({"a": space}))
    res["info"], res["shifts"]
    real = registry.run_host_step

    def step(hd, name, shift, **needs):
        if name == "tf_kernels":
            raise MemoryError("simulated")
        return real(hd, name, shift, **needs)

    monkeypatch.setattr(local_hosts.registry, "run_host_step", step)
    box = []

    def go():
        try:
            res.compute(["op_stats", "steps", "kernel_stats"])
            box.append("returned")
        except BaseException as exc:  # noqa: BLE001 - what the caller sees
            box.append(exc)

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the batch never ended"
    assert isinstance(box[0], MemoryError)
