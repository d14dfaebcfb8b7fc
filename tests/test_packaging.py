"""The built wheel ships the widget bundles (built from js/, not tracked by git; the widget
manifest names them) and the compiled native library."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tfprof_nb" / "widgets" / "manifest.json"


def test_one_plotly_for_every_view():
    """The modules that draw charts share one file (plotly.js is 1.2 MB of each), the
    others are small files of their own: the whole static folder stays under 4 MB."""
    static = ROOT / "tfprof_nb" / "static"
    files = json.loads((static / "bundles.json").read_text())["files"]
    shared = {m for m, f in files.items() if f == "views"}
    assert {"overview", "dashboard", "kernel_stats", "memory", "xla", "gpu"} <= shared
    assert {"timeline", "table"}.isdisjoint(shared)
    plotly_marker = "modebar-container"  # a class name only plotly.js's own code writes
    holding = [p.name for p in static.glob("*.js") if plotly_marker in p.read_text()]
    assert holding == ["views.js"]
    assert sum(p.stat().st_size for p in static.iterdir()) < 4 * 2**20


def test_bundles_export_only_a_default_render():
    """anywidget deprecates a module's named ``render`` (it warns in the browser console and
    ignores the default export): every bundle exports ``default`` alone."""
    static = ROOT / "tfprof_nb" / "static"
    files = set(json.loads((static / "bundles.json").read_text())["files"].values())
    for name in files:
        source = (static / f"{name}.js").read_text()
        last = source[source.rindex("export{"):]  # the module's export (licences may follow)
        exports = re.match(r"export\{([^}]*)\}", last).group(1)
        assert re.fullmatch(r"\s*[\w$]+ as default\s*", exports), (name, exports)
        assert "export function" not in source and "export{render" not in source


def test_installing_the_js_tools_leaves_the_lock_file_alone():
    """``make`` installs the JS tools with ``npm ci``: a fresh clone's ``make demo`` or ``make
    test`` leaves ``js/package-lock.json`` as committed (this suite runs after that install)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "status", "--porcelain", "--", "js/package-lock.json"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout == ""
    assert "npm ci" in (ROOT / "Makefile").read_text()


def test_wheel_contains_the_widget_bundle(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=600)
    (wheel,) = tmp_path.glob("tfprof_nb-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    manifest = json.loads(MANIFEST.read_text())
    files = json.loads((ROOT / "tfprof_nb" / "static" / "bundles.json").read_text())["files"]
    assert set(files) == {w["bundle"] for w in manifest["widgets"]}  # every module is built
    for name in set(files.values()) | {manifest["host"]}:
        assert f"tfprof_nb/static/{name}.js" in names
    assert "tfprof_nb/static/bundles.json" in names
    assert "tfprof_nb/widgets/manifest.json" in names
    assert not any(n.startswith("js/") or "node_modules" in n for n in names)
    # the compiled decoder and kernels, for this platform (any Python 3: loaded with ctypes)
    assert any(n.startswith("tfprof_nb/_native/libtfprof_nb-") and n.endswith(".so")
               for n in names)
    # with its record, so that it loads whatever compiler the machine has, or none
    record = json.loads(zipfile.ZipFile(wheel).read("tfprof_nb/_native/prebuilt.json"))
    assert f"tfprof_nb/_native/{record['library']}" in names
    # and their sources, to build on platforms the wheel was not built for
    assert {"tfprof_nb/_native/walk.c", "tfprof_nb/_native/wire.h",
            "tfprof_nb/_native/layout.h"} <= set(names)
    assert wheel.name.startswith("tfprof_nb-") and "-py3-none-" in wheel.name
    assert "-any.whl" not in wheel.name
    bundle = zipfile.ZipFile(wheel).read("tfprof_nb/static/timeline.js")
    assert bundle == (ROOT / "tfprof_nb" / "static" / "timeline.js").read_bytes()
