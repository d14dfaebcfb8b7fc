"""``tfprof what-if PATH --scale KEY=FACTOR ...``: each step's duration predicted with some
durations scaled (``prof.what_if``).

A key is a step-time category (``input``, ``host_compute``, ``device_compute``,
``kernel_launch``, ``idle``, ...) or a glob of event names (``'fusion*'``, quoted in a shell);
the factor multiplies the matched events' own time (0.5: twice as fast, 0: gone).  Prints the
measured and predicted median step, each step's prediction with its range, what each key
matched, the new critical path's sentence and the replay's notes; ``--json`` the same as one
document (:func:`what_if_document`, which the MCP tool returns too).
"""

from __future__ import annotations

from ..analysis.steps.per_step import host_count
from ._common import EXIT_OK, CliError, add_command, emit, load_profile
from .formats import records

__all__ = ["add_parser", "parse_scale", "run", "what_if_document"]


def add_parser(sub) -> None:
    p = add_command(sub, "what-if", "predict each step with some durations scaled (the "
                    "dependency graph replayed)", part=True)
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="a logdir (its newest run), a run directory, .xplane.pb files or URLs")
    p.add_argument("--scale", action="append", default=[], metavar="KEY=FACTOR",
                   required=True,
                   help="scale the events a key matches (repeatable): a category such as "
                        "input, host_compute, device_compute, or a name glob such as "
                        "'fusion*'; e.g. --scale input=0.5")
    p.add_argument("--path-rows", type=int, default=20, metavar="N",
                   help="how many rows of the new critical path --json lists (default 20)")


def parse_scale(items) -> dict[str, float]:
    """``["key=factor", ...]`` as ``{key: factor}`` (split at the last ``=``); CliError for
    an item without ``=``, a factor that is not a number, or one below 0."""
    out: dict[str, float] = {}
    for item in items:
        key, sep, value = str(item).rpartition("=")
        if not sep or not key:
            raise CliError(f"--scale {item!r}: expected KEY=FACTOR, e.g. input=0.5")
        try:
            factor = float(value)
        except ValueError:
            raise CliError(f"--scale {item!r}: the factor {value!r} is not a number") from None
        if not factor >= 0 or factor == float("inf"):
            raise CliError(f"--scale {item!r}: the factor must be finite and >= 0")
        out[key] = out.get(key, 1.0) * factor
    if not out:
        raise CliError("give at least one --scale KEY=FACTOR")
    return out


def what_if_document(prof, scale: dict, path_rows: int = 20) -> dict:
    """The command's JSON document: the scale, the medians, one record per step, what each
    key matched, the new critical path's sentence and first ``path_rows`` rows, notes."""
    w = prof.what_if(scale)
    measured, predicted = w.measured_ms.median(), w.predicted_ms.median()
    path = w.attrs["critical_path"]
    return {"scale": dict(scale),
            "median": {"measured_ms": measured, "predicted_ms": predicted,
                       "change": predicted / measured - 1 if measured > 0 else None,
                       "scope": _median_scope(w)},
            "steps": records(w),
            "matched": {k: {"events": m["nodes"], "of": m["of"], "measured_ms": m["ms"],
                            "top_names_ms": m["names"]}
                        for k, m in w.attrs["matched"].items()},
            "sentence": w.attrs["sentence"],
            "critical_path": records(path.head(path_rows)) if len(path) else [],
            "critical_path_times": "replayed: start_us is on the profile's time axis as the "
                                   "replay (durations scaled) places the segment, not as "
                                   "measured (prof.critical_path)",
            "critical_path_rows": len(path), "notes": list(w.attrs["notes"])}


def _median_scope(w) -> str:
    """Which steps the medians are of: a pod's are each host's steps in its own time (not a
    step at its slowest host, the other pages' step time)."""
    hosts = host_count(w)
    if hosts > 1:
        return f"of the {len(w)} steps of {hosts} hosts, each in its own host's time"
    return f"of the {len(w)} step{'s' * (len(w) != 1)}"


def _text(doc: dict) -> str:
    med = doc["median"]
    scale = ", ".join(f"{k} x{v:g}" for k, v in doc["scale"].items())
    change = "" if med["change"] is None else f" ({med['change'] * 100:+.1f}%)"
    wide = min(max([4] + [len(str(r["host"])) for r in doc["steps"]]), 40)
    lines = [f"What if {scale}:",
             f"  median step {med['measured_ms']:.3f} ms measured -> "
             f"{med['predicted_ms']:.3f} ms predicted{change}, {med['scope']}", "",
             f"  {'host':<{wide}} {'step':>6} {'measured_ms':>12} {'predicted_ms':>13}  "
             "range_ms"]
    for r in doc["steps"]:
        lines.append(f"  {str(r['host'])[:wide]:<{wide}} {r['step']:>6} "
                     f"{r['measured_ms']:>12.3f} {r['predicted_ms']:>13.3f}  "
                     f"{r['low_ms']:.3f}-{r['high_ms']:.3f}")
    lines.append("")
    for key, m in doc["matched"].items():
        top = ", ".join(list(m["top_names_ms"])[:3])
        what = "gaps between the events of a thread or stream, summed over all of them" \
            if m["of"] == "gaps" else "events, their own time (less their children's)"
        lines.append(f"  {key}: {m['events']:,} {what}: {m['measured_ms']:,.3f} ms measured"
                     + (f" ({top})" if top else ""))
    if doc["sentence"]:
        lines += ["", "  After the change: " + doc["sentence"]]
    lines += [""] + [f"  Note: {n}" for n in doc["notes"]]
    return "\n".join(lines)


def run(args) -> int:
    scale = parse_scale(args.scale)
    prof = load_profile(args, args.paths)
    if prof.steps.empty:
        raise CliError("the profile has no steps to predict")
    try:
        doc = what_if_document(prof, scale, max(args.path_rows, 0))
    except ValueError as err:
        raise CliError(str(err)) from err
    emit(args, doc, _text)
    return EXIT_OK
