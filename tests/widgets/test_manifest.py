"""The widget manifest is the one list of widgets: generated from the classes, up to date,
and what the dashboard, the lazy exports and the JS build read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets import manifest
from tfprof_nb.widgets._view import View
from tfprof_nb.widgets.dashboard_view import prefix_of, view_classes

JS = Path(__file__).resolve().parents[2] / "js"


def test_the_manifest_is_up_to_date_with_the_classes():
    assert manifest.main(["--check"]) == 0, "run python -m tfprof_nb.widgets.manifest"
    assert manifest.generate() == manifest.load()


def test_the_views_registry_is_up_to_date_with_the_manifest():
    out = subprocess.run(["node", "build.mjs", "--check"], cwd=JS, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr


def test_every_widget_has_its_ts_module_and_every_view_a_tab():
    entries = manifest.load()["widgets"]
    for entry in entries:
        assert (JS / "src" / f"{entry['bundle']}.ts").is_file(), entry
    views = manifest.view_entries()
    assert [e["tab"] for e in views] == ["overview", "timeline", "ops", "kernels", "gpu",
                                         "xla", "source", "memory", "input", "tfdata", "pod"]
    assert [e["position"] for e in views] == sorted(e["position"] for e in views)
    assert all(issubclass(cls, View) and cls.tab for cls in view_classes())


def test_dashboard_and_exports_follow_the_manifest(cpu_file):
    names = {e["name"] for e in manifest.load()["widgets"]}
    from tfprof_nb.widgets import ALIASES

    assert set(tp.widgets.__all__) == names | set(ALIASES) | {"WidgetBundleMissing"}
    for name in names:
        assert getattr(tp.widgets, name).__name__ == name
    for old, new in ALIASES.items():  # the contract's earlier names: the same classes
        assert new in names and getattr(tp.widgets, old) is getattr(tp.widgets, new)
    dash = tp.load(cpu_file).show()
    assert [v["tab"] for v in dash.views] == [e["tab"] for e in manifest.view_entries()]
    assert [v["title"] for v in dash.views] == [e["title"] for e in manifest.view_entries()]
    for cls in view_classes():  # each view's traits, under its tab's prefix
        assert {prefix_of(cls.tab) + n for n in cls.synced()} <= set(dash.keys)


def test_duplicate_tabs_are_refused():
    with pytest.raises(ValueError, match="tab overview used twice"):
        manifest._check_unique([{"name": "A", "tab": "overview"},
                                {"name": "B", "tab": "overview"}])
