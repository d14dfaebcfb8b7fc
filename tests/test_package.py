"""The package's public surface and import cost."""

from __future__ import annotations

import subprocess
import sys

import tfprof_nb as tp


def test_exported_names():
    assert set(tp.__all__) >= {"load", "Profile", "ProfileFormatError", "__version__",
                               "Capture", "capture", "KerasProfiler", "capture_remote",
                               "start_server", "CaptureError", "load_ipython_extension",
                               "report", "export_notebook", "compare"}
    for name in tp.__all__:
        assert getattr(tp, name) is not None
    assert callable(tp.capture)  # the function; its modules are tfprof_nb.capturing
    import tfprof_nb.capturing.remote  # noqa: F401  importing submodules must not shadow it
    import tfprof_nb.reporting.html  # noqa: F401
    assert callable(tp.capture) and callable(tp.report)


def test_no_submodule_shadows_an_exported_name():
    """Every module of the package imported first (as ``tfprof diff`` or a user's ``from
    tfprof_nb.x import y`` would), then every exported name: none is a module (a submodule
    named like a lazy name once replaced ``tp.compare`` with its module)."""
    code = ("import importlib, pkgutil, types, tfprof_nb as tp\n"
            "for m in pkgutil.walk_packages(tp.__path__, 'tfprof_nb.'):\n"
            "    last = m.name.rsplit('.', 1)[-1]  # not the built libraries, not the CLI's run\n"
            "    if not last.startswith('libtfprof_nb') and last != '__main__':\n"
            "        importlib.import_module(m.name)\n"
            "print(sorted(n for n in tp.__all__ if n != 'widgets' and\n"
            "             isinstance(getattr(tp, n), types.ModuleType)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_import_is_light_and_does_not_import_tensorflow():
    code = ("import sys, time; t = time.perf_counter(); import tfprof_nb; "
            "dt = time.perf_counter() - t; "
            "print(dt, 'tensorflow' in sys.modules, 'pandas' in sys.modules, "
            "'tfprof_nb._native' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert float(out[0]) < 0.5
    assert out[1:] == ["False", "False", "False"]


def test_analysis_does_not_import_tensorflow(gpu_fixture_file):
    code = ("import sys, tfprof_nb as tp; p = tp.load(sys.argv[1]); p.events; "
            "print('tensorflow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(gpu_fixture_file)],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_layering():
    """xspace/, analysis/ and plot/ import neither tensorflow nor widgets (DESIGN's layers):
    charts are built from DataFrames, views draw them."""
    import ast
    from pathlib import Path

    root = Path(tp.__file__).parent
    for layer in ("xspace", "analysis", "plot"):
        for path in (root / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    module = ("." * node.level) + (node.module or "")
                elif isinstance(node, ast.Import):
                    module = ",".join(a.name for a in node.names)
                else:
                    continue
                assert "tensorflow" not in module and "widgets" not in module, \
                    f"{path.name} imports {module}"
