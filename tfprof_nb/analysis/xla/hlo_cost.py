"""FLOPs and bytes accessed of HLO instructions: our own cost model over the parsed HloProto,
for XLA:CPU programs (XProf shows no XLA:CPU ops, so there is no reference to follow; GPU
programs are costed by XLA's GPU cost analysis as XProf runs it: :mod:`.gpu_cost`).  Its
dot, convolution and shape-size helpers serve both.

Per execution of one instruction:

* ``dot``: 2 x output elements x contracted size (a multiply and an add per term);
  cuBLAS gemm custom-calls (``__cublas$gemm``, ``__cublas$lt$matmul...``) the same, with the
  dimension numbers of their ``gemm_backend_config``.
* ``convolution`` (and cuDNN convolution custom-calls): 2 x batch x output features x input
  features per group x the (output position, kernel position) pairs that fall on the input,
  counted per spatial dimension (padding and dilation taken into account).
* elementwise ops (add, multiply, exp, compare, select, convert, ...): ``elementwise_flops``
  per output element (1 by default).
* ``reduce``: (input elements - output elements) x the reducer's FLOPs per call;
  ``reduce-window``: output elements x (window elements - 1) x the reducer's FLOPs;
  ``scatter``: update elements x the combiner's FLOPs.
* ``sort``: n x ceil(log2 n) comparisons (n: elements of the first operand).
* data movement (broadcast, transpose, copy, reshape, slice, pad, concatenate, gather,
  dynamic-(update-)slice, iota, ...): 0 FLOPs.
* ``fusion``: the sum of its fused instructions' FLOPs.
* ``while`` / ``call`` / ``conditional``: 0 (their work is in the ops they run, which have
  their own events).

Bytes accessed: the output plus every operand (XLA's default), except ``bitcast``,
``parameter``, ``constant``, ``get-tuple-element`` and control flow (0: they move no data) and
``tuple`` (its table of pointers); a fusion reads each fused parameter once in full (or only
what ``slice``, ``dynamic-slice`` and ``gather`` take of it when those are its only users) and
writes its outputs, except that a root ``dynamic-update-slice`` of a parameter updates that
buffer in place (only the update is written, the buffer is not read); cuBLAS and cuDNN
custom-calls write their first output only (the second is their workspace).  Tuples count as 8-byte
pointers per element, as XLA's GPU shape sizes do.

``model_flops`` are these FLOPs; ``normalized_flops`` divide them by 2 for ops whose widest
input is 8 bits wide and by 4 for 4-bit inputs (as XProf's GPU cost analysis normalises
int8/fp8/int4 work against fp16 peaks).
"""

from __future__ import annotations

import json

from ...xspace.hlo_proto import PRIMITIVE_TYPES, HloModule
from .hlo_text import elements, is_elementwise

__all__ = ["InstructionCost", "CostModel", "shape_bytes", "dot_flops", "conv_flops",
           "gemm_dimension_numbers"]

_POINTER_BYTES = 8
_NO_DATA = frozenset({"bitcast", "parameter", "constant", "get-tuple-element",
                      "after-all", "partition-id", "replica-id", "while", "call",
                      "conditional", "add-dependency", "opt-barrier", "domain"})
_PARTIAL_READERS = frozenset({"slice", "dynamic-slice", "gather"})
_GEMM_TARGETS = ("__cublas$gemm", "__cublas$lt$matmul")
_CONV_TARGET_PREFIX = "__cudnn$conv"


def shape_bytes(shape) -> int:
    """Bytes of a shape: elements x element size for arrays; 8 per element for tuples."""
    et = shape.element_type
    if et == 13:
        return _POINTER_BYTES * len(shape.tuple_shapes)
    if et in (14, 17):
        return 0
    bits = PRIMITIVE_TYPES.get(et, ("", 0))[1]
    return (elements(shape) * bits + 7) // 8


def _array_leaves_bytes(shape) -> int:
    if shape.element_type == 13:
        return sum(_array_leaves_bytes(s) for s in shape.tuple_shapes)
    return shape_bytes(shape)


class InstructionCost(tuple):
    """(model_flops, normalized_flops, bytes_accessed) of one execution."""

    __slots__ = ()

    def __new__(cls, flops: int, normalized: int, bytes_accessed: int):
        return super().__new__(cls, (int(flops), int(normalized), int(bytes_accessed)))

    @property
    def flops(self) -> int:
        return self[0]

    @property
    def normalized_flops(self) -> int:
        return self[1]

    @property
    def bytes_accessed(self) -> int:
        return self[2]


class CostModel:
    """FLOPs and bytes of the instructions of one module (memoised per instruction name)."""

    def __init__(self, module: HloModule, elementwise_flops: int = 1):
        self.module = module
        self.elementwise_flops = elementwise_flops
        self._flops: dict = {}
        self._computation_flops: dict = {}

    # ---- FLOPs ------------------------------------------------------------------------------
    def flops(self, instr) -> int:
        """Model FLOPs of one execution of ``instr``."""
        key = instr.name
        if key not in self._flops:
            self._flops[key] = 0  # guards against recursive computations
            self._flops[key] = int(self._instruction_flops(instr))
        return self._flops[key]

    def _called_flops(self, comp) -> int:
        if comp.id not in self._computation_flops:
            self._computation_flops[comp.id] = 0
            self._computation_flops[comp.id] = sum(self.flops(i) for i in comp.instructions)
        return self._computation_flops[comp.id]

    def _instruction_flops(self, instr) -> int:
        m, op = self.module, instr.opcode
        if op == "dot":
            ops = m.operands(instr)
            if not ops or ops[0] is None:
                return 0
            return dot_flops(ops[0].shape, instr.shape, instr.dot_dimension_numbers)
        if op == "convolution":
            return self._conv_flops(instr, instr.shape)
        if op == "custom-call":
            return self._custom_call_flops(instr)
        if op == "fusion":
            return sum(self._called_flops(c) for c in m.called(instr))
        if op == "reduce":
            ops = m.operands(instr)
            out = instr.shape.tuple_shapes[0] if instr.shape.element_type == 13 \
                else instr.shape
            if not ops or ops[0] is None:
                return 0
            count = elements(ops[0].shape) - elements(out)
            return max(count, 0) * self._reducer_flops(instr)
        if op == "reduce-window":
            window = 1
            for d in instr.window.dimensions:
                window *= d.size
            out = instr.shape.tuple_shapes[0] if instr.shape.element_type == 13 \
                else instr.shape
            return elements(out) * max(window - 1, 0) * self._reducer_flops(instr)
        if op == "scatter":
            ops = m.operands(instr)
            updates = ops[-1] if ops else None
            return (elements(updates.shape) if updates is not None else 0) * \
                self._reducer_flops(instr)
        if op == "sort":  # comparisons of an n log n sort
            ops = m.operands(instr)
            n = elements(ops[0].shape) if ops and ops[0] is not None else 0
            return n * max(n - 1, 0).bit_length() if n > 1 else 0
        if op == "constant":
            return 0
        if is_elementwise(m, instr) and op != "copy":
            return self.elementwise_flops * elements(instr.shape)
        return 0

    def _reducer_flops(self, instr) -> int:
        called = self.module.called(instr)
        return self._called_flops(called[0]) if called else 0

    def _conv_flops(self, instr, out_shape) -> int:
        ops = self.module.operands(instr)
        if len(ops) < 2 or ops[0] is None or ops[1] is None or \
                not instr.HasField("convolution_dimension_numbers"):
            return 0
        return conv_flops(ops[0].shape, ops[1].shape, out_shape,
                           instr.convolution_dimension_numbers, instr.window,
                           max(instr.feature_group_count, 1),
                           max(instr.batch_group_count, 1))

    def _custom_call_flops(self, instr) -> int:
        target = instr.custom_call_target
        out = instr.shape.tuple_shapes[0] if instr.shape.element_type == 13 and \
            len(instr.shape.tuple_shapes) else instr.shape
        if target.startswith(_GEMM_TARGETS):
            dn = gemm_dimension_numbers(instr.backend_config)
            ops = self.module.operands(instr)
            if dn is None or not ops or ops[0] is None:
                return 0
            return dot_flops(ops[0].shape, out, dn)
        if target.startswith(_CONV_TARGET_PREFIX):
            return self._conv_flops(instr, out)
        return 0

    # ---- bytes ------------------------------------------------------------------------------
    def bytes_accessed(self, instr) -> int:
        """Bytes one execution of ``instr`` reads and writes."""
        m, op = self.module, instr.opcode
        if op in _NO_DATA:
            return 0
        if op == "fusion":
            return self._fusion_bytes(instr)
        if op == "tuple":  # the output's table of pointers
            return shape_bytes(instr.shape)
        out = instr.shape
        if op == "custom-call" and out.element_type == 13 and len(out.tuple_shapes) and \
                instr.custom_call_target.startswith((_CONV_TARGET_PREFIX, *_GEMM_TARGETS)):
            out = out.tuple_shapes[0]  # cuDNN's / cuBLAS's workspace is not an output
        total = shape_bytes(out)
        for o in m.operands(instr):
            if o is not None:
                total += shape_bytes(o.shape)
        return total

    def _fusion_bytes(self, instr) -> int:
        m = self.module
        called = m.called(instr)
        total = _array_leaves_bytes(instr.shape)
        if not called:
            return total + sum(shape_bytes(o.shape) for o in m.operands(instr) if o)
        comp = called[0]
        users: dict = {}
        for i in comp.instructions:
            for oid in i.operand_ids:
                users.setdefault(oid, []).append(i)
        in_place = set()  # buffers updated in place by a root dynamic-update-slice
        root = m.root_of(comp)
        roots = [m.by_id.get(i) for i in root.operand_ids] if root is not None and \
            root.opcode == "tuple" else [root]
        for r in roots:
            if r is not None and r.opcode == "dynamic-update-slice" and \
                    len(r.operand_ids) > 1:
                buffer, update = m.by_id.get(r.operand_ids[0]), m.by_id.get(r.operand_ids[1])
                if buffer is not None and buffer.opcode == "parameter" and update is not None:
                    in_place.add(buffer.id)
                    total += shape_bytes(update.shape) - shape_bytes(r.shape)
        for p in comp.instructions:
            if p.opcode != "parameter" or p.id in in_place:
                continue
            size = shape_bytes(p.shape)
            readers = users.get(p.id, [])
            if readers and all(u.opcode in _PARTIAL_READERS and u.operand_ids[0] == p.id
                               for u in readers):
                size = min(size, sum(shape_bytes(u.shape) for u in readers))
            total += size
        return total

    # ---- both ---------------------------------------------------------------------------------
    def cost(self, instr) -> InstructionCost:
        """:class:`InstructionCost` of one execution of ``instr``."""
        flops = self.flops(instr)
        return InstructionCost(flops, round(flops / self._flop_rate_divisor(instr)),
                               self.bytes_accessed(instr))

    def _flop_rate_divisor(self, instr) -> int:
        widths = [1 if o.shape.element_type == 1 else  # pred: 1 bit wide
                  PRIMITIVE_TYPES.get(o.shape.element_type, ("", 0))[1]
                  for o in self.module.operands(instr)
                  if o is not None and o.shape.element_type not in (13, 14, 17)]
        if instr.opcode == "custom-call":
            widths = widths[:1]
        widest = max(widths) if widths else 0
        return {8: 2, 4: 4}.get(widest, 1)


def dot_flops(lhs_shape, out_shape, dn) -> int:
    contracted = 1
    for d in dn.lhs_contracting_dimensions if hasattr(dn, "lhs_contracting_dimensions") \
            else dn.get("lhs_contracting_dimensions", []):
        d = int(d)
        if d < len(lhs_shape.dimensions):
            contracted *= lhs_shape.dimensions[d]
    return 2 * elements(out_shape) * contracted


def gemm_dimension_numbers(backend_config: bytes) -> dict | None:
    """The ``dot_dimension_numbers`` of a cuBLAS gemm custom-call's JSON backend config."""
    try:
        config = json.loads(backend_config.decode("utf-8") or "{}")
    except (UnicodeDecodeError, ValueError):
        return None
    gemm = config.get("gemm_backend_config", config)
    dn = gemm.get("dot_dimension_numbers") if isinstance(gemm, dict) else None
    return dn if isinstance(dn, dict) else None


def _valid_pairs(in_size, out_size, kernel, stride, pad_low, base_dil, win_dil) -> int:
    """(output position, kernel position) pairs that land on a real input element."""
    count = 0
    dilated_in = (in_size - 1) * base_dil + 1 if in_size else 0
    for o in range(out_size):
        for k in range(kernel):
            pos = o * stride + k * win_dil - pad_low
            if 0 <= pos < dilated_in and pos % base_dil == 0:
                count += 1
    return count


def conv_flops(lhs, rhs, out, dn, window, feature_groups: int, batch_groups: int) -> int:
    dims = list(window.dimensions)
    spatial = 1
    for i, (ind, outd) in enumerate(zip(dn.input_spatial_dimensions,
                                        dn.output_spatial_dimensions)):
        w = dims[i] if i < len(dims) else None
        kernel = rhs.dimensions[dn.kernel_spatial_dimensions[i]]
        spatial *= _valid_pairs(lhs.dimensions[ind], out.dimensions[outd], kernel,
                                w.stride if w and w.stride else 1,
                                w.padding_low if w else 0,
                                w.base_dilation if w and w.base_dilation else 1,
                                w.window_dilation if w and w.window_dilation else 1)
    batch = lhs.dimensions[dn.input_batch_dimension] // max(batch_groups, 1)
    out_features = out.dimensions[dn.output_feature_dimension]
    in_features = lhs.dimensions[dn.input_feature_dimension] // max(feature_groups, 1)
    return 2 * batch * out_features * in_features * spatial
