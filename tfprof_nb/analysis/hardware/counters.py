"""``counters``: the hardware beside the trace, one long table of timed samples.

Two sources per host:

* the hardware sampler's file beside the host's ``.xplane.pb`` (:mod:`tfprof_nb.xspace.
  hardware_file`; read where the host lives, a local path or a URL): host CPU and memory
  (psutil), NVIDIA GPUs (NVML), TPUs (libtpu).  Its times are wall-clock times, placed on the
  profile's axis through the host's origin; only the samples inside the host's events' span
  (first event start .. last event end, both included) are kept: the sampler starts before
  the profiler and stops after it.  A host whose times are not wall-clock times keeps none
  (said in the notes).  No file: no rows; a file that is not one: a LoadWarning naming it,
  and its host's note.
* the profile's own counter lines: every line named ``_counters_`` on a device plane (CUPTI
  PM sampling on GPUs, unit utilisation on TPUs): one sample per event, the counter being the
  event's name, its value the event's numeric stat (the one named like the event, else the
  first), its time the event's start.

Columns: host, device (``host``, ``GPU:0``, ``TPU:0``), counter, time_us (the axis of
``prof.events.start_us``), value, unit, source (``sampler:psutil``, ``sampler:nvml``,
``sampler:libtpu``, ``profile:_counters_``); sorted by host, device, counter, time_us.
``attrs["notes"]``: {host: what could not be sampled}; ``attrs["period_ms"]``: {host: the
sampler's period}.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ...errors import LoadWarning
from ...xspace.hardware_reading import hardware_beside
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "COUNTER_COLUMNS", "COUNTERS_LINE", "counter_unit", "device_of_plane",
           "host_counters", "combine_counters", "wide_counters"]

COUNTER_COLUMNS = ["host", "device", "counter", "time_us", "value", "unit", "source"]
COUNTERS_LINE = "_counters_"
_DEVICE_PREFIX = "/device:"
_NUMERIC_KINDS = (1, 2, 3)


def counter_unit(name: str) -> str:
    """The unit a counter's stat or metric name says: ``%`` (``% util``, ``..pct..``),
    ``cycles``, ``bytes``; else ""."""
    low = name.lower()
    if "%" in low or "pct" in low or "util" in low.split():
        return "%"
    for unit in ("cycles", "bytes"):
        if unit in low:
            return unit
    return ""


def device_of_plane(plane: str) -> str:
    """``GPU:0`` of ``/device:GPU:0``; ``host`` of the host plane; other names as they are."""
    if plane.startswith(_DEVICE_PREFIX):
        return plane[len(_DEVICE_PREFIX):]
    return "host" if plane.startswith("/host:") else plane


def _frame(device, counter, time_ps, value, unit, source) -> pd.DataFrame:
    n = len(time_ps)
    return pd.DataFrame({
        "device": np.broadcast_to(np.asarray(device, dtype=object), n),
        "counter": np.broadcast_to(np.asarray(counter, dtype=object), n),
        "time_ps": np.asarray(time_ps, np.int64), "value": np.asarray(value, np.float64),
        "unit": np.broadcast_to(np.asarray(unit, dtype=object), n),
        "source": np.broadcast_to(np.asarray(source, dtype=object), n)})


def _empty() -> pd.DataFrame:
    return _frame([], [], [], [], [], [])


def _sampler_rows(hd: HostData, shift_ps: int, out: dict) -> pd.DataFrame:
    """The sampler's samples inside the host's span, their times shifted (``out`` gets the
    notes, the period and a problem with the file)."""
    sp = hd.space
    try:
        samples, where = hardware_beside(sp.read_from)
    except (ValueError, OSError) as exc:
        out["problem"] = str(exc)
        out["notes"].append(f"the hardware file could not be read: {exc}")
        return _empty()
    if samples is None:
        return _empty()
    out["period_ms"] = samples.meta.get("period_ms")
    out["notes"].extend(str(n) for n in samples.meta.get("notes", []))
    if not sp.origin_is_wall_clock():
        out["notes"].append(f"{where}: the profile's times are not wall-clock times, so the "
                            "sampler's samples cannot be placed on them")
        return _empty()
    if not len(hd):
        return _empty()
    lo, hi = hd.span()
    t_ps = (samples.time_ns - np.int64(sp.origin_ns())) * 1000
    keep = (t_ps >= lo) & (t_ps <= hi)
    series = samples.series[keep].astype(np.int64)

    def per(names, prefix=""):
        return np.array([prefix + str(n) for n in names], dtype=object)[series]

    return _frame(per(samples.series_device), per(samples.series_counter),
                  t_ps[keep] + shift_ps, samples.value[keep], per(samples.series_unit),
                  per(samples.series_source, "sampler:"))


def _counter_lines(hd: HostData) -> np.ndarray:
    """bool per decoded line: a ``_counters_`` line of a device plane."""
    sp = hd.space
    planes = np.array([p.startswith(_DEVICE_PREFIX) for p in sp.plane_names], dtype=bool)
    names = np.asarray(sp.line_names, dtype=object)
    return (names == COUNTERS_LINE) & planes[sp.line_plane] if len(names) else \
        np.zeros(0, bool)


def _stat_names_of(hd: HostData, rows: np.ndarray) -> list[str]:
    """The numeric stat names the events ``rows`` carry, read at one event per event name
    (counter events of one name carry the same stats), those named like an event first."""
    st = hd.space.stats
    codes = hd.name_code[rows]
    _, first = np.unique(codes, return_index=True)
    found: list[str] = []
    for row in rows[first].tolist():
        stats = st.rows_of_event(row)
        numeric = stats[np.isin(st.kind[stats], _NUMERIC_KINDS)]
        found.extend(st.names[c] for c in st.name_code[numeric].tolist())
    event_names = {hd.names[c] for c in codes[first].tolist()}
    distinct = list(dict.fromkeys(found))
    return [n for n in distinct if n in event_names] + \
        [n for n in distinct if n not in event_names]


def _profile_rows(hd: HostData, shift_ps: int) -> pd.DataFrame:
    """One row per event of the device planes' ``_counters_`` lines that carries a number."""
    lines = _counter_lines(hd)
    rows = hd.rows_on_lines(lines).astype(np.int64) if lines.any() else np.empty(0, np.int64)
    if not len(rows):
        return _empty()
    value = np.full(len(rows), np.nan)
    stat = np.full(len(rows), -1, np.int64)
    names = _stat_names_of(hd, rows)
    for i, name in enumerate(names):
        s = hd.float_stat(name)
        pos = np.minimum(np.searchsorted(s.rows, rows), max(len(s.rows) - 1, 0))
        hit = (s.rows[pos] == rows) & (stat < 0) if len(s.rows) else np.zeros(len(rows), bool)
        value[hit], stat[hit] = s.values[pos[hit]], i
    rows, value, stat = rows[stat >= 0], value[stat >= 0], stat[stat >= 0]
    counter = np.asarray(hd.names, dtype=object)[hd.name_code[rows]]
    by_stat = np.array([counter_unit(n) for n in names], dtype=object)
    by_name = np.array([counter_unit(str(n)) for n in counter], dtype=object)
    unit = np.where(by_stat[stat] != "", by_stat[stat], by_name)
    device = np.array([device_of_plane(p) for p in hd.plane_of(rows)], dtype=object)
    return _frame(device, counter, hd.begin[rows] + shift_ps, value, unit,
                  f"profile:{COUNTERS_LINE}")


def host_counters(hd: HostData, shift_ps: int = 0) -> dict:
    """One host's samples: ``rows`` (device, counter, time_ps on the profile's axis, value,
    unit, source), ``notes``, ``period_ms`` and ``problem`` (its sampler file's, or None)."""
    out = {"notes": [], "period_ms": None, "problem": None}
    frames = [f for f in (_sampler_rows(hd, shift_ps, out), _profile_rows(hd, shift_ps))
              if len(f)]
    out["rows"] = pd.concat(frames, ignore_index=True) if frames else _empty()
    return out


def combine_counters(parts: dict) -> pd.DataFrame:
    """The hosts' samples in one table (see the module doc); a LoadWarning per host whose
    sampler file could not be read."""
    for host, part in parts.items():
        if part["problem"]:
            warnings.warn(f"host {host!r}: its hardware samples are left out: "
                          f"{part['problem']}", LoadWarning, stacklevel=2)
    frames = [p["rows"].assign(host=h) for h, p in parts.items() if len(p["rows"])]
    rows = pd.concat(frames, ignore_index=True) if frames else _empty().assign(host=[])
    rows["time_us"] = rows.pop("time_ps").to_numpy(np.float64) / 1e6
    rows["host"] = pd.Categorical(rows["host"], categories=list(parts))
    rows = rows.sort_values(["host", "device", "counter", "time_us"], kind="stable")
    out = rows[COUNTER_COLUMNS].reset_index(drop=True)
    out.attrs["notes"] = {h: list(p["notes"]) for h, p in parts.items() if p["notes"]}
    out.attrs["period_ms"] = {h: p["period_ms"] for h, p in parts.items()
                              if p["period_ms"] is not None}
    return out


def wide_counters(counters: pd.DataFrame) -> pd.DataFrame:
    """``counters`` with one column per counter, as ``nvidia-smi --format=csv`` lays out its
    samples: host, device, time_us, then each counter named with its unit (``gpu_util_pct
    [%]``); one row per (host, device, time), NaN where a counter has no sample then."""
    head = ["host", "device", "time_us"]
    if not len(counters):
        return pd.DataFrame(columns=head)
    named = counters.assign(column=[f"{c} [{u}]" if u else c for c, u in
                                    zip(counters["counter"], counters["unit"])],
                            host=counters["host"].astype(str))
    wide = named.pivot_table(index=head, columns="column", values="value", aggfunc="last",
                             dropna=False, observed=True, sort=True)
    columns = list(dict.fromkeys(named["column"]))  # in the long table's order
    return wide.reindex(columns=columns).dropna(how="all").reset_index() \
        .rename_axis(columns=None)


ANALYSES = (Analysis("counters", host=host_counters, combine=combine_counters,
                     host_cost=0.1),)
