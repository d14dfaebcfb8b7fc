"""SQL and GPU-time benchmark: ``prof.sql`` on the large CPU profile, ``prof.gpu_utilization``
on the 8-GPU BERT fixture.

    python benchmarks/bench_sql.py [--profile FILE.xplane.pb] [--events 1000000]
                                   [--repeat 3] [--markdown OUT.md]

Each measurement runs in a fresh process.  SQL: the profile is loaded (and the event ids and
time shifts the views use are computed) before the clock starts; then the ``events`` view is
registered (timed; the process's peak RSS is reset before it, so "peak added" is what
registering costs on top of the loaded profile, as a share of that process's RSS), and a
GROUP BY over every event runs (best of 3).  Reference in the same process: the same GROUP BY
in pandas on ``prof.events`` (built before its clock starts).  GPU time: ``gpu_utilization``
computed from scratch on the loaded fixture (its steps already computed), against computing
the step table itself in the same process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_export import _memory_kb, _peak_kb, _reset_peak  # noqa: E402

GPU_FIXTURE = HERE.parent / "tests" / "data" / "gpu_bert_multiworker" / \
    "34.83.195.179_6003.xplane.pb"
GROUP_BY = "SELECT name, count(*) AS n, sum(duration_us) AS us FROM events GROUP BY name"


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def sql_worker(path: Path) -> dict:
    import tfprof_nb as tp
    from tfprof_nb.sql import SqlSession

    prof = tp.load(path)
    prof.result("shifts"), prof.result("event_offsets")
    session = SqlSession(prof._results, prof.spaces)
    session.connection()
    base = _memory_kb("VmRSS")
    reset = _reset_peak()
    t = time.perf_counter()
    session.register_events()
    register = time.perf_counter() - t
    peak_added = (_peak_kb() - base) / 1e3 if reset and base else None
    group_by = _best(lambda: session.query(GROUP_BY))
    t = time.perf_counter()
    session.ensure("stats")
    stats_register = time.perf_counter() - t
    events = prof.events
    pandas = _best(lambda: events.groupby("name", observed=True).duration_us.agg(["size",
                                                                                 "sum"]))
    return {"events": len(events), "register_s": register, "stats_register_s": stats_register,
            "peak_added_mb": peak_added, "rss_mb": base / 1e3 if base else None,
            "group_by_s": group_by, "pandas_group_by_s": pandas}


def gpu_worker(path: Path) -> dict:
    import tfprof_nb as tp

    prof = tp.load(path)
    t = time.perf_counter()
    prof.steps  # noqa: B018
    steps = time.perf_counter() - t
    t = time.perf_counter()
    prof.gpu_utilization  # noqa: B018  (gpu_time host step and the combine)
    util = time.perf_counter() - t
    t = time.perf_counter()
    prof.gpu_overlap, prof.launch_latency, prof.duty_cycle, prof.stragglers  # noqa: B018
    rest = time.perf_counter() - t
    return {"gpu_utilization_s": util, "other_gpu_tables_s": rest, "steps_s": steps}


def measure(kind: str, path: Path, repeat: int) -> dict:
    """Best of ``repeat`` fresh-process runs (by the first timed key)."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, __file__, "--worker", kind, str(path)],
                             capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    key = "register_s" if kind == "sql" else "gpu_utilization_s"
    best = min(runs, key=lambda r: r[key])
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in best.items()}


def markdown(sql: dict, gpu: dict) -> str:
    pct = 100 * sql["peak_added_mb"] / sql["rss_mb"] if sql["peak_added_mb"] else None
    return "\n".join([
        f"## SQL ({sql['events']:,} events) and GPU time (8-GPU BERT fixture)", "",
        "| measurement | result | target |", "|---|---:|---|",
        f"| register `events` (every host's columns, scanned in place) | "
        f"{1e3 * sql['register_s']:.1f} ms | < 50 ms |",
        f"| peak memory added by registering | {sql['peak_added_mb']} MB "
        f"({pct:.1f} % of {sql['rss_mb']:.0f} MB) | < 10 % |",
        f"| GROUP BY name over every event | {sql['group_by_s']:.3f} s "
        f"(pandas on prof.events: {sql['pandas_group_by_s']:.3f} s) | < 0.5 s |",
        f"| register `stats` (on first use) | {1e3 * sql['stats_register_s']:.1f} ms | |",
        f"| prof.gpu_utilization (steps computed) | {gpu['gpu_utilization_s']:.3f} s "
        f"(the step table itself: {gpu['steps_s']:.3f} s) | < 0.2 s |",
        f"| overlap, launch latency, duty cycle, stragglers after it | "
        f"{gpu['other_gpu_tables_s']:.3f} s | |", ""])


def main(argv=None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--worker"]:
        fn = sql_worker if argv[1] == "sql" else gpu_worker
        print(json.dumps(fn(Path(argv[2]))))
        return 0
    from bench_load import profile_from_args

    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--markdown", type=Path)
    own, rest = ap.parse_known_args(argv)
    path, _ = profile_from_args(__doc__, rest)
    sql = measure("sql", path, own.repeat)
    gpu = measure("gpu", GPU_FIXTURE, own.repeat)
    print(json.dumps({"sql": sql, "gpu": gpu}, indent=1))
    text = markdown(sql, gpu)
    print(text)
    if own.markdown:
        own.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
