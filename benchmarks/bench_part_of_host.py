"""A host bigger than memory: refused whole before allocating, opened in a window.

    python benchmarks/bench_part_of_host.py SRC.xplane.pb --gb 10 [--window-pct 1] [--keep]

Composes one host of ``--gb`` GB from ``SRC`` (``compose_profile.py long``; reused when
``OUT`` exists, deleted at the end unless ``--keep``), then runs two fresh processes under
``/usr/bin/time -v``: ``tp.load(OUT)`` (refused: its MemoryError, its time and peak RSS) and
``tp.load(OUT, window=...)`` on the first ``--window-pct`` percent of the host's span, with
every analysis (``prof.analyze()``; its events, steps, time and peak RSS).  Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

_WHOLE = """
import json, time, tfprof_nb as tp
t = time.perf_counter()
try:
    tp.load({path!r}, progress=False)
    print(json.dumps({{"refused": False}}))
except MemoryError as exc:
    print(json.dumps({{"refused": True, "message": str(exc), "s": time.perf_counter() - t}}))
"""

_PART = """
import json, time, tfprof_nb as tp
from tfprof_nb.analysis.runtime.decoding.selecting import scan_hosts
from tfprof_nb.xspace.files import find_profile_files, host_names
t = time.perf_counter()
files = host_names(find_profile_files({path!r}))
(space,) = scan_hosts(files).values()
lo, hi = space.file_span_ps()
scan_s = time.perf_counter() - t
window = (lo / 1e6, (lo + (hi - lo) * {pct} / 100) / 1e6)
t = time.perf_counter()
prof = tp.load({path!r}, window=window, progress=False)
n = len(prof.events)
prof.analyze()
print(json.dumps({{"window_us": window, "events": n, "steps": len(prof.steps),
                  "scan_s": scan_s, "load_and_analyses_s": time.perf_counter() - t}}))
"""


def timed(code: str) -> dict:
    """Run ``code`` in a fresh Python under /usr/bin/time -v: its JSON, wall s, peak RSS."""
    t = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True)
    wall = time.perf_counter() - t
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return {**out, "wall_s": round(wall, 2), "peak_mb": int(peak.group(1)) // 1024}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("--gb", type=float, default=10.0)
    ap.add_argument("--out", type=Path, default=Path("/tmp/tfprof_part_of_host.xplane.pb"))
    ap.add_argument("--window-pct", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from compose_profile import compose_long_host

    res = {}
    if not args.out.exists():
        res["composed"] = compose_long_host(args.src, args.out, int(args.gb * 1e9))
    try:
        size = args.out.stat().st_size
        res["file_gb"] = round(size / 1e9, 2)
        res["whole"] = timed(_WHOLE.format(path=str(args.out)))
        part = timed(_PART.format(path=str(args.out), pct=args.window_pct))
        part["peak_per_file_byte"] = round(part["peak_mb"] * 2**20 / size, 3)
        res["window"] = part
    finally:
        if not args.keep:
            args.out.unlink(missing_ok=True)
    print(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
