"""Load benchmark: tp.load vs TensorFlow's xplane_pb2 parse + a Python loop, same run.

    python benchmarks/bench_load.py [--profile FILE.xplane.pb] [--events 1000000]

Without --profile, a CPU profile of at least --events events is captured once with
tensorflow-cpu (benchmarks/make_profile.py) and cached under ~/.cache/tfprof_nb/bench.
Reports events/s for both paths, their ratio, ``tp.load`` + ``prof.events`` (the events table
built too) in events/s, the one-time cost of compiling the native library
(what a source checkout pays once; wheels ship it built) and the first-call cost in a new
process.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("TFPROF_BENCH_CACHE", Path.home() / ".cache" / "tfprof_nb" / "bench"))


def ensure_profile(min_events: int) -> Path:
    """A cached CPU profile with at least ``min_events`` events (captured if missing)."""
    sys.path.insert(0, str(HERE.parent))
    from tfprof_nb.xspace import read_xspace

    meta = CACHE / "profile.json"
    if meta.exists():
        info = json.loads(meta.read_text())
        if info["events"] >= min_events and Path(info["path"]).exists():
            return Path(info["path"])
    steps = max(100, min_events // 380 + 200)
    while True:
        logdir = CACHE / f"logdir_{steps}"
        out = subprocess.run([sys.executable, str(HERE / "make_profile.py"), str(logdir),
                              "--steps", str(steps)], check=True, capture_output=True, text=True)
        path = Path(out.stdout.strip().splitlines()[-1])
        n = len(read_xspace(path).events)
        if n >= min_events:
            meta.write_text(json.dumps({"path": str(path), "events": n}))
            return path
        steps = int(steps * min_events / max(n, 1) * 1.1) + 1


def profile_from_args(doc: str, argv=None) -> tuple[Path, int]:
    """The benchmark's profile (``--profile FILE`` or a cached one of ``--events`` events) and
    its event count, with the native library built."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--events", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    path = args.profile or ensure_profile(args.events)
    import tfprof_nb as tp

    prof = tp.load(path)
    prof.steps  # the native library is built and loaded
    return path, len(prof.events)


def python_loop_reference(path: Path) -> tuple[float, int, int]:
    """Parse with TF's xplane_pb2 and visit every event and stat in Python."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    t0 = time.perf_counter()
    space = xplane_pb2.XSpace()
    space.ParseFromString(path.read_bytes())
    n_events = n_stats = 0
    for plane in space.planes:
        names = {k: v.name for k, v in plane.event_metadata.items()}
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        for line in plane.lines:
            base = line.timestamp_ns * 1000
            for ev in line.events:
                _ = (names.get(ev.metadata_id, ""), base + ev.offset_ps, ev.duration_ps)
                n_events += 1
                for st in ev.stats:
                    case = st.WhichOneof("value")
                    _ = (stat_names.get(st.metadata_id, ""), getattr(st, case) if case else None)
                    n_stats += 1
    return time.perf_counter() - t0, n_events, n_stats


def _first_call_in_new_process(path: Path) -> float:
    code = ("import sys, time; t = time.perf_counter(); import tfprof_nb as tp; "
            "tp.load(sys.argv[1]); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                         capture_output=True, text=True, cwd=str(HERE.parent))
    return float(out.stdout.strip())


def _native_build_time() -> float:
    """Seconds to compile the native library from its sources (into a scratch directory)."""
    from tfprof_nb._native.build import build_library

    with tempfile.TemporaryDirectory() as scratch:
        t = time.perf_counter()
        build_library(Path(scratch))
        return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    path = args.profile or ensure_profile(args.events)
    sys.path.insert(0, str(HERE.parent))
    import tfprof_nb as tp

    cold = _native_build_time()
    warm_first = _first_call_in_new_process(path)

    tp.load(path).events  # warm
    load_times, frame_times, table_times = [], [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        prof = tp.load(path)
        t1 = time.perf_counter()
        _ = prof.events
        t2 = time.perf_counter()
        load_times.append(t1 - t0)
        frame_times.append(t2 - t0)
        table_times.append(t2 - t1)
    space = next(iter(prof.spaces.values()))
    n_events = len(space.events)
    n_stats = int((space.stats.owner_kind == 0).sum())
    ref_time, ref_events, ref_stats = python_loop_reference(path)
    assert (ref_events, ref_stats) == (n_events, n_stats), "reference saw different counts"

    load = statistics.median(load_times)
    frame = statistics.median(frame_times)
    res = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
                   f"Python {platform.python_version()}",
        "file_mb": round(path.stat().st_size / 1e6, 1),
        "events": n_events,
        "stats": n_stats,
        "tp_load_s": round(load, 4),
        "tp_load_events_per_s": round(n_events / load),
        "tp_load_plus_events_frame_s": round(frame, 4),
        "tp_load_plus_events_frame_events_per_s": round(n_events / frame),
        "events_frame_alone_s": round(statistics.median(table_times), 4),
        "reference_s": round(ref_time, 3),
        "reference_events_per_s": round(n_events / ref_time),
        "ratio": round(ref_time / load, 1),
        "ratio_with_events_frame": round(ref_time / frame, 1),
        "native_build_once_s": round(cold, 2),
        "first_call_new_process_s": round(warm_first, 2),
    }
    print(json.dumps(res, indent=2))
    print(f"tp.load + prof.events: {frame:.4f} s, {n_events / frame / 1e6:.1f} M events/s "
          f"(tp.load alone {n_events / load / 1e6:.1f} M events/s; median of {args.repeat})")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
