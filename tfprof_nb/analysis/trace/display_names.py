"""Each event name's label, as XProf's trace viewer labels events.

An HLO op named by its expression (``%copy-done.4 = f32[5,1024] copy-done(...)``, TPU ops) is
labelled by its instruction, ``copy-done.4``, whatever display name its metadata gives (a TPU
copy's metadata may say ``async-copy``); other events by their metadata's ``display_name``
where the profiler wrote one (a TensorFlow op's ``Cast`` for ``replica_4/bert/.../Cast``,
tf.data's ``Iterator::Range`` for the whole iterator path).  XProf keeps the name as the
event's ``long_name``; every table here keys on the name.  A name given different display
names on different planes keeps the first (in host, then metadata order).
"""

from __future__ import annotations

__all__ = ["display_names", "hlo_instruction"]


def hlo_instruction(expression: str) -> str:
    """The instruction of an HLO text (``%name = ...``), or the text itself."""
    head = expression.split(" = ", 1)[0]
    return head[1:] if head.startswith("%") else head


def _label(name: str, shown: str) -> str:
    if name.startswith("%") and " = " in name:
        return hlo_instruction(name)
    return shown or name


def display_names(spaces) -> dict[str, str]:
    """{name: label} over the hosts' spaces (``{host: XSpaceData}``), for the names labelled
    otherwise (see the module doc); a name not in it is its own label."""
    out: dict[str, str] = {}
    for host in spaces:
        space = spaces[host]
        for name, shown in zip(space.event_metadata_names, space.event_metadata_display_names):
            label = _label(name, shown)
            if label != name:
                out.setdefault(name, label)
    return out
