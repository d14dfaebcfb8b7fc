"""The package's architecture, read from its source: imports go one way through the layers,
no module imports another package's private module, and there is no import cycle.  Every
import counts, those inside functions too.

The layers are a table: a module may import modules of its own layer and of the layers listed
before it.  A new top-level module or package must be placed in it.  Inside ``analysis/`` a
second table says which of its subpackages may import which (the runtime's host data lowest,
findings highest); a new subpackage must be placed in it too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tfprof_nb

ROOT = Path(tfprof_nb.__file__).resolve().parent
PACKAGE = "tfprof_nb"

# lowest first; each entry: (layer, top-level modules and packages of tfprof_nb in it)
LAYERS = [
    ("base", ("errors", "_version", "_native", "constants", "_system", "_interrupt",
              "_progress", "_deprecated", "_error_display", "_words")),
    ("decoder", ("xspace",)),
    ("analysis", ("analysis",)),
    ("charts and exports", ("plot", "export")),
    ("offline pages and the wire format", ("offline",)),
    ("widgets", ("widgets",)),
    ("reporting", ("reporting",)),
    ("facade", ("profile", "comparing", "events", "sql", "_display", "loading", "_outputs",
                "checks", "table_catalogue", "_profile_deprecated")),
    ("capturing", ("capturing",)),
    ("magic", ("magic",)),
    ("top", ("__init__", "demo", "cli", "__main__")),
]
RANK = {unit: i for i, (_, units) in enumerate(LAYERS) for unit in units}

# Known violations, each to be removed with its fix (the check is strict: a fixed one must
# leave this list).  None are left.
KNOWN: set[tuple[str, str]] = set()

# analysis/'s subpackages: each may import its own modules and those of the subpackages listed
# with it (and nothing above it).  The runtime's rooms are lowest: host data (imports none),
# the runtime's core (units, registry, results, info), decoding, scheduling (where hosts live,
# which no analysis imports); findings are imported by none.
ANALYSIS = f"{PACKAGE}.analysis"
_RUNTIME = ("runtime.hostdata", "runtime")
ANALYSIS_LAYERS = {
    "runtime.hostdata": (),
    "runtime": ("runtime.hostdata",),
    "runtime.decoding": ("runtime.hostdata",),
    "runtime.scheduling": ("runtime.hostdata", "runtime", "runtime.decoding"),
    "trace": _RUNTIME,
    "xla": (*_RUNTIME, "trace"),
    "xla.memory": (*_RUNTIME, "trace", "xla"),
    "steps": (*_RUNTIME, "trace", "xla"),
    "gpu": (*_RUNTIME, "trace", "xla", "steps"),
    "tf": (*_RUNTIME, "trace", "xla", "steps"),
    "hardware": (*_RUNTIME, "trace", "xla", "steps", "gpu", "tf"),
    "critical": (*_RUNTIME, "trace", "xla", "steps", "gpu", "tf"),
    "findings": (*_RUNTIME, "trace", "xla", "xla.memory", "steps", "gpu", "tf", "hardware",
                 "critical"),
}
# the rooms that run the analyses, which no analysis imports
_RUNNERS = {"runtime.decoding", "runtime.scheduling"}

# Known violations of the analysis table, as KNOWN.  None are left.
ANALYSIS_KNOWN: set[tuple[str, str]] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _targets(name: str, node: ast.AST) -> list[str]:
    """The tfprof_nb modules an import statement of module ``name`` loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == PACKAGE]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = name if _is_package(name) else name.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        module = f"{base}.{node.module}" if node.module else base
    else:
        module = node.module or ""
    if module.split(".")[0] != PACKAGE:
        return []
    return [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
            for a in node.names]


def _imports() -> dict[str, set[str]]:
    """{module: tfprof_nb modules it imports anywhere in its source}."""
    graph = {}
    for name, path in MODULES.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets.update(_targets(name, node))
        graph[name] = targets
    return graph


ALL_IMPORTS = _imports()
GRAPH = {src: targets - {dst for s, dst in KNOWN if s == src}
         for src, targets in ALL_IMPORTS.items()}
ANALYSIS_GRAPH = {src: targets - {dst for s, dst in ANALYSIS_KNOWN if s == src}
                  for src, targets in ALL_IMPORTS.items()}


def _unit(module: str) -> str:
    """The top-level module or package of tfprof_nb a module belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer():
    missing = sorted({_unit(m) for m in MODULES} - set(RANK))
    assert not missing, f"place these in LAYERS: {missing}"


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{src} imports {dst} ({LAYERS[RANK[_unit(dst)]][0]} is above "
                  f"{LAYERS[RANK[_unit(src)]][0]})"
                  for src, targets in graph.items() for dst in targets
                  if RANK.get(_unit(dst), -1) > RANK.get(_unit(src), len(LAYERS)))


def test_imports_never_go_up_the_layers():
    assert _upward(GRAPH) == []


def _owner_of_private(module: str) -> str | None:
    """The package whose private module (or package) ``module`` is, None when public."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _private_imports(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for src, targets in graph.items():
        src_package = src if _is_package(src) else src.rpartition(".")[0]
        for dst in targets:
            owner = _owner_of_private(dst)
            if owner and not (src_package == owner or src_package.startswith(owner + ".")):
                out.append(f"{src} imports {dst}, private to {owner}")
    return sorted(out)


def test_no_import_into_another_packages_private_module():
    assert _private_imports(GRAPH) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and modules that
    import themselves."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # recursion depth is bounded by the module count (a few hundred)
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def _subpackage(module: str) -> str | None:
    """The subpackage of analysis/ a module belongs to: the deepest one in ANALYSIS_LAYERS
    (else its first package under analysis/); "" for the analysis package itself, None outside
    analysis/."""
    if module == ANALYSIS:
        return ""
    if not module.startswith(ANALYSIS + "."):
        return None
    parts = module[len(ANALYSIS) + 1:].split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in ANALYSIS_LAYERS:
            return ".".join(parts[:i])
    return parts[0]


def test_every_analysis_module_has_a_subpackage():
    """Every module of analysis/ is in a subpackage of the table (none beside them)."""
    placed = {m: _subpackage(m) for m in MODULES}
    assert sorted(m for m, sub in placed.items() if sub is not None and sub
                  and sub not in ANALYSIS_LAYERS) == []
    assert sorted(m for m, sub in placed.items() if sub == "" and m != ANALYSIS) == []


def test_the_analysis_table_is_an_order():
    """The table is a strict order with the host data lowest and findings highest: what a
    subpackage may import, it may import all that those may; none may import itself through
    another; no analysis imports the rooms that run them (decoding, scheduling)."""
    for sub, below in ANALYSIS_LAYERS.items():
        for other in below:
            assert set(ANALYSIS_LAYERS[other]) <= set(below), (sub, other)
            assert sub not in ANALYSIS_LAYERS[other], (sub, other)
    assert ANALYSIS_LAYERS["runtime.hostdata"] == ()
    assert all("findings" not in below for below in ANALYSIS_LAYERS.values())
    assert set(ANALYSIS_LAYERS["findings"]) == set(ANALYSIS_LAYERS) - {"findings"} - _RUNNERS
    assert all(not set(below) & _RUNNERS for sub, below in ANALYSIS_LAYERS.items()
               if not sub.startswith("runtime"))


def _analysis_upward(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for src, targets in graph.items():
        sub = _subpackage(src)
        for dst in targets:
            other = _subpackage(dst)
            if sub and other and other != sub and other not in ANALYSIS_LAYERS.get(sub, ()):
                out.append(f"{src} imports {dst} ({sub} may not import {other})")
    return sorted(out)


def test_analysis_subpackages_import_only_those_below_them():
    assert _analysis_upward(ANALYSIS_GRAPH) == []


def test_analysis_packages_import_nothing():
    """analysis/ and its subpackages hold no code of their own: importing one module of a
    subpackage loads only what that module needs (the decoding threads start before pandas
    is imported)."""
    packages = [m for m in MODULES if _subpackage(m) is not None and _is_package(m)]
    assert len(packages) == len(ANALYSIS_LAYERS) + 1
    assert {p: sorted(ALL_IMPORTS[p]) for p in packages if ALL_IMPORTS[p]} == {}


def _declared_units(source: str) -> list[str]:
    """The names of the units a module's ``ANALYSES`` declares."""
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "ANALYSES"
                                                for t in node.targets):
            names += [call.args[0].value for call in ast.walk(node.value)
                      if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Analysis"
                      and call.args and isinstance(call.args[0], ast.Constant)]
    return names


# a unit named like its subpackage is declared in the module that says what it is
PACKAGE_UNITS = {"steps": "steps.breakdown", "xla": "xla.combined"}


def _named_for(module: str, unit: str) -> bool:
    """The module is named after the unit: its name (``tf/op_stats.py``: ``op_stats``), or its
    subpackage's and its own (``gpu/time.py``: ``gpu_time``), or PACKAGE_UNITS names it."""
    package, _, name = module.rpartition(".")
    return (unit in (name, f"{package.rpartition('.')[2]}_{name}")
            or module == f"{ANALYSIS}.{PACKAGE_UNITS.get(unit)}")


def test_each_unit_is_declared_in_the_module_named_after_it():
    """A module that declares units is named after one of them (the others come with it), and
    a unit with a module of its name is declared there: ``prof.result("gpu_time")`` is in
    ``gpu/time.py``."""
    units = {m: _declared_units(p.read_text(encoding="utf-8")) for m, p in MODULES.items()
             if _subpackage(m) and not _is_package(m)}
    declared = {u: m for m, names in units.items() for u in names}
    assert len(declared) > 40  # the check reads the declarations
    assert sorted(m for m, names in units.items()
                  if names and not any(_named_for(m, u) for u in names)) == []
    assert sorted(f"{u} in {m}" for u, m in declared.items()
                  if any(_named_for(o, u) and o != m for o in units)) == []


@pytest.mark.parametrize("graph, problem", [
    ({"tfprof_nb.xspace.a": {"tfprof_nb.widgets.b"}, "tfprof_nb.widgets.b": set()}, "upward"),
    ({"tfprof_nb.analysis.steps.a": {"tfprof_nb.analysis.gpu.b"},
      "tfprof_nb.analysis.gpu.b": set()}, "analysis"),
    ({"tfprof_nb.reporting.a": {"tfprof_nb.widgets._b"}, "tfprof_nb.widgets._b": set()}, "private"),
    ({"tfprof_nb.widgets.a": {"tfprof_nb.widgets.b"},
      "tfprof_nb.widgets.b": {"tfprof_nb.widgets.c"},
      "tfprof_nb.widgets.c": {"tfprof_nb.widgets.a"}}, "cycle"),
])
def test_the_checks_find_what_they_look_for(graph, problem):
    """Each check flags a made-up graph with its problem, and only that one."""
    found = {"upward": _upward(graph), "private": _private_imports(graph),
             "cycle": _cycles(graph), "analysis": _analysis_upward(graph)}
    assert found[problem], problem
    assert all(not v for k, v in found.items() if k != problem), found


MAX_FUNCTION_LINES = 60


def _long_in(source: str, name: str = "") -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                out.append(f"{name}.{node.name}: {lines} lines")
    return out


def test_functions_are_short():
    """Every function of the package fits the house's limit."""
    long = [f for name, path in MODULES.items()
            for f in _long_in(path.read_text(encoding="utf-8"), name)]
    assert long == []
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert _long_in(f"def f():\n{body}\n", "m") == ["m.f: 61 lines"]  # the check can fail


def test_known_violations_are_still_there():
    """Each known violation is still in the source (remove it from KNOWN once fixed)."""
    assert [(s, d) for s, d in sorted(KNOWN | ANALYSIS_KNOWN)
            if d not in ALL_IMPORTS.get(s, ())] == []


def test_imports_are_resolved():
    """The reader sees relative, absolute and function-level imports (a sample that exists)."""
    assert "tfprof_nb.offline" in GRAPH["tfprof_nb.widgets._base"]
    assert "tfprof_nb.profile" in GRAPH["tfprof_nb"]  # inside tp.report, a function
    assert "tfprof_nb.widgets.dashboard_view" in GRAPH["tfprof_nb.reporting.html"]
