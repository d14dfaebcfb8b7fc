"""HLO instructions as text and their profiler category, from the parsed HloProto.

:func:`expression` writes an instruction the way XLA prints it for the profiler (the
``hlo_op_expression`` of XProf's HLO stats): ``%name = shape opcode(operand shapes and
names), attributes``, without metadata, backend config or large constants.  :func:`category`
is XLA's ``ToCategory``: the fusion kind for fusions, "data formatting" for transposes, copies
and reshapes, "non-fusion elementwise" for elementwise ops, else the opcode.
"""

from __future__ import annotations

import math

from ...xspace.hlo_proto import PRIMITIVE_TYPES, HloModule
from .device_lists_text import replica_groups_text, sharding_text

__all__ = ["expression", "category", "shape_text", "is_elementwise", "ELEMENTWISE"]

ELEMENTWISE = frozenset({
    # unary
    "abs", "round-nearest-afz", "round-nearest-even", "ceil", "clz", "convert", "cos",
    "exponential", "exponential-minus-one", "floor", "imag", "is-finite", "log",
    "log-plus-one", "not", "negate", "popcnt", "real", "reduce-precision", "rsqrt",
    "logistic", "sign", "sine", "sqrt", "cbrt", "tan", "tanh", "erf", "copy",
    "bitcast-convert",
    # binary
    "add", "atan2", "compare", "complex", "divide", "maximum", "minimum", "multiply", "power",
    "remainder", "subtract", "and", "or", "xor", "shift-left", "shift-right-arithmetic",
    "shift-right-logical", "stochastic-convert",
    # ternary
    "select", "clamp",
    # constants count as elementwise in XLA
    "constant",
})
_DATA_FORMATTING = frozenset({"transpose", "copy", "reshape", "dynamic-reshape"})
_FUSION_CATEGORY = {"kLoop": "loop fusion", "kInput": "input fusion",
                    "kOutput": "output fusion", "kCustom": "custom fusion"}
_TO_APPLY = frozenset({"call", "map", "reduce-window", "reduce", "all-reduce",
                       "reduce-scatter", "all-reduce-start", "scatter", "sort", "topk"})
_ASYNC = frozenset({"async-start", "async-update", "async-done"})
_PRECISION = {0: "default", 1: "high", 2: "highest"}
_RNG_ALGORITHM = {0: "rng_default", 1: "rng_three_fry", 2: "rng_philox"}
_RNG_DISTRIBUTION = {1: "rng_uniform", 2: "rng_normal"}
_API_VERSION = {0: "API_VERSION_UNSPECIFIED", 1: "API_VERSION_ORIGINAL",
                2: "API_VERSION_STATUS_RETURNING", 3: "API_VERSION_STATUS_RETURNING_UNIFIED",
                4: "API_VERSION_TYPED_FFI"}
_DEFAULT_COMPARE_TYPE = {"f": "FLOAT", "b": "FLOAT", "c": "FLOAT", "s": "SIGNED",
                         "u": "UNSIGNED", "p": "UNSIGNED"}


def _annotated(items: list[str]) -> str:
    """Items joined by ", " with XLA's ``/*index=N*/`` before every fifth one."""
    return ", ".join(f"/*index={i}*/{t}" if i and i % 5 == 0 else t
                     for i, t in enumerate(items))


# ---- shapes ----------------------------------------------------------------------------------
def _type_name(element_type: int) -> str:
    return PRIMITIVE_TYPES.get(element_type, (f"type{element_type}", 0))[0]


def _integral_type_text(element_type: int) -> str:
    name = _type_name(element_type)
    return name if name[:1] in "su" and name[1:].isdigit() else "invalid"


def _layout_text(layout) -> str:
    """XLA's ``Layout::ToString``: ``{1,0:T(8,128)(2,1)L(n)#(t)*(t)E(n)S(n)SC(..)P(..)M(n)}``
    (each part only when set)."""
    parts = ",".join(str(d) for d in layout.minor_to_major)
    extra = []
    if len(layout.tiles):
        extra.append("T" + "".join("(" + ",".join("*" if d == -9223372036854775808 else str(d)
                                                  for d in t.dimensions) + ")"
                                   for t in layout.tiles))
    if layout.tail_padding_alignment_in_elements not in (0, 1):
        extra.append(f"L({layout.tail_padding_alignment_in_elements})")
    if layout.index_primitive_type:
        extra.append(f"#({_integral_type_text(layout.index_primitive_type)})")
    if layout.pointer_primitive_type:
        extra.append(f"*({_integral_type_text(layout.pointer_primitive_type)})")
    if layout.element_size_in_bits:
        extra.append(f"E({layout.element_size_in_bits})")
    if layout.memory_space:
        extra.append(f"S({layout.memory_space})")
    if len(layout.split_configs):
        extra.append("SC" + "".join(f"({c.dimension}:{','.join(map(str, c.split_indices))})"
                                    for c in layout.split_configs))
    if layout.HasField("physical_shape"):
        extra.append(f"P({shape_text(layout.physical_shape)})")
    if layout.dynamic_shape_metadata_prefix_bytes > 0:
        extra.append(f"M({layout.dynamic_shape_metadata_prefix_bytes})")
    return "{" + parts + (":" + "".join(extra) if extra else "") + "}"


def shape_text(shape, layout: bool = True) -> str:
    """XLA's human-readable shape: ``f32[8,16]{1,0}``, ``(f32[], s32[2]{0})``, ``token[]``;
    a scalar's layout is printed only when it says more than ``{}`` (``f32[]{:T(128)}``)."""
    et = shape.element_type
    if et == 13:  # tuple
        return "(" + _annotated([shape_text(s, layout) for s in shape.tuple_shapes]) + ")"
    name = _type_name(et)
    if et in (14, 17):  # opaque, token
        return f"{name}[]"
    dyn = list(shape.is_dynamic_dimension)
    dims = ",".join(("<=" if i < len(dyn) and dyn[i] else "") + str(d)
                    for i, d in enumerate(shape.dimensions))
    text = f"{name}[{dims}]"
    if layout and shape.HasField("layout"):
        written = _layout_text(shape.layout)
        if len(shape.dimensions) or written != "{}":
            text += written
    return text


def elements(shape) -> int:
    """Number of elements of an array shape (tuples: 0)."""
    if shape.element_type in (13, 14, 17):
        return 0
    return math.prod(shape.dimensions)


# ---- category --------------------------------------------------------------------------------
def is_elementwise(module: HloModule, instr) -> bool:
    """XLA's IsElementwise for a non-fusion instruction."""
    op = instr.opcode
    if op == "bitcast-convert":
        ops = module.operands(instr)
        src = ops[0].shape.element_type if ops and ops[0] is not None else 0
        return PRIMITIVE_TYPES.get(instr.shape.element_type, ("", 0))[1] == \
            PRIMITIVE_TYPES.get(src, ("", 0))[1]
    return op in ELEMENTWISE


def category(module: HloModule, instr) -> str:
    """XLA's ToCategory of ``instr`` (the ``category`` column of HLO stats)."""
    op = instr.opcode
    if op == "fusion":
        return _FUSION_CATEGORY.get(instr.fusion_kind, "loop fusion")
    if op in _DATA_FORMATTING:
        return "data formatting"
    if is_elementwise(module, instr):
        return "non-fusion elementwise"
    return op


# ---- literals --------------------------------------------------------------------------------
def _float_text(value: float, single: bool) -> str:
    import math

    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    import numpy as np

    short, full = (6, 9) if single else (15, 17)
    text = f"{value:.{short}g}"
    same = np.float32(float(text)) == np.float32(value) if single else float(text) == value
    return text if same else f"{value:.{full}g}"


def _literal_values(literal, et: int) -> list[str] | None:
    import numpy as np

    if et == 1:
        return ["true" if v else "false" for v in literal.preds]
    if et == 11:
        return [_float_text(v, True) for v in literal.f32s]
    if et == 12:
        return [_float_text(v, False) for v in literal.f64s]
    if et == 4:
        return [str(v) for v in literal.s32s]
    if et == 5:
        return [str(v) for v in literal.s64s]
    if et == 8:
        return [str(v) for v in literal.u32s]
    if et == 9:
        return [str(v) for v in literal.u64s]
    raw = {2: ("s8s", np.int8), 6: ("u8s", np.uint8), 3: ("s16s", "<i2"),
           7: ("u16s", "<u2"), 10: ("f16s", "<f2")}.get(et)
    if raw is None:
        return None
    values = np.frombuffer(getattr(literal, raw[0]), dtype=raw[1])
    if et == 10:
        return [_float_text(float(v), True) for v in values]
    return [str(int(v)) for v in values]


def _constant_operands(instr) -> str:
    shape = instr.shape
    n = elements(shape)
    if shape.element_type in (13, 14, 17) or n > 10 or not instr.HasField("literal"):
        return "{...}"
    values = _literal_values(instr.literal, shape.element_type)
    if values == [] and n:  # some writers leave zero values out of the proto
        values = ["false" if shape.element_type == 1 else "0"] * n
    if values is None or len(values) != n:
        return "{...}"
    dims = list(shape.dimensions)
    if not dims:
        return values[0]

    def nest(level: int, flat: list[str]) -> str:
        if level == len(dims) - 1:
            return "{" + ", ".join(flat) + "}"
        step = len(flat) // dims[level] if dims[level] else 0
        inner = [nest(level + 1, flat[i * step:(i + 1) * step]) for i in range(dims[level])]
        return "{ " + ", ".join(inner) + " }"
    return nest(0, values)


# ---- attributes ------------------------------------------------------------------------------
def _ints(values) -> str:
    return "{" + ",".join(str(v) for v in values) + "}"


def _window_text(window) -> str:
    dims = list(window.dimensions)
    parts = ["size=" + "x".join(str(d.size) for d in dims)]
    if any(d.stride != 1 for d in dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in dims))
    if any(d.padding_low or d.padding_high for d in dims):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in dims))
    if any(d.base_dilation != 1 for d in dims):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in dims))
    if any(d.window_dilation != 1 for d in dims):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in dims))
    if any(d.window_reversal for d in dims):
        parts.append("rhs_reversal=" + "x".join("1" if d.window_reversal else "0"
                                                 for d in dims))
    return "{" + " ".join(parts) + "}"


def _conv_labels(dn) -> str:
    def labels(first, first_l, second, second_l, spatial):
        n = max([first, second, *spatial]) + 1
        out = ["?"] * n
        out[first], out[second] = first_l, second_l
        for i, d in enumerate(spatial):
            out[d] = str(i)
        return "".join(out)
    lhs = labels(dn.input_batch_dimension, "b", dn.input_feature_dimension, "f",
                 dn.input_spatial_dimensions)
    rhs = labels(dn.kernel_input_feature_dimension, "i", dn.kernel_output_feature_dimension,
                 "o", dn.kernel_spatial_dimensions)
    out = labels(dn.output_batch_dimension, "b", dn.output_feature_dimension, "f",
                 dn.output_spatial_dimensions)
    return f"{lhs}_{rhs}->{out}"


def _precision(instr) -> list[str]:
    if not instr.HasField("precision_config"):
        return []
    ops = list(instr.precision_config.operand_precision)
    out = []
    if any(p != 0 for p in ops):
        out.append("operand_precision={" + ",".join(_PRECISION.get(p, str(p)) for p in ops)
                   + "}")
    return out


def _dot_dims(dn) -> list[str]:
    out = []
    if len(dn.lhs_batch_dimensions):
        out.append("lhs_batch_dims=" + _ints(dn.lhs_batch_dimensions))
    out.append("lhs_contracting_dims=" + _ints(dn.lhs_contracting_dimensions))
    if len(dn.rhs_batch_dimensions):
        out.append("rhs_batch_dims=" + _ints(dn.rhs_batch_dimensions))
    out.append("rhs_contracting_dims=" + _ints(dn.rhs_contracting_dimensions))
    return out


def _slice_text(instr) -> str:
    parts = []
    for s in instr.slice_dimensions:
        parts.append(f"[{s.start}:{s.limit}]" if s.stride == 1
                     else f"[{s.start}:{s.limit}:{s.stride}]")
    return "slice={" + ", ".join(parts) + "}"


def _padding_text(config) -> str:
    dims = list(config.dimensions)
    interior = any(d.interior_padding for d in dims)
    return "x".join(f"{d.edge_padding_low}_{d.edge_padding_high}"
                    + (f"_{d.interior_padding}" if interior else "") for d in dims)


def _dimensions(module: HloModule, instr) -> list[str]:
    if instr.opcode == "all-to-all" and not len(instr.dimensions):
        return []
    return ["dimensions=" + _ints(instr.dimensions)]


def _sort(module: HloModule, instr) -> list[str]:
    return ["dimensions=" + _ints(instr.dimensions)] + (["is_stable=true"]
                                                        if instr.is_stable else [])


def _compare(module: HloModule, instr) -> list[str]:
    out = [f"direction={instr.comparison_direction}"]
    ops = module.operands(instr)
    if instr.comparison_type and ops and ops[0] is not None:
        kind = _type_name(ops[0].shape.element_type)[:1]
        if instr.comparison_type != _DEFAULT_COMPARE_TYPE.get(kind, ""):
            out.append(f"type={instr.comparison_type}")
    return out


def _groups(instr) -> list[str]:
    """feature_group_count and batch_group_count when above 1."""
    return ([f"feature_group_count={instr.feature_group_count}"]
            if instr.feature_group_count > 1 else []) + \
        ([f"batch_group_count={instr.batch_group_count}"] if instr.batch_group_count > 1 else [])


def _convolution(module: HloModule, instr) -> list[str]:
    return ["window=" + _window_text(instr.window),
            "dim_labels=" + _conv_labels(instr.convolution_dimension_numbers)] + \
        _groups(instr) + _precision(instr)


def _gather(module: HloModule, instr) -> list[str]:
    g = instr.gather_dimension_numbers
    out = ["offset_dims=" + _ints(g.offset_dims),
           "collapsed_slice_dims=" + _ints(g.collapsed_slice_dims),
           "start_index_map=" + _ints(g.start_index_map)]
    if len(g.operand_batching_dims):
        out.append("operand_batching_dims=" + _ints(g.operand_batching_dims))
    if len(g.start_indices_batching_dims):
        out.append("start_indices_batching_dims=" + _ints(g.start_indices_batching_dims))
    out += [f"index_vector_dim={g.index_vector_dim}",
            "slice_sizes=" + _ints(instr.gather_slice_sizes)]
    return out + (["indices_are_sorted=true"] if instr.indices_are_sorted else [])


def _scatter(module: HloModule, instr) -> list[str]:
    s = instr.scatter_dimension_numbers
    out = ["update_window_dims=" + _ints(s.update_window_dims),
           "inserted_window_dims=" + _ints(s.inserted_window_dims),
           "scatter_dims_to_operand_dims=" + _ints(s.scatter_dims_to_operand_dims)]
    if len(s.input_batching_dims):
        out.append("input_batching_dims=" + _ints(s.input_batching_dims))
    if len(s.scatter_indices_batching_dims):
        out.append("scatter_indices_batching_dims=" + _ints(s.scatter_indices_batching_dims))
    out.append(f"index_vector_dim={s.index_vector_dim}")
    return out + (["indices_are_sorted=true"] if instr.indices_are_sorted else []) + \
        (["unique_indices=true"] if instr.unique_indices else [])


def _parameter(module: HloModule, instr) -> list[str]:
    if not instr.HasField("parameter_replication"):
        return []
    return ["parameter_replication={" + ",".join(
        "true" if v else "false"
        for v in instr.parameter_replication.replicated_at_leaf_buffers) + "}"]


def _custom_call(module: HloModule, instr) -> list[str]:
    out = ["window=" + _window_text(instr.window)] if instr.HasField("window") else []
    if instr.HasField("convolution_dimension_numbers"):
        out.append("dim_labels=" + _conv_labels(instr.convolution_dimension_numbers))
    out += _groups(instr)
    out.append(f'custom_call_target="{instr.custom_call_target}"')
    if instr.constrain_layout:
        out.append("operand_layout_constraints={" + ", ".join(
            shape_text(sh) for sh in instr.operand_shapes_with_layout) + "}")
    if instr.custom_call_has_side_effect:
        out.append("custom_call_has_side_effect=true")
    if instr.custom_call_api_version != 1:  # API_VERSION_ORIGINAL is left out
        out.append("api_version=" + _API_VERSION.get(instr.custom_call_api_version,
                                                     str(instr.custom_call_api_version)))
    return out


# opcode -> the attributes its instruction subclass prints
_ATTRIBUTES = {
    **dict.fromkeys(("broadcast", "transpose", "reduce", "concatenate", "reverse",
                     "all-gather", "all-to-all", "map", "get-dimension-size",
                     "set-dimension-size"), _dimensions),
    "sort": _sort,
    "fusion": lambda m, i: [f"kind={i.fusion_kind}"],
    "get-tuple-element": lambda m, i: [f"index={i.tuple_index}"],
    "iota": lambda m, i: [f"iota_dimension={i.dimensions[0] if len(i.dimensions) else 0}"],
    "compare": _compare,
    "dot": lambda m, i: _dot_dims(i.dot_dimension_numbers) + _precision(i),
    "convolution": _convolution,
    "reduce-window": lambda m, i: ["window=" + _window_text(i.window)],
    "select-and-scatter": lambda m, i: ["window=" + _window_text(i.window)],
    "slice": lambda m, i: [_slice_text(i)],
    "pad": lambda m, i: ["padding=" + _padding_text(i.padding_config)],
    "dynamic-slice": lambda m, i: ["dynamic_slice_sizes=" + _ints(i.dynamic_slice_sizes)],
    "gather": _gather,
    "scatter": _scatter,
    "reduce-precision": lambda m, i: [f"exponent_bits={i.exponent_bits}",
                                      f"mantissa_bits={i.mantissa_bits}"],
    "rng-bit-generator": lambda m, i: [
        "algorithm=" + _RNG_ALGORITHM.get(i.rng_algorithm, "rng_default")],
    "rng": lambda m, i: ["distribution=" + _RNG_DISTRIBUTION.get(i.distribution,
                                                                  "rng_uniform")],
    "parameter": _parameter,
    "custom-call": _custom_call,
    "topk": lambda m, i: [f"k={i.k}"] + (["largest=true"] if i.largest else []),
}
_CHANNEL_OPS = ("all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
                "reduce-scatter", "all-to-all", "collective-permute", "send", "recv",
                "send-done", "recv-done")
_REPLICA_GROUP_OPS = ("all-reduce", "all-reduce-start", "all-gather", "all-gather-start",
                      "reduce-scatter", "all-to-all")
_HOST_TRANSFER_OPS = ("send", "recv", "send-done", "recv-done")


def _collective_attributes(instr) -> tuple[list[str], list[str]]:
    """(attributes printed first, attributes printed last) of collectives and transfers."""
    op = instr.opcode
    first = [f"channel_id={instr.channel_id}"] \
        if op in _CHANNEL_OPS and instr.channel_id else []
    last = []
    if op in _REPLICA_GROUP_OPS:
        groups = replica_groups_text(instr)
        last += [f"replica_groups={groups}"] if groups else []
        last += ["use_global_device_ids=true"] if instr.use_global_device_ids else []
    if op in _HOST_TRANSFER_OPS and instr.is_host_transfer:
        last.append("is_host_transfer=true")
    return first, last


def _specific_attributes(module: HloModule, instr) -> list[str]:
    """The attributes XLA's instruction subclasses print (ExtraAttributesToStringImpl)."""
    own = _ATTRIBUTES.get(instr.opcode)
    first, last = _collective_attributes(instr)
    return first + (own(module, instr) if own else []) + last


def _called_attributes(module: HloModule, instr) -> list[str]:
    """The called computations, by name (XLA's kNameOnly subcomputation mode)."""
    op = instr.opcode
    names = [f"%{c.name}" for c in module.called(instr)]
    if not names:
        return []
    if op == "while":  # called ids: body, then condition
        body, cond = (names + ["", ""])[:2]
        return [f"condition={cond}", f"body={body}"]
    if op == "select-and-scatter":
        return [f"select={names[0]}", f"scatter={names[-1]}"]
    if op == "conditional":
        ops = module.operands(instr)
        if ops and ops[0] is not None and ops[0].shape.element_type == 1 and len(names) == 2:
            return [f"true_computation={names[0]}", f"false_computation={names[1]}"]
        return ["branch_computations={" + ", ".join(names) + "}"]
    if op in _TO_APPLY:
        return [f"to_apply={names[0]}"]
    if op == "custom-call":
        return ["called_computations={" + ", ".join(names) + "}"]
    if op in _ASYNC:
        return [f"calls={names[0]}"]
    return ["calls=" + ", ".join(names)]


def expression(module: HloModule, instr) -> str:
    """The instruction as XLA prints it for the profiler (``hlo_op_expression``)."""
    op = instr.opcode
    if op == "constant":
        operands = _constant_operands(instr)
    elif op == "parameter":
        operands = str(instr.parameter_number)
    else:
        parts = []
        for o in module.operands(instr):
            parts.append("null " if o is None else f"{shape_text(o.shape)} %{o.name}")
        operands = _annotated(parts)
    text = f"%{instr.name} = {shape_text(instr.shape)} {op}({operands})"
    extra = _specific_attributes(module, instr) + _called_attributes(module, instr)
    if instr.HasField("sharding"):
        extra.append("sharding=" + sharding_text(instr.sharding))
    attrs = instr.frontend_attributes.map if instr.HasField("frontend_attributes") else {}
    if len(attrs):
        extra.append("frontend_attributes={" + ",".join(
            f'{k}="{attrs[k]}"' for k in sorted(attrs)) + "}")
    if len(instr.control_predecessor_ids):
        preds = [module.by_id.get(i) for i in instr.control_predecessor_ids]
        extra.append("control-predecessors={" + ", ".join(
            f"%{p.name}" for p in preds if p is not None) + "}")
    if extra:
        text += ", " + ", ".join(extra)
    return text
