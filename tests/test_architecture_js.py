"""The widgets' TypeScript (``js/src``), read from its source: no import cycle (``import type``
counts: a type that two modules both need lives in a module of its own), every module placed
in a layer, imports only within a layer or down the layers, no view importing another, and no
two modules sharing a base name.  The layers, lowest first (docs/ARCHITECTURE.md, "Views"):

- utilities: typed columns, formats, the model's types, DOM helpers, figures, tables, charts,
  level of detail, graph layout and the HLO graph (``table`` and ``hlograph`` draw views of
  their own too, and every view may use them); they import no view, nothing of the trace
  viewer, no host;
- the trace viewer's parts: ``timeline/``, with ``data`` (its decoded wire data) and
  ``details`` (event details, which the offline host looks up too); they import no view;
- views: each module the manifest names (a view's ``bundle``) and the modules only one view
  uses (VIEW_PARTS); a view imports no other view;
- hosts: what renders views: the dashboard and its registry (``views``), the shared bundle's
  dispatch, the offline host (``offline``, ``payload``, ``standin``, ``shared_module``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_architecture import _cycles

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "js" / "src"
MANIFEST = REPO / "tfprof_nb" / "widgets" / "manifest.json"


def bundles() -> set[str]:
    """The views' modules, as the manifest names them."""
    return {w["bundle"] for w in json.loads(MANIFEST.read_text("utf-8"))["widgets"]}


TRACE = "trace viewer"
VIEWS = "views"
# the modules of one view beside its own: the tf.data graph's layout, the XLA view's graph
# action and program memory
VIEW_PARTS = ("tfdata", "xlagraph", "xlamemory")
# lowest first; each entry: (layer, its modules: paths under js/src without ".ts"; a name
# ending in "/" is every module of that folder).  A module the manifest names and no other
# layer lists is a view.
LAYERS = [
    ("utilities", ("columns", "format", "model", "ui", "lod", "graphlayout", "figure", "table",
                   "charts", "tracelinks", "hlograph", "graphaction")),
    (TRACE, ("data", "details", "details_codes.generated", "timeline/")),
    (VIEWS, VIEW_PARTS),
    ("hosts", ("views", "dashboard", "dispatch", "offline", "payload", "standin",
               "shared_module")),
]
_PLACED = {m for _, members in LAYERS for m in members}
LAYERS[2] = (VIEWS, VIEW_PARTS + tuple(sorted(bundles() - _PLACED)))

_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_STRINGS = r"""(?:"[^"\n]*"|'[^'\n]*')"""
# `import ... from "x"`, `export ... from "x"` (over several lines), `import "x"`, `import("x")`
_IMPORT = re.compile(
    rf"""(?:^|[;\n])\s*(?:import|export)\b[^;"']*?\bfrom\s*({_STRINGS})"""
    rf"""|(?:^|[;\n])\s*import\s*({_STRINGS})"""
    rf"""|\bimport\s*\(\s*({_STRINGS})\s*\)""")


def module_name(path: Path, src: Path = SRC) -> str:
    return path.relative_to(src).with_suffix("").as_posix()


def specifiers(source: str) -> list[str]:
    """The module specifiers a TypeScript source imports (type-only imports and re-exports
    included; comments skipped)."""
    code = _COMMENTS.sub(" ", source)
    return [next(g for g in m.groups() if g)[1:-1] for m in _IMPORT.finditer(code)]


def resolve(importer: str, spec: str, modules: set[str]) -> str | None:
    """The js/src module that ``importer`` reaches with ``spec`` (None: a package, not ours)."""
    if not spec.startswith("."):
        return None
    parts = importer.split("/")[:-1]
    for part in spec.split("/"):
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    name = "/".join(parts)
    name = name[:-3] if name.endswith((".ts", ".js")) else name
    for candidate in (name, f"{name}/index"):
        if candidate in modules:
            return candidate
    raise AssertionError(f"{importer} imports {spec!r}, which is no module of js/src")


def graph_of(src: Path = SRC) -> dict[str, set[str]]:
    """{module: the js/src modules it imports}."""
    paths = {module_name(p, src): p for p in src.rglob("*.ts") if not p.name.endswith(".d.ts")}
    graph = {}
    for name, path in paths.items():
        targets = (resolve(name, s, set(paths)) for s in specifiers(path.read_text("utf-8")))
        graph[name] = {t for t in targets if t}
    return graph


GRAPH = graph_of()


def components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module, and modules that import
    themselves (the Python test's Tarjan, on these modules)."""
    return [set(c) for c in _cycles(graph)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per component, as the path that closes it (its first module repeated at the
    end)."""
    return sorted(_closing_path(graph, c) for c in components(graph))


def _closing_path(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself (breadth first)."""
    start = min(component)
    before = {start: None}
    queue = [start]
    for v in queue:
        for w in sorted(graph.get(v, ()) & component):
            if w == start:
                path = [v]
                while before[path[-1]] is not None:
                    path.append(before[path[-1]])
                return [start, *reversed(path[:-1]), start] if v != start else [start, start]
            if w not in before:
                before[w] = v
                queue.append(w)
    raise AssertionError(component)  # a strongly connected component always closes


def layer_of(module: str) -> int | None:
    for rank, (_, members) in enumerate(LAYERS):
        if module in members or any(m.endswith("/") and module.startswith(m) for m in members):
            return rank
    return None


def upward(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for src, targets in graph.items():
        for dst in targets:
            a, b = layer_of(src), layer_of(dst)
            if a is not None and b is not None and b > a:
                out.append(f"{src} imports {dst} ({LAYERS[b][0]} is above {LAYERS[a][0]})")
    return sorted(out)


def view_to_view(graph: dict[str, set[str]], bundles: set[str]) -> list[str]:
    """Imports of one view's module (a bundle) by another view's module."""
    rank = [name for name, _ in LAYERS].index(VIEWS)
    views = {m for m in graph if layer_of(m) == rank}
    return sorted(f"{src} imports the view {dst}" for src in views for dst in graph[src]
                  if dst in bundles & views and dst != src)


def test_the_reader_sees_every_kind_of_import():
    source = """
        import { a, type B } from "./a";
        import type { C } from '../c';
        import {
          d,
          e,
        } from "./timeline/d";
        export type { F } from "./f"; export { g } from "./g";
        import "./side";
        const h = await import("./h");
        // import { no } from "./commented";
        /* import { no } from "./block"; */
        import dagre from "@dagrejs/dagre";
        const s = "import x from './not-an-import'";
    """
    assert specifiers(source) == ["./a", "../c", "./timeline/d", "./f", "./g", "./side", "./h",
                                  "@dagrejs/dagre"]


def test_the_graph_is_read():
    """A sample of edges that exist, a type-only one among them."""
    assert len(GRAPH) > 50
    assert "timeline/state" in GRAPH["timeline"]
    assert "model" in GRAPH["dispatch"]  # `import { type Render } from "./model"`
    assert all(GRAPH[m] <= set(GRAPH) for m in GRAPH)


def test_no_import_cycles():
    found = [(" -> ".join(_closing_path(GRAPH, c)), sorted(c)) for c in components(GRAPH)]
    assert not found, "import cycles in js/src (`import type` counts): " + "; ".join(
        f"{path} (its component: {', '.join(c)})" for path, c in sorted(found))


def test_every_module_has_a_layer():
    assert sorted(m for m in GRAPH if layer_of(m) is None) == [], "place these in LAYERS"
    listed = {m for _, members in LAYERS for m in members if not m.endswith("/")}
    assert sorted(listed - set(GRAPH)) == [], "LAYERS names modules that are gone"


def test_imports_never_go_up_the_layers():
    assert upward(GRAPH) == []


def test_views_import_no_other_view():
    assert view_to_view(GRAPH, bundles()) == []


def test_every_bundle_is_a_module_that_renders():
    """Each module the manifest names is a module of js/src, and a view, a utility that draws
    a view of its own too (``table``, ``hlograph``) or a host (``dashboard``): never one of
    the trace viewer's parts."""
    assert sorted(bundles() - set(GRAPH)) == []
    assert sorted(m for m in bundles() if LAYERS[layer_of(m)][0] == TRACE) == []


def test_no_two_modules_share_a_base_name():
    """``input.ts`` beside ``timeline/input.ts`` says nothing of either's role."""
    by_base: dict[str, list[str]] = {}
    for m in GRAPH:
        by_base.setdefault(m.rpartition("/")[2], []).append(m)
    assert {b: sorted(ms) for b, ms in by_base.items() if len(ms) > 1} == {}


@pytest.mark.parametrize("graph, problem", [
    ({"a": {"timeline/b"}, "timeline/b": {"timeline/c"}, "timeline/c": {"a"}}, "cycle"),
    ({"columns": {"timeline/state"}, "timeline/state": set()}, "upward"),
    ({"timeline/paint": {"overview"}, "overview": set()}, "upward"),
    ({"xla": {"overview"}, "overview": set()}, "view"),
])
def test_the_checks_find_what_they_look_for(graph, problem):
    """Each check flags a made-up graph with its problem, and only that one."""
    found = {"cycle": cycles(graph), "upward": upward(graph),
             "view": view_to_view(graph, {"overview", "xla"})}
    assert found[problem], problem
    assert all(not v for k, v in found.items() if k != problem), found


def test_a_cycle_is_named_by_its_path():
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}, "d": {"d"}, "e": set()}
    assert cycles(graph) == [["a", "b", "a"], ["d", "d"]]
