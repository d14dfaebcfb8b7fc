"""The API's one rule (docs/API.md), checked mechanically on a real capture: every property of
a Profile is a table unless the rule names it a bundle or a fact, every name of DESIGN.md's
contract resolves and works without a warning, deprecated names warn, ``dir(tp)`` holds what
the README shows, and every widget is a ``*View`` or a contract alias."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
import warnings
from pathlib import Path

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.profile import Profile

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "API.md"
# a real capture (JAX on an AMD MI300X): XLA programs, GPU kernels, memory events
SMALL = ROOT / "tests" / "data" / "mi300x_jax08_gemm.xplane.pb"

# properties that are not one table, as docs/API.md's rule names them
BUNDLES = {"input_pipeline", "tf_data", "launch_latency"}
FACTS = {"hosts", "load_errors", "start_time", "stop_time", "duration_us", "n_events",
         "aligned", "event_offsets", "framework", "device_peaks"}
NAMESPACES = {"plot"}

# DESIGN.md's contract, as code that must run without a warning (prof: the small capture)
CONTRACT_PROFILE = {
    "hosts": "prof.hosts", "events": "prof.events", "steps": "prof.steps",
    "overview": "prof.overview()", "op_stats": "prof.op_stats",
    "kernel_stats": "prof.kernel_stats", "memory_summary": "prof.memory_summary",
    "memory_timeline": "prof.memory_timeline", "memory_breakdown": "prof.memory_breakdown",
    "input_pipeline": "prof.input_pipeline", "tf_data": "prof.tf_data", "pod": "prof.pod",
    "scope_stats": "prof.scope_stats()", "recommendations": "prof.recommendations()",
    "show": "prof.show()", "hlo_stats": "prof.hlo_stats", "op_profile": "prof.op_profile()",
    "roofline": "prof.roofline", "plot": "prof.plot.step_time()",
    "load_errors": "prof.load_errors", "gpu_utilization": "prof.gpu_utilization",
    "program_memory": "prof.program_memory()", "source_lines": "prof.source_lines",
    "to_chrome_trace": "prof.to_chrome_trace(tmp / 'trace.json')",
    "to_perfetto": "prof.to_perfetto(tmp / 'trace.perfetto-trace')",
    "to_html": "prof.to_html(tmp / 'report.html')",
    "sql": "prof.sql('SELECT count(*) AS n FROM kernel_stats')",  # tfprof-nb[sql]
}
CONTRACT_PLOTS = ("step_time", "memory", "op_stats", "input_pipeline", "pod", "kernels",
                  "roofline")
CONTRACT_TP = {"load", "Capture", "capture", "KerasProfiler", "capture_remote", "compare",
               "ProfileFormatError", "check", "Monitor", "widgets"}
CONTRACT_WIDGETS = {"TraceTimeline": "TraceView", "StepTimeGraph": "StepTimeGraphView",
                    "MemoryTimeline": "MemoryTimelineView", "KernelTable": "KernelTableView",
                    "OpStatsTable": "OpStatsTableView", "PipelineGraph": "PipelineGraphView",
                    "PodView": "PodView", "Dashboard": "DashboardView"}


@pytest.fixture(scope="module")
def prof():
    return tp.load(SMALL)


def _public(cls, kind) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_")
                  and isinstance(inspect.getattr_static(cls, n), kind))


def _methods(cls) -> list[str]:
    return sorted(n for n in dir(cls) if not n.startswith("_")
                  and inspect.isfunction(inspect.getattr_static(cls, n)))


def test_every_property_is_a_table_unless_the_rule_names_it(prof):
    names = _public(Profile, property)
    assert BUNDLES | FACTS | NAMESPACES <= set(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        values = {n: getattr(prof, n) for n in names}
    tables = [n for n in names if n not in BUNDLES | FACTS | NAMESPACES]
    assert len(tables) >= 15
    assert [n for n in tables if not isinstance(values[n], pd.DataFrame)] == []
    assert [n for n in FACTS if isinstance(values[n], pd.DataFrame)] == []
    for name in BUNDLES:
        fields = {f.name: getattr(values[name], f.name)
                  for f in dataclasses.fields(values[name])}
        frames = {k for k, v in fields.items() if isinstance(v, pd.DataFrame)}
        assert frames and set(fields) - frames <= {"summary", "reasons"}, name


def test_methods_follow_the_rule(prof):
    methods = _methods(Profile)
    # the same table with options: <table>_table(...), beside the property <table>
    for name in (m for m in methods if m.endswith("_table")):
        assert isinstance(inspect.getattr_static(Profile, name[:-len("_table")]), property)
    assert prof.op_stats_table().equals(prof.op_stats)
    # a method without arguments is never a bare table (that would be a property)
    bare = [m for m in methods if list(inspect.signature(getattr(Profile, m)).parameters)
            == ["self"]]
    assert set(bare) >= {"overview", "recommendations", "summary", "show"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [m for m in bare if isinstance(getattr(prof, m)(), pd.DataFrame)] == []


def test_the_contract_works_without_a_warning(prof, tmp_path):
    scope = {"prof": prof, "tmp": tmp_path, "tp": tp}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, code in CONTRACT_PROFILE.items():
            if name == "sql" and importlib.util.find_spec("duckdb") is None:
                continue
            assert eval(code, scope) is not None, name  # noqa: S307 (our own table)
        for chart in CONTRACT_PLOTS:
            assert type(getattr(prof.plot, chart)()).__name__ == "Figure", chart
        for name in CONTRACT_TP:
            assert getattr(tp, name) is not None, name
        assert isinstance(prof.show(), tp.widgets.Dashboard)
        assert isinstance(tp.compare(prof, prof).steps, pd.DataFrame)
        assert tp.check(prof, max_step_ms=1e9).table is not None
        assert isinstance(tp.load(SMALL), tp.Profile)
        for old, new in CONTRACT_WIDGETS.items():
            widget = getattr(tp.widgets, old)
            assert widget is getattr(tp.widgets, new) and widget.__name__ == new
        for old in ("TraceTimeline", "StepTimeGraph", "MemoryTimeline", "KernelTable",
                    "OpStatsTable", "PodView"):
            assert getattr(tp.widgets, old)(prof) is not None, old
        assert Profile.analyse is Profile.analyze
    assert callable(tp.capture) and callable(tp.report)
    assert tp.capturing.__name__ == "tfprof_nb.capturing"
    assert tp.reporting.__name__ == "tfprof_nb.reporting"


@pytest.mark.parametrize("use", [
    lambda prof: prof.with_device_peaks(1e14, 1e12),
    lambda prof: prof.roofline_for(1e14, 1e12),
    lambda prof: prof.op_profile(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12),
    lambda prof: prof.plot.roofline(peak_flops_per_s=1e14, memory_bw_bytes_per_s=1e12),
    lambda prof: tp.widgets.Table,
    lambda prof: __import__("tfprof_nb.widgets.table_view", fromlist=["x"]).Table,
    lambda prof: __import__("tfprof_nb.xspace.proto_wire", fromlist=["x"]).memory_breakdown,
], ids=["with_device_peaks", "roofline_for", "op_profile peaks", "plot.roofline peaks",
        "widgets.Table", "widgets.table_view.Table", "proto_wire.memory_breakdown"])
def test_deprecated_names_warn_and_still_work(prof, use):
    with pytest.warns(DeprecationWarning, match="next release: use") as caught:
        assert use(prof) is not None
    assert caught[0].filename == __file__  # the warning points at the caller


def test_deprecated_names_are_the_new_ones():
    from tfprof_nb.xspace import proto_wire

    with pytest.warns(DeprecationWarning):
        assert tp.widgets.Table is tp.widgets.TableView
    with pytest.warns(DeprecationWarning):
        assert proto_wire.memory_breakdown is proto_wire.memory_access_bytes
    assert "Table" not in tp.widgets.__all__


def test_dir_lists_what_the_readme_shows():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\btp\.(\w+)", readme))
    assert {"widgets", "load", "capture", "report", "Monitor"} <= shown
    assert sorted(shown - set(dir(tp))) == []
    assert sorted(shown - set(tp.__all__)) == []
    for name in set(re.findall(r"\btp\.widgets\.(\w+)", readme)):
        assert name in dir(tp.widgets), name
    for name in set(re.findall(r"\bprof\.(\w+)", readme)):
        assert hasattr(Profile, name), f"README shows prof.{name}"


def test_every_widget_is_a_view_or_a_contract_alias():
    from tfprof_nb.widgets import ALIASES
    from tfprof_nb.widgets._base import BaseWidget

    classes = {n: getattr(tp.widgets, n) for n in tp.widgets.__all__}
    widgets = {n: c for n, c in classes.items()
               if isinstance(c, type) and issubclass(c, BaseWidget)}
    assert len(widgets) >= 20
    assert sorted(n for n, c in widgets.items()
                  if not n.endswith("View") and n not in ALIASES) == []
    assert all(c.__name__.endswith("View") for c in widgets.values())
    assert set(ALIASES) <= set(CONTRACT_WIDGETS)


def test_api_md_names_every_public_name():
    text = API.read_text(encoding="utf-8")
    names = set(_public(Profile, property)) | set(_methods(Profile)) | set(tp.__all__)
    names |= {n for n in tp.widgets.__all__ if n != "WidgetBundleMissing"}
    assert sorted(n for n in names if not re.search(rf"\b{re.escape(n)}\b", text)) == []


def test_the_package_itself_uses_the_new_names():
    """Aliases are for users: no module of the package reads a widget by its earlier name
    (deprecated names would fail the tests anyway: our own warnings are errors)."""
    import ast

    from tfprof_nb.widgets import ALIASES, DEPRECATED

    old = set(ALIASES) | set(DEPRECATED)
    found = []
    for path in sorted((ROOT / "tfprof_nb").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.id] if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                else [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n in old]
    assert found == []
