"""A profile's summary as one document (plain values, read straight from the profile's tables)
and as text: what ``tfprof summary`` prints (``--json``: the document) and what the demo shows.

:func:`summarise` builds the document: the profile (hosts, events, span), its devices and their
duty cycle, the steps and their step-time breakdown (mean ms per category and its share of the
mean step), the input-bound verdict, the top host and device ops by self time, and the findings
of ``prof.recommendations()`` with their evidence.  :func:`summary_text` renders it.
"""

from __future__ import annotations

import textwrap

from ..analysis.findings.measure_words import (busy_share_words, complement_duty,
                                               excluded_note, get, measure_text,
                                               spread_words, value_of, xprof_words)
from ..analysis.findings.measures import step_count_words, xprof_steps_words
from ..analysis.findings.overview import device_text, xprof_hosts_words
from ..analysis.steps.per_step import judged_steps
from ..analysis.steps.xprof_counted import xprof_step_ms, xprof_steps
from ..constants import CATEGORY_COLUMNS

__all__ = ["TOP_OP_COLUMNS", "category_label", "summarise", "summary_text"]

TOP_OP_COLUMNS = ["operation", "type", "occurrences", "total_self_time_us", "self_time_pct"]
# what the top ops' self_time_pct is a share of (prof.op_stats' counts IDLE too)
TOP_OPS_PCT_OF = ("the side's op time, IDLE left out (prof.op_stats_table(include_idle=False)); "
                  "prof.op_stats' self_time_pct counts IDLE")
_WIDTH = 100  # text lines are wrapped to this many characters


def category_label(column: str) -> str:
    """A step-time category's words: ``device_compute_ms`` -> ``device compute``."""
    return column.removesuffix("_ms").replace("_", " ")


def summarise(prof, top: int = 10) -> dict:
    """The summary of ``prof`` as plain values (see the module's docstring); ``top``: how
    many host and device ops to list."""
    ov = prof.overview()
    return {
        "profile": _profile_facts(prof),
        "devices": _devices(prof, ov),
        "steps": _step_stats(prof.steps),
        "breakdown": _breakdown(prof.steps),
        "input_bound": _input_bound(ov),
        "measures": _measures(prof.measures),
        "top_ops": {side.lower(): _top_ops(prof, side, top) for side in ("Host", "Device")},
        "top_ops_pct_of": TOP_OPS_PCT_OF,
        "findings": [_finding(f) for f in prof.recommendations()],
        "notes": [n for n in (excluded_note(prof.measures),) if n] + list(ov.reasons)
        + _device_op_notes(prof),
    }


def _device_op_notes(prof) -> list[str]:
    """Why the device ops listed are not XProf's (kernels naming no op, or run inside XLA's
    command buffers): the op stats view's notes, which the summary's top ops take too."""
    from ..plot.op_words import xprof_device_op_notes

    return xprof_device_op_notes(prof, prof.op_stats_table(include_idle=False), "summary")


def _profile_facts(prof) -> dict:
    """Where the profile is, its hosts, events and span."""
    start = prof.start_time
    return {"location": run_location(prof.source), "files": list(prof.source),
            "hosts": list(prof.hosts), "load_errors": dict(prof.load_errors),
            "events": int(prof.n_events), "duration_ms": float(prof.duration_us) / 1e3,
            "start_time": None if start is None else start.isoformat()}


def run_location(sources: list[str]) -> str:
    """The run a profile's files make: the one file, else the directory they share."""
    import posixpath

    if len(sources) == 1:
        return str(sources[0])
    dirs = {posixpath.dirname(str(s).replace("\\", "/")) for s in sources}
    return dirs.pop() if len(dirs) == 1 else ", ".join(str(s) for s in sources)


def _devices(prof, ov) -> dict:
    """The device type and count (those with events), each device's duty cycle (busy time
    over its active span), the overall duty cycle and, on TPUs, the overview's figures."""
    env = ov.environment
    duty = prof.duty_cycle
    cols = [c for c in ("host", "device", "busy_us", "span_us", "duty_cycle_pct")
            if c in duty.columns]
    devices = duty[cols].copy()
    gpus = env.get("devices")
    if gpus is not None and len(gpus) and len(devices):
        devices = devices.merge(gpus[["host", "device", "name", "compute_capability"]],
                                on=["host", "device"], how="left")
    return {"type": env["device_type"], "count": int(env["device_count"]),
            "text": device_text(env),
            "without_events": list(env["devices_without_events"]),
            "duty_cycle_pct": value_of(prof.measures, "duty_cycle_pct"),
            "duty_cycle_scope": _scope(prof.measures, "duty_cycle_pct"),
            "xprof_duty_cycle_pct": ov.xprof_device_duty_cycle_pct, "devices": devices,
            "xprof_hosts": xprof_hosts_words(env),  # (XProf's host count where it differs)
            "tpu": dict(ov.device)}


def _scope(measures, key: str) -> str | None:
    """The scope of measure ``key`` (whose devices, over which time), as its row says."""
    row = get(measures, key)
    return None if row is None else str(row["scope"])


def _step_stats(steps) -> dict:
    """Step count (rows of ``prof.steps``: a pod's steps repeat per host, ``per_host`` counts
    each host's, ``distinct`` the step numbers), where steps come from, the step time's mean
    (XProf's) and its median and spread over the steps ``tp.check`` judges (``judged``:
    a pod's each at its slowest host, ``judged_scope`` says so)."""
    if steps.empty:
        return {"count": 0, "distinct": 0, "hosts": 0, "source": None}
    judged, judged_scope = judged_steps(steps)
    d = judged.duration_ms
    counted = xprof_step_ms(steps)  # the mean is XProf's (the page's card): over these
    return {"count": len(steps), "distinct": int(steps.index.nunique()),
            "per_host": step_count_words(steps)[0],
            "hosts": int(steps.host.nunique()), "source": str(steps.source.iloc[0]),
            "mean_ms": float(counted.mean()), "mean_over": len(counted),
            "mean_scope": xprof_steps_words(steps),
            "breakdown_scope": xprof_steps_words(steps, breakdown=True), "judged": len(judged),
            "judged_scope": judged_scope, "median_ms": float(d.median()),
            "std_ms": float(d.std()) if len(d) > 1 else 0.0,
            "min_ms": float(d.min()), "max_ms": float(d.max())}


def _breakdown(steps) -> list[dict]:
    """Each step-time category's mean per step (ms) and its share of the mean step (%), over
    the steps XProf counts (its rule, as the page's 'All Others' and kernel launch shares)."""
    if steps.empty:
        return []
    steps = xprof_steps(steps)
    mean_step = float(steps.duration_ms.mean())
    return [{"category": category_label(c), "column": c,
             "mean_ms": float(steps[c].mean()),
             "pct": 100 * float(steps[c].mean()) / mean_step if mean_step else None}
            for c in CATEGORY_COLUMNS if c in steps.columns]


def _input_bound(ov) -> dict:
    """The page's input-bound verdict (from the one input-wait measure), XProf's where it
    classifies otherwise (``xprof_statement``), XProf's other step-breakdown verdicts where
    they are the page's measures, and the input wait."""
    ib, verdict = ov.input_bound, ov.verdict
    return {"classification": verdict.get("classification"),
            "input_pct": ov.input_wait.get("pct"),
            "statement": verdict.get("statement", ""),
            "xprof_statement": verdict.get("xprof_statement", ""),
            "xprof_classification": ib.get("classification"),
            "other_statements": list(verdict.get("xprof_shares", ())),
            "input_wait": dict(ov.input_wait)}


def _measures(table) -> list[dict]:
    """The headline measures (``prof.measures``) as plain values; ``also``: what the text
    says with a measure's own words (without steps the idle share carries the duty cycle,
    its complement, whose record then names it in ``said_in``)."""
    rows = table.reset_index().astype(object).where(table.reset_index().notna(), None)
    records = rows.to_dict("records")
    duty = complement_duty(table)
    for record in records:
        folded = duty is not None and record["key"] in ("device_idle_pct", "duty_cycle_pct")
        record["also"] = busy_share_words(duty) if folded and \
            record["key"] == "device_idle_pct" else None
        record["said_in"] = "device_idle_pct" if folded and \
            record["key"] == "duty_cycle_pct" else None
    return records


def _top_ops(prof, side: str, top: int):
    """The ``top`` ops of ``side`` ("Host" or "Device") by self time, IDLE left out."""
    ops = prof.op_stats_table(include_idle=False)
    return ops[ops.host_or_device == side][TOP_OP_COLUMNS].head(top).reset_index(drop=True)


def _finding(f) -> dict:
    return {"kind": f.kind, "severity": f.severity, "what": f.what, "measure": f.measure,
            "evidence": dict(f.evidence),
            "evidence_text": f.evidence_text(), "fix": f.fix}


# ---- text ---------------------------------------------------------------------------------

def summary_text(doc: dict) -> str:
    """The summary document as text for a terminal (numbers as the document has them,
    rounded)."""
    parts = [_head_text(doc),
             _breakdown_text(doc["breakdown"], doc["steps"].get("breakdown_scope", "")),
             _verdict_text(doc),
             _ops_text("host", doc["top_ops"]["host"]),
             _ops_text("device", doc["top_ops"]["device"]),
             _findings_text(doc["findings"]), _notes_text(doc["notes"], doc["profile"])]
    return "\n\n".join(p for p in parts if p)


def _head_text(doc: dict) -> str:
    """Profile, hosts, devices and steps, one line each."""
    p, dev, st = doc["profile"], doc["devices"], doc["steps"]
    when = f", captured {p['start_time'][:19].replace('T', ' ')} UTC" if p["start_time"] \
        else ""
    hosts = p["hosts"]
    names = ", ".join(hosts[:6]) + (f" and {len(hosts) - 6} more" if len(hosts) > 6 else "")
    lines = [f"Profile   {p['location']}",
             f"          {p['events']:,} events over {p['duration_ms']:,.1f} ms{when}",
             f"Hosts     {len(hosts)}: {names}{dev.get('xprof_hosts', '')}",
             f"Devices   {dev['text']}{_device_names(dev['devices'])}"]
    if st["count"]:
        over = "" if st["mean_over"] == st["count"] else f" over {st['mean_scope']}"
        judged = f" over {st['judged_scope']}" if st["judged"] != st["count"] else \
            f" over all {st['count']}" if over else ""  # (two scopes on the line: both said)
        lines.append(f"Steps     {_step_count(st)}: median {st['median_ms']:.3f} ms, min "
                     f"{st['min_ms']:.3f}, max {st['max_ms']:.3f} (std {st['std_ms']:.3f})"
                     f"{judged}; "
                     f"mean {st['mean_ms']:.3f} ms{over}")
    else:
        lines.append("Steps     none found (see the notes)")
    return "\n".join(_wrap(line, "          ") for line in lines)


def _step_count(st: dict) -> str:
    """"8 steps (markers)", or on a pod "8 steps on each of 2 hosts (markers), 16 host steps"
    ("140 to 143 steps on each ..." where hosts differ; the median that follows is over the
    steps tp.check judges, which says so)."""
    if st["hosts"] > 1:
        return (f"{st['per_host']} step{'s' if st['per_host'] != '1' else ''} on each of "
                f"{st['hosts']} hosts ({st['source']}), {st['count']} host steps")
    return f"{st['count']} step{'s' if st['count'] > 1 else ''} ({st['source']})"


def _device_names(devices) -> str:
    """The models of the devices with events, from their planes (GPUs), e.g. ": NVIDIA H200
    (compute capability 9.0)"."""
    if "name" not in devices.columns:
        return ""
    named = devices.dropna(subset=["name"])
    models = sorted({f"{r.name} (compute capability {r.compute_capability})"
                     if isinstance(r.compute_capability, str) else str(r.name)
                     for r in named.itertuples()})
    return ": " + ", ".join(models) if models else ""


def _breakdown_text(rows: list[dict], scope: str) -> str:
    """The step-time breakdown (XProf's rule: where a headline measure reads the devices' own
    time, its figure may differ and is said as the page's), categories with time only, largest
    first."""
    shown = sorted((r for r in rows if r["mean_ms"] > 0), key=lambda r: -r["mean_ms"])
    if not shown:
        return ""
    width = max(len(r["category"]) for r in shown)
    lines = [f"Step-time breakdown (mean per step over {scope}), XProf's rule"]
    for r in shown:
        pct = "" if r["pct"] is None else f"{r['pct']:6.1f} %"
        lines.append(f"  {r['category']:<{width}}  {r['mean_ms']:10.3f} ms  {pct}")
    return "\n".join(lines)


def _verdict_text(doc: dict) -> str:
    """The page's input-bound verdict, XProf's where it differs, the other statements, and
    the headline measures with their scope (``prof.measures``; the step time is above)."""
    ib = doc["input_bound"]
    lines = [_wrap(f"Input     {ib['statement']}", "          ")] if ib["statement"] else []
    lines += [_wrap(f"          {s}", "          ")
              for s in [ib["xprof_statement"], *ib["other_statements"]] if s]
    shown = [m for m in doc["measures"]
             if not m["key"].startswith("step_time") and not m.get("said_in")]
    if shown:
        lines.append("Measures")
    for m in shown:
        text = f"  {m['label']} {measure_text(m['value'], m['unit'])}: {m['scope']}"
        if m["min"] is not None:
            text += f"; {spread_words(m)}"
        if m["xprof_value"] is not None:
            text += f"; {xprof_words(m)}"
        if m.get("also"):
            text += f"; {m['also']}"
        lines.append(_wrap(text, "    "))
    return "\n".join(lines)


def _ops_text(side: str, ops) -> str:
    """The top ops of one side as aligned rows: rank, name, type, count, self time, share."""
    if ops is None or not len(ops):
        return ""
    lines = [f"Top {side} ops by self time (% of the {side} ops' time, IDLE left out; "
             "prof.op_stats' % counts IDLE)"]
    names = [_cut(str(o), 56) for o in ops.operation]
    types = [_cut(str(t), 24) for t in ops.type]
    nw, tw = max(map(len, names)), max(map(len, types))
    for i, (name, kind, row) in enumerate(zip(names, types, ops.itertuples()), start=1):
        lines.append(f"  {i:2d}  {name:<{nw}}  {kind:<{tw}}  {row.occurrences:>7,}x  "
                     f"{row.total_self_time_us:>13,.1f} us  {row.self_time_pct:5.1f} %")
    return "\n".join(lines)


def _findings_text(findings: list[dict]) -> str:
    """Each finding: severity and what, its evidence, its fix."""
    if not findings:
        return "Findings  none"
    lines = ["Findings"]
    for i, f in enumerate(findings, start=1):
        lines.append(_wrap(f"  {i}. [{f['severity']}] {f['what']}", "     "))
        if f["evidence_text"]:
            lines.append(_wrap(f"     evidence: {f['evidence_text']}", "       "))
        lines.append(_wrap(f"     fix: {f['fix']}", "       "))
    return "\n".join(lines)


def _notes_text(notes: list[str], profile: dict) -> str:
    lines = [f"{host}: not loaded ({why})" for host, why in profile["load_errors"].items()]
    lines += notes
    if not lines:
        return ""
    return "Notes\n" + "\n".join(_wrap(f"  - {n}", "    ") for n in lines)


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(text, _WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"
