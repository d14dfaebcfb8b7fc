"""Reading XLA's ``HloProto`` without TensorFlow or JAX.

Profiles of XLA programs carry each compiled module as a serialized ``xla.HloProto`` in the
``/host:metadata`` plane (an event metadata per program, bytes stat ``Hlo Proto``).  This
module declares the part of that schema the analyses read (names, opcodes, shapes, operands,
called computations, op metadata, dimension numbers, windows, ...) with ``google.protobuf``
descriptors built at run time in a private pool, parses the bytes with protobuf's C parser and
wraps the result in :class:`HloModule` (instructions of every computation by name, fused ones
included, as XLA's profiler indexes them).

Field numbers follow XLA's wire format; fields not declared here are skipped by the parser.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..constants import METADATA_PLANE

__all__ = ["HloModule", "HloParseError", "parse_hlo_proto", "programs_of_space",
           "PRIMITIVE_TYPES", "HLO_PROTO_STAT", "METADATA_PLANE"]

HLO_PROTO_STAT = "Hlo Proto"
_LEGACY_HLO_PROTO_STAT = "HLO Proto"
_PROGRAM_IN_NAME = re.compile(r".*\((\d+)\)\Z", re.S)

# xla.PrimitiveType: number -> (text, bits per element)
PRIMITIVE_TYPES = {
    1: ("pred", 8), 30: ("s1", 1), 26: ("s2", 2), 21: ("s4", 4), 2: ("s8", 8), 3: ("s16", 16),
    4: ("s32", 32), 5: ("s64", 64), 31: ("u1", 1), 27: ("u2", 2), 22: ("u4", 4), 6: ("u8", 8),
    7: ("u16", 16), 8: ("u32", 32), 9: ("u64", 64), 10: ("f16", 16), 11: ("f32", 32),
    16: ("bf16", 16), 12: ("f64", 64), 19: ("f8e5m2", 8), 28: ("f8e4m3", 8),
    20: ("f8e4m3fn", 8), 23: ("f8e4m3b11fnuz", 8), 29: ("f8e3m4", 8), 24: ("f8e5m2fnuz", 8),
    25: ("f8e4m3fnuz", 8), 32: ("f4e2m1fn", 4), 33: ("f8e8m0fnu", 8), 15: ("c64", 64),
    18: ("c128", 128), 13: ("tuple", 0), 14: ("opaque", 0), 17: ("token", 0),
    34: ("buffer", 0),
}


class HloParseError(ValueError):
    """The bytes of an ``Hlo Proto`` stat could not be read as an HloProto."""


# ---- the schema subset ---------------------------------------------------------------------
# (message, [(field name, number, type, label, message type)]) ; types: descriptor_pb2 names
_I64, _I32, _STR, _BOOL, _MSG, _BYTES, _F32 = "int64", "int32", "string", "bool", "message", \
    "bytes", "float"
_SCHEMA = [
    ("HloProto", [("hlo_module", 1, _MSG, 1, "HloModuleProto")]),
    ("HloModuleProto", [
        ("name", 1, _STR, 1, None), ("entry_computation_name", 2, _STR, 1, None),
        ("computations", 3, _MSG, 3, "HloComputationProto"), ("id", 5, _I64, 1, None),
        ("entry_computation_id", 6, _I64, 1, None),
        ("schedule", 7, _MSG, 1, "HloScheduleProto"),
        ("stack_frame_index", 17, _MSG, 1, "StackFrameIndexProto")]),
    # the module's schedule: a map written as its entries (computation id -> instruction ids)
    ("HloScheduleProto", [("sequences", 1, _MSG, 3, "HloScheduleEntry")]),
    ("HloScheduleEntry", [("key", 1, _I64, 1, None),
                          ("value", 2, _MSG, 1, "InstructionSequence")]),
    ("InstructionSequence", [("instruction_ids", 1, _I64, 3, None)]),
    ("HloComputationProto", [
        ("name", 1, _STR, 1, None), ("instructions", 2, _MSG, 3, "HloInstructionProto"),
        ("id", 5, _I64, 1, None), ("root_id", 6, _I64, 1, None),
        ("is_fusion_computation", 7, _BOOL, 1, None)]),
    ("HloInstructionProto", [
        ("name", 1, _STR, 1, None), ("opcode", 2, _STR, 1, None),
        ("shape", 3, _MSG, 1, "ShapeProto"), ("metadata", 7, _MSG, 1, "OpMetadata"),
        ("literal", 8, _MSG, 1, "LiteralProto"), ("parameter_number", 9, _I64, 1, None),
        ("fusion_kind", 11, _STR, 1, None), ("tuple_index", 13, _I64, 1, None),
        ("dimensions", 14, _I64, 3, None), ("window", 15, _MSG, 1, "Window"),
        ("convolution_dimension_numbers", 16, _MSG, 1, "ConvolutionDimensionNumbers"),
        ("slice_dimensions", 17, _MSG, 3, "SliceDimensions"),
        ("exponent_bits", 18, _I32, 1, None), ("mantissa_bits", 19, _I32, 1, None),
        ("dynamic_slice_sizes", 20, _I64, 3, None),
        ("padding_config", 21, _MSG, 1, "PaddingConfig"),
        ("distribution", 23, _I32, 1, None), ("epsilon", 24, _F32, 1, None),
        ("feature_index", 25, _I64, 1, None), ("channel_id", 26, _I64, 1, None),
        ("parameter_replication", 61, _MSG, 1, "ParameterReplication"),
        ("custom_call_target", 28, _STR, 1, None),
        ("dot_dimension_numbers", 30, _MSG, 1, "DotDimensionNumbers"),
        ("fft_type", 31, _I32, 1, None), ("fft_length", 32, _I64, 3, None),
        ("gather_dimension_numbers", 33, _MSG, 1, "GatherDimensionNumbers"),
        ("gather_slice_sizes", 34, _I64, 3, None), ("id", 35, _I64, 1, None),
        ("operand_ids", 36, _I64, 3, None), ("control_predecessor_ids", 37, _I64, 3, None),
        ("called_computation_ids", 38, _I64, 3, None), ("backend_config", 43, _BYTES, 1, None),
        ("replica_groups", 49, _MSG, 3, "ReplicaGroup"),
        ("is_host_transfer", 47, _BOOL, 1, None),
        ("scatter_dimension_numbers", 48, _MSG, 1, "ScatterDimensionNumbers"),
        ("feature_group_count", 50, _I64, 1, None),
        ("precision_config", 51, _MSG, 1, "PrecisionConfig"),
        ("batch_group_count", 58, _I64, 1, None), ("is_stable", 60, _BOOL, 1, None),
        ("comparison_direction", 63, _STR, 1, None),
        ("custom_call_has_side_effect", 65, _BOOL, 1, None),
        ("indices_are_sorted", 67, _BOOL, 1, None),
        ("frontend_attributes", 68, _MSG, 1, "FrontendAttributes"),
        ("unique_indices", 69, _BOOL, 1, None), ("rng_algorithm", 70, _I32, 1, None),
        ("use_global_device_ids", 71, _BOOL, 1, None),
        ("comparison_type", 72, _STR, 1, None), ("custom_call_api_version", 77, _I32, 1, None),
        ("constrain_layout", 56, _BOOL, 1, None),
        ("operand_shapes_with_layout", 57, _MSG, 3, "ShapeProto"),
        ("k", 81, _I64, 1, None), ("largest", 85, _BOOL, 1, None),
        ("sharding", 40, _MSG, 1, "OpSharding"),
        ("collective_device_list", 87, _MSG, 1, "CollectiveDeviceListProto"),
        ("iota_collective_device_list", 92, _MSG, 1, "IotaReplicaGroupListProto"),
        ("mesh_axes_replica_group_list", 93, _MSG, 1, "MeshAxesReplicaGroupListProto")]),
    ("ShapeProto", [
        ("element_type", 2, _I32, 1, None), ("dimensions", 3, _I64, 3, None),
        ("tuple_shapes", 4, _MSG, 3, "ShapeProto"), ("layout", 5, _MSG, 1, "LayoutProto"),
        ("is_dynamic_dimension", 6, _BOOL, 3, None)]),
    ("LayoutProto", [
        ("minor_to_major", 1, _I64, 3, None), ("tiles", 6, _MSG, 3, "TileProto"),
        ("element_size_in_bits", 7, _I64, 1, None), ("memory_space", 8, _I64, 1, None),
        ("physical_shape", 10, _MSG, 1, "ShapeProto"),
        ("index_primitive_type", 11, _I32, 1, None),
        ("pointer_primitive_type", 12, _I32, 1, None),
        ("dynamic_shape_metadata_prefix_bytes", 15, _I64, 1, None),
        ("tail_padding_alignment_in_elements", 16, _I64, 1, None),
        ("split_configs", 17, _MSG, 3, "SplitConfigProto")]),
    ("TileProto", [("dimensions", 1, _I64, 3, None)]),
    ("SplitConfigProto", [("dimension", 1, _I64, 1, None),
                          ("split_indices", 2, _I64, 3, None)]),
    ("OpMetadata", [
        ("op_type", 1, _STR, 1, None), ("op_name", 2, _STR, 1, None),
        ("source_file", 3, _STR, 1, None), ("source_line", 4, _I32, 1, None),
        ("deduplicated_name", 12, _STR, 1, None), ("stack_frame_id", 15, _I32, 1, None)]),
    ("LiteralProto", [
        ("shape", 1, _MSG, 1, "ShapeProto"), ("preds", 2, _BOOL, 3, None),
        ("s32s", 4, _I32, 3, None), ("s64s", 5, _I64, 3, None),
        ("u32s", 6, "uint32", 3, None), ("u64s", 7, "uint64", 3, None),
        ("f32s", 8, _F32, 3, None), ("f64s", 9, "double", 3, None),
        ("u8s", 3, _BYTES, 1, None), ("s8s", 15, _BYTES, 1, None),
        ("f16s", 11, _BYTES, 1, None), ("bf16s", 13, _BYTES, 1, None),
        ("u16s", 16, _BYTES, 1, None), ("s16s", 17, _BYTES, 1, None)]),
    ("Window", [("dimensions", 1, _MSG, 3, "WindowDimension")]),
    ("WindowDimension", [
        ("size", 1, _I64, 1, None), ("stride", 2, _I64, 1, None),
        ("padding_low", 3, _I64, 1, None), ("padding_high", 4, _I64, 1, None),
        ("window_dilation", 5, _I64, 1, None), ("base_dilation", 6, _I64, 1, None),
        ("window_reversal", 7, _BOOL, 1, None)]),
    ("ConvolutionDimensionNumbers", [
        ("input_batch_dimension", 7, _I64, 1, None),
        ("input_feature_dimension", 8, _I64, 1, None),
        ("input_spatial_dimensions", 11, _I64, 3, None),
        ("kernel_input_feature_dimension", 3, _I64, 1, None),
        ("kernel_output_feature_dimension", 4, _I64, 1, None),
        ("kernel_spatial_dimensions", 6, _I64, 3, None),
        ("output_batch_dimension", 9, _I64, 1, None),
        ("output_feature_dimension", 10, _I64, 1, None),
        ("output_spatial_dimensions", 12, _I64, 3, None)]),
    ("DotDimensionNumbers", [
        ("lhs_contracting_dimensions", 1, _I64, 3, None),
        ("rhs_contracting_dimensions", 2, _I64, 3, None),
        ("lhs_batch_dimensions", 3, _I64, 3, None),
        ("rhs_batch_dimensions", 4, _I64, 3, None)]),
    ("SliceDimensions", [("start", 1, _I64, 1, None), ("limit", 2, _I64, 1, None),
                         ("stride", 3, _I64, 1, None)]),
    ("PaddingConfig", [("dimensions", 1, _MSG, 3, "PaddingDimension")]),
    ("PaddingDimension", [("edge_padding_low", 1, _I64, 1, None),
                          ("edge_padding_high", 2, _I64, 1, None),
                          ("interior_padding", 3, _I64, 1, None)]),
    ("PrecisionConfig", [("operand_precision", 1, _I32, 3, None),
                         ("algorithm", 2, _I32, 1, None)]),
    ("GatherDimensionNumbers", [
        ("offset_dims", 1, _I64, 3, None), ("collapsed_slice_dims", 2, _I64, 3, None),
        ("start_index_map", 3, _I64, 3, None), ("index_vector_dim", 4, _I64, 1, None),
        ("operand_batching_dims", 5, _I64, 3, None),
        ("start_indices_batching_dims", 6, _I64, 3, None)]),
    ("ScatterDimensionNumbers", [
        ("update_window_dims", 1, _I64, 3, None), ("inserted_window_dims", 2, _I64, 3, None),
        ("scatter_dims_to_operand_dims", 3, _I64, 3, None),
        ("index_vector_dim", 4, _I64, 1, None), ("input_batching_dims", 5, _I64, 3, None),
        ("scatter_indices_batching_dims", 6, _I64, 3, None)]),
    ("ReplicaGroup", [("replica_ids", 1, _I64, 3, None)]),
    # the newer ways to write replica groups, and an instruction's sharding
    ("CollectiveDeviceListProto", [
        ("replica_groups", 1, _MSG, 3, "ReplicaGroup"),
        ("iota_replica_group_list", 2, _MSG, 1, "IotaReplicaGroupListProto")]),
    ("IotaReplicaGroupListProto", [
        ("num_replica_groups", 1, _I64, 1, None), ("num_devices_per_group", 2, _I64, 1, None),
        ("iota_reshape_dims", 3, _I64, 3, None), ("iota_transpose_perm", 4, _I32, 3, None)]),
    ("MeshAxesReplicaGroupListProto", [("mesh", 1, _MSG, 1, "MeshProto"),
                                       ("axes", 2, _MSG, 3, "AxisRefProto")]),
    ("MeshProto", [("axes", 1, _MSG, 3, "MeshAxis"), ("device_ids", 2, _I64, 3, None),
                   ("iota_device_ids", 3, _MSG, 1, "MeshIota")]),
    ("MeshIota", [("reshape_dims", 1, _I64, 3, None), ("transpose_perm", 2, _I32, 3, None)]),
    ("MeshAxis", [("name", 1, _STR, 1, None), ("size", 2, _I64, 1, None)]),
    ("AxisRefProto", [("mesh_axis_index", 1, _I64, 1, None),
                      ("sub_axis_info", 2, _MSG, 1, "SubAxis")]),
    ("SubAxis", [("pre_size", 1, _I64, 1, None), ("size", 2, _I64, 1, None)]),
    ("OpSharding", [
        ("type", 1, _I32, 1, None), ("tile_assignment_dimensions", 3, _I64, 3, None),
        ("tile_assignment_devices", 4, _I64, 3, None),
        ("tuple_shardings", 5, _MSG, 3, "OpSharding"),
        ("replicate_on_last_tile_dim", 6, _BOOL, 1, None),
        ("last_tile_dims", 8, _I32, 3, None), ("iota_reshape_dims", 9, _I64, 3, None),
        ("iota_transpose_perm", 10, _I32, 3, None)]),
    ("ParameterReplication", [("replicated_at_leaf_buffers", 1, _BOOL, 3, None)]),
    ("FrontendAttributes", [("map", 1, _MSG, 3, "FrontendAttributes.MapEntry")]),
    ("StackFrameIndexProto", [
        ("file_names", 1, _STR, 3, None), ("function_names", 2, _STR, 3, None),
        ("file_locations", 3, _MSG, 3, "FileLocation"),
        ("stack_frames", 4, _MSG, 3, "StackFrame")]),
    ("FileLocation", [("file_name_id", 1, _I32, 1, None), ("function_name_id", 2, _I32, 1, None),
                      ("line", 3, _I32, 1, None), ("column", 4, _I32, 1, None)]),
    ("StackFrame", [("file_location_id", 1, _I32, 1, None),
                    ("parent_frame_id", 2, _I32, 1, None)]),
    # the buffer assignment (read by the memory viewer only: HloProtoWithBuffers)
    ("HloProtoWithBuffers", [("hlo_module", 1, _MSG, 1, "HloModuleProto"),
                             ("buffer_assignment", 3, _MSG, 1, "BufferAssignmentProto")]),
    ("BufferAssignmentProto", [
        ("logical_buffers", 1, _MSG, 3, "LogicalBufferProto"),
        ("buffer_aliases", 2, _MSG, 3, "BufferAlias"),
        ("buffer_allocations", 3, _MSG, 3, "BufferAllocationProto"),
        ("heap_simulator_traces", 4, _MSG, 3, "HeapSimulatorTrace")]),
    ("LogicalBufferProto", [
        ("id", 1, _I64, 1, None), ("size", 2, _I64, 1, None),
        ("defined_at", 3, _MSG, 1, "BufferLocation"), ("color", 4, _I64, 1, None)]),
    ("BufferLocation", [  # LogicalBufferProto.Location
        ("instruction_name", 2, _STR, 1, None), ("shape_index", 3, _I64, 3, None),
        ("instruction_id", 4, _I64, 1, None)]),
    ("BufferAlias", [("source_buffer_id", 1, _I64, 1, None),
                     ("location", 2, _MSG, 1, "BufferLocation")]),
    ("BufferAllocationProto", [
        ("index", 1, _I64, 1, None), ("size", 2, _I64, 1, None),
        ("is_thread_local", 3, _BOOL, 1, None), ("is_entry_computation_parameter", 5, _BOOL,
                                                 1, None),
        ("parameter_number", 6, _I64, 1, None), ("maybe_live_out", 7, _BOOL, 1, None),
        ("color", 8, _I64, 1, None), ("assigned", 9, _MSG, 3, "AssignedBuffer"),
        ("parameter_shape_index", 10, _I64, 3, None), ("is_tuple", 11, _BOOL, 1, None),
        ("is_constant", 12, _BOOL, 1, None)]),
    ("AssignedBuffer", [  # BufferAllocationProto.Assigned
        ("logical_buffer_id", 1, _I64, 1, None), ("offset", 2, _I64, 1, None),
        ("size", 3, _I64, 1, None)]),
    ("HeapSimulatorTrace", [
        ("events", 1, _MSG, 3, "HeapEvent"), ("whole_module_simulation", 2, _BOOL, 1, None),
        ("buffer_allocation_index", 3, _I64, 1, None)]),
    ("HeapEvent", [  # HeapSimulatorTrace.Event; kind: 0 ALLOC, 1 FREE, 2 SHARE_WITH
        ("kind", 1, _I32, 1, None), ("buffer_id", 2, _I64, 1, None),
        ("computation_name", 3, _STR, 1, None), ("instruction_name", 4, _STR, 1, None),
        ("share_with_canonical_id", 5, _I64, 1, None)]),
]
_PACKAGE = "tfprof_nb.hlo_subset"
_CLASSES: dict = {}


def _message_classes() -> dict:
    """The schema subset as protobuf message classes (built once, in a private pool)."""
    if _CLASSES:
        return _CLASSES
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    fdp = descriptor_pb2.FileDescriptorProto(name="tfprof_nb_hlo_subset.proto",
                                             package=_PACKAGE, syntax="proto3")
    F = descriptor_pb2.FieldDescriptorProto
    types = {_I64: F.TYPE_INT64, _I32: F.TYPE_INT32, _STR: F.TYPE_STRING, _BOOL: F.TYPE_BOOL,
             _MSG: F.TYPE_MESSAGE, _BYTES: F.TYPE_BYTES, _F32: F.TYPE_FLOAT,
             "double": F.TYPE_DOUBLE, "uint32": F.TYPE_UINT32, "uint64": F.TYPE_UINT64}
    for name, fields in _SCHEMA:
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, label, mtype in fields:
            f = msg.field.add(name=fname, number=number, type=types[ftype],
                              label=F.LABEL_REPEATED if label == 3 else F.LABEL_OPTIONAL)
            if mtype:
                f.type_name = f".{_PACKAGE}.{mtype}"
        if name == "FrontendAttributes":
            entry = msg.nested_type.add(name="MapEntry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
            entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    for name, _ in _SCHEMA:
        desc = pool.FindMessageTypeByName(f"{_PACKAGE}.{name}")
        _CLASSES[name] = message_factory.GetMessageClass(desc)
    return _CLASSES


# ---- the parsed module ---------------------------------------------------------------------
@dataclass
class HloModule:
    """One XLA module: its computations and instructions (protobuf messages of the subset).

    ``instructions`` maps every instruction name (fused computations included) to its
    message; ``by_id`` maps instruction ids; ``computation_of`` names each instruction's
    computation; ``computations`` maps computation ids to messages.  ``buffer_assignment``
    is the proto's ``BufferAssignmentProto`` when it was parsed with ``buffers=True`` and
    the proto has one, else None.
    """

    name: str
    proto: object
    computations: dict = field(default_factory=dict)
    instructions: dict = field(default_factory=dict)
    by_id: dict = field(default_factory=dict)
    computation_of: dict = field(default_factory=dict)
    entry_id: int = -1
    buffer_assignment: object = None
    # what analyses derive from this module alone, kept with it (a module parsed from the
    # same bytes again is this one: :func:`parse_hlo_proto`)
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_proto(cls, module) -> "HloModule":
        m = cls(name=module.name, proto=module)
        for comp in module.computations:
            m.computations[comp.id] = comp
            for instr in comp.instructions:
                m.instructions.setdefault(instr.name, instr)
                m.by_id[instr.id] = instr
                m.computation_of[instr.name] = comp
        m.entry_id = module.entry_computation_id
        if m.entry_id not in m.computations:  # older protos: the entry by name, else the last
            named = [c.id for c in module.computations
                     if c.name == module.entry_computation_name]
            m.entry_id = named[0] if named else (module.computations[-1].id
                                                 if len(module.computations) else -1)
        return m

    def operands(self, instr) -> list:
        """The operand instructions of ``instr`` (None for ids the module lacks)."""
        return [self.by_id.get(i) for i in instr.operand_ids]

    def called(self, instr) -> list:
        """The computations ``instr`` calls (fused computation, to_apply, bodies ...)."""
        return [self.computations[c] for c in instr.called_computation_ids
                if c in self.computations]

    def root_of(self, comp):
        """The root instruction of computation ``comp``."""
        for instr in comp.instructions:
            if instr.id == comp.root_id:
                return instr
        return comp.instructions[-1] if len(comp.instructions) else None

    def schedule(self, comp) -> list:
        """The instructions of computation ``comp`` in the order they run: the module's
        schedule where it has one for ``comp`` (XLA's GPU modules do), else the proto's order
        (operands before their users)."""
        for entry in self.proto.schedule.sequences:
            if entry.key == comp.id:
                return [self.by_id[i] for i in entry.value.instruction_ids if i in self.by_id]
        return list(comp.instructions)

    def stack(self, frame_id: int) -> str:
        """The op's stack as ``file:line:col`` lines, innermost frame first (as XLA's
        profiler prints it), from the module's stack frame index."""
        index = self.proto.stack_frame_index
        lines = []
        seen = set()
        while frame_id > 0 and frame_id not in seen and frame_id <= len(index.stack_frames):
            seen.add(frame_id)
            frame = index.stack_frames[frame_id - 1]
            loc_id = frame.file_location_id
            if loc_id <= 0 or loc_id > len(index.file_locations):
                break
            loc = index.file_locations[loc_id - 1]
            fid = loc.file_name_id
            file_name = index.file_names[fid - 1] if 0 < fid <= len(index.file_names) else ""
            lines.append(f"{file_name}:{loc.line}:{loc.column}\n")
            frame_id = frame.parent_frame_id
        return "".join(lines)


_KEPT_PROTO_BYTES = 16 << 20  # parsed modules kept, the last used, up to this many bytes
_parsed: OrderedDict = OrderedDict()  # (digest of the bytes, buffers) -> (module, size)
_parsed_lock = threading.Lock()


def parse_hlo_proto(data: bytes, buffers: bool = False) -> HloModule:
    """Parse serialized ``xla.HloProto`` bytes into an :class:`HloModule`; raises
    :class:`HloParseError` when they are not an HloProto with a module.  With ``buffers``
    the buffer assignment is read too (``HloModule.buffer_assignment``).  The same bytes
    parsed again give the same module (the last parsed, up to 16 MB of protos, are kept:
    every analysis that reads a profile's programs, and a monitor's windows of the same
    program, parse each once): it is shared, so no caller may change it."""
    data = bytes(data)
    key = (hashlib.blake2b(data, digest_size=16).digest(), buffers)
    with _parsed_lock:
        kept = _parsed.get(key)
        if kept is not None:
            _parsed.move_to_end(key)
            return kept[0]
    module = _parse(data, buffers)
    if len(data) > _KEPT_PROTO_BYTES:
        return module  # (too big to keep once its profile is gone)
    with _parsed_lock:
        _parsed[key] = (module, len(data))
        total = sum(size for _, size in _parsed.values())
        while total > _KEPT_PROTO_BYTES:
            total -= _parsed.popitem(last=False)[1][1]
    return module


def _parse(data: bytes, buffers: bool) -> HloModule:
    from google.protobuf.message import DecodeError

    proto = _message_classes()["HloProtoWithBuffers" if buffers else "HloProto"]()
    try:
        proto.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise HloParseError(f"not an HloProto ({exc})") from None
    if not proto.HasField("hlo_module") or not len(proto.hlo_module.computations):
        raise HloParseError("the HloProto holds no module with computations")
    module = HloModule.from_proto(proto.hlo_module)
    if buffers and proto.HasField("buffer_assignment"):
        module.buffer_assignment = proto.buffer_assignment
    return module


def programs_of_space(space, buffers: bool = False) -> tuple[dict, dict, list[str]]:
    """The XLA programs of one decoded XSpace: ({program_id: HloModule}, {program_id: name of
    the program's metadata}, reasons) from the ``Hlo Proto`` stats of the ``/host:metadata``
    plane.  The program id is the metadata's ``program_id`` stat, else the number in
    parentheses ending its name, else its id (as XLA's profiler reads them).  Protos that do
    not parse are left out and named in ``reasons``; ``buffers`` reads their buffer
    assignments too."""
    import numpy as np

    planes = [i for i, p in enumerate(space.plane_names) if p == METADATA_PLANE]
    if not planes:
        return {}, {}, []
    st = space.stats
    try:
        codes = [st.names.index(n) for n in (HLO_PROTO_STAT, _LEGACY_HLO_PROTO_STAT)
                 if n in st.names]
    except ValueError:
        codes = []
    if not codes:
        return {}, {}, []
    on_meta = np.isin(space.event_metadata_plane, planes)
    md_rows = st.owned_by(1)  # (the metadata's stats are few: no pass over every stat)
    md_codes = st.name_code[md_rows]
    proto_rows = md_rows[np.isin(md_codes, codes) & (st.kind[md_rows] == 5)]
    proto_rows = proto_rows[on_meta[st.owner[proto_rows]]]
    pid_code = st.names.index("program_id") if "program_id" in st.names else -1
    pid_rows = md_rows[md_codes == pid_code] if pid_code >= 0 else np.empty(0, np.int64)
    pid_of = {}
    for r in pid_rows.tolist():
        kind = int(st.kind[r])
        if kind in (2, 3):
            pid_of[int(st.owner[r])] = int(st.raw_value[r]) & (2**64 - 1) if kind == 2 \
                else int(st.raw_value[r])
    modules, names, reasons = {}, {}, []
    for r in proto_rows.tolist():
        md = int(st.owner[r])
        name = space.event_metadata_names[md]
        pid = pid_of.get(md)
        if pid is None:
            match = _PROGRAM_IN_NAME.match(name)
            pid = int(match.group(1)) if match else int(space.event_metadata_id[md])
        try:
            module = parse_hlo_proto(st.values[int(st.raw_value[r])], buffers)
        except HloParseError as exc:
            reasons.append(f"program {pid} ({name}): HLO proto could not be read: {exc}")
            continue
        if pid not in modules:
            modules[pid] = module
            names[pid] = name
    return modules, names, reasons
