"""The device lists of an HLO instruction as XLA prints them: a collective's replica groups
(``replica_groups=`` in any of the proto's three forms) and an instruction's sharding
(``sharding=``), for :func:`.hlo_text.expression`.

Replica groups: an explicit list ``{{0,1},{2,3}}``; an iota list ``[2,4]<=[8]`` (groups,
devices a group, then the iota's reshape and, when not the identity, ``T(transpose)``); a list
by mesh axes ``mesh['x'=4,'y'=2] {'x'}`` (the mesh's named axes and sizes, its device order
when not the plain iota, ``device_ids=([4,2]T(1,0))``, then the axes the groups span, a
sub-axis as ``'x':(1)2``).

Shardings: ``{replicated}``, ``{manual}``, ``{unknown}``, ``{unreduced}``, ``{maximal
device=0}``, a tuple's ``{{...}, {...}}`` and a tiled one ``{devices=[2,1]0,1}`` (or
``<=[2]`` for an iota tile assignment) with ``last_tile_dim_replicate`` or ``last_tile_dims``.
"""

from __future__ import annotations

__all__ = ["replica_groups_text", "sharding_text"]

_REPLICATED, _MAXIMAL, _TUPLE, _OTHER, _MANUAL, _UNKNOWN, _UNREDUCED = range(7)
_SIMPLE = {_REPLICATED: "replicated", _MANUAL: "manual", _UNKNOWN: "unknown",
           _UNREDUCED: "unreduced"}
_SUBGROUP = {_REPLICATED: "replicated", _MANUAL: "manual", _UNREDUCED: "unreduced"}


def _joined(values) -> str:
    return ",".join(str(int(v)) for v in values)


def _iota_order(reshape, perm) -> str:
    """``[reshape]`` and ``T(perm)`` where the transpose moves something."""
    perm = [int(p) for p in perm]
    moved = perm and perm != list(range(len(perm)))
    return f"[{_joined(reshape)}]" + (f"T({_joined(perm)})" if moved else "")


def _iota_text(dims, reshape, perm) -> str:
    """``[dims]<=[reshape]`` and ``T(perm)`` where the transpose moves something."""
    return f"[{_joined(dims)}]<=" + _iota_order(reshape, perm)


def _explicit_groups(groups) -> str:
    return "{" + ",".join("{" + _joined(g.replica_ids) + "}" for g in groups) + "}"


def _mesh_axes_text(lst) -> str:
    mesh = lst.mesh
    names = [a.name for a in mesh.axes]
    text = "mesh[" + ",".join(f"'{a.name}'={int(a.size)}" for a in mesh.axes) + "]"
    if mesh.HasField("iota_device_ids") and len(mesh.iota_device_ids.reshape_dims) > 1:
        iota = mesh.iota_device_ids  # (an order made by a transpose: [4,2]T(1,0))
        text += f", device_ids=({_iota_order(iota.reshape_dims, iota.transpose_perm)})"
    elif len(mesh.device_ids):  # (the plain iota order writes none)
        text += f", device_ids=({_joined(mesh.device_ids)})"
    axes = []
    for ref in lst.axes:
        i = int(ref.mesh_axis_index)
        name = f"'{names[i]}'" if 0 <= i < len(names) else str(i)
        if ref.HasField("sub_axis_info"):
            name += f":({int(ref.sub_axis_info.pre_size)}){int(ref.sub_axis_info.size)}"
        axes.append(name)
    return f"{text} {{{','.join(axes)}}}"


def replica_groups_text(instr) -> str:
    """The instruction's replica groups as XLA prints them, "" where it has none."""
    if instr.HasField("mesh_axes_replica_group_list"):
        return _mesh_axes_text(instr.mesh_axes_replica_group_list)
    iota = instr.iota_collective_device_list if instr.HasField("iota_collective_device_list") \
        else None
    listed = instr.collective_device_list if instr.HasField("collective_device_list") else None
    if iota is None and listed is not None and listed.HasField("iota_replica_group_list"):
        iota = listed.iota_replica_group_list
    if iota is not None:
        return _iota_text([iota.num_replica_groups, iota.num_devices_per_group],
                          iota.iota_reshape_dims, iota.iota_transpose_perm)
    groups = listed.replica_groups if listed is not None and len(listed.replica_groups) \
        else instr.replica_groups
    return _explicit_groups(groups) if len(groups) else ""


def _tiled_text(sharding) -> str:
    dims = sharding.tile_assignment_dimensions
    if len(sharding.iota_reshape_dims):
        text = "devices=" + _iota_text(dims, sharding.iota_reshape_dims,
                                       sharding.iota_transpose_perm)
    else:
        text = f"devices=[{_joined(dims)}]{_joined(sharding.tile_assignment_devices)}"
    if sharding.replicate_on_last_tile_dim:
        text += " last_tile_dim_replicate"
    elif len(sharding.last_tile_dims):
        text += " last_tile_dims={" + ", ".join(
            _SUBGROUP.get(int(t), "unknown") for t in sharding.last_tile_dims) + "}"
    return "{" + text + "}"


def sharding_text(sharding) -> str:
    """An OpSharding as XLA prints it (``{maximal device=0}``)."""
    kind = int(sharding.type)
    if kind == _TUPLE:  # (XLA's /*index=5*/ before every fifth element)
        return "{" + ", ".join(f"/*index={i}*/{sharding_text(s)}" if i and i % 5 == 0 else
                               sharding_text(s)
                               for i, s in enumerate(sharding.tuple_shardings)) + "}"
    if kind == _MAXIMAL:
        devices = sharding.tile_assignment_devices
        return f"{{maximal device={int(devices[0]) if len(devices) else 0}}}"
    if kind == _OTHER:
        return _tiled_text(sharding)
    return "{" + _SIMPLE.get(kind, "unknown") + "}"
