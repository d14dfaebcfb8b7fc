"""Recommendations that know the framework and the GPU vendor, one finding per cause.

Memory findings are checked on small XSpace files written with TensorFlow's xplane_pb2:
``MemoryAllocation`` events on ``/host:CPU`` with the stats the memory profile reads, a host
event that says which framework ran (a jitted JAX call or a tf.function call), JAX's
``/host:metadata`` stats, and GPU planes with a ``device_vendor`` stat.
"""

from __future__ import annotations

import pytest

import tfprof_nb as tp

from ..make_jax_profile import capture
from ..conftest import DATA

GIB = 2**30
CALLS = {"jax": "PjitFunction(train_step)", "tensorflow": "EagerLocalExecute: "
         "__inference_train_step_1234", "unknown": "my_loop"}


class _Plane:
    """Adds events and stats to one XPlane, keeping its metadata tables."""

    def __init__(self, plane):
        self.plane, self.stats, self.events = plane, {}, {}

    def stat_id(self, name: str) -> int:
        if name not in self.stats:
            i = self.stats[name] = len(self.stats) + 1
            self.plane.stat_metadata[i].id = i
            self.plane.stat_metadata[i].name = name
        return self.stats[name]

    def set(self, target, name: str, value) -> None:
        stat = target.stats.add(metadata_id=self.stat_id(name))
        if isinstance(value, str):
            stat.str_value = value
        elif isinstance(value, float):
            stat.double_value = value
        else:
            stat.int64_value = value

    def event(self, line, name: str, offset_ps: int, duration_ps: int, **stats) -> None:
        if name not in self.events:
            i = self.events[name] = len(self.events) + 1
            self.plane.event_metadata[i].id = i
            self.plane.event_metadata[i].name = name
        ev = line.events.add(metadata_id=self.events[name], offset_ps=offset_ps,
                             duration_ps=duration_ps)
        for key, value in stats.items():
            self.set(ev, key, value)


def write_profile(path, framework: str, allocators: dict, vendor: str | None = "Nvidia",
                  gpus: int = 8, jax_metadata: bool = True):
    """An XSpace whose host ran ``framework``'s calls and whose ``allocators`` ({name: (peak
    fraction of capacity, fragmentation 0..1)}) each allocated once, with ``gpus`` GPU planes
    of ``vendor`` (no device_vendor stat when None)."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.hostnames.append("worker-0")
    if framework == "jax" and jax_metadata:
        meta = _Plane(space.planes.add(id=0, name="/host:metadata"))
        meta.set(meta.plane, "jax_version", "0.10.2")
        meta.set(meta.plane, "jaxlib_version", "0.10.2")
    host = _Plane(space.planes.add(id=1, name="/host:CPU"))
    line = host.plane.lines.add(id=1, name="python", timestamp_ns=1_000_000)
    for i in range(3):
        host.event(line, CALLS[framework], i * 10**9, 5 * 10**8)
    for k, (name, (peak, frag)) in enumerate(allocators.items()):
        in_use = int(peak * 16 * GIB)
        host.event(line, "MemoryAllocation", 4 * 10**9 + k * 1000, 100,
                   allocator_name=name, bytes_reserved=0, bytes_allocated=in_use,
                   bytes_available=16 * GIB - in_use, fragmentation=float(frag),
                   peak_bytes_in_use=in_use, requested_bytes=in_use, allocation_bytes=in_use,
                   addr=4096 * (k + 1))
    for g in range(gpus):
        gpu = _Plane(space.planes.add(id=2 + g, name=f"/device:GPU:{g}"))
        if vendor is not None:
            gpu.set(gpu.plane, "device_vendor", vendor)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(space.SerializeToString())
    return path


def _gpu_allocators(n=8, peak=0.5, frag=0.45) -> dict:
    return {f"GPU_{g}_bfc": (peak, frag) for g in range(n)}


def _findings(prof, kind):
    return [f for f in prof.recommendations() if f.kind == kind]


def _all_text(prof) -> str:
    return " ".join(f"{f.what} {f.fix}" for f in prof.recommendations())


def test_jax_fragmentation_gets_jax_advice_once(tmp_path):
    """Eight fragmented JAX GPU allocators: one finding naming all eight, JAX's allocator
    settings, and no TensorFlow environment variable anywhere."""
    prof = tp.load(write_profile(tmp_path / "jax.xplane.pb", "jax", _gpu_allocators()))
    assert prof.framework.name == "jax" and prof.framework.gpu_vendors == ("nvidia",)
    (frag,) = _findings(prof, "fragmentation")
    assert frag.evidence["allocators"] == ", ".join(f"GPU_{g}_bfc" for g in range(8))
    # eight allocators: the figure is the most fragmented one's, and said so; the sentence
    # lists the allocators once (the evidence's words do not repeat them)
    assert frag.evidence["highest_fragmentation_pct"] == pytest.approx(45.0)
    assert frag.what.startswith("8 allocators are fragmented at their peak: GPU_0_bfc")
    assert str(frag).count("GPU_0_bfc") == 1 and "(highest fragmentation 45.0%)" in str(frag)
    assert "XLA_PYTHON_CLIENT_MEM_FRACTION" in frag.fix
    assert "XLA_PYTHON_CLIENT_ALLOCATOR=platform" in frag.fix
    assert "TF_GPU_ALLOCATOR" not in _all_text(prof)
    assert all(isinstance(v, (int, float, str)) for v in frag.evidence.values())


def test_fragmentation_far_below_the_capacity_is_no_finding(tmp_path):
    """An allocator fragmented at a peak that holds a small part of its capacity has room for
    any block it lacks: no finding (XLA's arenas on the H100 and MI300X captures: 41-51% at
    0.2-1.3% of the capacity); at half of it the finding is there."""
    allocators = {"GPU_0_bfc": (0.013, 0.51), "GPU_1_bfc": (0.5, 0.45)}
    prof = tp.load(write_profile(tmp_path / "jax.xplane.pb", "jax", allocators))
    (frag,) = _findings(prof, "fragmentation")
    assert frag.evidence["allocators"] == "GPU_1_bfc"
    for name in ("jax_h100_nocmdbuf.xplane.pb", "mi300x_jax08_conv.xplane.pb"):
        real = tp.load(DATA / name)
        summary = real.memory_summary
        assert (summary.fragmentation_at_peak_pct >= 30).any()  # (XProf's figure, kept)
        assert not _findings(real, "fragmentation")


def test_jax_recognised_from_its_calls_without_metadata(tmp_path):
    """Older JAX wrote no version metadata: its jitted calls say it is JAX."""
    path = write_profile(tmp_path / "old_jax.xplane.pb", "jax", _gpu_allocators(2),
                         jax_metadata=False)
    prof = tp.load(path)
    assert prof.framework.name == "jax"
    assert "TF_GPU_ALLOCATOR" not in _all_text(prof)


def test_tensorflow_nvidia_fragmentation_keeps_tf_advice_once(tmp_path):
    prof = tp.load(write_profile(tmp_path / "tf.xplane.pb", "tensorflow", _gpu_allocators()))
    assert prof.framework.name == "tensorflow"
    (frag,) = _findings(prof, "fragmentation")
    assert frag.evidence["allocators"].count("_bfc") == 8
    assert frag.fix.startswith("Try TF_GPU_ALLOCATOR=cuda_malloc_async")
    assert "XLA_PYTHON_CLIENT" not in _all_text(prof)


def test_amd_gets_no_cuda_allocator(tmp_path):
    for framework in ("tensorflow", "jax"):
        path = write_profile(tmp_path / f"{framework}_amd.xplane.pb", framework,
                             _gpu_allocators(4), vendor="AMD")
        prof = tp.load(path)
        assert prof.framework.gpu_vendors == ("amd",)
        (frag,) = _findings(prof, "fragmentation")
        assert "TF_GPU_ALLOCATOR" not in frag.fix and "cuda" not in frag.fix.lower()
        assert "shapes stable" in frag.fix


def test_device_and_host_allocators_get_their_own_remedy(tmp_path):
    """One finding per cause and remedy: the GPU arenas together, the host allocators
    (CPU, pinned host memory) together, without a device allocator setting."""
    allocators = {**_gpu_allocators(2), "mklcpu": (0.5, 0.4), "gpu_host_bfc": (0.5, 0.4)}
    prof = tp.load(write_profile(tmp_path / "mixed.xplane.pb", "tensorflow", allocators))
    frag = {f.evidence["allocators"]: f.fix for f in _findings(prof, "fragmentation")}
    assert set(frag) == {"GPU_0_bfc, GPU_1_bfc", "gpu_host_bfc, mklcpu"}
    assert "TF_GPU_ALLOCATOR" in frag["GPU_0_bfc, GPU_1_bfc"]
    assert "TF_GPU_ALLOCATOR" not in frag["gpu_host_bfc, mklcpu"]
    assert all("shapes stable" in fix for fix in frag.values())


def test_capacity_finding_lists_allocators_with_framework_advice(tmp_path):
    allocators = {"GPU_0_bfc": (0.97, 0.0), "GPU_1_bfc": (0.93, 0.0), "GPU_2_bfc": (0.5, 0.0)}
    jax = tp.load(write_profile(tmp_path / "jax_cap.xplane.pb", "jax", allocators))
    (cap,) = _findings(jax, "memory_capacity")
    assert cap.evidence["allocators"] == "GPU_0_bfc, GPU_1_bfc"
    assert cap.evidence["peak_pct"] == pytest.approx(97.0, abs=0.01)
    # two allocators: the figures are the fullest one's, named in the words
    assert cap.evidence["fullest_allocator"] == "GPU_0_bfc"
    assert "(fullest GPU_0_bfc, peak of capacity 97.0%" in str(cap)
    assert cap.severity == "high" and "XLA_PYTHON_CLIENT_MEM_FRACTION" in cap.fix
    tf = tp.load(write_profile(tmp_path / "tf_cap.xplane.pb", "tensorflow", allocators))
    (cap,) = _findings(tf, "memory_capacity")
    assert "XLA_PYTHON_CLIENT" not in cap.fix and "batch size" in cap.fix


def test_allocators_of_several_hosts_are_named_with_their_host(tmp_path):
    a = write_profile(tmp_path / "a" / "w0.xplane.pb", "jax", _gpu_allocators(2))
    b = write_profile(tmp_path / "b" / "w1.xplane.pb", "jax", _gpu_allocators(2))
    (frag,) = _findings(tp.load([a, b]), "fragmentation")
    names = frag.evidence["allocators"].split(", ")
    assert len(names) == 4 and all("/GPU_" in n for n in names)


def test_framework_of_real_profiles(tmp_path, cpu_file, gpu_fixture_file):
    """A real JAX capture, a real TensorFlow capture and the TensorFlow GPU fixture (written
    before profilers recorded the vendor)."""
    jax = tp.load(capture(tmp_path, "marked"))
    assert jax.framework.name == "jax" and jax.framework.gpu_vendors == ()
    assert "tf.function" not in _all_text(jax) and "tf.data" not in _all_text(jax)
    assert tp.load(cpu_file).framework.name == "tensorflow"
    gpu = tp.load(gpu_fixture_file)
    assert gpu.framework.name == "tensorflow" and gpu.framework.gpu_vendors == ("unknown",)


def test_unknown_framework_names_tensorflow_in_its_advice(tmp_path):
    prof = tp.load(write_profile(tmp_path / "x.xplane.pb", "unknown", _gpu_allocators(2)))
    assert prof.framework.name == "unknown"
    (frag,) = _findings(prof, "fragmentation")
    assert frag.fix.startswith("With TensorFlow, try TF_GPU_ALLOCATOR")


def test_command_buffers_found_where_their_kernels_stay_unattributed():
    """JAX on an H200 (tests/data) with XLA's default command buffers: every kernel in the
    buffer is attributed to its HLO op, so no finding; where kernels stay unresolved (here the
    table's first rows, marked so) the finding gives their share and how to get per-op
    numbers; the same model captured with command buffers off gets no such finding either."""
    from tfprof_nb.analysis.findings import recommendations as R

    from .real_xla import REAL

    prof = tp.load(REAL / "jax_h200_transformer.xplane.pb")
    stats = prof.hlo_stats
    assert (stats.attribution != "unresolved").all() and not _findings(prof, "command_buffers")
    first = stats.index < 20
    unresolved = stats.assign(attribution=stats.attribution.where(~first, "unresolved"),
                              hlo_op_name=stats.hlo_op_name.where(~first, "command_buffer_1"))
    out: list = []
    R._command_buffers(unresolved, out, R.Target(prof.framework.name, prof.framework.gpu_vendors))
    (found,) = out
    assert found.evidence["command_buffer_pct"] == pytest.approx(
        100 * stats.total_self_time_us[first].sum() / stats.total_self_time_us.sum())
    assert found.evidence["command_buffers"] == 1
    assert "XLA_FLAGS=--xla_gpu_enable_command_buffer=" in found.fix
    assert "before JAX starts" in found.fix and "TensorFlow" not in found.fix
    off = tp.load(REAL / "jax_h200_nocmdbuf.xplane.pb")
    assert not off.hlo_stats.hlo_op_name.str.startswith("command_buffer").any()
    assert len(off.hlo_stats) > 10 and not _findings(off, "command_buffers")


def test_mixed_precision_reads_the_matmuls_operand_types(gpu_fixture_file):
    """The step breakdown's 16-bit time follows the reference (kernels named half/fp16), so a
    bf16 JAX model on an H200 shows 0 % there; the profile's one precision share reads the
    operand types of the matrix multiplications in the HLO instead (inside command buffers
    too, once their kernels are attributed to HLO ops).  Without HLO (TensorFlow without XLA)
    the step breakdown decides.  The card, the statement and the finding quote that one share."""
    from tfprof_nb.analysis.findings import recommendations as R
    from tfprof_nb.analysis.findings.precision import matmul_precision, precision

    from .real_xla import REAL

    bf16 = tp.load(REAL / "jax_h200_nocmdbuf.xplane.pb")
    assert bf16.steps.device_compute_16_ms.sum() == 0
    half, matmul, unknown = matmul_precision(bf16.hlo_stats)
    assert matmul > 0 and half / matmul > 0.5 and unknown == 0
    share = bf16.result("precision")
    assert share["source"] == "hlo" and share["pct16"] == pytest.approx(100 * half / matmul)
    assert bf16.overview().precision == share and "statement" not in share
    assert not _findings(bf16, "mixed_precision")
    # XProf's overview says its own 0.0% ("Only 0.0% of device computation is 16 bit"): the
    # measure carries it as XProf's, beside the HLO's share
    from tfprof_nb.analysis.findings.measure_words import xprof_words

    row = bf16.measures.loc["matmul_16bit_pct"]
    assert share["xprof_pct16"] == 0.0 and row["xprof_value"] == 0.0 and row["rule"] == "tfprof"
    assert xprof_words(row).startswith("XProf's rule gives 0.0% (its overview's 16-bit share")
    # the same profile's matrix multiplications in f32: the finding, with the HLO's evidence
    f32 = bf16.hlo_stats.assign(hlo_op_expression=bf16.hlo_stats.hlo_op_expression
                                .str.replace("bf16[", "f32[", regex=False))
    low = precision({}, bf16.steps, f32)
    assert low["pct16"] == 0 and "Only 0.0% of the matrix multiplications" in low["statement"]
    out: list = []
    R._mixed_precision(low, bf16.result("environment"), out,
                       R.Target(bf16.framework.name, bf16.framework.gpu_vendors))
    (found,) = out
    assert found.evidence["matmul_16bit_pct"] == low["pct16"] and "jnp.bfloat16" in found.fix
    # with command buffers on, the matmuls attributed inside the buffer give the same share
    buffers = tp.load(REAL / "jax_h200_transformer.xplane.pb")
    assert buffers.result("precision") == bf16.result("precision")
    assert not _findings(buffers, "mixed_precision")
    v100 = tp.load(gpu_fixture_file)
    (found,) = _findings(v100, "mixed_precision")
    share = v100.result("precision")
    assert share["source"] == "steps"
    assert 0 < found.evidence["device_compute_16bit_pct"] == share["pct16"] < 50


def test_operands_of_an_hlo_instruction():
    from tfprof_nb.analysis.findings.precision import operands as _operands

    text = ("%custom-call.4 = (f32[2,2048,512]{2,1,0}, s8[33554432]{0}) custom-call(bf16[2048,"
            "2,2048]{0,2,1} %bitcast.1089.0, bf16[2,2048,512]{2,1,0} %bitcast.994.0), "
            'custom_call_target="__cublas$lt$matmul"')
    assert _operands(text).startswith("bf16[2048,2,2048]") and "f32" not in _operands(text)
    assert _operands("%d = f32[8,8]{1,0} dot(f32[8,4]{1,0} %a, f32[4,8]{1,0} %b), lhs=1") == \
        "f32[8,4]{1,0} %a, f32[4,8]{1,0} %b"


def test_a_findings_text_gives_its_evidence_in_words_with_units(gpu_fixture_file):
    """str(finding) (what reports and the overview print): each number with its unit and
    words for its key, never the raw ``key=value`` of the evidence dict."""
    from tfprof_nb.analysis.findings.evidence import LABELS

    findings = tp.load(gpu_fixture_file).recommendations()
    assert findings
    for f in findings:
        said = str(f).partition(" Fix: ")[0]
        assert "=" not in said and "_pct" not in said
        for key, value in f.evidence.items():
            if key == f.measure:  # the sentence quotes its measure once, in its own words
                assert f"{value:.1f}%" in f.what and LABELS.get(key, "@") not in said
                continue
            if key.endswith("_pct"):
                assert f"{value:.1f}%" in said
            if key in LABELS and key != "top_cause":
                assert LABELS[key] in said


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb",
                                  "mi300x_jax08_attention.xplane.pb"])
def test_an_idle_cause_says_it_is_part_of_the_devices_idle_time(name):
    """A finding quoting one cause of the GPUs' idle time (the host's late launches here)
    names the whole idle time it is part of, with that measure's own label and value: the
    page never shows 77.9% and 78.1% idle unexplained.  Without steps (the MI300X capture)
    the whole's label says it is over the devices' active spans, not 'in the steps'."""
    from .real_xla import REAL

    prof = tp.load(REAL / name)
    idle = prof.measures.loc["device_idle_pct"]
    (host,) = _findings(prof, "host_overhead")
    part = prof.measures.at["host_wait_pct", "value"]
    assert part < idle.value
    assert host.what.endswith(f"; that is part of '{idle.label}', which reads "
                              f"{idle.value:.1f}%")
    one, steps = idle.device_count == 1, len(prof.steps)
    assert idle.label == (f"{'Device' if one else 'Devices'} idle in the step"
                          f"{'s' * (steps != 1)}" if steps else
                          "Device idle in its active span" if one else
                          "Devices idle in their active spans")
    assert f"{part:.1f}%" in host.what


def test_a_tf1_session_program_is_advised_in_its_own_words():
    """A TensorFlow 1 Session.run loop (tests/data/tf1_session_run) has no tf.function nor
    Keras to advise: its host-overhead fix speaks of sess.run calls; a TF2 capture's keeps
    the tf.function advice."""
    session = tp.load(DATA / "tf1_session_run.xplane.pb")
    assert session.framework.session and session.framework.name == "tensorflow"
    (f,) = [f for f in session.recommendations() if f.kind == "host_overhead"]
    assert f.fix.startswith("Do more per sess.run call") and "tf.function," not in f.fix
    tf2 = tp.load(DATA / "tf_cpu_epochs.xplane.pb")
    assert not tf2.framework.session
    assert all("sess.run" not in f.fix for f in tf2.recommendations())
