"""Steps of Keras 2.x captures against xprof's host step markers, on profiles written here.

A Keras 2 ``fit`` on a laptop CPU records the training function's call as one host event,
``train_function``, a root (``_r=1``) and a producer (``_pt``/``_p``) whose consumer is the
executor that runs the ops on a worker thread; it has no ``step_num``.  Older TensorFlows
group the events while capturing: every event then carries a ``group_id`` and each root but
the implicit ones (``FunctionRun``, ``SessionRun``, ...) a ``step_name``.  xprof's rules
(``xplane_to_step_events.cc``, tsl's ``group_events.cc``):

* a file whose events carry no group ids is grouped: the events with an ``_r`` stat are
  roots (``TraceContext`` without one at level 1), deepest level first, each starting a group
  unless an ancestor is a root of its level; a root that is not implicit gets a
  ``step_name``;
* in a group, a host event named ``train*``/``test*``/``TraceContext*`` without ``/`` is an
  explicit step marker, any other event with a ``step_name`` an implicit one; a group with a
  marker and host compute is a step.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import tfprof_nb as tp

from .oracle import run_tool, step_table
from .test_steps_eager import _assert_equal_steps

US = 1_000_000  # ps


class _Host:
    """A ``/host:CPU`` plane written event by event (times in us, stats by name)."""

    def __init__(self, space):
        self.plane = space.planes.add(name="/host:CPU", id=0)
        self.stats, self.names, self.lines = {}, {}, {}

    def _stat(self, name: str) -> int:
        if name not in self.stats:
            self.stats[name] = len(self.stats) + 1
            meta = self.plane.stat_metadata[self.stats[name]]
            meta.id, meta.name = self.stats[name], name
        return self.stats[name]

    def event(self, line: str, name: str, begin_us: float, dur_us: float, **stats):
        if line not in self.lines:
            self.lines[line] = self.plane.lines.add(id=len(self.lines) + 1, name=line,
                                                    timestamp_ns=5_000_000)
        if name not in self.names:
            self.names[name] = len(self.names) + 1
            meta = self.plane.event_metadata[self.names[name]]
            meta.id, meta.name = self.names[name], name
        ev = self.lines[line].events.add(metadata_id=self.names[name],
                                         offset_ps=int(begin_us * US),
                                         duration_ps=int(dur_us * US))
        for key, value in stats.items():
            if isinstance(value, str):
                ev.stats.add(metadata_id=self._stat(key), str_value=value)
            else:
                ev.stats.add(metadata_id=self._stat(key), int64_value=value)


def _call(host: _Host, name: str, begin: float, dur: float, context: int,
          group: int | None = None, **marker):
    """One call of the training function: ``name`` (a producer, with ``marker``'s stats) on
    the Python thread around its eager execute, and the executor that consumes its context
    on a worker, running a MatMul and a Relu; every event in ``group`` when given."""
    g = {} if group is None else {"group_id": group}
    host.event("python", name, begin, dur, _pt=1, _p=context, **marker, **g)
    host.event("python", "EagerExecute: __inference_train_function_42", begin + 2, dur - 4,
               **g)
    host.event("tf_worker", "ExecutorState::Process", begin + 5, dur - 15, _ct=1,
               _c=context, id=context, **g)
    host.event("tf_worker", "dense/MatMul:MatMul", begin + 8, (dur - 30) / 2, **g)
    host.event("tf_worker", "dense/Relu:Relu", begin + 10 + (dur - 30) / 2, (dur - 30) / 3,
               **g)


def _write(path, calls, grouped: bool, step_names: bool = True):
    """A profile of ``calls`` ((name, stats), one after the other, each longer than the
    last); ``grouped``: every event carries its group id, and (``step_names``) each named
    root the ``step_name`` xprof's grouping would give it."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    host = _Host(space)
    for i, (name, stats) in enumerate(calls):
        stats = dict(stats)
        if grouped and step_names and "_r" in stats:
            stats["step_name"] = f"{name} {stats.get('step_num', i)}"
        _call(host, name, 100 + 5000 * i, 1000 + 250 * i, 70 + i,
              group=i if grouped else None, **stats)
    space.hostnames.append("laptop")
    path.write_bytes(space.SerializeToString())
    return path


def _reference(path):
    """xprof's step table and overview page properties (its logs kept quiet)."""
    with contextlib.redirect_stderr(io.StringIO()):
        ref, _ = step_table(path)
        overview = run_tool(path, "overview_page")
    return ref, {k: v for table in overview for k, v in table.get("p", {}).items()}


def _assert_same_steps(path, source: str):
    """Our steps are xprof's: count, names, numbers, times, the breakdown, and the overview's
    step-time summary."""
    prof = tp.load(path)
    ours = prof.steps
    ref, props = _reference(path)
    assert (ours.source == source).all()
    _assert_equal_steps(ours, ref)
    step_time = prof.overview().step_time
    assert step_time["steps"] == len(ref)
    for ours_key, ref_key in (("avg_ms", "steptime_ms_average"),
                              ("min_ms", "steptime_ms_minimum"),
                              ("max_ms", "steptime_ms_maximum")):
        assert f"{step_time[ours_key]:.1f}" == props[ref_key], ours_key
    return ours


TRAIN_FUNCTION = ("train_function", {"_r": 1})


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "raw"])
def test_laptop_keras2_fit_is_one_step(tmp_path, grouped):
    """The laptop capture: one ``train_function`` call (``_r=1``, a producer, no
    ``step_num``), its events grouped already or not: one step, as xprof finds."""
    path = _write(tmp_path / "fit.xplane.pb", [TRAIN_FUNCTION], grouped)
    ours = _assert_same_steps(path, "group_id" if grouped else "markers")
    assert ours.step_name.tolist() == ["train_function 0"]
    assert ours.duration_ms.iloc[0] == pytest.approx(1.0)
    assert ours.host_compute_ms.iloc[0] > 0


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "raw"])
def test_several_train_function_calls(tmp_path, grouped):
    """Three calls are three steps of their own lengths (1, 1.25, 1.5 ms)."""
    path = _write(tmp_path / "fit3.xplane.pb", [TRAIN_FUNCTION] * 3, grouped)
    ours = _assert_same_steps(path, "group_id" if grouped else "markers")
    np.testing.assert_allclose(ours.duration_ms, [1.0, 1.25, 1.5])


def test_grouped_file_without_step_names_marks_by_name(tmp_path):
    """Groups in the file and no ``step_name``: ``train_function`` is an explicit marker by
    its name alone; the steps are named by their group ids, as xprof names them."""
    path = _write(tmp_path / "ids.xplane.pb", [TRAIN_FUNCTION] * 2, True, step_names=False)
    ours = _assert_same_steps(path, "group_id")
    assert ours.step_name.tolist() == ["0", "1"]


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "raw"])
def test_a_root_of_another_name_is_a_step(tmp_path, grouped):
    """A root named otherwise (``my_step``, ``train_function/inner``: no explicit marker)
    marks its step through the ``step_name`` the grouping gives it; in a file grouped
    already, only that stat does (before, such files had no step here)."""
    calls = [("my_step", {"_r": 1}), ("train_function/inner", {"_r": 1})]
    ours = _assert_same_steps(_write(tmp_path / "other.xplane.pb", calls, grouped),
                              "group_id" if grouped else "markers")
    assert ours.step_name.tolist() == ["my_step 0", "train_function/inner 1"]


def test_step_number_from_the_step_name(tmp_path):
    """Keras 2's ``train`` marker with its ``step_num``, grouped already: the step is named
    and numbered as the file's ``step_name`` says (``train 5``), not by its group id."""
    calls = [("train", {"_r": 1, "step_num": 5}), ("train", {"_r": 1, "step_num": 6})]
    ours = _assert_same_steps(_write(tmp_path / "num.xplane.pb", calls, True), "group_id")
    assert ours.index.tolist() == [5, 6] and ours.group_id.tolist() == [0, 1]


def test_a_name_with_a_slash_is_no_marker(tmp_path):
    """``train_function/inner`` without ``_r`` inside a group of its own (grouped already,
    no ``step_name``): no explicit marker, so xprof finds no step, and neither do we."""
    path = _write(tmp_path / "slash.xplane.pb", [("train_function/inner", {})] * 2, True)
    ref, _ = _reference(path)
    assert len(ref) == 0
    assert tp.load(path).steps.empty


def test_a_slash_name_in_a_function_run_group_is_no_marker(tmp_path):
    """Raw events: a ``FunctionRun`` root (implicit: no ``step_name``) around
    ``train/inner``: xprof marks no step; ours are inferred from the repeated call, never
    taken for markers, while ``train_inner`` there is a marker for both."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    paths = {}
    for inner in ("train/inner", "train_inner"):
        space = xplane_pb2.XSpace()
        host = _Host(space)
        for i in range(2):
            host.event("python", "FunctionRun", 100 + 3000 * i, 1000, _r=1)
            _call(host, inner, 101 + 3000 * i, 998, 80 + i)
        paths[inner] = tmp_path / f"{inner.replace('/', '_')}_{len(paths)}.xplane.pb"
        paths[inner].write_bytes(space.SerializeToString())
    ref, _ = _reference(paths["train/inner"])
    assert len(ref) == 0
    assert tp.load(paths["train/inner"]).steps.source.str.startswith("inferred").all()
    _assert_same_steps(paths["train_inner"], "markers")


def test_nested_root_levels(tmp_path):
    """A level-2 root inside each ``train_function`` (level 1) gets groups first, yet holds
    no compute: no step; the level-1 calls are the steps, numbered after them, as xprof."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    host = _Host(space)
    for i in range(2):
        _call(host, "train_function", 100 + 3000 * i, 1000, 90 + i, _r=1)
        host.event("python", "my_substep", 101 + 3000 * i, 1, _r=2)
    path = tmp_path / "levels.xplane.pb"
    path.write_bytes(space.SerializeToString())
    ours = _assert_same_steps(path, "markers")
    assert ours.step_name.tolist() == ["train_function 2", "train_function 3"]


def test_declared_group_id_without_groups_is_grouped_here(tmp_path):
    """Deliberate difference: a plane declaring the ``group_id`` stat is grouped already for
    xprof even when no event carries one, so it groups nothing and finds no step; the events
    are grouped here, and the ``_r`` root is a step."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    host = _Host(space)
    _call(host, "train_function", 100, 1000, 71, _r=1)
    host._stat("group_id")  # declared, carried by no event
    path = tmp_path / "declared.xplane.pb"
    path.write_bytes(space.SerializeToString())
    ref, _ = _reference(path)
    assert len(ref) == 0
    steps = tp.load(path).steps
    assert steps.step_name.tolist() == ["train_function 0"]
    assert (steps.source == "markers").all()


def _task_environment(path, start_ns: int, stop_ns: int):
    """Add a Task Environment plane (the profile window) to the profile at ``path``."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    plane = space.planes.add(name="Task Environment", id=99)
    for i, (name, value) in enumerate((("profile_start_time", start_ns),
                                       ("profile_stop_time", stop_ns)), start=1):
        plane.stat_metadata[i].id, plane.stat_metadata[i].name = i, name
        plane.stats.add(metadata_id=i, uint64_value=value)
    path.write_bytes(space.SerializeToString())
    return path


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped", "raw"])
def test_a_call_the_window_cuts_is_still_the_step(tmp_path, grouped):
    """The profiler started inside the only ``train_function`` call (the window cuts it): up
    to five steps the reference keeps every step, cut ones too, and so do we."""
    path = _write(tmp_path / "cut.xplane.pb", [TRAIN_FUNCTION], grouped)
    _task_environment(path, 5_000_000 + 500_000, 50_000_000)  # 0.4 ms into the call
    ours = _assert_same_steps(path, "group_id" if grouped else "markers")
    assert len(ours) == 1
