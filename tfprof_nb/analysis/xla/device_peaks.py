"""Peak FLOP rate and memory bandwidth of the devices in a profile (for rooflines).

GPU planes carry their capabilities as plane stats: ``clock_rate`` (kHz), ``core_count``
(SMs), ``memory_bandwidth`` (bytes/s), ``compute_cap_major``/``minor`` and optionally
``peak_teraflops_per_second``.  The peak FLOP rate is the plane's own figure when it has one,
else SMs x clock x the densest per-SM-per-cycle rate of the architecture (fp32/fp16 on CUDA
cores or Tensor Cores, dense math, the same choice XProf makes); shared memory / L1 bandwidth
is 32 banks x 8 bytes per cycle per SM.  AMD GPUs (``device_vendor`` AMD): compute units x
clock x the densest fp32/fp16 vector or matrix rate of the gfx architecture (MI100 to MI355X),
LDS bytes per cycle for shared memory.  TPU planes give ``peak_teraflops_per_second`` and
``peak_hbm_bw_gigabytes_per_second``.  CPUs and unknown devices have no peaks: give them with
``Profile.set_device_peaks`` (the one way; every table follows).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...constants import GPU_PLANE_PREFIX, TPU_PLANE_PREFIX
from ..runtime.unit import Analysis

__all__ = ["ANALYSES", "DevicePeaks", "user_peaks", "peaks_from_plane_stats", "combine_peaks",
           "bound_by", "counted_on_chip", "ON_CHIP_MEMORIES"]

# FLOPs per SM per cycle, dense: max over fp32/fp16 on CUDA cores and Tensor Cores, by
# compute capability (major * 1000 + minor * 10); an unlisted one takes the nearest lower.
_FLOPS_PER_SM_CYCLE = {10000: 8192, 9000: 4096, 8090: 1024, 8060: 1024, 8000: 2048,
                       7050: 1024, 7000: 1024, 6010: 256, 6000: 256, 5000: 256, 3000: 384,
                       2000: 64}


@dataclass(frozen=True)
class DevicePeaks:
    """Peaks of one kind of device: FLOP/s, memory (HBM/DRAM) bytes/s, on-chip shared memory
    bytes/s (0 when unknown), a name and where the numbers came from."""

    peak_flops_per_s: float = 0.0
    memory_bw_bytes_per_s: float = 0.0
    shared_memory_bw_bytes_per_s: float = 0.0
    device: str = ""
    source: str = ""
    # TPU on-chip memories (bytes/s, 0 when the device has none or does not say)
    cmem_read_bw_bytes_per_s: float = 0.0
    cmem_write_bw_bytes_per_s: float = 0.0
    vmem_read_bw_bytes_per_s: float = 0.0
    vmem_write_bw_bytes_per_s: float = 0.0
    has_merged_vmem: bool = False  # the TPU's VMEM peaks count in the roofline

    @property
    def known(self) -> bool:
        return self.peak_flops_per_s > 0 and self.memory_bw_bytes_per_s > 0

    @property
    def ridge_point_flops_per_byte(self) -> float:
        """Arithmetic intensity where the roofline turns from memory- to compute-bound."""
        return self.peak_flops_per_s / self.memory_bw_bytes_per_s \
            if self.memory_bw_bytes_per_s else 0.0


def _num(stats: dict, name: str) -> float:
    value = stats.get(name)
    return float(value) if isinstance(value, (int, float)) and value > 0 else 0.0


def _nvidia_name(major: int, minor: int) -> str:
    """The reference's name of an NVIDIA GPU: its architecture by compute capability (the
    product name, e.g. "NVIDIA H200", is in the run environment's devices)."""
    if major == 7:
        family = "Volta" if minor < 5 else "Turing"
    elif major == 8:
        family = "Ampere" if minor < 9 else "Ada Lovelace"
    else:
        family = {10: "Blackwell", 9: "Hopper", 6: "Pascal", 5: "Maxwell", 3: "Kepler",
                  2: "Fermi"}.get(major)
    return f"Nvidia GPU ({family})" if family else "Nvidia GPU"


# AMD CDNA, per compute unit per cycle: the densest of fp32/fp16 on vector and matrix units
# (XProf's choice), and LDS bytes; by gfx architecture (AMD's CDNA white papers)
_AMD_FLOPS_PER_CU_CYCLE = {"gfx908": 1024, "gfx90a": 1024, "gfx942": 2048, "gfx950": 4096}
_AMD_LDS_BYTES_PER_CU_CYCLE = {"gfx908": 128, "gfx90a": 128, "gfx942": 128, "gfx950": 256}
_AMD_GFX_OF_CAPABILITY = {(9, 4): "gfx942", (9, 5): "gfx950"}


def _amd_gfx(stats: dict, major: int, minor: int) -> str:
    """The gfx architecture of an AMD GPU: its device name when that is one, else from its
    compute capability ("" unknown)."""
    name = str(stats.get("gpu_device_name", "") or "")
    if name.startswith("gfx") and len(name) >= 6 and \
            all(c in "0123456789abcdefABCDEF" for c in name[3:]):
        return name
    return _AMD_GFX_OF_CAPABILITY.get((major, minor), "")


def _tpu_peaks(plane: str, stats: dict) -> tuple[DevicePeaks, str | None]:
    flops = _num(stats, "peak_teraflops_per_second") * 1e12
    hbm = _num(stats, "peak_hbm_bw_gigabytes_per_second") * 1e9
    on_chip = [_num(stats, f"peak_{m}_{d}_bw_gigabytes_per_second") * 1e9
               for m in ("cmem", "vmem") for d in ("rd", "wr")]
    peaks = DevicePeaks(flops, hbm, 0.0, str(stats.get("device_type_string", "TPU")),
                        "plane stats", *on_chip,
                        has_merged_vmem=bool(_num(stats, "has_merged_vmem")))
    return peaks, None if peaks.known else \
        f"{plane}: no peak_teraflops_per_second / peak_hbm_bw_gigabytes_per_second stats"


def _gpu_compute(stats: dict, vendor: str, cores: float, clock_ghz: float, major: int,
                 minor: int) -> tuple[float, float, str]:
    """(peak FLOP/s, shared memory bytes/s, device name) of a GPU from its capabilities."""
    flops = _num(stats, "peak_teraflops_per_second") * 1e12
    per_cycle = cores * clock_ghz * 1e9
    if vendor.lower().startswith("amd"):
        gfx = _amd_gfx(stats, major, minor)
        flops = flops or _AMD_FLOPS_PER_CU_CYCLE.get(gfx, 0) * per_cycle
        shm = _AMD_LDS_BYTES_PER_CU_CYCLE.get(gfx, 0) * per_cycle
        return flops, shm, f"AMD GPU - {gfx}" if gfx else "AMD GPU"
    if flops <= 0 and vendor.lower().startswith("nvidia") and major:
        lower = [k for k in _FLOPS_PER_SM_CYCLE if k <= major * 1000 + minor * 10]
        if lower:
            flops = _FLOPS_PER_SM_CYCLE[max(lower)] * per_cycle
    shm = (64 if 0 < major <= 2 else 256) * per_cycle
    name = _nvidia_name(major, minor)  # the reference names any GPU but AMD's this way
    return flops, shm, name


def peaks_from_plane_stats(plane: str, stats: dict) -> tuple[DevicePeaks, str | None]:
    """(peaks, reason when they are unknown) of one device plane from its stats."""
    if plane.startswith(TPU_PLANE_PREFIX):
        return _tpu_peaks(plane, stats)
    if not plane.startswith(GPU_PLANE_PREFIX):
        return DevicePeaks(device=plane), f"{plane}: no peak numbers for this device"
    clock_ghz = _num(stats, "clock_rate") / 1e6  # kHz
    cores = _num(stats, "core_count")
    hbm = _num(stats, "memory_bandwidth")
    major = int(_num(stats, "compute_cap_major"))
    minor = int(_num(stats, "compute_cap_minor"))
    vendor = str(stats.get("device_vendor", "Nvidia"))
    flops, shm, name = _gpu_compute(stats, vendor, cores, clock_ghz, major, minor)
    shm = _num(stats, "peak_sram_rd_bw_gigabytes_per_second") * 1e9 or shm
    peaks = DevicePeaks(flops, hbm, shm, name, "plane stats")
    if peaks.known:
        return peaks, None
    missing = [s for s, v in (("clock_rate", clock_ghz), ("core_count", cores),
                              ("compute_cap_major", major), ("memory_bandwidth", hbm)) if not v]
    what = ", ".join(missing) or f"an architecture tfprof_nb knows for vendor {vendor}"
    return peaks, (f"{plane}: peak FLOP rate and memory bandwidth unknown (missing plane "
                   f"stats: {what})")


def combine_peaks(found: list[DevicePeaks]) -> DevicePeaks:
    """The peaks of the first device that has them (XProf also takes the first device);
    empty peaks when none has."""
    for p in found:
        if p.known:
            return p
    return found[0] if found else DevicePeaks()


ON_CHIP_MEMORIES = {"CMEM Read": "cmem_read", "CMEM Write": "cmem_write",
                    "VMEM Read": "vmem_read", "VMEM Write": "vmem_write"}


def counted_on_chip(peaks: DevicePeaks) -> dict[str, float]:
    """{memory: bytes/s} of the on-chip memories XProf's roofline counts:
    CMEM where the device has a bandwidth for it, VMEM where it also has merged VMEM."""
    out = {}
    for name, attr in ON_CHIP_MEMORIES.items():
        bandwidth = getattr(peaks, f"{attr}_bw_bytes_per_s")
        if bandwidth > 0 and (attr.startswith("cmem") or peaks.has_merged_vmem):
            out[name] = bandwidth
    return out


def _ratio(values, peak: float):
    return values / peak if peak > 0 else values * 0


def bound_by(normalized_flops, bytes_accessed, time_ps, peaks: DevicePeaks,
             memory_label: str = "HBM", on_chip: dict | None = None):
    """Vectorised roofline verdicts: (FLOP/s, bytes/s, compute utilisation, memory
    utilisation, bound-by label) from normalized FLOPs, (HBM) bytes and time (ps).  The
    resource with the highest utilisation bounds the op ("Compute", ``memory_label``, a TPU
    on-chip memory of ``on_chip`` ({"VMEM Read": bytes, ...}) whose peak is known, or
    "Shm/L1" when the shared-memory peak is known); "Unknown" when no utilisation is
    positive.  Ties go to the resource named first, as in XProf."""
    import numpy as np

    t = np.asarray(time_ps, dtype=float) / 1e12
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.nan_to_num(np.where(t > 0, np.asarray(normalized_flops, float) / t, 0.0))
        bw = np.nan_to_num(np.where(t > 0, np.asarray(bytes_accessed, float) / t, 0.0))
        compute = _ratio(rate, peaks.peak_flops_per_s)
        memory = _ratio(bw, peaks.memory_bw_bytes_per_s)
        candidates = [(compute, "Compute"), (memory, memory_label)]
        for name, attr in ON_CHIP_MEMORIES.items():
            peak = getattr(peaks, f"{attr}_bw_bytes_per_s")
            if on_chip is not None and name in on_chip and peak > 0:
                used = np.nan_to_num(np.where(t > 0, np.asarray(on_chip[name], float) / t, 0))
                candidates.append((used / peak, name))
        candidates.append((_ratio(bw, peaks.shared_memory_bw_bytes_per_s), "Shm/L1"))
    label = np.full(len(t), "Unknown", dtype=object)
    best = np.zeros(len(t))
    for util, name in candidates:
        win = util > best
        label[win], best[win] = name, util[win]
    return rate, bw, compute, memory, label


def user_peaks(peak_flops_per_s, memory_bw_bytes_per_s, device: str = "user",
               source: str = "argument") -> DevicePeaks:
    """Peaks a user gives (both numbers are needed)."""
    if peak_flops_per_s is None or memory_bw_bytes_per_s is None:
        raise ValueError("give both peak_flops_per_s and memory_bw_bytes_per_s")
    return DevicePeaks(float(peak_flops_per_s), float(memory_bw_bytes_per_s), 0.0, device,
                       source)


def _no_user_peaks(parts: dict) -> None:
    """No peaks set by the user (``Profile.set_device_peaks`` sets this input)."""
    return None


def effective_peaks(parts: dict, xla, user_peaks: DevicePeaks | None) -> DevicePeaks:
    """The peaks the XLA tables use: the user's when set, else the profile's first device's
    (``xla.peaks``)."""
    return user_peaks if user_peaks is not None else xla.peaks


ANALYSES = (Analysis("user_peaks", combine=_no_user_peaks),
            Analysis("device_peaks", combine=effective_peaks, needs=("xla", "user_peaks")))
