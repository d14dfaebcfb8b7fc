"""Reading small protobuf messages without their schema (the few that profiles embed as bytes
stats: a TPU op's ``memory_access_breakdown``).

Only the wire format is read: each field's number and value (varints and fixed-size numbers as
integers, length-delimited fields as bytes).  Large messages (HLO protos) use the protobuf
runtime (:mod:`.hlo_proto`).
"""

from __future__ import annotations

from .._deprecated import renamed

__all__ = ["read_fields", "ProtoWireError", "MEMORY_SPACES", "memory_access_bytes"]

# OpMetrics.MemoryAccessed: operation_type (1: READ, 2: WRITE), memory_space (XLA's numbering
# on TPU: 1 HBM, 2 CMEM, 3 VMEM), bytes_accessed
MEMORY_SPACES = {1: "hbm", 2: "cmem", 3: "vmem"}
_READ, _WRITE = 1, 2


class ProtoWireError(ValueError):
    """Bytes that are not a protobuf message."""


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ProtoWireError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def read_fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """The (field number, value) pairs of one message, in order (repeated fields repeat)."""
    out: list[tuple[int, int | bytes]] = []
    pos, n = 0, len(data)
    while pos < n:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1 or wire == 5:
            size = 8 if wire == 1 else 4
            if pos + size > n:
                raise ProtoWireError("truncated fixed-size field")
            value, pos = int.from_bytes(data[pos:pos + size], "little"), pos + size
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > n:
                raise ProtoWireError("truncated length-delimited field")
            value, pos = bytes(data[pos:pos + size]), pos + size
        else:
            raise ProtoWireError(f"unsupported wire type {wire}")
        if number == 0:
            raise ProtoWireError("field number 0")
        out.append((number, value))
    return out


def memory_access_bytes(data: bytes) -> dict[str, int]:
    """Bytes per memory space and direction (``hbm``, ``cmem_read``, ``cmem_write``,
    ``vmem_read``, ``vmem_write``; HBM reads and writes together) of a serialized
    ``MemoryAccessBreakdown``; empty when it lists nothing."""
    out: dict[str, int] = {}
    for number, entry in read_fields(data):
        if number != 1 or not isinstance(entry, bytes):
            continue
        fields = dict(read_fields(entry))
        space = MEMORY_SPACES.get(int(fields.get(2, 0)))
        nbytes = int(fields.get(3, 0))
        kind = int(fields.get(1, 0))
        if space is None:
            key = "other"
        elif space == "hbm":
            key = "hbm"
        else:
            key = space + ("_read" if kind == _READ else "_write" if kind == _WRITE
                           else "_other")
        out[key] = out.get(key, 0) + nbytes
    return out


def __getattr__(name: str):
    # renamed: "memory breakdown" means the allocations live at a peak (prof.memory_breakdown)
    if name == "memory_breakdown":
        return renamed(f"{__name__}.memory_breakdown", "memory_access_bytes",
                       memory_access_bytes)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
