"""``%%tfprof`` cells at several tracer levels, in a fresh process with TensorFlow's C++ log on.

    python levels_worker.py

Runs each cell of :data:`CELLS` in an IPython shell and prints one JSON line: for each, the
event count and the distinct event names of the profile, and under ``"log"`` the profiler's
own log records the sessions held back (TensorFlow's C++ lines, such as "python_tracer_level
expects an i value", which ``%%tfprof`` keeps out of the cell's output); the rest of this
process's stderr the test reads too.
"""

from __future__ import annotations

import json
import os
import sys

SETUP = """
import tensorflow as tf
w = tf.Variable(tf.ones([8, 2]))

@tf.function
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.matmul(x, w))
    w.assign_sub(0.001 * tape.gradient(loss, w))
    return loss

x = tf.ones([4, 8])
_ = step(x)
"""
CELLS = {
    "host1": "--host-tracer-level 1",
    "host3": "--host-tracer-level 3",
    "python0": "--python-tracer-level 0",
    "python1": "--python-tracer-level 1",
}


def main() -> None:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"  # TensorFlow's warnings reach stderr
    from IPython.core.interactiveshell import InteractiveShell

    from tfprof_nb.capturing import session

    held: list = []  # every record the sessions held back
    quiet = session.quiet_profiler_log
    session.quiet_profiler_log = lambda who, into=None: quiet(who, held)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "tfprof_nb")
    ip.run_cell(SETUP).raise_error()
    out = {}
    for key, options in CELLS.items():
        cell = f"%%tfprof --whole-cell --no-show --out prof {options}\nfor _ in range(3):\n" \
               f"    step(x)\n"
        ip.run_cell(cell).raise_error()
        names = ip.user_ns["prof"].events["name"].astype(str)
        out[key] = {"events": len(names), "names": sorted(set(names))}
    out["log"] = [repr(line) for line in held]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
