"""The hardware sampler during real captures (TensorFlow and JAX on CPU): its file beside the
profile, the period asked, every sample inside the profile's span, and its options."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np
import pytest

import tfprof_nb as tp
from tfprof_nb.capturing.hardware_sources import _has_nvidia_driver
from tfprof_nb.xspace.decoder import read_local_xspace
from tfprof_nb.xspace.hardware_file import read_hardware

HOST_SERIES = ("cpu_util_pct", "process_cpu_pct", "process_rss_bytes",
               "memory_available_bytes")
STEP_S = 0.03  # each step sleeps this long: a capture long enough for many samples


def _tf_capture(tmp_path_factory, steps: int, **options):
    import tensorflow as tf

    w = tf.Variable(tf.ones([8, 2]))

    @tf.function
    def step(x):
        return tf.reduce_sum(tf.matmul(x, w))

    logdir = tmp_path_factory.mktemp("hw_tf")
    with tp.Capture(steps=steps, warmup=1, logdir=str(logdir), progress=False,
                    backend="tensorflow", **options) as cap:
        for _ in cap.iterate(range(1000)):
            step(tf.ones([4, 8]))
            time.sleep(STEP_S)
    return Path(cap.run_dir)


@pytest.fixture(scope="module")
def tf_run_20ms(tmp_path_factory):
    return _tf_capture(tmp_path_factory, 20, sample_ms=20)


@pytest.fixture(scope="module")
def tf_run_default(tmp_path_factory):
    return _tf_capture(tmp_path_factory, 30)


@pytest.fixture(scope="module")
def jax_run_20ms(tmp_path_factory):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    @jax.jit
    def step(w, x):
        return w - 0.01 * jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)

    w, x = jnp.ones((32, 32)), jnp.ones((64, 32))
    logdir = tmp_path_factory.mktemp("hw_jax")
    with tp.Capture(steps=20, warmup=1, logdir=str(logdir), progress=False, backend="jax",
                    sample_ms=20) as cap:
        for _ in cap.iterate(range(1000)):
            w = step(w, x).block_until_ready()
            time.sleep(STEP_S)
    return Path(cap.run_dir)


def _read(run_dir: Path):
    """(the profile's decoded file, the sampler's samples) of a one-host run."""
    (xplane,) = run_dir.glob("*.xplane.pb")
    hardware = xplane.with_name(xplane.name.replace(".xplane.pb", ".hardware.npz"))
    assert hardware.exists(), sorted(p.name for p in run_dir.iterdir())
    return read_local_xspace(xplane), read_hardware(hardware.read_bytes(), hardware.name)


@pytest.mark.parametrize("run, period_ms", [("tf_run_20ms", 20), ("tf_run_default", 50),
                                            ("jax_run_20ms", 20)])
def test_host_series_at_the_period_inside_the_profile(run, period_ms, request):
    space, hw = _read(request.getfixturevalue(run))
    assert hw.meta["period_ms"] == period_ms
    assert set(HOST_SERIES) <= set(hw.series_counter)
    start, stop = space.profile_start_ns, space.profile_stop_ns
    assert start and stop and start < stop
    span_s = (stop - start) / 1e9
    for name in HOST_SERIES:
        k = hw.series_counter.index(name)
        mine = hw.series == k
        times, values = hw.time_ns[mine], hw.value[mine]
        # a sample every period while it ran (a busy machine may start the sampler's thread
        # late: the samples then cover less of the profile, at the same period)
        sampled_s = (times.max() - times.min()) / 1e9
        assert sampled_s >= 0.5 * span_s, (name, sampled_s, span_s)
        assert len(times) >= 0.5 * sampled_s * 1e3 / period_ms, (name, len(times), sampled_s)
        median_ms = float(np.median(np.diff(times))) / 1e6
        assert abs(median_ms - period_ms) <= 0.2 * period_ms, (name, median_ms)
        # the sampler starts after the profiler started and stops before it stops
        assert times.min() >= start and times.max() <= stop, (name, times.min() - start,
                                                              stop - times.max())
        assert np.isfinite(values).all()
    rss = hw.value[hw.series == hw.series_counter.index("process_rss_bytes")]
    assert (rss > 50e6).all()  # this process holds TensorFlow or JAX
    assert hw.meta["sampler_cpu_s"] > 0


def test_notes_speak_of_nvml_only_where_a_driver_is(tf_run_20ms):
    _, hw = _read(tf_run_20ms)
    has_nvml = importlib.util.find_spec("pynvml") is not None
    said = any("nvidia-ml-py" in n for n in hw.meta["notes"])
    assert said == (_has_nvidia_driver() and not has_nvml)
    if not _has_nvidia_driver():
        assert not any("NVML" in n or "Nvml" in n for n in hw.meta["notes"]), hw.meta["notes"]


def test_sample_ms_0_writes_no_file(tmp_path):
    prof = tp.capture(lambda batch: time.sleep(0.01), range(10), steps=2, warmup=0,
                      logdir=str(tmp_path), progress=False, backend="tensorflow", sample_ms=0)
    (run_dir,) = {Path(p).parent for p in prof.source}
    names = sorted(p.name for p in run_dir.iterdir())
    assert any(n.endswith(".xplane.pb") for n in names)
    assert not any(n.endswith(".hardware.npz") for n in names), names


@pytest.mark.parametrize("bad", [-1, 60_001, 2.5, "50", True])
def test_bad_sample_ms_raises_naming_it(bad):
    with pytest.raises(ValueError, match="sample_ms"):
        tp.Capture(sample_ms=bad)
    with pytest.raises(ValueError, match="sample_ms"):
        tp.capture(lambda b: None, range(3), steps=1, warmup=0, sample_ms=bad)
    with pytest.raises(ValueError, match="sample_ms"):
        tp.KerasProfiler(sample_ms=bad)


def test_a_failing_source_reads_nan_and_the_sampling_goes_on():
    """A source whose read raises: NaN for its series, said once in the notes; the others
    are still sampled."""
    from tfprof_nb.capturing.hardware_sampler import HardwareSampler
    from tfprof_nb.capturing.hardware_sources import HostSource

    class Failing:
        series = [("broken", "host", "count", "test")]
        notes: list = []

        def read(self):
            raise RuntimeError("gone")

    sampler = HardwareSampler(10, sources=[HostSource(), Failing()]).start()
    deadline = time.monotonic() + 30
    while len(sampler._times) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    sampler.stop()
    samples = sampler.samples()
    assert sum(1 for n in samples.meta["notes"] if "gone" in n) == 1
    assert isinstance(sampler._sources[0], HostSource)
    host = samples.value[samples.series == 0]
    assert len(host) >= 5 and np.isfinite(host).all()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="Linux's /proc")
def test_the_proc_host_source_reads_what_psutil_reads():
    """The cheaper /proc reader (the sampler's host source on Linux) against psutil, read
    around it: the same memory, and this process's CPU use while it spins."""
    psutil = pytest.importorskip("psutil")
    from tfprof_nb.capturing.hardware_sources import ProcHostSource, available_sources

    assert isinstance(available_sources()[0][0], ProcHostSource)
    source, proc = ProcHostSource(), psutil.Process()
    proc.cpu_percent(None)
    source.read()
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:  # spin: one core busy
        pass
    cpu, own, rss, available = source.read()
    theirs = proc.cpu_percent(None) / (psutil.cpu_count() or 1)
    assert abs(own - theirs) <= 15, (own, theirs)  # psutil counts in 10 ms jiffies
    assert own > 0
    assert 0 <= cpu <= 100
    assert abs(rss - proc.memory_info().rss) <= 0.05 * rss
    assert abs(available - psutil.virtual_memory().available) <= 0.05 * available
    source.close()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="Linux's /proc")
def test_the_machine_cpu_use_is_no_sample_until_a_tick_passed_never_nan():
    """Reads closer together than the kernel's 10 ms CPU accounting tick (a late sampler then
    one on time; a fresh-clone run once wrote a NaN there) give no machine CPU sample, not NaN,
    and keep the last counts as the base: a read once ticks passed measures from it."""
    from tfprof_nb.capturing.hardware_sources import ProcHostSource

    source = ProcHostSource()
    reads, end = [], time.perf_counter() + 0.2
    while time.perf_counter() < end:  # back to back: most reads see no tick
        reads.append(source.read())
    cpu = [r[0] for r in reads]
    assert None in cpu  # (the machine's counts move in ticks, far slower than these reads)
    measured = [c for c in cpu if c is not None]
    assert measured and all(0 <= c <= 100 for c in measured), measured
    assert all(r[1] is None or np.isfinite(r[1]) for r in reads)
    assert all(np.isfinite(r[2]) and np.isfinite(r[3]) for r in reads)
    # the base held: each measured value's base is the previous measured read's counts
    base = source._last[:2]
    time.sleep(0.05)
    total, idle = source._cpu_jiffies()
    assert total > base[0]
    value = source.read()[0]
    assert value is not None
    expected = 100.0 * (1.0 - (idle - base[1]) / (total - base[0]))
    assert abs(value - expected) <= 100.0 * 4 / (total - base[0]), (value, expected)
    source.close()


def test_a_series_not_read_at_a_tick_has_no_sample_there():
    """None from a source (NVML's field counters between their reads) leaves no sample in the
    file for that series and tick; NaN (a failed read) stays a sample."""
    from tfprof_nb.capturing.hardware_sampler import HardwareSampler
    from tfprof_nb.capturing.hardware_sources import ProcHostSource

    class EveryOther:
        series = [("sparse", "host", "count", "test"), ("failing", "host", "count", "test")]
        notes: list = []
        ticks = 0

        def read(self):
            self.ticks += 1
            return [float(self.ticks) if self.ticks % 2 else None, float("nan")]

    sampler = HardwareSampler(10, sources=[ProcHostSource(), EveryOther()]).start()
    deadline = time.monotonic() + 30
    while len(sampler._times) < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    sampler.stop()
    hw = sampler.samples()
    ticks = len(np.unique(hw.time_ns))
    sparse = hw.value[hw.series == hw.series_counter.index("sparse")]
    failing = hw.value[hw.series == hw.series_counter.index("failing")]
    assert ticks >= 10 and len(failing) == ticks and np.isnan(failing).all()
    assert len(sparse) == (ticks + 1) // 2 and (sparse % 2 == 1).all()


def test_captures_share_the_resident_sampler_paused_between_them():
    """One sampler thread serves the captures of a period one after another: asleep between
    them (no sample taken), each capture's samples only its own, the interval measures re-based
    (no NaN, none spanning the pause), its CPU time its own; a capture that starts while
    another holds it gets a sampler of its own."""
    from tfprof_nb.capturing.hardware_sampler import capture_sampler

    def sampled(sampler, n):
        deadline = time.monotonic() + 30
        while len(sampler._times) < n and time.monotonic() < deadline:
            time.sleep(0.005)
        assert len(sampler._times) >= n

    first = capture_sampler(17)
    assert first.resident and first._thread is not None
    thread = first._thread
    sampled(first, 3)
    other = capture_sampler(17)  # (the first still held)
    assert other is not first and not other.resident
    other.stop()
    other.release()
    assert not other._thread.is_alive()
    first.stop()
    one = first.samples()
    first.release()
    held = len(first._times)
    time.sleep(0.2)  # paused: ten periods without a read
    assert len(first._times) == held and thread.is_alive()

    second = capture_sampler(17)
    assert second is first and second._thread is thread
    sampled(second, 3)
    second.stop()
    two = second.samples()
    second.release()
    assert one.time_ns.max() < two.meta["started_ns"] <= two.time_ns.min()
    assert two.time_ns.max() <= two.meta["stopped_ns"]
    assert np.isfinite(two.value).all() and np.isfinite(one.value).all()
    assert two.meta["sampler_started_ns"] == two.meta["started_ns"]
    # each round's CPU its own: the two together at most the thread's whole life
    whole = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    assert 0 < one.meta["sampler_cpu_s"] and 0 < two.meta["sampler_cpu_s"]
    assert one.meta["sampler_cpu_s"] + two.meta["sampler_cpu_s"] <= whole + 2e-6
    third = capture_sampler(17)  # (released again: taken again)
    assert third is first
    third.stop()
    third.release()

