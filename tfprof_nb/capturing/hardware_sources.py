"""What the hardware sampler reads: the host (``psutil``), NVIDIA GPUs (NVML through
``nvidia-ml-py``) and TPUs (``libtpu``'s monitoring SDK), each imported only when present.

A source has ``series`` (one ``(counter, device, unit, source)`` per value it reads),
``read()`` (the values now, NaN where a reading failed, None for a series not read at this
tick: NVML's field counters are read every ``FIELD_PERIOD_S``) and ``notes`` (what it could
not sample, in words, said once).  A reading that fails when probed is left out of ``series``;
one that starts failing later reads NaN.
"""

from __future__ import annotations

import json
import os
import time

__all__ = ["FIELD_PERIOD_S", "HostSource", "NvmlSource", "ProcHostSource", "TpuSource", "available_sources"]

_NAN = float("nan")
# NVML's field counters (PCIe, NVLink bytes) cost ~180 us of CPU a read on an H200 (the rest
# of a GPU's series ~40 us together): read at most this often, as rates over the interval
FIELD_PERIOD_S = 0.5
# cumulative NVML field counters read as rates (NVLink's count KiB, PCIe's bytes)
_RATE_FIELDS = (("nvlink_tx_bytes_per_s", "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX"),
                ("nvlink_rx_bytes_per_s", "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX"),
                ("pcie_tx_bytes_per_s", "NVML_FI_DEV_PCIE_COUNT_TX_BYTES"),
                ("pcie_rx_bytes_per_s", "NVML_FI_DEV_PCIE_COUNT_RX_BYTES"))


class HostSource:
    """Machine CPU use (% of all cores), this process's CPU use (% of all cores), its
    resident memory and the memory available, from ``psutil``."""

    def __init__(self):
        import psutil

        self._psutil = psutil
        self._proc = psutil.Process()
        self._cores = psutil.cpu_count() or 1
        psutil.cpu_percent(None)  # the first call only starts the interval
        self._proc.cpu_percent(None)
        self.series = [("cpu_util_pct", "host", "%", "psutil"),
                       ("process_cpu_pct", "host", "%", "psutil"),
                       ("process_rss_bytes", "host", "bytes", "psutil"),
                       ("memory_available_bytes", "host", "bytes", "psutil")]
        self.notes: list[str] = []

    def read(self) -> list[float]:
        ps, proc = self._psutil, self._proc
        try:
            with proc.oneshot():
                own = proc.cpu_percent(None) / self._cores
                rss = float(proc.memory_info().rss)
            return [ps.cpu_percent(None), own, rss, float(ps.virtual_memory().available)]
        except (OSError, ps.Error):
            return [_NAN] * 4


class ProcHostSource:
    """:class:`HostSource`'s four series read from Linux's ``/proc`` directly, through files
    opened once (``/proc/stat``, ``/proc/self/statm``, ``/proc/meminfo``) and this process's
    CPU clock: the same numbers at about a tenth of ``psutil``'s cost per sample (23 against
    180-220 us of CPU on the project's VM; ``benchmarks/bench_sampler.py``).  The machine's
    CPU use counts iowait as idle, as ``psutil`` does; the process's is its CPU time (all
    threads) over the wall time since the last sample, as a share of all cores."""

    def __init__(self):
        self._files = {name: os.open(f"/proc/{name}", os.O_RDONLY)
                       for name in ("stat", "self/statm", "meminfo")}
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._cores = os.cpu_count() or 1
        self.series = [(c, "host", u, "procfs") for c, u in (
            ("cpu_util_pct", "%"), ("process_cpu_pct", "%"), ("process_rss_bytes", "bytes"),
            ("memory_available_bytes", "bytes"))]
        self.notes: list[str] = []
        self._last = (*self._cpu_jiffies(), time.process_time_ns(), time.monotonic_ns())
        self.read()  # every reading works here, or the source is not used

    def _read(self, name: str, size: int) -> bytes:
        return os.pread(self._files[name], size, 0)

    def _cpu_jiffies(self) -> tuple[int, int]:
        """(all, idle + iowait) jiffies of the machine, from ``/proc/stat``'s first line."""
        first = self._read("stat", 512).split(b"\n", 1)[0].split()
        user, nice, system, idle, iowait, irq, softirq, steal = (int(v) for v in first[1:9])
        return user + nice + system + idle + iowait + irq + softirq + steal, idle + iowait

    def read(self) -> list[float | None]:
        """The four values; the machine's CPU use is None (no sample) while no tick of the
        kernel's CPU accounting (10 ms a core) has passed since the last one, whose counts stay
        the base until one has (two reads close together: a sampler late then on time)."""
        total, idle = self._cpu_jiffies()
        own, now = time.process_time_ns(), time.monotonic_ns()
        total0, idle0, own0, now0 = self._last
        cpu = None
        if total > total0:
            cpu = 100.0 * (1.0 - (idle - idle0) / (total - total0))
            total0, idle0 = total, idle
        proc = 100.0 * (own - own0) / (now - now0) / self._cores if now > now0 else None
        self._last = (total0, idle0, own, now)
        rss = int(self._read("self/statm", 256).split()[1]) * self._page
        mem = self._read("meminfo", 8192)
        at = mem.index(b"MemAvailable:")
        available = int(mem[at + 13: mem.index(b"\n", at)].split()[0]) * 1024  # kB
        return [cpu, proc, float(rss), float(available)]

    def close(self) -> None:
        for fd in self._files.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self._files = {}


def _visible_gpus(count: int) -> list[tuple[int, str]]:
    """(NVML index, device name in the profile) of the GPUs this process sees:
    ``CUDA_VISIBLE_DEVICES`` (integer indices) renumbers them from 0 as CUDA does."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None or not visible.strip():
        return [(i, f"GPU:{i}") for i in range(count)]
    try:
        order = [int(v) for v in visible.split(",") if v.strip()]
    except ValueError:  # UUIDs or MIG names: keep NVML's order
        return [(i, f"GPU:{i}") for i in range(count)]
    return [(nv, f"GPU:{k}") for k, nv in enumerate(order) if 0 <= nv < count]


class NvmlSource:
    """Per NVIDIA GPU: utilisation (NVML's: the share of its last sample window with a kernel
    resident; memory: with device memory read or written), memory used and total, power,
    SM and memory clocks, temperature, clock-event (throttle) reasons as a bit mask, NVLink
    and PCIe bytes per second where the driver counts them (read every ``FIELD_PERIOD_S``,
    as the rate since the last read), uncorrected ECC errors and XID errors (counted since
    the sampler started)."""

    def __init__(self):
        import pynvml

        self._nv = nv = pynvml
        nv.nvmlInit()
        self.notes: list[str] = []
        self._readers: list = []  # (handle, device, reader) per kept series
        self.series: list = []
        self._xid_count: dict = {}
        self._events = None
        self._last: dict = {}  # cumulative counters' last (time, value), for rates
        self._fields_at = -float("inf")  # when the field counters were last read
        gpus = _visible_gpus(nv.nvmlDeviceGetCount())
        self.devices = []
        for index, device in gpus:
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            self.devices.append({"device": device, "nvml_index": index,
                                 "name": _text(nv.nvmlDeviceGetName(handle)),
                                 "pci_bus_id": _text(nv.nvmlDeviceGetPciInfo(handle).busId)})
            for counter, unit, reader in self._candidates():
                self._probe(handle, device, counter, unit, reader)
            self._watch_xids(handle, device)
        if self._events is not None:
            self.series += [("xid_errors", d, "count", "nvml") for _, d in gpus]

    def _candidates(self) -> list:
        nv = self._nv
        throttle = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
            nv.nvmlDeviceGetCurrentClocksThrottleReasons
        out = [
            ("gpu_util_pct", "%", lambda h: nv.nvmlDeviceGetUtilizationRates(h).gpu),
            ("memory_util_pct", "%", lambda h: nv.nvmlDeviceGetUtilizationRates(h).memory),
            ("memory_used_bytes", "bytes", lambda h: nv.nvmlDeviceGetMemoryInfo(h).used),
            ("memory_total_bytes", "bytes", lambda h: nv.nvmlDeviceGetMemoryInfo(h).total),
            ("power_w", "W", lambda h: nv.nvmlDeviceGetPowerUsage(h) / 1e3),
            ("sm_clock_mhz", "MHz", lambda h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            ("memory_clock_mhz", "MHz",
             lambda h: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            ("temperature_c", "C",
             lambda h: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
            ("throttle_reasons", "mask", throttle),
            ("ecc_uncorrected_errors", "count", lambda h: nv.nvmlDeviceGetTotalEccErrors(
                h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC)),
        ]
        for counter, field_name in _RATE_FIELDS:
            field_id = getattr(nv, field_name, None)
            if field_id is not None:
                kib = "NVLINK" in field_name  # NVLink throughput fields count KiB
                out.append((counter, "bytes/s", self._rate_reader(counter, field_id, kib)))
        return out

    def _rate_reader(self, counter: str, field_id: int, kib: bool):
        """A reader of a cumulative field counter as bytes per second since the last read."""
        def read(handle):
            value = self._field(handle, field_id) * (1024 if kib else 1)
            now, key = time.monotonic(), (id(handle), counter)
            last = self._last.get(key)
            self._last[key] = (now, value)
            if last is None or now <= last[0] or value < last[1]:
                return _NAN
            return (value - last[1]) / (now - last[0])
        read.field = True  # read every FIELD_PERIOD_S only
        return read

    def _field(self, handle, field_id: int) -> float:
        nv = self._nv
        (fv,) = nv.nvmlDeviceGetFieldValues(handle, [field_id])
        if getattr(fv, "nvmlReturn", 0) != 0:
            raise nv.NVMLError(fv.nvmlReturn)
        value = fv.value
        return float(getattr(value, {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal",
                                     4: "sllVal", 5: "siVal"}.get(fv.valueType, "ullVal")))

    def _probe(self, handle, device: str, counter: str, unit: str, reader) -> None:
        try:
            reader(handle)
        except Exception as exc:  # NVMLError_NotSupported and kin: the driver lacks it
            note = f"NVML gives no {counter} ({type(exc).__name__})"
            if note not in self.notes:
                self.notes.append(note)
            return
        self._readers.append((handle, reader))
        self.series.append((counter, device, unit, "nvml"))

    def _watch_xids(self, handle, device: str) -> None:
        nv = self._nv
        try:
            if self._events is None:
                self._events = nv.nvmlEventSetCreate()
            nv.nvmlDeviceRegisterEvents(handle, nv.nvmlEventTypeXidCriticalError, self._events)
            self._xid_count[device] = 0
        except Exception as exc:
            self.notes.append(f"NVML cannot watch XID errors ({type(exc).__name__})")
            self._events = None

    def _drain_xids(self) -> None:
        nv = self._nv
        for _ in range(64):  # the events since the last sample, never a wait
            try:
                data = nv.nvmlEventSetWait_v2(self._events, 0)
            except Exception:
                return
            index = nv.nvmlDeviceGetIndex(data.device)
            for d in self.devices:
                if d["nvml_index"] == index:
                    self._xid_count[d["device"]] = self._xid_count.get(d["device"], 0) + 1

    def read(self) -> list:
        now = time.monotonic()
        fields = now - self._fields_at >= FIELD_PERIOD_S
        if fields:
            self._fields_at = now
        values: list = []
        for handle, reader in self._readers:
            if not fields and getattr(reader, "field", False):
                values.append(None)  # not read at this tick
                continue
            try:
                values.append(float(reader(handle)))
            except Exception:
                values.append(_NAN)
        if self._events is not None:
            self._drain_xids()
            values += [float(self._xid_count.get(d["device"], 0)) for d in self.devices]
        return values

    def close(self) -> None:
        try:
            if self._events is not None:
                self._nv.nvmlEventSetFree(self._events)
            self._nv.nvmlShutdown()
        except Exception:
            pass


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class TpuSource:
    """Per TPU chip, ``libtpu``'s monitoring SDK metrics: duty cycle (%), HBM used and
    total (bytes), TensorCore utilisation (%).  Not tested on this project's machines (no
    TPU): a metric the SDK does not list is left out and said."""

    _METRICS = (("duty_cycle_pct", "duty_cycle_pct", "%"),
                ("tensorcore_util", "tensorcore_util_pct", "%"),
                ("hbm_capacity_usage", "hbm_used_bytes", "bytes"),
                ("hbm_capacity_total", "hbm_total_bytes", "bytes"))

    def __init__(self):
        from libtpu.sdk import tpumonitoring

        self._mon = tpumonitoring
        supported = set(tpumonitoring.list_supported_metrics())
        self.notes = [f"libtpu gives no {m}" for m, _, _ in self._METRICS if m not in supported]
        self._kept = [(m, c, u) for m, c, u in self._METRICS if m in supported]
        chips = max((len(self._values(m)) for m, _, _ in self._kept), default=0)
        self.series = [(c, f"TPU:{k}", u, "libtpu") for m, c, u in self._kept
                       for k in range(chips)]
        self._chips = chips

    def _values(self, metric: str) -> list[float]:
        out = []
        for item in self._mon.get_metric(metric).data():
            try:
                out.append(float(json.loads(item) if isinstance(item, str) else item))
            except (TypeError, ValueError):
                out.append(_NAN)
        return out

    def read(self) -> list[float]:
        values = []
        for metric, _, _ in self._kept:
            try:
                got = self._values(metric)
            except Exception:
                got = []
            values += (got + [_NAN] * self._chips)[: self._chips]
        return values


def available_sources() -> tuple[list, list[str]]:
    """(the sources this machine has, what could not be sampled and why).  The host: from
    ``/proc`` on Linux (:class:`ProcHostSource`), else ``psutil``.  NVML is not tried on a
    Linux machine without NVIDIA's driver, and a missing ``nvidia-ml-py`` is said only where
    the driver is present."""
    host = _proc_host()
    sources = [host] if host is not None else []
    driver = _has_nvidia_driver()
    wanted = [(TpuSource, None)]
    if driver or not os.path.isdir("/proc/driver"):  # Linux without the driver: no GPU
        wanted.insert(0, (NvmlSource, "an NVIDIA driver is present but nvidia-ml-py is not "
                                      "installed: GPUs are not sampled "
                                      '(pip install "tfprof-nb[gpu]")' if driver else None))
    if host is None:
        wanted.insert(0, (HostSource, "psutil is not installed: host CPU and memory are not "
                                      "sampled (pip install psutil)"))
    notes: list[str] = []
    for cls, missing in wanted:
        try:
            source = cls()
        except ImportError:
            if missing:
                notes.append(missing)
            continue
        except Exception as exc:  # no driver, no device: said once, never an error
            notes.append(f"{cls.__name__[:-6]}: {type(exc).__name__}: {exc}"[:200])
            continue
        if source.series:
            sources.append(source)
        notes += source.notes
    return sources, notes


def _proc_host() -> "ProcHostSource | None":
    """The ``/proc`` host source where ``/proc`` has every file it reads (Linux), else None."""
    try:
        return ProcHostSource()
    except (OSError, ValueError, IndexError):
        return None


def _has_nvidia_driver() -> bool:
    return os.path.exists("/proc/driver/nvidia/version")
