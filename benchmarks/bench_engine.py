"""Analysis engine benchmark: tfprof_nb against xprof-rs, the fastest XProf backend, same run.

    python benchmarks/bench_engine.py [--profile FILE] [--events 1000000] [--runs 7]
                                      [--pod] [--big] [--gb 1.13] [--big-runs 3] [--big-only]
                                      [--json OUT]

One host (the benchmark CPU profile, see bench_load.py):
  * decode: ``read_xspace`` warm, events/s (target >= 20 M/s);
  * time, alternating runs in one process: warm ``tp.load(f).overview()`` and warm
    ``tp.load(f).analyse()`` (every analysis) against ``xprof-rs get_overview RUN_DIR``;
  * peak memory (``/usr/bin/time -v``, fresh processes, alternating): a process doing load +
    every analysis, one doing load + overview, and xprof-rs get_overview.
``--pod``: 8 hosts made of copies of the profile: local load + every analysis (time, peak),
and the same on a Dask LocalCluster (2 worker processes; the client process's peak).
``--big``: a >= 1 GB single host composed from the profile (compose_profile.py long): fresh
processes, alternating, file in the page cache, after one unmeasured round of both: ours
(load, every analysis, both, the whole process, peak RSS), ours up to the first view (load +
the overview), against xprof-rs get_overview (whole process, peak RSS), medians of
``--big-runs``, and the ratios (time: whole processes).

tfprof_nb's modules are byte-compiled first, as an installed wheel's are (pip compiles them
at install; a source checkout run with PYTHONDONTWRITEBYTECODE=1 compiles every module at
each import instead): ``--no-bytecode`` measures without.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

XPROF_RS = shutil.which("xprof-rs") or str(Path(sys.executable).parent / "xprof-rs")

# a process that loads a profile and analyses it, printing its own timings as JSON
_OURS = r"""
import json, resource, sys, time
t0 = time.perf_counter()
import tfprof_nb as tp
t1 = time.perf_counter()
prof = tp.load(sys.argv[1], **json.loads(sys.argv[3]))
t2 = time.perf_counter()
prof.overview() if sys.argv[2] == "overview" else prof.analyse()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "analysis_s": t3 - t2,
                  "in_process_s": t3 - t1, "events": prof.n_events,
                  "self_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_DASK = r"""
import json, resource, sys, time
import tfprof_nb as tp
from distributed import Client, LocalCluster
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                  silence_logs=40) as cluster, Client(cluster) as client:
    t0 = time.perf_counter()
    prof = tp.load(sys.argv[1], client=client).analyse()
    t1 = time.perf_counter()
    steps = len(prof.steps)
print(json.dumps({"in_process_s": t1 - t0, "steps": steps,
                  "client_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def timed(cmd: list[str]) -> dict:
    """Run ``cmd`` under /usr/bin/time -v: wall seconds, peak RSS (MB), stdout."""
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True,
                          check=True)
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    h, m, s = wall.groups()
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return {"wall_s": int(h or 0) * 3600 + int(m) * 60 + float(s),
            "peak_mb": int(peak.group(1)) / 1024, "stdout": done.stdout}


def ours_process(path: Path, what: str, **load_kwargs) -> dict:
    out = timed([sys.executable, "-c", _OURS, str(path), what, json.dumps(load_kwargs)])
    out.update(json.loads(out.pop("stdout").strip().splitlines()[-1]))
    return out


def xprof_rs_process(run_dir: Path) -> dict:
    out = timed([XPROF_RS, "get_overview", str(run_dir)])
    out.pop("stdout")
    return out


def warm_file(path: Path) -> None:
    """Read a file once so both sides find it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def single_host(path: Path, runs: int) -> dict:
    import tfprof_nb as tp
    from tfprof_nb.xspace import read_xspace

    run_dir = path.parent
    n_events = len(read_xspace(path).events)
    decode = []
    for _ in range(runs):
        t = time.perf_counter()
        read_xspace(path)
        decode.append(time.perf_counter() - t)
    tp.load(path).analyse()  # warm: library loaded, modules imported
    overview, every, xrs = [], [], []
    for _ in range(runs):  # alternating, same process for ours
        t = time.perf_counter()
        tp.load(path).overview()
        overview.append(time.perf_counter() - t)
        t = time.perf_counter()
        tp.load(path).analyse()
        every.append(time.perf_counter() - t)
        xrs.append(xprof_rs_process(run_dir)["wall_s"])
    peaks_all, peaks_overview, peaks_xrs = [], [], []
    for _ in range(3):
        peaks_all.append(ours_process(path, "every"))
        peaks_overview.append(ours_process(path, "overview"))
        peaks_xrs.append(xprof_rs_process(run_dir))
    size_mb = path.stat().st_size / 2**20
    res = {
        "file_mb": round(size_mb, 1), "events": n_events,
        "decode_s": round(statistics.median(decode), 4),
        "decode_events_per_s": round(n_events / statistics.median(decode)),
        "warm_load_overview_s": round(statistics.median(overview), 3),
        "warm_load_every_analysis_s": round(statistics.median(every), 3),
        "xprof_rs_get_overview_s": round(statistics.median(xrs), 3),
        "ratio_overview": round(statistics.median(xrs) / statistics.median(overview), 2),
        "every_analysis_over_xprof_rs": round(statistics.median(every) /
                                              statistics.median(xrs), 2),
        "peak_mb_every_analysis": round(median(peaks_all, "peak_mb"), 1),
        "peak_mb_overview": round(median(peaks_overview, "peak_mb"), 1),
        "peak_mb_xprof_rs": round(median(peaks_xrs, "peak_mb"), 1),
        "peak_over_file_size": round(median(peaks_all, "peak_mb") / size_mb, 2),
        "process_wall_s_every_analysis": round(median(peaks_all, "wall_s"), 2),
        "process_import_s": round(median(peaks_all, "import_s"), 2),
        "process_wall_s_xprof_rs": round(median(peaks_xrs, "wall_s"), 2),
        "all_times_s": {"overview": [round(x, 3) for x in overview],
                        "every": [round(x, 3) for x in every],
                        "xprof_rs": [round(x, 3) for x in xrs]},
    }
    return res


def pod(path: Path, hosts: int = 8) -> dict:
    from compose_profile import compose_pod

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "pod"
        compose_pod(path, run_dir, hosts=hosts)
        local = ours_process(run_dir, "every")
        dask = timed([sys.executable, "-c", _DASK, str(run_dir)])
        dask.update(json.loads(dask.pop("stdout").strip().splitlines()[-1]))
    return {"hosts": hosts, "events": local["events"],
            "local_s": round(local["in_process_s"], 2),
            "local_peak_mb": round(local["peak_mb"], 1),
            "dask_s": round(dask["in_process_s"], 2),
            "dask_client_peak_mb": round(dask["client_peak_mb"], 1)}


def big_host(path: Path, gb: float, runs: int) -> dict:
    """One host composed to ``gb`` GB from ``path``: ``runs`` alternating fresh processes of
    ours (load + every analysis) and of xprof-rs get_overview, the file read into the page
    cache before each; medians."""
    from compose_profile import compose_long_host

    cache = Path(os.environ.get("TFPROF_BENCH_CACHE",
                                Path.home() / ".cache" / "tfprof_nb" / "bench"))
    big = cache / f"big_{gb:g}gb" / "plugins" / "profile" / "run1" / "vm.xplane.pb"
    if not big.exists():
        big.parent.mkdir(parents=True, exist_ok=True)
        compose_long_host(path, big, int(gb * 1e9))
    warm_file(big)  # a first round unmeasured (the first process after others runs slow)
    ours_process(big, "every")
    xprof_rs_process(big.parent)
    ours, first, ref = [], [], []
    for _ in range(runs):
        warm_file(big)
        ours.append(ours_process(big, "every"))
        warm_file(big)
        first.append(ours_process(big, "overview"))
        warm_file(big)
        ref.append(xprof_rs_process(big.parent))
    size_mb = big.stat().st_size / 2**20
    med = {k: median(ours, k) for k in ("load_s", "analysis_s", "in_process_s", "wall_s",
                                         "peak_mb", "import_s")}
    ref_s, ref_mb = median(ref, "wall_s"), median(ref, "peak_mb")
    return {"file_mb": round(size_mb, 1), "events": ours[0]["events"], "runs": runs,
            "load_s": round(med["load_s"], 2), "analyse_s": round(med["analysis_s"], 2),
            "load_and_analyse_s": round(med["in_process_s"], 2),
            "process_wall_s": round(med["wall_s"], 2), "import_s": round(med["import_s"], 2),
            "peak_mb": round(med["peak_mb"]), "peak_over_file": round(med["peak_mb"] / size_mb, 2),
            "xprof_rs_s": round(ref_s, 2), "xprof_rs_peak_mb": round(ref_mb),
            "time_over_xprof_rs": round(med["wall_s"] / ref_s, 3),
            "memory_over_xprof_rs": round(med["peak_mb"] / ref_mb, 3),
            # the first view: load + the overview (what xprof-rs get_overview computes; over
            # 5 M events it does not wait for the critical path)
            "overview_process_wall_s": round(median(first, "wall_s"), 2),
            "overview_analysis_s": round(median(first, "analysis_s"), 2),
            "overview_peak_over_file": round(median(first, "peak_mb") / size_mb, 2),
            "overview_time_over_xprof_rs": round(median(first, "wall_s") / ref_s, 3),
            "all": {"ours": [{k: round(r[k], 2) for k in ("load_s", "analysis_s", "wall_s",
                                                           "peak_mb")} for r in ours],
                    "ours_overview": [{k: round(r[k], 2) for k in ("load_s", "analysis_s",
                                                                    "wall_s", "peak_mb")}
                                      for r in first],
                    "xprof_rs": [{k: round(r[k], 2) for k in ("wall_s", "peak_mb")}
                                 for r in ref]}}


def compile_package() -> None:
    """Byte-compile tfprof_nb as an installed wheel is (its ``__pycache__`` folders)."""
    import compileall

    compileall.compile_dir(str(HERE.parent / "tfprof_nb"), quiet=1)


def main(argv=None) -> int:
    from bench_load import ensure_profile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--pod", action="store_true")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--gb", type=float, default=1.13)
    ap.add_argument("--big-runs", type=int, default=3)
    ap.add_argument("--big-only", action="store_true", help="skip the 36 MB single host")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--no-bytecode", action="store_true",
                    help="leave tfprof_nb's modules uncompiled (compiled at each import)")
    args = ap.parse_args(argv)
    path = args.profile or ensure_profile(args.events)
    if not args.no_bytecode:
        compile_package()
    res = {"cores": os.cpu_count(), "bytecode": not args.no_bytecode}
    if not args.big_only:
        res["single_host"] = single_host(path, args.runs)
    if args.pod:
        res["pod"] = pod(path)
    if args.big:
        res["big_host"] = big_host(path, args.gb, args.big_runs)
    print(json.dumps(res, indent=2))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
