"""Export benchmark: every event to Chrome JSON (.json, .json.gz) and Perfetto, against xprof.

    python benchmarks/bench_export.py [--profile FILE.xplane.pb] [--events 1000000]
                                      [--repeat 3] [--markdown OUT.md]

Each measurement runs in a fresh process: load the profile (``tp.load`` and ``prof.events``,
timed apart), then write it with ``prof.to_chrome_trace`` / ``prof.to_perfetto``.  Reported per
format: the best wall time of ``--repeat`` runs, the peak resident memory the export added on
top of the loaded profile (Linux: the peak is reset after loading) and the process's peak, and
the file's size and event count.  Reference in the same run: xprof's trace viewer tool
(``xspace_to_tool_data(..., "trace_viewer", ...)``), which makes Chrome trace JSON in memory
capped at 1 M events, timed and measured the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

FORMATS = {"json": "trace.json", "json.gz": "trace.json.gz", "perfetto": "trace.perfetto-trace"}


def _memory_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the process's peak RSS to its current RSS (Linux 4.0+)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_kb() -> int:
    return _memory_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def worker(kind: str, path: Path, out_dir: Path) -> dict:
    """One measurement in this (fresh) process."""
    t = time.perf_counter()
    if kind == "xprof":
        from xprof.convert.raw_to_tool_data import xspace_to_tool_data

        copy = out_dir / path.name  # xprof caches results next to the file: work on a copy
        shutil.copy(path, copy)
        base = _memory_kb("VmRSS")
        reset = _reset_peak()
        t = time.perf_counter()
        data = xspace_to_tool_data([str(copy)], "trace_viewer", {"use_saved_result": False})[0]
        seconds = time.perf_counter() - t
        text = data if isinstance(data, str) else data.decode()
        return {"seconds": seconds, "size_mb": len(text.encode()) / 1e6,
                "events": sum(text.count(f'"ph": "{ph}"') for ph in "Xi"),  # slices, instants
                "peak_added_mb": (_peak_kb() - base) / 1e3 if reset and base else None,
                "peak_process_mb": _peak_kb() / 1e3}
    import tfprof_nb as tp

    prof = tp.load(path)
    n = len(prof.events)
    prof.steps  # noqa: B018  the steps track needs them: analysed before the clock starts
    load = time.perf_counter() - t
    base = _memory_kb("VmRSS")
    reset = _reset_peak()
    target = out_dir / FORMATS[kind]
    t = time.perf_counter()
    if kind == "perfetto":
        written = prof.to_perfetto(target)
    else:
        written = prof.to_chrome_trace(target)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "load_s": load, "size_mb": written.stat().st_size / 1e6,
            "events": n + len(prof.steps),
            "peak_added_mb": (_peak_kb() - base) / 1e3 if reset and base else None,
            "peak_process_mb": _peak_kb() / 1e3}


def measure(kind: str, path: Path, repeat: int) -> dict:
    """Best of ``repeat`` fresh-process runs (time; memory and size of that run)."""
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run([sys.executable, __file__, "--worker", kind, str(path), tmp],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda r: r["seconds"])
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in best.items()}


def markdown(res: dict) -> str:
    ref = res["xprof_trace_viewer"]
    rows = ["| | time (s) | x faster than xprof | peak added (MB) | size (MB) | events |",
            "|---|---:|---:|---:|---:|---:|"]
    for kind in FORMATS:
        r = res[kind]
        rows.append(f"| `{kind}` | {r['seconds']} | {ref['seconds'] / r['seconds']:.1f} | "
                    f"{r['peak_added_mb']} | {r['size_mb']} | {r['events']:,} |")
    rows.append(f"| xprof trace_viewer (in memory) | {ref['seconds']} | 1.0 | "
                f"{ref['peak_added_mb']} | {ref['size_mb']} | {ref['events']:,} |")
    return (f"## Trace export ({res['events']:,} events, {res['file_mb']} MB .xplane.pb)\n\n"
            f"Best of {res['repeat']} fresh processes each; the profile loads in "
            f"{res['json']['load_s']} s before the export's clock starts.  \"Peak added\": the "
            "process's peak RSS during the export minus its RSS once the profile was loaded.\n\n"
            + "\n".join(rows) + "\n")


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--worker"]:
        print(json.dumps(worker(argv[1], Path(argv[2]), Path(argv[3]))))
        return 0
    from bench_load import profile_from_args

    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", type=Path)
    own, rest = ap.parse_known_args(argv)
    path, events = profile_from_args(__doc__, rest)
    res = {"file_mb": round(path.stat().st_size / 1e6, 1), "events": events,
           "repeat": own.repeat, "cpus": os.cpu_count()}
    for kind in FORMATS:
        res[kind] = measure(kind, path, own.repeat)
    res["xprof_trace_viewer"] = measure("xprof", path, own.repeat)
    for kind in FORMATS:
        res[f"ratio_{kind}_vs_xprof"] = round(res["xprof_trace_viewer"]["seconds"] /
                                              res[kind]["seconds"], 1)
    print(json.dumps(res, indent=2))
    if own.markdown:
        own.markdown.write_text(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
