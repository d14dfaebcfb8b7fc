"""Validated profiler options (TensorFlow itself only logs a warning for bad ones)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

__all__ = ["DEFAULT_SAMPLE_MS", "TfInt", "TracerOptions", "check_steps"]

DEFAULT_SAMPLE_MS = 50  # the hardware sampler's period (capturing/hardware_sampler.py)

_LEVELS = {
    "host_tracer_level": (0, 3, "0 off, 1 user Trace events, 2 + high-level TF ops (default), "
                                "3 + all TF ops"),
    "python_tracer_level": (0, 1, "0 off (default), 1 trace every Python call"),
    "device_tracer_level": (0, 1, "0 off, 1 on (default)"),
}


def _check_int(name: str, value, lo: int, hi: int | None, meaning: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if value < lo or (hi is not None and value > hi):
        rng = f"{lo}..{hi}" if hi is not None else f">= {lo}"
        extra = f" ({meaning})" if meaning else ""
        raise ValueError(f"{name} must be in {rng}{extra}, got {value}")
    return value


@dataclass(frozen=True)
class TracerOptions:
    """Tracer levels, start delay and the hardware sampler's period (``sample_ms``; 0 turns
    it off), checked when created."""

    host_tracer_level: int = 2
    python_tracer_level: int = 0
    device_tracer_level: int = 1
    delay_ms: int = 0
    sample_ms: int = DEFAULT_SAMPLE_MS

    def __post_init__(self):
        for name, (lo, hi, meaning) in _LEVELS.items():
            object.__setattr__(self, name, _check_int(name, getattr(self, name), lo, hi, meaning))
        object.__setattr__(self, "delay_ms", _check_int("delay_ms", self.delay_ms, 0, None))
        object.__setattr__(self, "sample_ms", _check_int(
            "sample_ms", self.sample_ms, 0, 60_000, "the hardware sampler's period; 0 off"))

    def to_tf(self, with_delay: bool = True):
        """The matching ``tf.profiler.experimental.ProfilerOptions``, in values TensorFlow's
        bindings read as integers (see :class:`TfInt`).  ``with_delay=False`` leaves
        ``delay_ms`` at 0: TensorFlow's local session ignores it (only the profiler
        service's client uses it), so a local capture waits itself instead."""
        import tensorflow as tf

        return tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=TfInt(self.host_tracer_level),
            python_tracer_level=TfInt(self.python_tracer_level),
            device_tracer_level=TfInt(self.device_tracer_level),
            delay_ms=TfInt(self.delay_ms if with_delay else 0))


class TfInt:
    """An integer TensorFlow's profiler bindings take as one.

    ``tf.profiler.experimental.start`` and ``...client.trace`` hand the options' dict to
    pybind11 code that tries each value as a bool before an int (TensorFlow 2.21): every
    Python ``int`` (it has ``__bool__``) arrives as a bool, the session manager logs
    "``host_tracer_level expects an i value``" for each option and drops it, and the session
    traces with its defaults.  An object with ``__index__`` and no ``__bool__`` fails the
    bool cast and passes the int one (also where the bindings try int first).
    """

    __slots__ = ("value",)

    def __init__(self, value: int):
        self.value = int(value)

    def __index__(self) -> int:
        return self.value

    def __int__(self) -> int:
        return self.value

    def __eq__(self, other) -> bool:
        return self.value == other

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return repr(self.value)


def check_steps(steps, warmup) -> tuple[int, int]:
    """Validate a step window: at least one profiled step, no negative warm-up."""
    return _check_int("steps", steps, 1, None), _check_int("warmup", warmup, 0, None)
