"""Make a synthetic XSpace of XLA programs with hand-made buffer assignments (run in a
subprocess: it writes the protos with TensorFlow's ``hlo_pb2`` and ``xplane_pb2``, so their
field numbers are XLA's, independent of tfprof_nb's own schema).

    python tests/make_memory_profile.py OUTFILE

The ``/host:metadata`` plane holds these programs (program id: module name):

  1  share_after_free   XProf's own SHARE_WITH test: a buffer freed, then shared (revived)
  2  share_while_live   the same with the share before the free
  3..8  random_<seed>   random valid traces: ALLOC, FREE and SHARE_WITH chains (sharers of
                        sharers, revivals of freed memory, sharers smaller or larger than their
                        canonical buffer), parameters, outputs, constants, thread-local and
                        tuple allocations, a second memory space (colour 1) with its own trace,
                        tiled and memory-space layouts, tuple-shaped buffers (shape index)
  9  no_buffers         an HloProto without a buffer assignment
  10 double_free        a trace that frees a buffer twice (XProf's memory viewer fails on it)
"""

from __future__ import annotations

import random
import sys

ALLOC, FREE, SHARE = 0, 1, 2


class _Builder:
    """One HloProto: an entry computation whose instructions define the logical buffers."""

    def __init__(self, name: str):
        from tensorflow.compiler.xla.service import hlo_pb2

        self.proto = hlo_pb2.HloProto()
        module = self.proto.hlo_module
        module.name, module.entry_computation_name, module.id = name, "main", 1
        module.entry_computation_id = 1
        self.comp = module.computations.add(name="main", id=1)
        self.ba = self.proto.buffer_assignment
        self.allocs: dict = {}

    def instruction(self, name: str, opcode: str, dims, op_name: str = "", tuple_of=None,
                    tiles=None, memory_space: int = 0) -> int:
        instr = self.comp.instructions.add(name=name, opcode=opcode,
                                           id=len(self.comp.instructions) + 1)
        instr.metadata.op_name = op_name
        shapes = tuple_of if tuple_of is not None else [dims]
        target = instr.shape
        if tuple_of is not None:
            target.element_type = 13
        for d in shapes:
            s = target.tuple_shapes.add() if tuple_of is not None else target
            s.element_type = 11  # f32
            s.dimensions.extend(d)
            s.layout.minor_to_major.extend(reversed(range(len(d))))
            if tiles:
                s.layout.tiles.add().dimensions.extend(tiles)
            s.layout.memory_space = memory_space
        self.comp.root_id = instr.id
        return instr.id

    def allocation(self, index: int, color: int = 0, **flags):
        alloc = self.ba.buffer_allocations.add(index=index, color=color, **flags)
        self.allocs[index] = alloc
        return alloc

    def buffer(self, bid: int, size: int, instr: int, alloc: int, offset: int = 0,
               color: int = 0, shape_index=()):
        lb = self.ba.logical_buffers.add(id=bid, size=size, color=color)
        lb.defined_at.instruction_id = instr
        lb.defined_at.shape_index.extend(shape_index)
        a = self.allocs[alloc]
        a.assigned.add(logical_buffer_id=bid, offset=offset, size=size)
        a.size = max(a.size, offset + size)

    def trace(self, events, names: dict):
        trace = self.ba.heap_simulator_traces.add()
        for kind, bid, canonical in events:
            e = trace.events.add(kind=kind, buffer_id=bid, computation_name="main",
                                 instruction_name=names[bid])
            if kind == SHARE:
                e.share_with_canonical_id = canonical
        return trace


def _xprof_share_case(name: str, events) -> _Builder:
    """XProf's unit test: two 0.5 MiB buffers of one u64 each in one temporary allocation, a
    1 MiB constant."""
    b = _Builder(name)
    i1 = b.instruction("fusion.1", "fusion", [1], "jit(f)/<b>a</b>")  # (markup as text)
    i2 = b.instruction("fusion.2", "fusion", [1], "jit(f)/b")
    i3 = b.instruction("constant.1", "constant", [1])
    b.allocation(0)
    b.allocation(1, is_constant=True)
    b.buffer(1, 524288, i1, 0, 0)
    b.buffer(2, 524288, i2, 0, 524288)
    b.buffer(3, 1048576, i3, 1)
    b.trace(events, {1: "fusion.1", 2: "fusion.2"})
    return b


def _random_trace(rng: random.Random, buffers: list[int]) -> list:
    """A valid trace over ``buffers``: each is allocated or shares once and is freed at most
    once; shares pick any earlier buffer (live or freed: a freed one is revived)."""
    events, created, held = [], [], []
    pending = list(buffers)
    while pending or held:
        r = rng.random()
        if pending and (not held or r < 0.55):
            b = pending.pop(0)
            if created and rng.random() < 0.4:
                events.append((SHARE, b, rng.choice(created)))
            else:
                events.append((ALLOC, b, 0))
            created.append(b)
            held.append(b)
        else:
            b = held.pop(rng.randrange(len(held)))
            if rng.random() < 0.92:  # some buffers are never freed
                events.append((FREE, b, 0))
    return events


def _random_module(seed: int) -> _Builder:
    rng = random.Random(seed)
    b = _Builder(f"random_{seed}")
    b.allocation(0, is_entry_computation_parameter=True, parameter_number=0)
    b.allocation(1, maybe_live_out=True)
    b.allocation(2, is_constant=True)
    b.allocation(3, is_thread_local=True)
    b.allocation(4, maybe_live_out=True, is_tuple=True)
    b.allocation(5)  # temporaries of colour 0
    b.allocation(6, color=1)  # temporaries of colour 1
    names, temps, temps1 = {}, [], []
    n = rng.randint(25, 70)
    for k in range(n + 8):
        bid = 100 + k
        dims = [rng.choice([1, 3, 16, 256, 1024, 4096]), rng.choice([1, 2, 8, 128, 300])]
        size = 4 * dims[0] * dims[1]
        tiled = rng.random() < 0.2
        tupled = rng.random() < 0.15
        name = f"op_{seed}_{k}"
        iid = b.instruction(name, rng.choice(["fusion", "copy", "custom-call", "dot"]), dims,
                            f"jit(step)/layer{k % 4}/op{k}" if k % 3 else "",
                            tuple_of=[dims, [dims[0]]] if tupled else None,
                            tiles=[8, 128] if tiled else None,
                            memory_space=1 if k >= n else 0)
        if tiled:
            size = 4 * (-(-dims[0] // 8) * 8) * (-(-dims[1] // 128) * 128)  # padded
        names[bid] = name
        alloc, color = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4}.get(k, 5), 0
        if k >= n:
            alloc, color = 6, 1
        if rng.random() < 0.3 and k >= 5:
            size = rng.choice([4, 64, 1024, 8192, 40000])  # small and odd sizes
        b.buffer(bid, size, iid, alloc, offset=rng.randrange(0, 1 << 20, 64) if alloc >= 5
                 else 0, color=color, shape_index=[1] if tupled else [])
        (temps if alloc == 5 else temps1 if alloc == 6 else []).append(bid)
    b.trace(_random_trace(rng, temps), names)
    b.trace(_random_trace(rng, temps1), names)
    return b


def main(outfile: str) -> None:
    from tensorflow.compiler.xla.service import hlo_pb2
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    programs = {
        1: _xprof_share_case("share_after_free", [(ALLOC, 1, 0), (FREE, 1, 0), (SHARE, 2, 1),
                                                  (FREE, 2, 0)]).proto,
        2: _xprof_share_case("share_while_live", [(ALLOC, 1, 0), (SHARE, 2, 1), (FREE, 1, 0),
                                                  (FREE, 2, 0)]).proto,
    }
    for seed in range(3, 9):
        programs[seed] = _random_module(seed).proto
    bare = hlo_pb2.HloProto()
    bare.hlo_module.CopyFrom(programs[3].hlo_module)
    bare.hlo_module.name = "no_buffers"
    programs[9] = bare
    programs[10] = _xprof_share_case("double_free", [(ALLOC, 1, 0), (FREE, 1, 0),
                                                     (FREE, 1, 0)]).proto
    xs = xplane_pb2.XSpace()
    xs.hostnames.append("synthetic")
    plane = xs.planes.add(id=1, name="/host:metadata")
    plane.stat_metadata[1].id, plane.stat_metadata[1].name = 1, "Hlo Proto"
    plane.stat_metadata[2].id, plane.stat_metadata[2].name = 2, "program_id"
    for pid, proto in programs.items():
        md = plane.event_metadata[pid]
        md.id, md.name = pid, f"{proto.hlo_module.name}({pid})"
        md.stats.add(metadata_id=1, bytes_value=proto.SerializeToString())
        md.stats.add(metadata_id=2, uint64_value=pid)
    with open(outfile, "wb") as f:
        f.write(xs.SerializeToString())


if __name__ == "__main__":
    main(sys.argv[1])
