"""A new view is one Python class and one TS module: written into a copy of the package and
its JS sources, it shows in the dashboard (live state and an offline report) after the two
generation steps (the widget manifest, the bundle build), with no other file edited."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..reporting.offline_page import OfflinePage

REPO = Path(__file__).resolve().parents[2]

TOY_PY = '''"""A toy view: how many events, and the steps as a table."""

import traitlets

from ._view import View, ViewState
from .traits import TableData, TableTrait


class ToyView(View):
    """How many events the profile has, and its steps."""

    tab, title, bundle, position = "toy", "Toy view", "toy", 95
    events = traitlets.Int(0).tag(sync=True)
    steps = TableTrait()

    @classmethod
    def state(cls, prof) -> ViewState:
        steps = prof.steps.reset_index()[["step", "duration_ms"]]
        return ViewState({"events": int(prof.n_events),
                          "steps": TableData(steps, "Toy steps", page_size=1000)})
'''

TOY_TS = '''// A toy view: how many events, and the steps as a table.
import { type Model } from "./model";
import { decodeTable, renderTable } from "./table";

export function render({ model, el }: { model: Model; el: HTMLElement }): void {
  const p = document.createElement("p");
  p.className = "toy-count";
  p.textContent = `${model.get("events")} events`;
  el.append(p);
  renderTable(el, () => decodeTable(model.get("steps")));
}

export default { render };
'''

MAKE_REPORT = '''import sys
import tfprof_nb as tp
prof = tp.load(sys.argv[1])
dash = prof.show()
assert [v["tab"] for v in dash.views][-1] == "toy", dash.views
assert dash.errors == {}, dash.errors
assert dash.toy__events == prof.n_events
assert tp.widgets.ToyView(prof).events == prof.n_events  # exported too
tp.report(prof, sys.argv[2])
print(len(prof.steps))
'''

# written by the two generation steps, never by hand
GENERATED = {"tfprof_nb/widgets/manifest.json", "js/src/views.ts"}


def _copy_repo(root: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".build-*")
    shutil.copytree(REPO / "tfprof_nb", root / "tfprof_nb", ignore=skip)
    (root / "js").mkdir()
    shutil.copytree(REPO / "js" / "src", root / "js" / "src")
    for name in ("build.mjs", "package.json", "tsconfig.json"):
        shutil.copy(REPO / "js" / name, root / "js" / name)
    (root / "js" / "node_modules").symlink_to((REPO / "js" / "node_modules").resolve())


def _sources(root: Path) -> dict[str, str]:
    """Digest of every source file of the copy (built bundles left out)."""
    files = [p for p in (root / "tfprof_nb").rglob("*") if p.is_file()]
    files += list((root / "js" / "src").rglob("*.ts"))
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in files if "static" not in p.parts and "__pycache__" not in p.parts
            and p.suffix != ".so"}


def test_a_new_view_is_one_class_and_one_ts_module(tmp_path, cpu_file):
    root = tmp_path / "repo"
    _copy_repo(root)
    before = _sources(root)
    (root / "tfprof_nb" / "widgets" / "toy.py").write_text(TOY_PY)
    (root / "js" / "src" / "toy.ts").write_text(TOY_TS)
    env = {**os.environ, "PYTHONPATH": str(root)}
    subprocess.run([sys.executable, "-m", "tfprof_nb.widgets.manifest"], cwd=root, env=env,
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["node", "build.mjs"], cwd=root / "js", check=True, capture_output=True,
                   timeout=300)
    after = _sources(root)
    changed = {k for k in after if before.get(k) != after[k]}
    assert changed - GENERATED == {"tfprof_nb/widgets/toy.py", "js/src/toy.ts"}
    assert (root / "tfprof_nb" / "static" / "toy.js").is_file()
    report = tmp_path / "toy.html"
    out = subprocess.run([sys.executable, "-c", MAKE_REPORT, str(cpu_file), str(report)],
                         cwd=tmp_path, env=env, check=True, capture_output=True, text=True,
                         timeout=600)
    steps = int(out.stdout.split()[-1])
    with OfflinePage(report) as page:
        page.page.click(".db-tab[data-tab='toy']")
        assert page.js("() => document.querySelector('.db-tab[data-tab=\"toy\"]')"
                       ".textContent") == "Toy view"
        shown = page.js("() => document.querySelector(\"[data-pane='toy'] .toy-count\")"
                        ".textContent")
        assert shown.endswith(" events") and int(shown.split()[0]) > 0
        rows = page.js("() => document.querySelectorAll(\"[data-pane='toy'] .tt-table tr\")"
                       ".length")
        assert rows - 1 == steps > 0
        assert page.blocked == [] and page.console_errors == []
