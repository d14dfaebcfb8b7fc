"""``tfprof diff BASE NEW``: how NEW differs from BASE (``tp.compare``): its verdict on the
median step time with the noise band (``Comparison.step_time``, the statistic ``tp.check``
judges), what the ops explain of that change and the unexplained rest, the mean step per
category, the ops matched across recompiles whose median time per step changed most (with
their noise bands), the HLO diff and the kernels; ``--json`` has the same numbers."""

from __future__ import annotations

from ..analysis.findings.comparison import MEANS_SCOPE
from ..analysis.findings.op_changes import ops_time_words
from ._common import EXIT_OK, CliError, add_command, emit, load_profile

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = add_command(sub, "diff", "how NEW differs from BASE: step time verdict, ops matched "
                    "across recompiles with noise bands, HLO diff, categories, kernels")
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
    from ..comparing import compare
    from .summary import category_label, run_location

    c = compare(base, new, labels=("base", "new"))
    change = c.step_time
    steps = c.steps.rename(columns={"a": "base_ms", "b": "new_ms", "delta": "delta_ms"})
    steps.insert(0, "category", ["whole step" if m == "duration_ms" else category_label(m)
                                 for m in steps.index])
    steps.insert(0, "metric", list(steps.index))
    ops = c.ops.rename(columns={"a": "base_us", "b": "new_us", "delta": "delta_us",
                                "band_low": "band_low_us", "band_high": "band_high_us",
                                "a_op": "base_op", "b_op": "new_op"})
    kernels = c.kernels.rename(columns={"a": "base_us", "b": "new_us", "delta": "delta_us"})
    return {"base": run_location(base.source), "new": run_location(new.source),
            "verdict": change["verdict"], "noise_band_pct": change["band"],
            "median_ms": {k: change[k] for k in ("base", "new", "pct")},
            "mean_ms": _mean_change(c, len(base.steps), len(new.steps)),
            "explained_ms": dict(c.explained),
            "ops_noise_floor_us": c.ops.attrs.get("floor_us"),
            "steps": steps.reset_index(drop=True),
            "waterfall": c.waterfall(top),
            "ops": ops.head(top).reset_index(),
            "hlo": c.hlo.rename(columns={"a_count": "base_count", "b_count": "new_count",
                                         "a_bytes": "base_bytes", "b_bytes": "new_bytes"}),
            "kernels": kernels.head(top).reset_index()}


def _mean_change(c, base_steps: int, new_steps: int) -> dict:
    base, new = (float(c.steps.loc["duration_ms", k]) if n else None
                 for k, n in (("a", base_steps), ("b", new_steps)))
    pct = 100 * (new - base) / base if base and new is not None else None
    return {"base": base, "new": new, "pct": pct}


def diff_text(doc: dict) -> str:
    """The comparison document as text: the two profiles, the verdict, the tables."""
    lines = [f"BASE  {doc['base']}", f"NEW   {doc['new']}", "", doc["verdict"]]
    steps = doc["steps"]
    changed = steps[(steps.base_ms != 0) | (steps.new_ms != 0)]
    if len(changed):
        lines += ["", f"Mean step time per category (ms), {MEANS_SCOPE}; the verdict "
                  "above judges the median",
                  _rows(changed, ["category"], "base_ms", "new_ms", "delta_ms", pct=True)]
    ex = doc["explained_ms"]
    if ex.get("unexplained_ms") is not None:
        lines += ["", f"Of the median step's change {ex['step_ms']:+.3f} ms: "
                  f"{ex['explained_ms']:+.3f} ms in {ops_time_words(ex)}, "
                  f"{ex['unexplained_ms']:+.3f} ms unexplained"]
    if len(doc["ops"]):
        lines += ["", "Ops with the largest change in self time per step (us: the median of "
                  "steps, else total / steps as the verdict says; a run without steps: its "
                  "total), matched across recompiles",
                  _op_rows(doc["ops"])]
    if len(doc["hlo"]):
        lines += ["", "HLO diff (time per step, us)"]
        lines += [f"  {r.program}: {r.change}: {r.detail}"
                  + (f" ({r.time_us:+,.3f} us)" if r.time_us == r.time_us else "")
                  for r in doc["hlo"].itertuples()]
    if len(doc["kernels"]):
        lines += ["", "Kernels with the largest change in time per step (us: total / steps; a "
                  "run without steps: its total)",
                  _rows(doc["kernels"], ["kernel_name"], "base_us", "new_us", "delta_us")]
    return "\n".join(lines)


def _op_rows(ops) -> str:
    """The op table: name (its base name where renamed; its program where ops of several
    programs share the name), BASE, NEW, delta, band, verdict."""
    program = ops.program_name.astype(str)
    shared = ops.duplicated(["host_or_device", "operation"], keep=False).to_numpy() & \
        (program != "").to_numpy()
    names = [f"{r.operation} (was {r.base_op})" if r.base_op and r.new_op and
             r.base_op != r.new_op else str(r.operation) for r in ops.itertuples()]
    names = [f"{n} in {p}" if s else n for n, p, s in zip(names, program, shared)]
    ops = ops.assign(operation=names)
    table = _rows(ops, ["host_or_device", "operation"], "base_us", "new_us", "delta_us")
    lines = table.split("\n")
    lines[0] += f"  {'band (95 %, all ops)':>24}  verdict"
    for i, r in enumerate(ops.itertuples(), start=1):
        band = (f"{r.band_low_us:+,.2f} to {r.band_high_us:+,.2f}"
                if r.band_low_us == r.band_low_us else "")
        lines[i] += f"  {band:>24}  {r.noise} ({r.matched_by})"
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
