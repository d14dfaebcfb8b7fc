"""The hardware in the steps: what ``prof.counters``' samples inside each step say of each
device and host (clocks and why they are lowered, power, temperature, bus traffic, errors,
host CPU and memory), the numbers the GPU tab's table shows and its findings quote.

A sample is inside step s of its host when ``start_us <= time_us < start_us + duration``
(``prof.steps``).  Without steps, every sample counts (``scope`` says which).

NVML's clock-event reasons (formerly "throttle reasons") are a bit mask per sample; their words
come from :data:`CLOCK_REASONS` (bit values of pynvml's ``nvmlClocksEventReason*`` constants
where pynvml is importable, else NVML's documented values, the same).  NVML's ``gpu_util_pct``
is the share of its sample window (1/6 s to 1 s) with any kernel resident: it is shown for what
it is, never as a device's busy time (the kernels' own times say that).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["CLOCK_REASONS", "CPU_BUSY_PCT", "CPU_BUSY_WORDS", "CLOCK_LOW_WORDS",
           "HARDWARE_COLUMNS", "NOT_IN_TABLE", "NVML_UTIL_WORDS", "NORMAL_REASONS",
           "clock_reason_words",
           "device_context", "hardware_table", "samples_in_steps", "step_means"]


def _reason_bits() -> tuple[tuple[int, str], ...]:
    """(bit, words) of NVML's clock-event reasons."""
    documented = (("GpuIdle", 0x1, "GPU idle"),
                  ("ApplicationsClocksSetting", 0x2, "applications clocks setting"),
                  ("SwPowerCap", 0x4, "SW power cap"), ("HwSlowdown", 0x8, "HW slowdown"),
                  ("SyncBoost", 0x10, "sync boost"),
                  ("SwThermalSlowdown", 0x20, "SW thermal slowdown"),
                  ("HwThermalSlowdown", 0x40, "HW thermal slowdown"),
                  ("HwPowerBrakeSlowdown", 0x80, "HW power brake slowdown"),
                  ("DisplayClockSetting", 0x100, "display clock setting"))
    try:
        import pynvml
    except ImportError:
        pynvml = None
    out = []
    for name, bit, words in documented:
        value = getattr(pynvml, f"nvmlClocksEventReason{name}",
                        getattr(pynvml, f"nvmlClocksThrottleReason{name}", bit))
        out.append((int(value), words))
    return tuple(out)


CLOCK_REASONS = _reason_bits()
# the reasons that say nothing is wrong: the GPU has no work, or runs the clocks it was set to
NORMAL_REASONS = ("GPU idle", "applications clocks setting")
NVML_UTIL_WORDS = "NVML utilisation: any kernel resident in its sample window"
HARDWARE_COLUMNS = ["host", "device", "what", "unit", "samples", "mean", "max", "note"]
CPU_BUSY_PCT = 90.0  # a machine CPU sample this high is saturated
CPU_BUSY_WORDS = f"machine CPU at {CPU_BUSY_PCT:.0f}% or more"
CLOCK_LOW_FRACTION = 0.9  # an SM clock below this share of the device's maximum is lowered
CLOCK_LOW_WORDS = "SM clock 10% or more below its max (steps with kernels)"

# (counter, what the table calls it) in the order shown; other counters follow by name
_KNOWN = (("sm_clock_mhz", "SM clock"), ("memory_clock_mhz", "memory clock"),
          ("throttle_reasons", "clock-event reasons"), ("power_w", "power"),
          ("temperature_c", "temperature"), ("pcie_tx_bytes_per_s", "PCIe sent"),
          ("pcie_rx_bytes_per_s", "PCIe received"), ("nvlink_tx_bytes_per_s", "NVLink sent"),
          ("nvlink_rx_bytes_per_s", "NVLink received"),
          ("ecc_uncorrected_errors", "ECC uncorrected errors"), ("xid_errors", "XID errors"),
          ("gpu_util_pct", NVML_UTIL_WORDS), ("memory_util_pct", "NVML memory utilisation: "
                                              "share of its window reading or writing memory"),
          ("cpu_util_pct", "machine CPU"), ("process_cpu_pct", "process CPU (% of all cores)"),
          ("process_rss_bytes", "process resident memory"),
          ("memory_available_bytes", "machine memory available"))
# counters the table leaves to the trace viewer: the device memory NVML sees is the
# framework's pool (JAX reserves 75 % of it, TensorFlow all), not what the program uses
NOT_IN_TABLE = ("memory_used_bytes", "memory_total_bytes")


def clock_reason_words(mask: int) -> list[str]:
    """The words of the clock-event reasons set in ``mask``."""
    return [words for bit, words in CLOCK_REASONS if int(mask) & bit]


def device_context(environment: dict, gpu_utilization: pd.DataFrame
                   ) -> tuple[dict, set]:
    """({(host, device): the device's maximum SM clock in MHz (its plane's clock rate)},
    {(host, device, step) where its kernels ran}), devices named as ``prof.counters`` does
    (``GPU:0``)."""
    devices = environment.get("devices", pd.DataFrame())
    clock = {}
    if len(devices) and "clock_rate_khz" in devices:
        for r in devices.dropna(subset=["clock_rate_khz"]).itertuples():
            clock[(str(r.host), str(r.device).removeprefix("/device:"))] = r.clock_rate_khz / 1e3
    util = gpu_utilization
    busy = util[(util.stream == "all") & (util.step >= 0) & (util.busy_us > 0)] \
        if len(util) else util
    ran = {(str(h), str(d).removeprefix("/device:"), int(s))
           for h, d, s in zip(busy.get("host", []), busy.get("device", []), busy.get("step", []))}
    return clock, ran


def samples_in_steps(counters: pd.DataFrame, steps: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of ``counters`` inside a step of their host, with its number (``step``);
    every row (step -1) when there are no steps."""
    if steps is None or not len(steps):
        return counters.assign(step=np.full(len(counters), -1, np.int64))
    parts = []
    for host, rows in counters.groupby("host", sort=False, observed=True):
        st = steps[steps["host"].astype(str) == str(host)].sort_values("start_us")
        start = st["start_us"].to_numpy(np.float64)
        end = start + st["duration_ms"].to_numpy(np.float64) * 1e3
        t = rows["time_us"].to_numpy(np.float64)
        k = np.searchsorted(start, t, side="right") - 1
        inside = (k >= 0) & (t < end[np.clip(k, 0, None)]) if len(start) else k < -1
        parts.append(rows[inside].assign(step=st.index.to_numpy()[k[inside]]))
    if not parts:
        return counters.iloc[:0].assign(step=np.empty(0, np.int64))
    return pd.concat(parts)


def step_means(inside: pd.DataFrame) -> pd.DataFrame:
    """Per (host, device, counter, step): unit, samples, mean and max of the samples inside
    that step (``inside``: :func:`samples_in_steps`)."""
    keys = ["host", "device", "counter", "step"]
    if not len(inside):
        return pd.DataFrame(columns=[*keys, "unit", "samples", "mean", "max"])
    g = inside.groupby(keys, sort=True, observed=True)
    out = g["value"].agg(samples="count", mean="mean", max="max")
    out.insert(0, "unit", g["unit"].first())
    return out.reset_index()


def _reason_rows(host, device, masks: np.ndarray) -> list[dict]:
    """One row per clock-event reason seen in ``masks`` (its share of the samples), or one
    saying none was."""
    rows = []
    valid = masks[np.isfinite(masks)].astype(np.int64)
    for bit, words in CLOCK_REASONS:
        share = 100 * float(np.mean((valid & bit) != 0)) if len(valid) else 0.0
        if share > 0:
            rows.append({"host": host, "device": device, "what": f"clock lowered: {words}",
                         "unit": "% of samples", "samples": len(valid), "mean": share,
                         "max": np.nan, "note": "NVML clock-event reason"})
    if not rows:
        rows.append({"host": host, "device": device, "what": "clock-event reasons",
                     "unit": "", "samples": len(valid), "mean": np.nan, "max": np.nan,
                     "note": "none in these samples (NVML)"})
    return rows


# units shown scaled: (unit, shown as, divided by)
_SCALED = {"bytes": ("GiB", 2**30), "bytes/s": ("MiB/s", 2**20)}


def _counter_row(host, device, counter: str, what: str, rows: pd.DataFrame) -> dict:
    v = rows["value"].to_numpy(np.float64)
    v = v[np.isfinite(v)]
    unit, scale = _SCALED.get(str(rows["unit"].iloc[0]), (str(rows["unit"].iloc[0]), 1))
    v = v / scale
    row = {"host": host, "device": device, "what": what, "unit": unit,
           "samples": len(v), "mean": float(v.mean()) if len(v) else np.nan,
           "max": float(v.max()) if len(v) else np.nan, "note": ""}
    if counter in ("ecc_uncorrected_errors", "xid_errors") and len(v):
        row["note"] = f"{v.max() - v.min():,.0f} new in these samples"
    return row


def _share_row(host, device, what: str, hit: np.ndarray, note: str = "") -> dict:
    """A row giving the share of samples for which ``hit`` holds."""
    return {"host": host, "device": device, "what": what, "unit": "% of samples",
            "samples": len(hit), "mean": 100 * float(hit.mean()) if len(hit) else np.nan,
            "max": np.nan, "note": note}


def _derived_rows(host, device, counter: str, rows: pd.DataFrame, clock: dict,
                  ran: set) -> list[dict]:
    """The machine CPU's saturated samples; the SM clock's lowered samples in steps where
    the device ran kernels (against its maximum clock, where known)."""
    v = rows["value"].to_numpy(np.float64)
    if counter == "cpu_util_pct":
        v = v[np.isfinite(v)]
        return [_share_row(host, device, CPU_BUSY_WORDS, v >= CPU_BUSY_PCT)]
    top = clock.get((host, device))
    if counter != "sm_clock_mhz" or top is None:
        return []
    steps = rows["step"].to_numpy()
    keep = np.isfinite(v) & np.array([(host, device, int(s)) in ran for s in steps], bool)
    return [_share_row(host, device, CLOCK_LOW_WORDS, v[keep] < CLOCK_LOW_FRACTION * top,
                       f"max {top:,.0f} MHz: the device's clock rate")]


def hardware_table(inside: pd.DataFrame, clock: dict | None = None,
                   ran: set | None = None) -> pd.DataFrame:
    """One row per device (and host) and counter of ``inside`` (:func:`samples_in_steps`):
    what it is, its unit (bytes in GiB, bytes/s in MiB/s), the samples and their mean and
    max; the clock-event reasons as the
    share of samples with each; error counters with how many appeared.  Devices in order,
    known counters first (see ``_KNOWN``); the device memory NVML sees is left out.  Two
    shares follow their counter: the machine CPU's samples at ``CPU_BUSY_PCT`` or more, and,
    with ``clock`` and ``ran`` (:func:`device_context`), the SM clock's samples 10% or more
    below the device's maximum in steps where it ran kernels."""
    if not len(inside):
        return pd.DataFrame(columns=HARDWARE_COLUMNS)
    rank = {c: k for k, (c, _) in enumerate(_KNOWN)}
    words = dict(_KNOWN)
    out = []
    for (host, device), dev in inside.groupby(["host", "device"], sort=True, observed=True):
        names = sorted(set(dev["counter"].astype(str)) - set(NOT_IN_TABLE),
                       key=lambda c: (rank.get(c, len(rank)), c))
        for counter in names:
            rows = dev[dev["counter"].astype(str) == counter]
            if counter == "throttle_reasons":
                out += _reason_rows(str(host), str(device), rows["value"].to_numpy(np.float64))
            else:
                out.append(_counter_row(str(host), str(device), counter,
                                        words.get(counter, counter), rows))
                out += _derived_rows(str(host), str(device), counter, rows, clock or {},
                                     ran or set())
    return pd.DataFrame(out, columns=HARDWARE_COLUMNS)
