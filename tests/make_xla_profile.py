"""Make small XLA profiles for the tests (run in a subprocess: it imports TensorFlow and JAX).

    python tests/make_xla_profile.py OUTDIR SCENARIO

Scenarios:
  tf_jit   TensorFlow ``@tf.function(jit_compile=True)`` on CPU, 4 steps with step markers:
           XLA:CPU runs the program as thunks (host events with hlo_op / hlo_module /
           program_id stats and ``end: <op>`` completion events); OUTDIR/plugins/profile/...
  jax      JAX ``jit`` on CPU, 3 steps (``StepTraceAnnotation``): a dot/tanh/reduce program
           and a ``fori_loop`` program (a while thunk whose body thunks nest inside it)
  gpu      synthetic GPU XSpaces (no GPU needed) around REAL HLO protos: JAX programs compiled
           on CPU and a TensorFlow ``jit_compile`` program.  Every instruction of every
           computation gets kernel events on a CUPTI-like stream line of /device:GPU:0 and :1
           (hlo_op, hlo_module, program_id, correlation_id, kernel_details; some with tf_op,
           group_id, flops/bytes_accessed stats, some ops with two kernels), plus kernels of
           an unknown HLO op and of a plain TensorFlow op.  Files in OUTDIR:
             full.xplane.pb        module map complete, H100-like plane stats
             no_hlo.xplane.pb      the same without the /host:metadata plane
             bad_hlo.xplane.pb     one program's Hlo Proto bytes are garbage
             unknown_gpu.xplane.pb no clock_rate / core_count / memory_bandwidth stats
           and programs.json (program id -> module name, instruction names).
  gpu_collectives  gpu's full.xplane.pb and programs.json around three JAX programs compiled
           for 8 host devices: a mesh-sharded train step (an all-reduce whose replica groups
           are written by mesh axes), a ``jax.debug.callback`` (a custom call with a maximal
           sharding) and a sum over a 4x2 mesh of reordered devices beside a callback of
           seven outputs (replica groups naming a device order, a long tuple sharding)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

US = 1_000_000  # ps


def tf_jit(outdir: str) -> None:
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def step(x, w):
        y = tf.matmul(x, w)
        return tf.reduce_sum(tf.nn.relu(y) * 2.0)

    x, w = tf.random.normal([128, 256]), tf.random.normal([256, 64])
    step(x, w)
    tf.profiler.experimental.start(outdir)
    for i in range(4):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x, w)
    tf.profiler.experimental.stop()


def jax_cpu(outdir: str) -> None:
    import jax
    import jax.numpy as jnp

    @jax.jit
    def step(x, w):
        y = jnp.tanh(jnp.dot(x, w)) * 2.0
        return jnp.sum(y, axis=1), y.T @ x

    @jax.jit
    def loop(x):
        return jax.lax.fori_loop(0, 3, lambda i, v: jnp.sin(v) * 1.5 + i, x)

    x, w = jnp.ones((128, 256)), jnp.ones((256, 128))
    v = jnp.ones((64, 64))
    step(x, w)[0].block_until_ready()
    loop(v).block_until_ready()
    jax.profiler.start_trace(outdir)
    for i in range(3):
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            step(x, w)[0].block_until_ready()
            loop(v).block_until_ready()
    jax.profiler.stop_trace()


# ---- synthetic GPU profiles ------------------------------------------------------------------
def _hlo_proto(module_bytes: bytes) -> bytes:
    """An HloProto holding the serialized HloModuleProto (field 1, length-delimited)."""
    n, size = len(module_bytes), bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        size.append(byte | (0x80 if n else 0))
        if not n:
            break
    return b"\x0a" + bytes(size) + module_bytes


def _jax_modules() -> list[tuple[str, bytes]]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def train(x, w, k, idx, tab):
        h = jax.nn.relu(x @ w + 1.0)
        img = h.reshape(4, 8, 8, 2)
        c = lax.conv_general_dilated(img, k, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        p = lax.reduce_window(c, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        s = jax.nn.softmax(p.reshape(4, -1), axis=-1)
        g = tab[idx]
        srt = jnp.sort(s, axis=-1)
        am = jnp.argmax(s, axis=-1)
        t = jnp.transpose(h)
        pad = jnp.pad(t[:, :4], ((0, 0), (1, 2)))
        cat = jnp.concatenate([pad, pad], axis=1)
        upd = lax.dynamic_update_slice(cat, jnp.zeros((2, 3)), (1, 2))
        cum = jnp.cumsum(g, axis=0)
        bi = jnp.einsum("bij,bjk->bik", s.reshape(4, 8, 8), srt.reshape(4, 8, 8))
        return (jnp.sum(bi), am, upd, cum, jnp.where(s > 0.1, s, 0.0).mean(),
                tab.at[idx].add(1.0))

    def loop(v):
        return lax.fori_loop(0, 5, lambda i, a: jnp.tanh(a) @ a + i, v)

    f32 = jnp.float32
    args = (jnp.ones((4, 64), f32), jnp.ones((64, 128), f32), jnp.ones((3, 3, 2, 4), f32),
            jnp.array([1, 3, 0], jnp.int32), jnp.ones((8, 16), f32))
    out = []
    for fn, a in ((train, args), (loop, (jnp.ones((32, 32), f32),))):
        exe = jax.jit(fn).lower(*a).compile().runtime_executable()
        module = exe.hlo_modules()[0]
        out.append((module.name, _hlo_proto(module.as_serialized_hlo_module_proto())))
    return out


def _tf_module() -> tuple[str, bytes]:
    import tensorflow as tf

    @tf.function(jit_compile=True)
    def step(x, w):
        y = tf.matmul(x, w)
        return tf.reduce_sum(tf.nn.relu(y) * 2.0)

    x, w = tf.random.normal([64, 32]), tf.random.normal([32, 16])
    data = step.experimental_get_compiler_ir(x, w)(stage="optimized_hlo_proto_serialized")
    return "tf_step", data


def _gemm_module(tf_module: bytes) -> tuple[str, bytes]:
    """The TensorFlow program with its dot rewritten as a cuBLAS gemm custom-call, the way
    XLA:GPU emits matmuls (output and workspace in a tuple, dimension numbers in the JSON
    backend config), read back through a get-tuple-element."""
    from tensorflow.compiler.xla.service import hlo_pb2

    proto = hlo_pb2.HloProto()
    proto.ParseFromString(tf_module)
    module = proto.hlo_module
    module.name = "gemm_step"
    module.ClearField("schedule")  # (it would lack the new instruction)
    entry = [c for c in module.computations if c.id == module.entry_computation_id][0]
    dot = [i for i in entry.instructions if i.opcode == "dot"][0]
    out_shape = type(dot.shape)()
    out_shape.CopyFrom(dot.shape)
    dot.opcode = "custom-call"
    dot.custom_call_target = "__cublas$gemm"
    dot.backend_config = json.dumps({"gemm_backend_config": {
        "alpha_real": 1.0, "beta": 0.0,
        "dot_dimension_numbers": {"lhs_contracting_dimensions": ["1"],
                                  "rhs_contracting_dimensions": ["0"]}}}).encode()
    dot.ClearField("dot_dimension_numbers")
    dot.shape.Clear()
    dot.shape.element_type = 13  # (f32[64,16], s8[4194304] workspace)
    dot.shape.tuple_shapes.add().CopyFrom(out_shape)
    ws = dot.shape.tuple_shapes.add()
    ws.element_type, ws.dimensions[:] = 2, [4194304]
    ws.layout.minor_to_major[:] = [0]
    gte = hlo_pb2.HloInstructionProto(name="get-tuple-element.99", opcode="get-tuple-element",
                                      tuple_index=0, operand_ids=[dot.id])
    local = max(i.id & 0xFFFFFFFF for c in module.computations for i in c.instructions) + 1
    gte.id = (dot.id >> 32 << 32) + local  # ids: computation in the high bits, local low
    gte.shape.CopyFrom(out_shape)
    ordered = []
    for instr in entry.instructions:  # the dot's users now read the get-tuple-element
        instr.operand_ids[:] = [gte.id if o == dot.id else o for o in instr.operand_ids]
        ordered.append(instr)
        if instr.id == dot.id:
            ordered.append(gte)
    copies = [type(gte)() for _ in ordered]
    for c, i in zip(copies, ordered):
        c.CopyFrom(i)
    del entry.instructions[:]
    entry.instructions.extend(copies)
    if entry.root_id == dot.id:
        entry.root_id = gte.id
    return module.name, proto.SerializeToString()


class _Plane:
    """A small XPlane builder over TensorFlow's xplane_pb2."""

    def __init__(self, plane, pid, name):
        self.p, self.stats, self.md = plane, {}, {}
        plane.id, plane.name = pid, name

    def stat_id(self, name):
        if name not in self.stats:
            sid = len(self.p.stat_metadata) + 1
            self.p.stat_metadata[sid].id = sid
            self.p.stat_metadata[sid].name = name
            self.stats[name] = sid
        return self.stats[name]

    def event_md(self, name, mid=None):
        if name not in self.md:
            mid = mid if mid is not None else len(self.p.event_metadata) + 1
            self.p.event_metadata[mid].id = mid
            self.p.event_metadata[mid].name = name
            self.md[name] = mid
        return self.md[name]

    def set(self, obj, name, value):
        s = obj.stats.add()
        s.metadata_id = self.stat_id(name)
        if isinstance(value, bytes):
            s.bytes_value = value
        elif isinstance(value, str):
            s.str_value = value
        elif isinstance(value, float):
            s.double_value = value
        elif name in ("core_count", "memory_bandwidth", "memory_size", "clock_rate",
                      "program_id"):
            s.uint64_value = value
        else:
            s.int64_value = value


def _instructions(module_bytes: bytes) -> list[tuple[str, str, bool]]:
    """(name, opcode, in a fusion computation) of every instruction, computations in order."""
    from tensorflow.compiler.xla.service import hlo_pb2

    proto = hlo_pb2.HloProto()
    proto.ParseFromString(module_bytes)
    return [(i.name, i.opcode, c.is_fusion_computation)
            for c in proto.hlo_module.computations for i in c.instructions]


def _sharded_modules() -> list[tuple[str, bytes]]:
    """Three JAX programs compiled for 8 host devices (``XLA_FLAGS`` set by the caller before
    JAX starts): a train step sharded over a mesh, whose gradient all-reduce lists its
    replica groups by mesh axes, one with a ``jax.debug.callback``, a custom call with a
    maximal sharding, and a sum over a 4x2 mesh of devices in another order (its groups
    name that order) beside a callback whose seven outputs are a long tuple sharding."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rows, whole = NamedSharding(mesh, PartitionSpec("data", None)), NamedSharding(mesh,
                                                                               PartitionSpec())

    def sharded_step(w, x):
        grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
        return w - 0.1 * grad

    def with_callback(v):
        jax.debug.callback(lambda t: None, v.sum())
        return v * 2.0

    # a 4x2 mesh of the devices in another order, summed over its rows (the replica groups
    # name the mesh's device order), beside a host callback of seven outputs (a tuple
    # sharding long enough for XLA's index comments)
    order = np.array(jax.devices()[:8])[[0, 3, 1, 6, 2, 5, 7, 4]].reshape(4, 2)
    tiles = NamedSharding(Mesh(order, ("x", "y")), PartitionSpec("x", "y"))

    def rows_and_callback(a, b):
        shapes = tuple(jax.ShapeDtypeStruct((4,), jnp.float32) for _ in range(7))
        outs = jax.pure_callback(lambda *v: tuple(np.asarray(x) for x in v), shapes,
                                 *[a[0] * i for i in range(7)])
        return sum(o.sum() for o in outs) + jnp.sum(b, axis=0).sum()

    f32 = jnp.float32
    out = []
    for fn, args in ((sharded_step, (jax.device_put(jnp.ones((16, 8), f32), whole),
                                     jax.device_put(jnp.ones((64, 16), f32), rows))),
                     (with_callback, (jnp.ones((8,), f32),)),
                     (rows_and_callback, (jnp.ones((8, 4), f32),
                                          jax.device_put(jnp.ones((8, 8), f32), tiles)))):
        exe = jax.jit(fn).lower(*args).compile().runtime_executable()
        module = exe.hlo_modules()[0]
        out.append((module.name, _hlo_proto(module.as_serialized_hlo_module_proto())))
    return out


def gpu_collectives(outdir: str) -> None:
    """``gpu``'s full XSpace around the programs of :func:`_sharded_modules` (8 host
    devices: this scenario's process sets the flag before JAX starts)."""
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""),
                                        "--xla_force_host_platform_device_count=8"]).strip()
    gpu(outdir, _sharded_modules(), variants=("full",))


def gpu(outdir: str, modules: list | None = None, variants: tuple = ("full", "no_hlo",
                                                                     "bad_hlo", "unknown_gpu")
        ) -> None:
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    if modules is None:
        modules = _jax_modules() + [_tf_module()]
        modules.append(_gemm_module(modules[-1][1]))
    programs = {pid: (name, data) for pid, (name, data) in zip((11, 12, 7, 13), modules)}
    (out / "programs.json").write_text(json.dumps(
        {pid: {"module": name, "instructions": _instructions(data)}
         for pid, (name, data) in programs.items()}))
    for variant in variants:
        xs = xplane_pb2.XSpace()
        xs.hostnames.append("synthetic")
        if variant != "no_hlo":
            meta = _Plane(xs.planes.add(), 99, "/host:metadata")
            for pid, (name, data) in programs.items():
                mid = meta.event_md(f"{name}({pid})", mid=pid)
                if variant == "bad_hlo" and pid == 12:
                    data = b"\xff\xff\xff\x07garbage"
                meta.set(meta.p.event_metadata[mid], "Hlo Proto", data)
                if pid != 7:  # the TF program keeps its id in the metadata's name only
                    meta.set(meta.p.event_metadata[mid], "program_id", pid)
        host = _Plane(xs.planes.add(), 2, "/host:CPU")
        hline = host.p.lines.add()
        hline.id, hline.name, hline.timestamp_ns = 100, "python", 1_000_000
        corr = 1
        for dev in (0, 1):
            gp = _Plane(xs.planes.add(), 10 + dev, f"/device:GPU:{dev}")
            if variant != "unknown_gpu":
                for k, v in (("clock_rate", 1_755_000), ("core_count", 132),
                             ("memory_bandwidth", 3_352_320_000_000),
                             ("compute_cap_major", 9), ("compute_cap_minor", 0),
                             ("device_vendor", "Nvidia"), ("memory_size", 85_899_345_920)):
                    gp.set(gp.p, k, v)
            line = gp.p.lines.add()
            line.id, line.display_id, line.name, line.timestamp_ns = 7, 7, "Stream #7", 1_000_000
            t = 5 * US
            n = 0
            for step in range(2):
                for pid, (name, data) in sorted(programs.items()):
                    for k, (hlo, opcode, fused) in enumerate(_instructions(data)):
                        n += 1
                        kernels = 2 if k % 7 == 3 else 1
                        for j in range(kernels):
                            dur = (1 + (n * 37 + j * 11 + dev * 5) % 23) * US // 4
                            ev = line.events.add()
                            ev.metadata_id = gp.event_md(f"kernel_{opcode}_{j}")
                            ev.offset_ps, ev.duration_ps = t, dur
                            gp.set(ev, "correlation_id", corr)
                            gp.set(ev, "kernel_details", "regs:32 static_shared:0 "
                                   "dynamic_shared:0 grid:1,1,1 block:128,1,1 occ_pct:50.0")
                            gp.set(ev, "hlo_op", hlo)
                            gp.set(ev, "hlo_module", name)
                            gp.set(ev, "program_id", pid)
                            gp.set(ev, "group_id", step)
                            if k % 5 == 1:
                                gp.set(ev, "tf_op", f"jit_wrapper/{hlo}:Foo")
                            if k % 11 == 2:
                                gp.set(ev, "flops", 1000 + k)
                                gp.set(ev, "bytes_accessed", 5000 + k)
                            le = hline.events.add()
                            le.metadata_id = host.event_md("cuLaunchKernel")
                            le.offset_ps, le.duration_ps = t - 2 * US, US // 2
                            host.set(le, "correlation_id", corr)
                            corr += 1
                            t += dur + US // 5
                # kernels outside the module map, and a plain TensorFlow op's kernel
                for ev_name, stats in (("unknown_k", {"hlo_op": "not_in_hlo.9",
                                                      "hlo_module": "jit_train",
                                                      "program_id": 11}),
                                       ("tf_k", {"tf_op": "dense/MatMul:MatMul"})):
                    ev = line.events.add()
                    ev.metadata_id = gp.event_md(ev_name)
                    ev.offset_ps, ev.duration_ps = t, 3 * US
                    for k, v in stats.items():
                        gp.set(ev, k, v)
                    t += 4 * US
                t += 20 * US
        (out / f"{variant}.xplane.pb").write_bytes(xs.SerializeToString())


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    target, scenario = sys.argv[1], sys.argv[2]
    {"tf_jit": tf_jit, "jax": jax_cpu, "gpu": gpu,
     "gpu_collectives": gpu_collectives}[scenario](target)
