"""Notebook benchmark: how fast views open in JupyterLab and how much they add to the notebook.

    python benchmarks/bench_notebook.py [--profile FILE.xplane.pb] [--runs 3]

A real JupyterLab with a real kernel, driven in Debian's Chromium. The notebook loads a large
real CPU profile (default: ``make_profile.py``'s capture of 2,500 training steps, about 33 MB
and 1.2 M events, made once and cached) and analyses it in a first cell (not measured), then
runs, cell by cell:

- ``tp.widgets.TraceView(prof)``: from Shift+Enter to the canvas's first paint, and to the
  cell's end (the kernel idle again);
- ``prof.show()`` (the dashboard): to its overview painted (cards and the step-time chart), and
  to the cell's end;

then saves the notebook (Ctrl+S, JupyterLab's default: no widget state) and reports the
``.ipynb``'s size, and the size of ``tfprof_nb/static``. Targets (issue 32): first paint under
1 s, dashboard under 2 s, the saved notebook under 8 MB, ``static/`` under 4 MB. XProf has no
notebook views to run beside it; the reference in the same run is this package with the
notebook's offline copies at 32 MB (``--reference-mb``, the limit before they became 3 MB
previews), in alternating fresh servers and kernels. Each figure is a median of ``--runs``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.widgets.harness import PAINTED  # noqa: E402
from tests.widgets.jupyter import jupyter_server, open_notebook  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "tfprof_nb_bench_notebook"
CELLS = ["import tfprof_nb as tp\nprof = tp.load({path!r}, progress=False)\nprof.analyse()\nNone",
         "tp.widgets.TraceView(prof)",
         "prof.show()"]


def default_profile() -> Path:
    """The benchmark capture (2,500 steps of make_profile.py), made once."""
    found = sorted(CACHE.glob("logdir/plugins/profile/*/*.xplane.pb"))
    if found:
        return found[-1]
    from make_profile import capture

    return Path(capture(str(CACHE / "logdir"), 2500))


def write_notebook(root: Path, path: Path) -> Path:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": src.format(path=str(path))} for src in CELLS]
    nb = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}}}
    out = root / "bench.ipynb"
    out.write_text(json.dumps(nb))
    return out


def _prompt(page, i: int) -> str:
    return page.evaluate("i => document.querySelectorAll('.jp-Notebook .jp-Cell')[i]"
                         ".querySelector('.jp-InputPrompt').innerText", i)


def run_cell(page, i: int, until: str | None = None) -> tuple[float | None, float]:
    """Run cell ``i``: (seconds to ``until`` being true in the page, seconds to the cell's
    end: its prompt shows a number)."""
    cell = page.locator(".jp-Notebook .jp-Cell .cm-content").nth(i)
    cell.click()
    t0 = time.perf_counter()
    page.keyboard.press("Shift+Enter")
    shown = None
    if until:
        page.wait_for_function(until, polling="raf", timeout=300000)
        shown = time.perf_counter() - t0
    page.wait_for_function("i => /\\[[0-9]+\\]/.test(document.querySelectorAll("
                           "'.jp-Notebook .jp-Cell')[i].querySelector('.jp-InputPrompt')"
                           ".innerText)", arg=i, polling=50, timeout=300000)
    return shown, time.perf_counter() - t0


TIMELINE_PAINTED = (f"() => {{ const c = document.querySelector('.tfprof-timeline canvas');"
                    f" return !!c && c.width > 0 && ({PAINTED})('.tfprof-timeline canvas') "
                    "> 2000; }")
DASHBOARD_PAINTED = ("() => !!document.querySelector('.tfprof-dashboard .db-card') && "
                     "!!document.querySelector('.tfprof-dashboard .js-plotly-plot .main-svg')")


def one_run(profile: Path, limit_mb: float | None = None) -> dict:
    """One fresh JupyterLab and kernel (its notebook copies limited to ``limit_mb``: None,
    the package's default)."""
    from playwright.sync_api import sync_playwright

    if limit_mb is None:
        os.environ.pop("TFPROF_NB_MAX_FALLBACK_MB", None)
    else:
        os.environ["TFPROF_NB_MAX_FALLBACK_MB"] = str(limit_mb)
    with tempfile.TemporaryDirectory() as tmp, jupyter_server(Path(tmp)) as url:
        nb_path = write_notebook(Path(tmp), profile)
        external: list = []
        with sync_playwright() as pw:
            browser, page = open_notebook(pw, url, "lab", external, name=nb_path.name)
            page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=120000)
            page.wait_for_timeout(2000)  # the kernel starts
            run_cell(page, 0)
            tl_paint, tl_cell = run_cell(page, 1, TIMELINE_PAINTED)
            db_paint, db_cell = run_cell(page, 2, DASHBOARD_PAINTED)
            page.keyboard.press("Control+s")
            page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')",
                                   timeout=60000)
            time.sleep(1)
            browser.close()
        size = nb_path.stat().st_size
        assert not external, external
    return {"timeline_first_paint_s": tl_paint, "timeline_cell_s": tl_cell,
            "dashboard_first_paint_s": db_paint, "dashboard_cell_s": db_cell,
            "notebook_mb": size / 2**20}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference-mb", type=float, default=32.0,
                    help="the notebook copies' limit of the reference runs (0: none)")
    args = ap.parse_args(argv)
    profile = args.profile or default_profile()
    import tfprof_nb as tp

    prof = tp.load(profile, progress=False)
    print(f"profile: {profile} ({profile.stat().st_size / 2**20:.1f} MB, "
          f"{prof.n_events:,} events)")
    ours, reference = [], []
    for _ in range(args.runs):
        ours.append(one_run(profile))
        if args.reference_mb:
            reference.append(one_run(profile, args.reference_mb))
    static = Path(tp.__file__).parent / "static"
    for name, runs in (("ours", ours), (f"copies at {args.reference_mb:g} MB", reference)):
        if not runs:
            continue
        out = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        for r in runs:
            print(f"{name} run:", {k: round(v, 3) for k, v in r.items()})
        print(f"{name} median:", json.dumps({k: round(v, 3) for k, v in out.items()}))
    print(f"static: {sum(p.stat().st_size for p in static.iterdir()) / 2**20:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
