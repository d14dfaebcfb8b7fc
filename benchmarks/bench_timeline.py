"""Timeline benchmark: first state, build time, first paint, frames and window fetches.

    python benchmarks/bench_timeline.py [--profile FILE.xplane.pb] [--sizes 100000 1000000]
                                        [--big] [--lab]

``--sizes``: the first N events of a real CPU profile go to a TraceView (whole up to the
8 MB state budget, an overview past it), rendered in Debian's Chromium through the test
harness: the widget's real ES module fed its real synced state, its window requests answered
by the widget's own Python (``WidgetPage(kernel=True)``).  ``--big``: a ~10 M-event profile
composed from the real capture (``compose_profile.py long``, cached), whole.  Reported per
profile: widget build (timeline only: indexes, first state), first-state bytes, time from the
render call to the first complete paint and from navigation, frame times over 30 scripted
zoom and pan steps (each step waits for its window's detail, then the frame is timed), the
page's round trip for a window (request to drawn tile) and Python's time per window.
``--lab``: the window round trip through a real JupyterLab kernel (the 10 M-event profile),
p50 and p95 over 30 zoom and pan steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

TL = "document.querySelector('.tfprof-timeline').__timeline"
# the time of the frame that draws the current view: the timeline paints on the next
# animation frame after a change; one more frame, and that paint is done
NEXT_FRAME_MS = (f"async () => {{ await new Promise(r => requestAnimationFrame(() => "
                 f"requestAnimationFrame(r))); return {TL}.frame.ms; }}")
BIG_EVENTS = 10_000_000


class _Subset:
    """The first n events of a profile (what the timeline reads: events, steps, and the
    profile's track order and launch links)."""

    def __init__(self, prof, n):
        self.events = prof.events.iloc[:n]
        self.steps = prof.steps.iloc[0:0]
        self.result = prof.result


def _pct(values, q):
    values = sorted(values)
    return values[min(int(q * (len(values) - 1) + 0.5), len(values) - 1)] if values else None


def steps_script(view):
    """30 views: 10 zoom-ins around 37 %, 10 pans right, 10 zoom-outs (as in session 2)."""
    lo, hi = view
    out = []
    for k in range(30):
        span = hi - lo
        if k < 10:
            c = lo + span * 0.37
            lo, hi = c - span * 0.3, c + span * 0.3
        elif k < 20:
            lo, hi = lo + span * 0.15, hi + span * 0.15
        else:
            c = (lo + hi) / 2
            lo, hi = c - span * 0.9, c + span * 0.9
        out.append((lo, hi))
    return out


def run(prof, n: int | None, label: str) -> dict:
    from tests.widgets.harness import WidgetPage
    from tfprof_nb.offline import bundle
    from tfprof_nb.widgets.trace_view import TraceView

    source = prof if n is None else _Subset(prof, n)
    t = time.perf_counter()
    widget = TraceView(source)
    build = time.perf_counter() - t
    lod = widget.meta["lod"]
    state = sum(buf.nbytes for buf in widget.get_state("tile")["tile"]["buffers"])
    names = sum(len(s.encode()) + 3 for s in widget.meta["names"])
    with tempfile.TemporaryDirectory() as tmp:
        with WidgetPage(widget, Path(tmp), bundle("timeline"), kernel=True) as page:
            first_paint = page.js("() => window.__firstPaintMs")
            since_nav = page.js("() => performance.now()")
            frames, waited = [], []
            for a, b in steps_script(page.js(f"() => {TL}.view()")):
                t = time.perf_counter()
                page.js(f"([a, b]) => {TL}.setView(a, b)", [a, b])
                try:  # the detail of the new view (none needed when every event is here)
                    page.page.wait_for_function(f"() => !{TL}.tiles.pending && {TL}.sharp()",
                                                timeout=10000, polling=5)
                except Exception:
                    pass
                waited.append(time.perf_counter() - t)
                frames.append(page.js(NEXT_FRAME_MS))
            trips = page.js(f"() => {TL}.tiles.roundTrips")
            answered = list(page.answered)
            errors = list(page.console_errors)
    return {"profile": label, "events": lod["events"], "mode": lod["mode"],
            "widget_build_s": round(build, 2), "first_state_mb": round((state + names) / 2**20, 2),
            "first_paint_ms": round(first_paint, 1),
            "navigation_to_first_paint_ms": round(since_nav, 1),
            "median_frame_ms": round(statistics.median(frames), 2),
            "p95_frame_ms": round(_pct(frames, 0.95), 2),
            "windows_fetched": len(trips),
            "window_round_trip_p50_ms": round(_pct(trips, 0.5), 1) if trips else None,
            "window_round_trip_p95_ms": round(_pct(trips, 0.95), 1) if trips else None,
            "python_window_p95_ms": round(_pct(answered, 0.95) * 1e3, 2) if answered else None,
            "console_errors": len(errors)}


def big_profile(src: Path) -> Path:
    """A ~10 M-event single-host profile composed from ``src`` (cached next to it)."""
    out = src.parent.parent / "composed_10m" / "plugins" / "profile" / "run1" / "vm.xplane.pb"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        gb = src.stat().st_size * BIG_EVENTS / 1_088_879 / 1e9
        subprocess.run([sys.executable, str(HERE / "compose_profile.py"), "long", str(src),
                        str(out), "--gb", f"{gb:.3f}"], check=True, capture_output=True)
    return out


def in_jupyterlab(path: Path) -> dict:
    """Window round trips through a real JupyterLab kernel on the profile at ``path``."""
    from playwright.sync_api import sync_playwright

    from tests.widgets.jupyter import (jupyter_server, open_notebook, run_first_cell,
                                       write_notebook)

    with tempfile.TemporaryDirectory() as root:
        write_notebook(Path(root), "import tfprof_nb as tp\n"
                       f"w = tp.widgets.TraceView(tp.load({str(path)!r}))\nw")
        with jupyter_server(Path(root)) as url, sync_playwright() as pw:
            browser, page = open_notebook(pw, url, "lab", [], viewport=(1500, 1000))
            t = time.perf_counter()
            run_first_cell(page)
            page.wait_for_selector(".tfprof-timeline canvas", timeout=600000)
            shown = time.perf_counter() - t
            # the kernel is idle again (it packs the view's offline copy after showing it)
            page.wait_for_function("/\\[[0-9]+\\]/.test(document.querySelector("
                                   "'.jp-InputPrompt').innerText)", timeout=600000)
            idle = time.perf_counter() - t
            for a, b in steps_script(page.evaluate(f"() => {TL}.view()")):
                page.evaluate(f"([a, b]) => {TL}.setView(a, b)", [a, b])
                try:
                    page.wait_for_function(f"() => !{TL}.tiles.pending && {TL}.sharp()",
                                           timeout=10000, polling=5)
                except Exception:
                    pass
            trips = page.evaluate(f"() => {TL}.tiles.roundTrips")
            browser.close()
    return {"profile": "10M composed, JupyterLab kernel", "cell_to_timeline_s": round(shown, 1),
            "cell_done_s": round(idle, 1),
            "windows_fetched": len(trips),
            "window_round_trip_p50_ms": round(_pct(trips, 0.5), 1) if trips else None,
            "window_round_trip_p95_ms": round(_pct(trips, 0.95), 1) if trips else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--big", action="store_true", help="also a ~10 M-event composed profile")
    ap.add_argument("--lab", action="store_true", help="round trips in a real JupyterLab")
    args = ap.parse_args(argv)
    from bench_load import ensure_profile

    import tfprof_nb as tp

    path = args.profile or ensure_profile(max(args.sizes or [1_000_000]))
    results = []
    if args.sizes:
        prof = tp.load(path)
        results += [run(prof, n, f"first {n:,} events") for n in args.sizes]
    if args.big or args.lab:
        big = big_profile(path)
        if args.big:
            prof = tp.load(big)
            prof.steps  # analyses are not the timeline's: computed before timing it
            results.append(run(prof, None, "10M composed"))
            del prof
        if args.lab:
            results.append(in_jupyterlab(big))
    print(json.dumps({"machine": "2 cores, headless Chromium (Debian), software rendering",
                      "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
