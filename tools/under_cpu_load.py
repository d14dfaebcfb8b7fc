"""Run a command while other processes keep every core busy: the suite's check that what a
user's busy machine does to timing (a Ctrl-C landing as a run ends, a slow load's progress
output in JupyterLab) does not break the tests that are sensitive to it.

    python -m tools.under_cpu_load [--jobs N] -- COMMAND ...

Starts N busy-loop processes (default: one per core) at normal priority, runs COMMAND, stops
them, and exits with COMMAND's status.  It prints the load average before and after so a CI
log shows the load the command ran under.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def run_under_load(command: list[str], jobs: int) -> int:
    stop = mp.Event()
    burners = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(jobs)]
    for p in burners:
        p.start()
    try:
        print(f"under_cpu_load: {jobs} busy processes; load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        status = subprocess.call(command)
        print(f"under_cpu_load: done (status {status}); load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        return status
    finally:
        stop.set()
        for p in burners:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command given (put it after --)")
    return run_under_load(command, max(args.jobs, 1))


if __name__ == "__main__":
    sys.exit(main())
