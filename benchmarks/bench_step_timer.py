"""The cost of tp.Monitor's step timer: the same jitted JAX loop of ~2 ms steps, through
``mon.iterate`` with the step timer off (``step_timer=False``) against on, alternated in one
process.

    python benchmarks/bench_step_timer.py [--pairs 4] [--steps 1500] [--size 576]
    python benchmarks/bench_step_timer.py --matmul 8192 --steps 400 --pairs 3   # a GPU

No window opens in any run (``warmup`` past the loop's end): what differs is only the step
timer.  Three ways on are measured, each in ABBA order against off (off, on, on, off, ...)
after one unmeasured run of each: ``host`` (a timestamp pair per step, the compile clock,
the flags' bookkeeping), ``thread`` (the same, and each step's loss handed to
``mon.track``: a small thread waits for it to be ready on the device) and ``poll`` (the
same, readiness asked with ``is_ready()`` at the step boundaries instead).  The loop itself
never waits for the device (JAX's asynchronous dispatch); the run ends when the last
parameters are ready.  Reports each run's wall time, the medians, their ratio (goal: under
1.01) and the median step time the timer measured against the loop's wall time per step;
then the timer's own cost per step in µs (``per_step_us``: empty steps, no model), which a
busy machine's noise between whole runs cannot hide.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def jax_loop(steps: int, size: int):
    """run(mon, track) -> seconds of ``steps`` steps of a jitted MLP step through
    ``mon.iterate`` (``track``: each step's loss handed to ``mon.track``)."""
    import jax
    import jax.numpy as jnp

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params0 = [jax.random.normal(k1, (size, size)) * 0.05,
               jax.random.normal(k2, (size, 10)) * 0.05]
    x = jax.random.normal(jax.random.PRNGKey(1), (128, size))

    @jax.jit
    def train_step(params, x):
        def loss(p):
            return jnp.mean((jnp.tanh(x @ p[0]) @ p[1]) ** 2)
        value, g = jax.value_and_grad(loss)(params)
        return [p - 0.01 * d for p, d in zip(params, g)], value

    def run(mon, track: bool) -> float:
        params = params0
        t0 = time.perf_counter()
        for _ in mon.iterate(range(steps)):
            params, loss = train_step(params, x)
            if track:
                mon.track(loss)
        jax.block_until_ready(params)
        return time.perf_counter() - t0
    return run


def matmul_loop(steps: int, n: int):
    """run(mon, track) -> seconds of ``steps`` steps of ``w = tanh(w @ w)`` on an n x n
    bfloat16 matrix (a GPU's step: 8192 is ~1.4 ms on an H200), nothing read back."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda w: jnp.tanh(w @ w) * 0.01)
    w0 = jnp.full((n, n), 0.01, jnp.bfloat16)
    f(w0).block_until_ready()

    def run(mon, track: bool) -> float:
        w = w0
        t0 = time.perf_counter()
        for _ in mon.iterate(range(steps)):
            w = f(w)
            if track:
                mon.track(w)
        w.block_until_ready()
        return time.perf_counter() - t0
    return run


def per_step_us(ways, steps: int = 20_000, repeats: int = 5) -> dict:
    """The timer's own cost per step (µs), without a model: ``steps`` empty steps through
    ``mon.iterate`` (tracking a ready JAX array for ``thread`` and ``poll``), the best of
    ``repeats`` runs, against the same with the timer off."""
    import jax.numpy as jnp

    import tfprof_nb as tp

    ready = jnp.ones(4).block_until_ready()

    def best(way: str) -> float:
        times = []
        for _ in range(repeats):
            mon = tp.Monitor(every_steps=10 * steps, steps=1, warmup=10 * steps,
                             backend="jax", step_timer=way != "off")
            if way == "poll":
                mon._timer.ready_mode = "poll"
            track = way in ("thread", "poll")
            t0 = time.perf_counter()
            for _ in mon.iterate(range(steps)):
                if track:
                    mon.track(ready)
            times.append(time.perf_counter() - t0)
        return 1e6 * min(times) / steps
    off = best("off")
    return {"off_us": off, **{f"{way}_us": best(way) - off for way in ways}}


def measure(run, way: str, pairs: int, steps: int) -> dict:
    import tfprof_nb as tp

    def once(on: bool) -> tuple[float, float]:
        mon = tp.Monitor(every_steps=10 * steps, steps=1, warmup=10 * steps, backend="jax",
                         step_timer=on)
        if on and way == "poll":
            mon._timer.ready_mode = "poll"
        wall = run(mon, on and way != "host")
        if on and way == "thread":  # the last outputs' readiness, noted by the timer's thread
            time.sleep(0.05)
        if on and way == "poll":  # ready now (the run waited): the next boundary's poll
            mon._timer._poll(time.perf_counter())
        st = mon.step_times
        assert not on or len(st) == steps, (len(st), steps)
        summed = float(st.duration_ms.sum()) / 1e3 / wall
        return wall, (float(st.duration_ms.median()), summed) if on else None

    once(False)
    once(True)
    off, on, timed = [], [], []
    for i in range(pairs):
        for side in ((False, True, True, False) if i % 2 == 0 else (True, False, False, True)):
            wall, seen = once(side)  # seen: (median step, sum / wall)
            (on if side else off).append(wall)
            if side:
                timed.append(seen)
        print(f"{way} round {i + 1}: off {off[-2]:.3f} {off[-1]:.3f} s, on {on[-2]:.3f} "
              f"{on[-1]:.3f} s", file=sys.stderr)
    m_off, m_on = statistics.median(off), statistics.median(on)
    pair = [a / b for a, b in zip(on, off)]  # each run against the other side's in its round
    return {"off_s": off, "on_s": on, "median_off_s": m_off, "median_on_s": m_on,
            "ratio": m_on / m_off, "median_pair_ratio": statistics.median(pair),
            "wall_ms_per_step": 1e3 * m_on / steps,
            "timer_median_step_ms": statistics.median(t[0] for t in timed),
            "timer_sum_over_wall": statistics.median(t[1] for t in timed)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=4, help="ABBA rounds (2 runs a side each)")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--size", type=int, default=576, help="the MLP's width (step time)")
    ap.add_argument("--ways", default="host,thread,poll")
    ap.add_argument("--matmul", type=int, default=0,
                    help="N: steps of tanh(w @ w) on N x N bf16 instead of the MLP (GPU)")
    args = ap.parse_args(argv)
    ways = args.ways.split(",")
    run = matmul_loop(args.steps, args.matmul) if args.matmul else \
        jax_loop(args.steps, args.size)
    out = {way: measure(run, way, args.pairs, args.steps) for way in ways}
    micro = per_step_us(ways)
    print(json.dumps({**out, "per_step_us": micro}, indent=1))
    for way, r in out.items():
        print(f"{way}: off {r['median_off_s']:.3f} s, on {r['median_on_s']:.3f} s, ratio "
              f"{r['ratio']:.4f} (pairs' median {r['median_pair_ratio']:.4f}; goal < 1.01); "
              f"{r['wall_ms_per_step']:.2f} ms per step by wall time, the timer's median "
              f"{r['timer_median_step_ms']:.2f} ms, its steps' sum "
              f"{r['timer_sum_over_wall']:.3f} of the wall time; the timer's own cost "
              f"{micro[way + '_us']:.2f} us per step (an empty step: {micro['off_us']:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
