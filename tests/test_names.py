"""Module names say where things live (docs/ARCHITECTURE.md, "Names"): one file name per role in
the package (no two modules share a file name), no module repeats its package's name, and each
view of ``widgets/`` is in the module named after its class."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

import tfprof_nb

ROOT = Path(tfprof_nb.__file__).resolve().parent

# File names still shared while their owners rename them (issue 44 part 3); each leaves this
# list with its rename, and the check is strict: a name no longer shared must leave it.
SHARED_FOR_NOW: set[str] = set()


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p.name != "__init__.py")


def shared_names(paths: list[Path]) -> dict[str, list[str]]:
    """File names used by more than one module, with the modules' paths."""
    by_name = defaultdict(list)
    for p in paths:
        by_name[p.name].append(p.relative_to(ROOT).as_posix() if p.is_absolute() else str(p))
    return {n: sorted(ps) for n, ps in sorted(by_name.items()) if len(ps) > 1}


def repeating_package(paths: list[Path]) -> list[str]:
    """Modules named like their package or starting with its name and "_" (``gpu/gpu_time.py``,
    ``xla/xla.py``); private modules are read without their leading underscore."""
    out = []
    for p in paths:
        package, name = p.parent.name.lstrip("_"), p.stem.lstrip("_")
        if name == package or name.startswith(package + "_"):
            out.append(p.as_posix())
    return out


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def misplaced_views(sources: dict[str, str]) -> list[str]:
    """``*View`` classes (``{module stem: source}``) not in the module named after them, nor in
    the module of the view they extend (``KernelTableView(TableView)`` in ``table_view.py``)."""
    out = []
    for stem, source in sources.items():
        for node in ast.parse(source).body:
            if not (isinstance(node, ast.ClassDef) and node.name.endswith("View")):
                continue
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            if stem.lstrip("_") not in {snake(node.name)} | {snake(b) for b in bases if b.endswith("View")}:
                out.append(f"{node.name} in {stem}.py (expected {snake(node.name)}.py)")
    return out


def test_no_two_modules_share_a_file_name():
    shared = shared_names(_modules())
    assert {n: ps for n, ps in shared.items() if n not in SHARED_FOR_NOW} == {}
    assert sorted(SHARED_FOR_NOW - set(shared)) == []  # renamed: drop it from the list


def test_no_module_repeats_its_package_name():
    assert repeating_package([p.relative_to(ROOT.parent) for p in _modules()]) == []


def test_each_view_is_in_the_module_named_after_it():
    sources = {p.stem: p.read_text(encoding="utf-8") for p in (ROOT / "widgets").glob("*.py")}
    views = [n.name for s in sources.values() for n in ast.parse(s).body
             if isinstance(n, ast.ClassDef) and n.name.endswith("View")]
    assert len(views) > 15  # the check reads the classes
    assert misplaced_views(sources) == []


@pytest.mark.parametrize("check, given, found", [
    (shared_names, [Path("plot/gpu.py"), Path("widgets/gpu.py"), Path("widgets/a.py")],
     {"gpu.py": ["plot/gpu.py", "widgets/gpu.py"]}),
    (repeating_package, [Path("a/gpu/gpu_time.py"), Path("a/xla/xla.py"), Path("a/gpu/time.py"),
                         Path("a/_native/kernels/stats_kernel.py")],
     ["a/gpu/gpu_time.py", "a/xla/xla.py"]),
    (misplaced_views, {"pipeline": "class PodView(View): pass\n",
                       "pod_view": "class PodView(View): pass\n",
                       "table_view": "class TableView: pass\nclass KernelTableView(TableView): pass\n"},
     ["PodView in pipeline.py (expected pod_view.py)"]),
])
def test_the_checks_find_what_they_look_for(check, given, found):
    assert check(given) == found
