"""Object-store benchmark: tp.load of a run on S3 (moto's server on 127.0.0.1), cold and warm,
against copying the run down by hand and loading it, and against a local load, same run.

    python benchmarks/bench_object_store.py [--profile FILE.xplane.pb] [--events 1000000]
                                            [--hosts 2] [--repeat 3]

The run holds ``--hosts`` copies of one CPU profile (captured once and cached, as
bench_load.py does).  Measured, each the median of ``--repeat`` runs:

- local: ``tp.load`` of the run directory on local disk (the floor);
- copy + load: ``s3fs.get`` of the run to a temporary directory, then ``tp.load`` of it (what a
  user does by hand without URL support);
- cold: ``tp.load("s3://...")`` with an empty cache (list, download into the cache, decode);
- warm: the same again (list, then decode the cached files);
- memory: ``TFPROF_NB_CACHE=0`` (ranges read into memory, nothing on disk).

moto is a Python server: its transfer rate, not ours, bounds the cold numbers; the copy +
load reference pays the same server.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

RUN = "2024_01_01_00_00_00"


def _median(fn, repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _measure(path: Path, hosts: int, repeat: int, scratch: Path) -> dict:
    """Upload ``hosts`` copies of ``path`` to a fresh moto server and time every way in."""
    import s3fs

    import tfprof_nb as tp
    from tests.s3_server import MotoServer
    from tfprof_nb.xspace.cache import clear_cache

    server = MotoServer()
    try:
        opts = server.options()
        fs = s3fs.S3FileSystem(skip_instance_cache=True, **opts)
        fs.mkdir("bench")
        local_run = scratch / "local" / RUN
        local_run.mkdir(parents=True)
        for i in range(hosts):
            shutil.copy(path, local_run / f"host-{i}.xplane.pb")
            fs.put_file(str(path), f"bench/logdir/plugins/profile/{RUN}/host-{i}.xplane.pb")
        url = "s3://bench/logdir"

        def copy_and_load():
            with tempfile.TemporaryDirectory(dir=scratch) as down:
                fs.get(f"bench/logdir/plugins/profile/{RUN}/", down + "/", recursive=True)
                tp.load(down)

        def memory():
            os.environ["TFPROF_NB_CACHE"] = "0"
            try:
                tp.load(url, storage_options=opts)
            finally:
                del os.environ["TFPROF_NB_CACHE"]

        res = {
            "events_per_host": len(tp.load(local_run).events) // hosts,
            "local_s": _median(lambda: tp.load(local_run), repeat),
            "copy_and_load_s": _median(copy_and_load, repeat),
            "cold_s": _median(lambda: tp.load(url, storage_options=opts), repeat,
                              before=clear_cache),
            "memory_s": _median(memory, repeat),
        }
        tp.load(url, storage_options=opts)
        res["warm_s"] = _median(lambda: tp.load(url, storage_options=opts), repeat)
        return res
    finally:
        server.stop()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--hosts", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    from bench_load import ensure_profile

    path = args.profile or ensure_profile(args.events)
    scratch = Path(tempfile.mkdtemp(prefix="tfprof_bench_store_"))
    os.environ["TFPROF_NB_CACHE_DIR"] = str(scratch / "cache")
    try:
        res = {"profile": str(path), "hosts": args.hosts, "bytes_per_host": path.stat().st_size,
               "cpu": platform.processor() or "unknown",
               **_measure(path, args.hosts, args.repeat, scratch)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    res["cold_vs_copy_and_load"] = res["cold_s"] / res["copy_and_load_s"]
    res["warm_vs_local"] = res["warm_s"] / res["local_s"]
    mb = args.hosts * res["bytes_per_host"] / 2**20
    print(f"{args.hosts} host(s) x {res['bytes_per_host'] / 2**20:.1f} MB "
          f"({res['events_per_host']:,} events each) on moto S3, median of {args.repeat}:")
    for key, label in (("local_s", "local load"), ("copy_and_load_s", "s3fs copy + load"),
                       ("cold_s", "tp.load(s3://) cold"), ("memory_s", "tp.load(s3://) no cache"),
                       ("warm_s", "tp.load(s3://) warm")):
        print(f"  {label:26s} {res[key]:7.3f} s   ({mb / res[key]:7.1f} MB/s)")
    print(f"  cold / (copy + load) = {res['cold_vs_copy_and_load']:.2f}, "
          f"warm / local = {res['warm_vs_local']:.2f}")
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
