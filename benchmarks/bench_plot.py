"""Memory chart benchmark: ``prof.plot.memory()`` of a 200 k-event memory timeline.

    python benchmarks/bench_plot.py [--events 200000]

The GPU fixture's memory timeline (tests/data) is repeated, each copy later in time, until it
has ``--events`` rows.  Reported: time to build the figure and its JSON (what a view ships),
its size, and in headless Chromium (the memory view's offline page): time to draw it and the
hover response (a mouse move over an allocation until its label is drawn, the next frame
included), median and worst of 30 points.  Reference in the same run: the same figure with
every event drawn (no level of detail, ``max_points`` past the row count).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

HOVER = """async () => {
  const gd = document.querySelector('.tfprof-memory .js-plotly-plot');
  const drag = gd.querySelector('.nsewdrag[data-subplot="xy"]');
  const traces = Array.from(gd.querySelectorAll('.scatterlayer .trace'));
  const points = traces.sort((a, b) => b.querySelectorAll('.point').length -
                                      a.querySelectorAll('.point').length)[0]
                       .querySelectorAll('.point');
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  const times = [];
  for (let k = 0; k < 30; k++) {
    const p = points[Math.floor((k + 0.5) * points.length / 30)].getBoundingClientRect();
    const at = {clientX: p.left + p.width / 2, clientY: p.top + p.height / 2, bubbles: true};
    const t = performance.now();
    drag.dispatchEvent(new MouseEvent('mousemove', at));
    await frame();
    const label = gd.querySelector('.hoverlayer').textContent;
    times.push([performance.now() - t, label.includes('requested')]);
    await new Promise(r => setTimeout(r, 80));  // plotly handles one hover per 50 ms
  }
  return times;
}"""


def long_timeline(events: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The fixture's memory timeline and summary, its rows repeated to ``events`` rows."""
    import tfprof_nb as tp

    prof = tp.load(sorted((HERE.parent / "tests" / "data" / "gpu_bert_multiworker")
                          .glob("*.xplane.pb"))[0])
    tl, summary = prof.memory_timeline, prof.memory_summary.copy()
    span = float(tl.time_us.max() - tl.time_us.min()) + 1.0
    copies = -(-events // len(tl))
    parts = [tl.assign(time_us=tl.time_us + k * span) for k in range(copies)]
    big = pd.concat(parts, ignore_index=True).head(events)
    big = big.sort_values(["host", "allocator", "time_us"], kind="stable").reset_index(drop=True)
    return big, summary


def build(tl, summary, max_points: int) -> dict:
    from tfprof_nb.plot.memory_figures import memory_figure
    from tfprof_nb.widgets.traits import figure_json

    t = time.perf_counter()
    fig = memory_figure(tl, summary, max_points=max_points)
    built = time.perf_counter() - t
    t = time.perf_counter()
    as_json = figure_json(fig)
    to_json = time.perf_counter() - t
    return {"figure": as_json, "build_s": built, "json_s": to_json,
            "json_mb": len(json.dumps(as_json)) / 1e6,
            "points": max(len(t.x) for t in fig.data if t.name == "Allocations")}


def page_of(figure: dict, path: Path) -> Path:
    from tfprof_nb.offline import widget_page, write_page
    from tfprof_nb.widgets._view import ViewState
    from tfprof_nb.widgets.memory_timeline_view import MemoryTimelineView

    class Figure(MemoryTimelineView):
        @classmethod
        def state(cls, prof) -> ViewState:
            return ViewState({"figure": figure, "breakdown": pd.DataFrame(
                {"allocator": ["-"], "bytes": [0]})})

    return write_page(widget_page(Figure(None), "memory"), path)


def in_chromium(page_path: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.reporting.offline_page import LOCAL
    from tests.widgets.browser import CHROMIUM, CHROMIUM_ARGS
    from tests.widgets.harness import guard

    blocked, errors = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        guard(page, LOCAL, blocked, errors, [])
        t = time.perf_counter()
        page.goto(page_path.resolve().as_uri())
        page.wait_for_selector(".tfprof-memory .js-plotly-plot .main-svg", timeout=300000)
        drawn = time.perf_counter() - t
        hovers = page.evaluate(HOVER)
        browser.close()
    times = [h[0] for h in hovers]
    assert all(h[1] for h in hovers), "a hover showed no allocation label"
    assert not blocked and not errors, (blocked, errors)
    return {"draw_s": drawn, "hover_median_ms": statistics.median(times),
            "hover_max_ms": max(times)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    args = parser.parse_args(argv)
    tl, summary = long_timeline(args.events)
    res = {"events": len(tl)}
    with tempfile.TemporaryDirectory() as tmp:
        for label, max_points in (("lod", 4000), ("all_points", len(tl) + 1)):
            b = build(tl, summary, max_points)
            shown = in_chromium(page_of(b.pop("figure"), Path(tmp) / f"{label}.html"))
            res[label] = {k: round(v, 3) for k, v in {**b, **shown}.items()}
    ours, ref = res["lod"], res["all_points"]
    res["build_ratio"] = round(ref["build_s"] / ours["build_s"], 1)
    res["hover_ratio"] = round(ref["hover_median_ms"] / ours["hover_median_ms"], 1)
    res["targets_met"] = ours["build_s"] + ours["json_s"] <= 1.0 and ours["hover_max_ms"] < 50
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
