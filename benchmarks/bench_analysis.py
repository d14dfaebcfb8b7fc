"""Analysis benchmark: all of tfprof_nb's analyses vs xprof's converters, same run.

    python benchmarks/bench_analysis.py [--profile FILE.xplane.pb] [--events 1000000]

Times, on one >= 1 M-event CPU profile: loading plus every analysis (steps, op stats, kernel
stats, memory, input pipeline, tf.data, overview, pod), and xprof's converters for the matching
tools (overview_page, input_pipeline_analyzer, framework_op_stats, kernel_stats,
memory_profile), each on a fresh copy of the file.
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

XPROF_TOOLS = ["overview_page", "input_pipeline_analyzer", "framework_op_stats", "kernel_stats",
               "memory_profile"]


def ours(path: Path) -> dict:
    import tfprof_nb as tp

    times = {}
    t0 = time.perf_counter()
    prof = tp.load(path)
    _ = prof.events
    times["load+events"] = time.perf_counter() - t0
    for name, fn in [("steps", lambda: prof.steps), ("op_stats", lambda: prof.op_stats),
                     ("kernel_stats", lambda: prof.kernel_stats),
                     ("memory", lambda: prof.memory_summary),
                     ("input_pipeline", lambda: prof.input_pipeline),
                     ("tf_data", lambda: prof.tf_data), ("overview", lambda: prof.overview()),
                     ("pod", lambda: prof.pod)]:
        t = time.perf_counter()
        fn()
        times[name] = time.perf_counter() - t
    times["total"] = time.perf_counter() - t0
    return times


def xprof(path: Path) -> dict:
    from xprof.convert.raw_to_tool_data import xspace_to_tool_data

    times = {}
    for tool in XPROF_TOOLS:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / path.name
            shutil.copy(path, copy)
            t = time.perf_counter()
            xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False})
            times[tool] = time.perf_counter() - t
    times["total"] = sum(times.values())
    return times


def main(argv=None) -> int:
    from bench_load import profile_from_args

    path, events = profile_from_args(__doc__, argv)
    mine = ours(path)
    ref = xprof(path)
    res = {"file_mb": round(path.stat().st_size / 1e6, 1),
           "events": events,
           "tfprof_nb_s": {k: round(v, 3) for k, v in mine.items()},
           "xprof_s": {k: round(v, 3) for k, v in ref.items()},
           "ratio": round(ref["total"] / mine["total"], 1)}
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
