"""FLOPs and bytes of a GPU program's HLO instructions by XLA's GPU cost analysis, as XProf runs
it (the model FLOPs, normalized FLOPs and bytes behind XProf's HLO stats, roofline and op
profile on NVIDIA and AMD GPUs alike).

Our reading of that analysis, per execution of one instruction:

* Elementwise ops (compare, convert, select and clamp included; copy not): clock cycles per
  output element by opcode and output type from :mod:`.gpu_op_cycles` (3 where it has none).
* ``dot``: 2 x output elements x the lhs's contracted size; ``convolution`` and cuDNN
  convolution custom-calls: 2 x batch x output features x input features per group x the
  (output, kernel) positions that land on the input; cuBLASLt matmul custom-calls
  (``__cublas$lt$matmul...``) as a dot.  Every other custom-call is unknown to the analysis:
  0 FLOPs and 0 bytes (so are ``__cublas$gemm`` calls, and attention libraries' calls).
* ``reduce``: the reducer's FLOPs x (input elements - output elements); ``reduce-window``,
  ``scatter``, ``select-and-scatter``, ``map``, ``sort`` (n ceil(log2 n)) and ``fft`` likewise
  by the count of reducer applications; ``concatenate``: 6 per element, or 400 where the joined
  dimension is not the first and the first operand's size in it is not a multiple of 32.
* Bytes: output plus operands, except: no data for parameters, constants, bitcasts (and
  transposes that are bitcasts by layout), tuple elements; ``slice``/``dynamic-slice``/
  ``gather`` read only what they output; ``dynamic-update-slice`` reads and writes the update;
  a tuple output is its table of 8-byte pointers.
* ``while``: one trip of its body and condition, summed; ``call``: its computation;
  ``conditional``: the largest branch.
* A fusion: each fused instruction counts in proportion to how much of it the fusion's output
  needs (its *utilization*, propagated from the root down through the users: a slice or gather
  of a tensor uses only part of it, an elementwise chain passes its users' share on, other ops
  start a new share rounded up to whole elements).  FLOPs are the fused instructions' FLOPs
  times their utilization; bytes are the outputs written (only the update of a root
  ``dynamic-update-slice``, which updates its buffer in place) plus each parameter's size
  times its utilization (at most 1), plus the larger fused constants'.  A custom fusion holding
  a gather or scatter counts as that gather or scatter alone.

Values accumulate in 32-bit floats and are truncated to integers, as XLA's are.  Normalized
FLOPs halve the FLOPs of ops whose widest input is 8 bits wide and quarter them for 4 bits.
"""

from __future__ import annotations

import math

import numpy as np

from ...xspace.hlo_proto import PRIMITIVE_TYPES, HloModule
from .gpu_op_cycles import cycles_per_element
from .hlo_cost import InstructionCost, conv_flops, dot_flops, gemm_dimension_numbers, shape_bytes
from .hlo_text import ELEMENTWISE, elements

__all__ = ["GpuCostModel"]

_F32 = np.float32
_TUPLE, _OPAQUE, _TOKEN = 13, 14, 17
# opcodes whose FLOPs are elementwise cycles (XLA routes compare, convert, select, clamp,
# reduce-precision and bitcast-convert there too; copy is not)
_CYCLE_OPS = (ELEMENTWISE | {"sine", "cosine", "tan", "erf"}) - {"copy"}
# XLA's IsElementwise (copy and constant included; "cos" is not XLA's name of cosine)
_ELEMENTWISE = ELEMENTWISE | {"sine", "cosine", "constant"}
_NO_DATA = frozenset({"parameter", "constant", "get-tuple-element", "domain", "after-all",
                      "add-dependency", "bitcast"})
_LT_MATMUL = "__cublas$lt$matmul"
_DNN_CONV = "__cudnn$conv"
_LARGE_CONSTANT = 8  # fused constants with more elements are read from memory
# ops whose called computations the analysis costs (a sort's comparator, an all-reduce's
# reducer and a custom-call's computations it never visits: their instructions cost 0)
_VISITS_CALLED = frozenset({"fusion", "reduce", "reduce-window", "scatter", "map",
                            "select-and-scatter", "while", "call", "conditional",
                            "async-start"})


class _Props:
    """What the analysis keeps of one instruction: FLOPs, bytes, operand utilizations."""

    __slots__ = ("flops", "bytes", "utils", "unknown", "reads", "writes", "breakdown")

    def __init__(self, flops=0.0, nbytes=0.0, utils=None, unknown=False, reads=None,
                 writes=None, breakdown=True):
        self.flops = _F32(flops)
        self.bytes = _F32(nbytes)
        self.utils = utils or {}
        self.unknown = unknown
        # bytes read per operand (index, or (index, leaf) of a tuple operand) and written per
        # output leaf, where they differ from the operand's and the output's size
        self.reads = reads or {}
        self.writes = writes or {}
        self.breakdown = breakdown  # False: XLA keeps no bytes per operand and output

    def util(self, i: int):
        return self.utils.get(i, _F32(1.0))


def _type_name(shape) -> str:
    return PRIMITIVE_TYPES.get(shape.element_type, ("", 0))[0]


def _size(shape) -> int:
    """XLA's default shape size: bytes of an array, 8 per element of a tuple's pointer table."""
    return shape_bytes(shape)


def _leaves(shape, index=()):
    """(index, array shape) of every array leaf of ``shape``."""
    if shape.element_type == _TUPLE:
        for i, s in enumerate(shape.tuple_shapes):
            yield from _leaves(s, index + (i,))
    elif shape.element_type not in (_OPAQUE, _TOKEN):
        yield index, shape


def _elements_recursive(shape) -> int:
    return sum(elements(s) for _, s in _leaves(shape))


def _first_of(shape):
    return shape.tuple_shapes[0] if shape.element_type == _TUPLE and \
        len(shape.tuple_shapes) else shape


class GpuCostModel:
    """XLA's GPU cost analysis of the instructions of one module (memoised per instruction)."""

    def __init__(self, module: HloModule):
        self.module = module
        self._props: dict = {}
        self._sums: dict = {}
        self._users: dict = {}
        self._visited: set | None = None

    # ---- the public answer --------------------------------------------------------------------
    def cost(self, instr) -> InstructionCost:
        """:class:`.hlo_cost.InstructionCost` of one execution of ``instr``."""
        if not self._is_visited(instr):
            return InstructionCost(0, 0, 0)
        p = self.props(instr)
        if p.unknown:
            return InstructionCost(0, 0, 0)
        flops = int(p.flops)
        return InstructionCost(flops, flops - int(self._adjustment(instr, p.flops)),
                               max(int(p.bytes), 0))

    def hbm_bytes(self, instr) -> float:
        """Bytes of one execution XProf counts as HBM traffic: read per operand plus written per
        output leaf as XLA keeps them (a tuple output of a library call is not among them);
        NaN where XLA keeps none (XProf then counts all the bytes)."""
        if not self._is_visited(instr):
            return float("nan")
        p = self.props(instr)
        if p.unknown or not p.breakdown or int(p.bytes) <= 0:
            return float("nan")
        read = 0
        for i, o in enumerate(self.module.operands(instr)):
            if o is None:
                continue
            if o.shape.element_type == _TUPLE:
                read += sum(int(p.reads.get((i, index), 0)) for index, _ in _leaves(o.shape))
            elif o.shape.element_type not in (_OPAQUE, _TOKEN):
                read += int(p.reads.get(i, _size(o.shape)))
        if instr.shape.element_type == _TUPLE:
            written = sum(int(p.writes.get(index, 0)) for index, _ in _leaves(instr.shape))
        else:
            written = int(p.writes.get((), _size(instr.shape)))
        total = max(read, 0) + max(written, 0)
        return float(total) if total > 0 else float("nan")

    def _is_visited(self, instr) -> bool:
        """Whether the analysis reaches ``instr``: it walks the entry computation and the
        computations its ops cost (fused, reducers, loop bodies, branches ...)."""
        if self._visited is None:
            m, seen = self.module, set()
            todo = [m.entry_id]
            while todo:
                cid = todo.pop()
                if cid in seen or cid not in m.computations:
                    continue
                seen.add(cid)
                for i in m.computations[cid].instructions:
                    if i.opcode in _VISITS_CALLED:
                        todo += list(i.called_computation_ids)
            self._visited = seen
        comp = self.module.computation_of.get(instr.name)
        return comp is not None and comp.id in self._visited

    def _adjustment(self, instr, flops):
        """XProf's device-FLOPs adjustment: int8/fp8 work at half, int4 at a quarter."""
        ops = [o for o in self.module.operands(instr)
               if o is not None and o.shape.element_type not in (_TUPLE, _OPAQUE, _TOKEN, 0)]
        if instr.opcode == "custom-call":
            if not instr.custom_call_target.startswith(_LT_MATMUL):
                return 0
            ops = ops[:1]
        widths = [1 if o.shape.element_type == 1 else  # (pred: 1 bit wide)
                  PRIMITIVE_TYPES.get(o.shape.element_type, ("", 0))[1] for o in ops]
        divisor = {8: 2, 4: 4}.get(max(widths), 1) if widths and flops else 1
        return flops - flops / _F32(divisor)

    # ---- per instruction --------------------------------------------------------------------
    def props(self, instr) -> _Props:
        key = instr.name
        if key not in self._props:
            self._props[key] = _Props()  # guards against recursive computations
            self._props[key] = self._handle(instr)
        return self._props[key]

    def _operands(self, instr) -> list:
        return [o for o in self.module.operands(instr)]

    def _default_bytes(self, instr):
        total = _F32(_size(instr.shape))
        for o in self._operands(instr):
            if o is not None:
                total += _F32(_size(o.shape))
        return total

    def _handle(self, instr) -> _Props:
        op = instr.opcode
        ops = self._operands(instr)
        if op == "fusion":
            return self._fusion(instr)
        if op in _NO_DATA or op == "async-start" or \
                (op == "transpose" and self._transpose_is_bitcast(instr, ops)):
            return _Props()
        if op == "tuple":
            return _Props(0, _size(instr.shape), breakdown=False)
        if op in _CYCLE_OPS:
            flops = cycles_per_element(op, _type_name(instr.shape)) * \
                _elements_recursive(instr.shape)
            return _Props(flops, self._default_bytes(instr))
        for handler in (self._data_movement, self._reductions, self._compute,
                        self._control_flow):
            found = handler(op, instr, ops)
            if found is not None:
                return found
        return _Props(0, self._default_bytes(instr))

    def _data_movement(self, op, instr, ops) -> _Props | None:
        """Slices, gathers and in-place updates: they read only part of an operand."""
        out, n = _size(instr.shape), elements(instr.shape)
        size, elems = _sizes(ops)
        if op == "slice":
            return _Props(0, _F32(2 * out), {0: _F32(n / max(elems(0), 1))}, reads={0: out})
        if op in ("dynamic-slice", "gather"):
            return _Props(0, _F32(2 * out) + _F32(size(1)), {0: _F32(n / max(elems(0), 1))},
                          reads={0: out, 1: size(1)})
        if op == "dynamic-update-slice":
            return _Props(0, _F32(2 * size(1)) + _F32(size(2)),
                          {0: _F32((n - elems(1)) / n) if n else _F32(0)},
                          reads={0: 0, 1: size(1), 2: size(2)}, writes={(): size(1)})
        if op == "triangular-solve":
            a, b = (ops + [None, None])[:2]
            flops = 2 * a.shape.dimensions[-1] * elements(b.shape) \
                if a is not None and b is not None and len(a.shape.dimensions) else 0
            return _Props(flops, _F32(out) + _F32(size(0) / 2) + _F32(size(1)),
                          reads={0: size(1)})  # (XLA overwrites its operand 0 so)
        if op == "cholesky":
            a = ops[0] if ops else None
            flops = a.shape.dimensions[-1] * elements(a.shape) // 3 \
                if a is not None and len(a.shape.dimensions) else 0
            return _Props(flops, _F32(size(0)), reads={0: size(0) / 2},
                          writes={(): size(0) / 2})
        return None

    def _reductions(self, op, instr, ops) -> _Props | None:
        """Ops that apply a computation: FLOPs per application times the applications."""
        if op == "scatter":
            return self._scatter(instr, ops)
        if op == "reduce":
            return self._reduce(instr, ops)
        if op == "reduce-window":
            return self._reduce_window(instr, ops)
        called = self.module.called(instr)
        if op == "select-and-scatter":
            src = _sizes(ops)[1](1)
            window = math.prod(d.size for d in instr.window.dimensions) \
                if instr.HasField("window") else 1
            flops = _F32(0)
            if len(called) > 1:
                flops = self._sum(called[0]).flops * _F32(src * max(window - 1, 0)) + \
                    self._sum(called[1]).flops * _F32(src)
            return _Props(flops, self._default_bytes(instr))
        if op == "map":
            flops = self._sum(called[0]).flops * _F32(elements(instr.shape)) if called else 0
            return _Props(flops, self._default_bytes(instr))
        if op in ("all-reduce", "all-reduce-start"):
            root = self.module.root_of(called[0]) if called else None
            flops = cycles_per_element(root.opcode if root is not None else "",
                                       _type_name(instr.shape)) * \
                _elements_recursive(instr.shape)
            written = sum(_size(s) for _, s in _leaves(instr.shape))
            nbytes = written if op == "all-reduce-start" else \
                written + sum(_size(o.shape) for o in ops if o is not None)
            return _Props(flops, nbytes, writes={(): written})
        return None

    def _compute(self, op, instr, ops) -> _Props | None:
        """Dots, convolutions, library calls, concatenations, sorts and FFTs."""
        if op == "custom-call":
            return self._custom_call(instr, ops)
        first = ops[0].shape if ops and ops[0] is not None else None
        if op == "dot":
            flops = dot_flops(first, instr.shape, instr.dot_dimension_numbers) \
                if first is not None else 0
        elif op == "convolution":
            flops = self._conv(instr, ops, instr.shape)
        elif op == "concatenate":
            dim = instr.dimensions[0] if len(instr.dimensions) else 0
            straddles = dim > 0 and first is not None and first.dimensions[dim] % 32 != 0
            flops = (400 if straddles else 6) * _elements_recursive(instr.shape)
        elif op == "sort":
            n = elements(first) if first is not None else 0
            flops = n * max(n - 1, 0).bit_length() if n > 1 else 0
        elif op == "fft":
            logs = math.prod(int(math.log2(n)) if n > 0 else 0 for n in instr.fft_length)
            flops = 8 * logs * (elements(_first_of(first)) if first is not None else 0)
        else:
            return None
        return _Props(flops, self._default_bytes(instr))

    def _control_flow(self, op, instr, ops) -> _Props | None:
        """Loops, calls and branches: the computations they run (one trip of a loop)."""
        called = self.module.called(instr)
        if op == "while":
            sums = [self._sum(c) for c in called]
            return _Props(sum((s.flops for s in sums), _F32(0)),
                          sum((s.bytes for s in sums), _F32(0)), breakdown=False)
        if op == "call":
            s = self._sum(called[0]) if called else _Props()
            return _Props(s.flops, s.bytes, breakdown=False)
        if op == "conditional":
            sums = [self._sum(c) for c in called]
            return _Props(max((s.flops for s in sums), default=0),
                          max((s.bytes for s in sums), default=0), breakdown=False)
        return None

    def _transpose_is_bitcast(self, instr, ops) -> bool:
        if not ops or ops[0] is None:
            return False
        src, dst = ops[0].shape, instr.shape
        if src.element_type != dst.element_type or not src.HasField("layout") or \
                not dst.HasField("layout"):
            return False
        perm, out_m2m = list(instr.dimensions), list(dst.layout.minor_to_major)
        if len(out_m2m) != len(perm):
            return False
        return [perm[d] for d in out_m2m] == list(src.layout.minor_to_major)

    def _conv(self, instr, ops, out_shape) -> int:
        if len(ops) < 2 or ops[0] is None or ops[1] is None or \
                not instr.HasField("convolution_dimension_numbers"):
            return 0
        return conv_flops(ops[0].shape, ops[1].shape, out_shape,
                          instr.convolution_dimension_numbers, instr.window,
                          max(instr.feature_group_count, 1), max(instr.batch_group_count, 1))

    def _custom_call(self, instr, ops) -> _Props:
        target = instr.custom_call_target
        first = _first_of(instr.shape)
        if target.startswith(_LT_MATMUL):
            dn = gemm_dimension_numbers(instr.backend_config)
            flops = dot_flops(ops[0].shape, first, dn) if dn is not None and ops and \
                ops[0] is not None else 0
        elif target.startswith(_DNN_CONV):
            flops = self._conv(instr, ops, first)
        else:
            return _Props(unknown=True)
        nbytes = self._default_bytes(instr) - _F32(_size(instr.shape)) + _F32(_size(first))
        return _Props(flops, nbytes, writes={(): _size(first)})

    def _scatter(self, instr, ops) -> _Props:
        n = (len(ops) - 1) // 2
        updates = [o for o in ops[n + 1:] if o is not None]
        u = sum(_size(o.shape) for o in updates)
        indices = _size(ops[n].shape) if n < len(ops) and ops[n] is not None else 0
        called = self.module.called(instr)
        flops = self._sum(called[0]).flops * _F32(elements(updates[0].shape)) \
            if called and updates else 0
        reads = {n: indices}
        for i, o in enumerate(ops[n + 1:]):
            reads[i] = reads[n + 1 + i] = _size(o.shape) if o is not None else 0
        return _Props(flops, _F32(3 * u) + _F32(indices), reads=reads, writes={(): u})

    def _reduce(self, instr, ops) -> _Props:
        n = len(ops) // 2
        out0 = _first_of(instr.shape)
        called = self.module.called(instr)
        count = (elements(ops[0].shape) - elements(out0)) if ops and ops[0] is not None else 0
        flops = self._sum(called[0]).flops * _F32(count) if called else _F32(0)
        nbytes = _F32(sum(_size(s) for _, s in _leaves(instr.shape)))
        for o in ops[:n]:
            if o is not None:
                nbytes += _F32(_size(o.shape))
        utils, reads = {}, {}
        for j, o in enumerate(ops[n:]):
            reads[n + j] = elements(out0) * _size(o.shape) if o is not None else 0
            nbytes += _F32(reads[n + j])
            utils[n + j] = _F32(elements(out0))
        return _Props(flops, nbytes, utils, reads=reads,
                      writes={(): sum(_size(s) for _, s in _leaves(instr.shape))})

    def _reduce_window(self, instr, ops) -> _Props:
        dims = list(instr.window.dimensions) if instr.HasField("window") else []
        window = math.prod(d.size for d in dims) if dims else 1
        out0 = _first_of(instr.shape)
        out = elements(out0)
        applications = (window - 1) * out
        big = [d for d in dims if d.size != 1]
        padded = [d for d in dims if d.padding_low or d.padding_high]
        if instr.shape.element_type != _TUPLE and len(big) == 1 and len(padded) == 1:
            for i, d in enumerate(dims):  # a reduce followed by a broadcast
                if d.size != 1 and d.padding_low == d.padding_high != 0 and \
                        d.size == 2 * d.padding_low + 1 and \
                        d.padding_low == out0.dimensions[i] - 1:
                    w = out0.dimensions[i]
                    applications = out // w + (w - 1)
                    break
        called = self.module.called(instr)
        flops = self._sum(called[0]).flops * _F32(applications) if called else _F32(0)
        return _Props(flops, self._default_bytes(instr))

    # ---- computations -------------------------------------------------------------------------
    def _sum(self, comp) -> _Props:
        """FLOPs and bytes of every instruction of ``comp`` (a reducer, a loop body ...)."""
        if comp.id not in self._sums:
            self._sums[comp.id] = _Props()
            flops, nbytes = _F32(0), _F32(0)
            for i in comp.instructions:
                p = self.props(i)
                if not p.unknown:
                    flops += p.flops
                    nbytes += p.bytes
            self._sums[comp.id] = _Props(flops, nbytes)
        return self._sums[comp.id]

    def _users_in(self, comp) -> dict:
        if comp.id not in self._users:
            users: dict = {}
            for i in comp.instructions:
                for oid in i.operand_ids:
                    users.setdefault(oid, []).append(i)
            self._users[comp.id] = users
        return self._users[comp.id]

    def _passes_through(self, instr, fused_elementwise: dict) -> bool:
        """Whether the utilization pass hands ``instr``'s share on to its operands unchanged."""
        op = instr.opcode
        if op in ("tuple", "get-tuple-element"):
            return True
        if op == "fusion":
            if instr.name not in fused_elementwise:
                called = self.module.called(instr)
                fused_elementwise[instr.name] = bool(called) and all(
                    self._is_elementwise(i) for i in called[0].instructions
                    if i.opcode != "parameter")
            return fused_elementwise[instr.name]
        if op == "bitcast":
            ops = self.module.operands(instr)
            src = ops[0].shape if ops and ops[0] is not None else None
            return src is not None and list(src.dimensions) == list(instr.shape.dimensions) \
                and list(src.layout.minor_to_major) == list(instr.shape.layout.minor_to_major)
        return self._is_elementwise(instr)

    def _is_elementwise(self, instr) -> bool:
        op = instr.opcode
        if op == "bitcast-convert":
            ops = self.module.operands(instr)
            src = ops[0].shape.element_type if ops and ops[0] is not None else 0
            return PRIMITIVE_TYPES.get(instr.shape.element_type, ("", 0))[1] == \
                PRIMITIVE_TYPES.get(src, ("", 0))[1]
        return op in _ELEMENTWISE

    def _fusion(self, instr) -> _Props:
        m = self.module
        called = m.called(instr)
        if not called:
            return _Props(0, self._default_bytes(instr))
        comp = called[0]
        if instr.fusion_kind == "kCustom":
            for h in comp.instructions:  # counted as its gather or scatter alone
                if h.opcode == "gather":
                    p = self._handle(h)
                    return _Props(0, p.bytes, reads=p.reads, writes={(): _size(h.shape)})
                if h.opcode == "scatter":
                    return self._scatter(h, m.operands(h))
        fused = list(comp.instructions)
        props = {i.id: self.props(i) for i in fused}
        overrides: dict = {}
        root = m.root_of(comp)
        nbytes = _F32(0)
        writes: dict = {}
        for index, leaf in _leaves(instr.shape):
            r = root
            if len(index) == 1 and root is not None and root.opcode == "tuple":
                r = m.by_id.get(root.operand_ids[index[0]])
            if r is not None and r.opcode == "dynamic-update-slice" and len(r.operand_ids) > 1:
                update = m.by_id.get(r.operand_ids[1])
                writes[index] = _size(update.shape) if update is not None else 0
                overrides[r.id] = 0  # the buffer is updated in place, not read
            else:
                writes[index] = _size(leaf)
            nbytes += _F32(writes[index])
        util, flops = self._utilizations(fused, root, props, overrides)
        for i in fused:
            if i.opcode == "constant" and _elements_recursive(i.shape) > _LARGE_CONSTANT:
                nbytes += _F32(_size(i.shape)) * min(util.get(i.id, _F32(0)), _F32(1))
        users = self._users_in(comp)
        param_utils, reads = {}, {}
        for p in fused:
            if p.opcode != "parameter":
                continue
            i = p.parameter_number
            param_utils[i] = util.get(p.id, _F32(0))
            if p.shape.element_type != _TUPLE:
                reads[i] = _read_bytes(p, util)
                nbytes += _F32(reads[i])
                continue
            for index, _ in _leaves(p.shape):
                node = p
                for k in index:
                    node = next((u for u in users.get(node.id, [])
                                 if u.opcode == "get-tuple-element" and u.tuple_index == k),
                                node)
                reads[(i, index)] = _read_bytes(node, util)
                nbytes += _F32(reads[(i, index)])
        return _Props(flops, nbytes, param_utils, reads=reads, writes=writes)

    def _utilizations(self, fused, root, props, overrides):
        """XLA's GPU utilization pass over a fused computation: each instruction's share of use
        and the fusion's FLOPs (instructions' FLOPs times their share)."""
        m = self.module
        util = {i.id: _F32(0) for i in fused}
        roots = {i.id: set() for i in fused}
        root_util = {i.id: _F32(0) for i in fused}
        if root is None:
            return util, _F32(0)
        root_util[root.id] = _F32(1)
        roots[root.id].add(root.id)
        flops = _F32(0)
        elementwise: dict = {}
        for x in reversed(fused):  # (the proto's order is a post order: users come later)
            u = _F32(0)
            for r in roots[x.id]:
                u += root_util[r]
            util[x.id] = u
            flops += u * props[x.id].flops
            through = self._passes_through(x, elementwise)
            for j, oid in enumerate(x.operand_ids):
                if oid not in roots:
                    continue
                if through:
                    roots[oid] |= roots[x.id]
                    continue
                roots[oid].add(oid)
                share = _F32(0) if overrides.get(x.id) is not None and j == 0 else \
                    props[x.id].util(j)
                v = u * share
                n = _elements_recursive(m.by_id[oid].shape)
                v = _F32(0) if n == 0 else _F32(np.ceil(v * _F32(n)) / _F32(n))
                root_util[oid] += v
        return util, flops


def _sizes(ops):
    """(bytes of operand i, elements of operand i): 0 where the operand is missing."""
    def size(i):
        return _size(ops[i].shape) if i < len(ops) and ops[i] is not None else 0

    def elems(i):
        return elements(ops[i].shape) if i < len(ops) and ops[i] is not None else 0
    return size, elems


def _read_bytes(node, util) -> int:
    """Bytes a fused parameter (or a tuple parameter's element) is read: its size times its
    utilization, at most once in full."""
    u = min(util.get(node.id, _F32(0)), _F32(1))
    return math.floor(float(_F32(_size(node.shape)) * u) + 0.5)
