"""Report benchmark: write the offline HTML report of a large profile and open it.

    python benchmarks/bench_report.py [--profile FILE.xplane.pb] [--events 1000000]

Reported: time to write the report from a fresh load (every analysis, the dashboard's payload,
every event's details, compression), the dashboard's build and packing alone, what displaying
the dashboard with its offline fallback costs once analysed, the report's size against the
payload it embeds (the budget is 2x that payload plus the JS), and in headless Chromium from
file:// with the network blocked: time to the dashboard and to the first paint of the trace
viewer.  Reference in the
same run: xprof producing the trace viewer's data for the same file (what TensorBoard's
profiler computes before it can show the trace).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def write(path: Path, out: Path) -> dict:
    import tfprof_nb as tp
    from tfprof_nb.offline import widget_payload
    from tfprof_nb.widgets.dashboard_view import DashboardView

    t = time.perf_counter()
    prof = tp.load(path)
    report = prof.to_html(out)
    total = time.perf_counter() - t
    t = time.perf_counter()
    dash = DashboardView(prof)  # analyses are cached now: the dashboard's own payloads
    build = time.perf_counter() - t
    t = time.perf_counter()
    payload = widget_payload(dash)
    pack = time.perf_counter() - t
    t = time.perf_counter()
    DashboardView(prof)._repr_mimebundle_()  # what display(prof) costs once analysed
    display = time.perf_counter() - t
    static = HERE.parent / "tfprof_nb" / "static"
    files = json.loads((static / "bundles.json").read_text())["files"]
    js = sum(len((static / f"{n}.js").read_bytes())  # every bundle a report embeds
             for n in sorted(set(files.values()) | {"offline"}))
    return {"write_s": round(total, 2), "dashboard_build_s": round(build, 2),
            "pack_s": round(pack, 2), "display_with_fallback_s": round(display, 2),
            "report_mb": round(report.stat().st_size / 1e6, 2),
            "payload_mb": round(payload.raw_bytes / 1e6, 2),
            "details_mb": round(payload.details_bytes / 1e6, 2), "js_kb": round(js / 1e3, 1),
            "budget_ratio": round(report.stat().st_size /
                                  (2 * (payload.raw_bytes + payload.details_bytes) + js), 3)}


def open_in_chromium(report: Path) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.reporting.offline_page import LOCAL
    from tests.widgets.browser import CHROMIUM, CHROMIUM_ARGS
    from tests.widgets.harness import guard

    blocked = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        guard(page, LOCAL, blocked, [], [])
        t = time.perf_counter()
        page.goto(report.resolve().as_uri())
        page.wait_for_selector(".tfprof-dashboard .db-card", timeout=300000)
        dashboard = time.perf_counter() - t
        t = time.perf_counter()
        page.click(".db-tab[data-tab='timeline']")
        page.wait_for_selector("[data-pane='timeline'] canvas", timeout=300000)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => "
                      "requestAnimationFrame(r)))")
        timeline = time.perf_counter() - t
        browser.close()
    return {"open_to_dashboard_s": round(dashboard, 2),
            "timeline_first_paint_s": round(timeline, 2), "blocked_requests": len(blocked)}


def xprof_trace_viewer(path: Path) -> float:
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.name
        shutil.copy(path, copy)
        t = time.perf_counter()
        xspace_to_tool_data([str(copy)], "trace_viewer", {"use_saved_result": False})
        return time.perf_counter() - t


def main(argv=None) -> int:
    from bench_load import profile_from_args

    path, events = profile_from_args(__doc__, argv)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.html"
        res = {"file_mb": round(path.stat().st_size / 1e6, 1),
               "events": events, **write(path, out),
               **open_in_chromium(out)}
    res["xprof_trace_viewer_s"] = round(xprof_trace_viewer(path), 2)
    res["ratio_vs_xprof_trace_viewer"] = round(res["xprof_trace_viewer_s"] / res["write_s"], 1)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
