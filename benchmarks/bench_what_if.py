"""``prof.what_if`` against real changes: predict one run of a pair from the other.

    .venv/bin/python benchmarks/bench_what_if.py [--pairs DIR]

CPU pairs (tests/make_what_if_pairs.py, captured here unless --pairs names a directory that
holds them) and the committed H200 pair (tests/data).  For each: the key scaled, its factor
(the ratio of the matched events' median own time in the two runs), the median predicted
step, the other run's measured median step and the error |predicted - measured| / measured;
then how far apart two runs of the same program came (the noise floor of a pair).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tfprof_nb as tp  # noqa: E402
from tfprof_nb.analysis.critical.what_if import node_self_ms  # noqa: E402


def _own_ms(prof, key: str) -> float:
    """Median own time per step of the events a key matches (name, or category)."""
    w = prof.what_if({key: 1.0})
    names = list(w.attrs["matched"][key]["names"])
    per_step = sum(node_self_ms(prof, n).sum() for n in names) / max(len(prof.steps), 1)
    return float(per_step)


def predict(slow, fast, key: str, factor: float | None = None) -> dict:
    if factor is None:
        factor = _own_ms(fast, key) / _own_ms(slow, key)
    w = slow.what_if({key: factor})
    predicted, measured = w.predicted_ms.median(), fast.steps.duration_ms.median()
    return {"key": key, "factor": factor, "from_ms": slow.steps.duration_ms.median(),
            "predicted_ms": predicted, "measured_ms": measured,
            "error": abs(predicted - measured) / measured}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=Path)
    args = ap.parse_args()
    pairs = args.pairs or Path(tempfile.mkdtemp())
    if not (pairs / "jax_base").exists():
        sys.path.insert(0, str(ROOT / "tests"))
        from make_what_if_pairs import capture

        capture(pairs)
    load = {p.name: tp.load(p) for p in sorted(pairs.iterdir()) if p.is_dir()}
    data = ROOT / "tests" / "data"
    rows = [("JAX CPU input 8 -> 2 ms", predict(load["jax_input_slow"], load["jax_input_fast"],
                                                "make_batch")),
            ("JAX CPU host work on path -> none", predict(load["jax_host_on"], load["jax_base"],
                                                          "host_work", 0.0)),
            ("JAX CPU host work off path -> none", predict(load["jax_host_off"],
                                                           load["jax_base"], "host_work", 0.0)),
            ("TF CPU tf.data map 8 -> 2 ms", predict(load["tf_input_slow"],
                                                     load["tf_input_fast"], "input")),
            ("TF CPU same, the map's py_function only", predict(
                load["tf_input_slow"], load["tf_input_fast"], "EagerPyFunc*")),
            ("TF CPU step's py_function 8 -> 2 ms, prefetch inside", predict(
                load["tf_step_slow"], load["tf_step_fast"], "*step_work*")),
            ("H200 input in Python -> NumPy", predict(
                tp.load(data / "jax_h200_inputbound.xplane.pb"),
                tp.load(data / "jax_h200_transformer.xplane.pb"), "train"))]
    print("| pair | scaled | factor | from (ms) | predicted (ms) | measured (ms) | error |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(f"| {name} | `{r['key']}` | {r['factor']:.3f} | {r['from_ms']:.2f} | "
              f"{r['predicted_ms']:.2f} | {r['measured_ms']:.2f} | {r['error'] * 100:.1f} % |")
    errors = [r["error"] for _, r in rows]
    print(f"median error {np.median(errors) * 100:.1f} %, max {max(errors) * 100:.1f} %")
    # the noise floor: jax_base and jax_input_fast run one program with one input
    same = [load[n].steps.duration_ms.median() for n in ("jax_base", "jax_input_fast")]
    print(f"same program twice (jax_base, jax_input_fast): {same[0]:.2f} / {same[1]:.2f} ms, "
          f"{abs(same[0] - same[1]) / min(same) * 100:.1f} % apart")


if __name__ == "__main__":
    main()
