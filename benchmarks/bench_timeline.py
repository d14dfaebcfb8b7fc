"""Timeline benchmark: payload size, first paint and frame times in headless Chromium.

    python benchmarks/bench_timeline.py [--profile FILE.xplane.pb] [--sizes 100000 1000000]

For each size, the first N events of a real CPU profile go to a TraceTimeline; the view is
rendered in Debian's Chromium through the test harness (the widget's real ES module fed its
real synced state).  Reported: wire bytes per event (binary columns + name table), time from
the render call to the first complete paint, time from navigation start to first paint
(includes fetching the payload), and median / p95 frame time over 30 scripted zoom and pan
steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


class _Subset:
    """The first n events of a profile (what the timeline reads: events and steps)."""

    def __init__(self, prof, n):
        self.events = prof.events.iloc[:n]
        self.steps = prof.steps.iloc[0:0]


def run(prof, n: int) -> dict:
    from tests.widgets.harness import WidgetPage
    from tfprof_nb.widgets._base import bundle
    from tfprof_nb.widgets.timeline import TraceTimeline

    widget = TraceTimeline(_Subset(prof, n))
    events = len(widget.ev_start) // 8
    names = sum(len(s.encode()) + 3 for s in widget.meta["names"])
    with tempfile.TemporaryDirectory() as tmp:
        with WidgetPage(widget, Path(tmp), bundle("timeline")) as page:
            first_paint = page.js("() => window.__firstPaintMs")
            since_nav = page.js("() => performance.now()")
            frames = page.js("""() => {
              const t = document.querySelector('.tfprof-timeline').__timeline;
              const [a, b] = t.view();
              const out = [];
              let lo = a, hi = b;
              for (let k = 0; k < 30; k++) {
                const span = hi - lo;
                if (k < 10) { const c = lo + span * 0.37; lo = c - span * 0.3; hi = c + span * 0.3; }
                else if (k < 20) { lo += span * 0.15; hi += span * 0.15; }
                else { const c = (lo + hi) / 2; lo = c - span * 0.9; hi = c + span * 0.9; }
                t.setView(lo, hi);
                out.push(t.drawNow().ms);
              }
              return out;
            }""")
            payload = page.payload_bytes
    frames = sorted(frames)
    return {"events": events, "bytes_per_event": round((payload + names) / events, 2),
            "first_paint_ms": round(first_paint, 1),
            "navigation_to_first_paint_ms": round(since_nav, 1),
            "median_frame_ms": round(statistics.median(frames), 2),
            "p95_frame_ms": round(frames[int(0.95 * (len(frames) - 1))], 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    args = ap.parse_args(argv)
    from bench_load import ensure_profile

    import tfprof_nb as tp

    path = args.profile or ensure_profile(max(args.sizes))
    prof = tp.load(path)
    results = [run(prof, n) for n in args.sizes]
    print(json.dumps({"machine": "2 cores, headless Chromium (Debian), software rendering",
                      "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
