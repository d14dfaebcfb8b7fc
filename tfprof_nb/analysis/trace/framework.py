"""Which framework wrote a profile (JAX or TensorFlow) and which GPU vendors it ran on.

Advice depends on both: allocator settings, for one, are framework and vendor specific.
The per-host step (:func:`host_framework`) looks at each distinct event name once and at the
plane stats; :func:`combine_framework` decides over all hosts.

Signals:

* JAX: the ``jax_version`` / ``jaxlib_version`` stats JAX's profiler puts on the
  ``/host:metadata`` plane, and the host events of jitted calls (``PjitFunction(f)``,
  ``PmapFunction(f)``);
* TensorFlow: its runtime's host events (``EagerExecute``, ``EagerLocalExecute``,
  ``FunctionRun``, ``SessionRun``, ``ExecutorState::Process``, tf.data's ``Iterator::``);
* TensorFlow 1's graph mode (``Framework.session``): ``SessionRun`` events and no
  ``FunctionRun`` or eager call;
* vendor: the ``device_vendor`` stat of ``/device:GPU:*`` planes (``Nvidia``, ``AMD``), empty
  where an older profiler did not write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...constants import GPU_PLANE_PREFIX
from ..runtime.hostdata.host import HostData
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "JAX", "TENSORFLOW", "UNKNOWN", "Framework", "host_framework",
           "combine_framework"]

JAX, TENSORFLOW, UNKNOWN = "jax", "tensorflow", "unknown"
_JAX_EVENTS = re.compile(r"^(?:PjitFunction|PmapFunction)\(")
_TF_EVENTS = re.compile(r"^(?:EagerExecute|EagerLocalExecute|EagerKernelExecute|FunctionRun\b|"
                        r"SessionRun\b|ExecutorState::Process|Iterator::)")
_JAX_METADATA = ("jax_version", "jaxlib_version")
# a TF1 graph program: runs of a Session, and no TF2 function or eager call
_SESSION_RUN = re.compile(r"^SessionRun\b")
_TF2_CALLS = re.compile(r"^(?:EagerExecute|EagerLocalExecute|FunctionRun\b)")


def host_framework(hd: HostData, shift_ps: int = 0) -> dict:
    """Framework signals of one host: whether JAX's profiler wrote it (``jax_metadata``), the
    number of distinct JAX and TensorFlow event names, and the ``device_vendor`` of each GPU
    plane ("" where absent)."""
    sp = hd.space
    jax_metadata = any(key in sp.plane_stats(i) for i in range(len(sp.plane_names))
                       for key in _JAX_METADATA)
    jax_names = hd.name_table(lambda s: s.str.match(_JAX_EVENTS).fillna(False).to_numpy())
    tf_names = hd.name_table(lambda s: s.str.match(_TF_EVENTS).fillna(False).to_numpy())
    vendors = [str(sp.plane_stats(i).get("device_vendor", "") or "")
               for i, name in enumerate(sp.plane_names) if name.startswith(GPU_PLANE_PREFIX)]
    sessions = hd.name_table(lambda s: s.str.match(_SESSION_RUN).fillna(False).to_numpy())
    tf2 = hd.name_table(lambda s: s.str.match(_TF2_CALLS).fillna(False).to_numpy())
    return {"jax_metadata": bool(jax_metadata), "jax_names": int(jax_names.sum()),
            "tf_names": int(tf_names.sum()), "gpu_vendors": vendors,
            "session_names": int(sessions.sum()), "tf2_names": int(tf2.sum())}


@dataclass(frozen=True)
class Framework:
    """What wrote a profile: ``name`` (``"jax"``, ``"tensorflow"`` or ``"unknown"``) and
    ``gpu_vendors``, the distinct GPU vendors, lower case (``"nvidia"``, ``"amd"``;
    ``"unknown"`` for GPU planes without a ``device_vendor`` stat; empty without GPUs)."""

    name: str
    gpu_vendors: tuple[str, ...] = ()
    session: bool = False  # TensorFlow 1's graph mode: Session.run calls, no tf.function


def _decide(parts) -> str:
    parts = list(parts)
    if any(p["jax_metadata"] for p in parts):
        return JAX  # JAX's profiler records JAX's own trace events only
    jax = sum(p["jax_names"] for p in parts)
    tf = sum(p["tf_names"] for p in parts)
    if not jax and not tf:
        return UNKNOWN
    return JAX if jax > tf else TENSORFLOW


def combine_framework(parts: dict) -> Framework:
    """The framework and GPU vendors of a profile, decided over all hosts."""
    vendors = {(v.strip().lower() or UNKNOWN) for p in parts.values() for v in p["gpu_vendors"]}
    name = _decide(parts.values())
    session = name == TENSORFLOW and any(p.get("session_names") for p in parts.values()) \
        and not any(p.get("tf2_names") for p in parts.values())
    return Framework(name, tuple(sorted(vendors)), session)


ANALYSES = (Analysis("framework", host=host_framework, combine=combine_framework,
                     host_cost=0.1),)
