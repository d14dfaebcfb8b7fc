"""A row of ``prof.measures`` (:mod:`.measures`) in words, as every page writes it: its value
(:func:`measure_text`), whom and when it counts (:func:`device_words`, :func:`scope_tail`),
whom it leaves out (:func:`left_out_words`, said once a page by :func:`excluded_note`), its
spread over devices and XProf's figure where its rule differs."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["busy_share_words", "complement_duty", "device_words", "excluded_note", "get",
           "idle_part_words", "left_out_words", "measure_text", "scope_tail", "spread_words",
           "value_of", "xprof_words"]


def get(table: pd.DataFrame, key: str) -> pd.Series | None:
    """Measure ``key``'s row of ``prof.measures``, or None when the profile lacks it."""
    return table.loc[key] if key in table.index and pd.notna(table.at[key, "value"]) else None


def value_of(table: pd.DataFrame, key: str, default=None):
    """Measure ``key``'s value, or ``default`` when the profile lacks it."""
    row = get(table, key)
    return default if row is None else float(row["value"])


def measure_text(value: float, unit: str) -> str:
    """A measure's value as every page writes it: ``30.2%``, ``21.310 ms``."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "unknown"
    return f"{value:.1f}%" if unit == "%" else f"{value:.3f} ms"


def spread_words(row) -> str:
    """A measure's spread over its devices: "per device: min 0.1% (GPU:3), median 2.0%, max
    7.9% (GPU:6)", or over its steps: "per step: min 7.4 ms (step 16), ..."; "" for one."""
    if pd.isna(row["min"]):
        return ""
    unit = row["unit"] if row["unit"] == "%" else f" {row['unit']}"
    per = "per step" if str(row["min_of"]).startswith("step ") else "per device"
    median = f", median {row['median']:.1f}{unit}" if pd.notna(row["median"]) else ""
    return (f"{per}: min {row['min']:.1f}{unit} ({row['min_of']}){median}, max "
            f"{row['max']:.1f}{unit} ({row['max_of']})")


def xprof_words(row) -> str:
    """XProf's figure for a measure where its rule differs, labelled as XProf's."""
    if pd.isna(row["xprof_value"]):
        return ""
    return (f"XProf's rule gives {measure_text(row['xprof_value'], row['unit'])} "
            f"({row['xprof_note']})")


def complement_duty(table: pd.DataFrame) -> pd.Series | None:
    """The duty cycle's row where it is the idle measure's complement, so that a page says
    the two as one measure: on a profile without steps both count the same devices over each
    one's active span (idle 7.6%, duty cycle 92.4%).  None where they differ in scope (with
    steps the idle share is over the steps, the duty cycle over the whole profile)."""
    idle, duty = get(table, "device_idle_pct"), get(table, "duty_cycle_pct")
    if idle is None or duty is None or idle["time"] != "profile" \
            or idle["devices"] != duty["devices"]:
        return None
    return duty if abs(float(idle["value"]) + float(duty["value"]) - 100) < 0.05 else None


def busy_share_words(duty) -> str:
    """The duty cycle said within the idle measure it complements (:func:`complement_duty`):
    "busy the other 92.4%: the device duty cycle", with XProf's figure where it differs."""
    text = f"busy the other {measure_text(duty['value'], '%')}: the device duty cycle"
    xprof = xprof_words(duty)
    return f"{text}; {xprof}" if xprof else text


def device_words(row) -> tuple[str, bool]:
    """Whom a device measure counts, as a sentence's subject ("GPU:6", "The 8 GPUs") and
    whether it is one device (for the verb)."""
    names = [n for n in str(row["devices"]).split(", ") if n]
    n = int(row["device_count"])
    if n == 1 or (n == 2 and names):
        return " and ".join(names), n == 1
    kind = names[0].rsplit(" ", 1)[-1].split(":")[0] if names else "device"
    return f"The {n} {kind}s", False


def scope_tail(row) -> str:
    """When a device measure counts: "in the 10 steps"."""
    return str(row["when"])


def idle_part_words(table: pd.DataFrame, row) -> str:
    """How a cause of the devices' idle time (``row``: ``host_wait_pct``, ...) relates to
    their whole idle time, as a clause: "; that is part of 'Devices idle in the steps', which
    reads 78.1%" (the same devices over the same time); "" without it."""
    idle = get(table, "device_idle_pct")
    if idle is None or not idle["value"] >= 0 or idle["devices"] != row["devices"] \
            or idle["when"] != row["when"]:
        return ""
    return f"; that is part of '{idle['label']}', which reads {idle['value']:.1f}%"


def left_out_words(row, table: pd.DataFrame | None = None) -> str:
    """Whom a device measure leaves out, as a sentence's last words: " (GPU:1, GPU:4 left
    out: no kernel in the steps)"; "" when none.  A measure over the whole profile (the duty
    cycle) leaves out the devices the step measures of ``table`` do, where it has steps:
    they ran nothing in the steps, not nothing at all."""
    if not row["excluded"]:
        return ""
    by = row
    idle = get(table, "device_idle_pct") if table is not None else None
    if row["time"] == "profile" and idle is not None and idle["time"] != "profile" \
            and idle["excluded"] == row["excluded"]:
        by = idle
    where = _steps_where(by) if by["time"] != "profile" else "in the profile"
    return f" ({row['excluded']} left out: no {_unit(row)} {where})"


def _steps_where(row) -> str:
    """Where a device measure over the steps counts, as the row says it: "in the step",
    "in the 10 steps" (a pod's "of each of 2 hosts" left to its scope)."""
    return str(row["when"]).split(" of each of ")[0]


def _unit(row) -> str:
    return "op" if "TPU" in str(row["devices"]).split(",")[0] else "kernel"


def excluded_note(table: pd.DataFrame) -> str:
    """The devices the device measures leave out, said once for a page; "" when none."""
    row = get(table, "device_idle_pct")
    if row is None or not row["excluded"]:
        return ""
    if row["time"] == "profile":  # (no steps: they ran no kernel at all, copies at most)
        return (f"{row['excluded']} ran no {_unit(row)} in the profile (copies or memory "
                f"sets at most): the device figures leave "
                f"{'it' if ',' not in row['excluded'] else 'them'} out and count "
                f"{row['devices']}.")
    one, where = "," not in row["excluded"], _steps_where(row)
    return (f"{row['excluded']} ran no {_unit(row)} {where} (any work of "
            f"{'its' if one else 'theirs'} ran outside {'it' if where == 'in the step' else 'them'}"
            f"): the device figures leave {'it' if one else 'them'} out and count "
            f"{row['devices']}.")
