"""``tfprof diff BASE NEW``: how NEW differs from BASE (``tp.compare``): a verdict on the
median step time, the mean step per category, and the ops and kernels whose time changed
most."""

from __future__ import annotations

from ._common import EXIT_OK, CliError, add_command, emit, load_profile

__all__ = ["add_parser", "run", "verdict"]


def add_parser(sub) -> None:
    p = add_command(sub, "diff", "how NEW differs from BASE: step time verdict, categories, "
                    "ops, kernels")
    p.add_argument("base", metavar="BASE", help="the reference profile (path or URL)")
    p.add_argument("new", metavar="NEW", help="the profile to judge (path or URL)")
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="how many ops and kernels to list (default 10)")


def run(args) -> int:
    if args.top < 0:
        raise CliError(f"--top {args.top}: expected 0 or more")
    base, new = load_profile(args, args.base), load_profile(args, args.new)
    emit(args, diff_document(base, new, args.top), diff_text)
    return EXIT_OK


def diff_document(base, new, top: int = 10) -> dict:
    """The comparison of two profiles as plain values: ``verdict``, ``median_ms`` and
    ``mean_ms`` of the step time, ``steps`` (mean per category), ``ops`` and ``kernels``
    (the ``top`` largest changes)."""
    from ..compare import compare
    from .summary import category_label, run_location

    c = compare(base, new, labels=("base", "new"))
    medians = [float(p.steps.duration_ms.median()) if len(p.steps) else None
               for p in (base, new)]
    steps = c.steps.rename(columns={"a": "base_ms", "b": "new_ms", "delta": "delta_ms"})
    steps.insert(0, "category", ["whole step" if m == "duration_ms" else category_label(m)
                                 for m in steps.index])
    steps.insert(0, "metric", list(steps.index))
    ops = c.ops.rename(columns={"a": "base_us", "b": "new_us", "delta": "delta_us"})
    kernels = c.kernels.rename(columns={"a": "base_us", "b": "new_us", "delta": "delta_us"})
    band = noise_band(base.steps, new.steps)
    return {"base": run_location(base.source), "new": run_location(new.source),
            "verdict": verdict(*medians, len(base.steps), len(new.steps)) + band_words(band),
            "noise_band_pct": band,
            "median_ms": _change(*medians),
            "mean_ms": _change(*(float(c.steps.loc["duration_ms", k]) if n else None
                                 for k, n in (("a", len(base.steps)), ("b", len(new.steps))))),
            "steps": steps.reset_index(drop=True),
            "ops": ops.head(top).reset_index(),
            "kernels": kernels.head(top).reset_index()}


def noise_band(base_steps, new_steps) -> dict | None:
    """The 95 % noise band of the change of step time (``tp.check``'s: the Mann-Whitney
    interval of the ratio of new to base step times, a pod's steps at their slowest host),
    as ``{"low", "high"}`` in %; None when a side has too few steps."""
    from ..checks.limit_measures import per_step
    from ..checks.regression import step_regression

    try:
        r = step_regression(per_step(base_steps).duration_ms, per_step(new_steps).duration_ms,
                            0.0)
    except (ValueError, AttributeError):
        return None
    return {"low": r.low_pct, "high": r.high_pct}


def band_words(band: dict | None) -> str:
    """The verdict's second half: whether the change is beyond the noise of the steps."""
    if band is None:
        return ""
    where = "beyond" if band["low"] > 0 or band["high"] < 0 else "within"
    return (f"; noise band {band['low']:+.1f} % to {band['high']:+.1f} % (95 %, from both "
            f"runs' step times): {where} noise")


def _change(base, new) -> dict:
    pct = 100 * (new - base) / base if base and new is not None else None
    return {"base": base, "new": new, "pct": pct}


def verdict(base_ms, new_ms, base_steps: int = 1, new_steps: int = 1) -> str:
    """One line on the median step time: "NEW is 12.3 % slower per step than BASE (median
    8.390 ms -> 9.420 ms)", faster, or as fast (within 0.05 %)."""
    missing = [name for name, n in (("BASE", base_steps), ("NEW", new_steps)) if not n]
    if missing or not base_ms:
        return (f"no step time to compare: {' and '.join(missing) or 'BASE'} "
                f"{'have' if len(missing) > 1 else 'has'} no steps")
    pct = 100 * (new_ms - base_ms) / base_ms
    medians = f"(median {base_ms:.3f} ms -> {new_ms:.3f} ms)"
    if abs(pct) < 0.05:
        return f"NEW is as fast per step as BASE {medians}"
    return f"NEW is {abs(pct):.1f} % {'slower' if pct > 0 else 'faster'} per step than BASE " \
           f"{medians}"


def diff_text(doc: dict) -> str:
    """The comparison document as text: the two profiles, the verdict, the tables."""
    lines = [f"BASE  {doc['base']}", f"NEW   {doc['new']}", "", doc["verdict"]]
    steps = doc["steps"]
    changed = steps[(steps.base_ms != 0) | (steps.new_ms != 0)]
    if len(changed):
        lines += ["", "Mean step time per category (ms)",
                  _rows(changed, ["category"], "base_ms", "new_ms", "delta_ms", pct=True)]
    if len(doc["ops"]):
        lines += ["", "Ops with the largest change in self time (us)",
                  _rows(doc["ops"], ["host_or_device", "operation"], "base_us", "new_us",
                        "delta_us")]
    if len(doc["kernels"]):
        lines += ["", "Kernels with the largest change in total time (us)",
                  _rows(doc["kernels"], ["kernel_name"], "base_us", "new_us", "delta_us")]
    return "\n".join(lines)


def _rows(df, keys, base, new, delta, pct=False) -> str:
    """Aligned rows: the key columns (cut to 60 characters), BASE, NEW, delta (and %)."""
    names = [" ".join(str(r[k]) for k in keys) for _, r in df.iterrows()]
    names = [n if len(n) <= 60 else n[:59] + "…" for n in names]
    width = max(len(n) for n in names + ["name"])
    out = [f"  {'':<{width}}  {'BASE':>12}  {'NEW':>12}  {'delta':>12}"
           + (f"  {'%':>6}" if pct else "")]
    for name, (_, r) in zip(names, df.iterrows()):
        share = f"  {r['pct']:+6.1f}" if pct and r["pct"] == r["pct"] else ""
        out.append(f"  {name:<{width}}  {r[base]:12,.3f}  {r[new]:12,.3f}  "
                   f"{r[delta]:+12,.3f}{share}")
    return "\n".join(out)
