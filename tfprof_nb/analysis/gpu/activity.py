"""What one host's devices did and when its threads launched it: the input of the GPU-time
analyses (:mod:`.time`).

Device activity is every event on a device plane's stream lines (GPUs: the lines the tracer
recorded, not the profiler's derived ``Steps``/``TensorFlow Ops``/... lines; TPUs: the
``XLA Ops`` line), each of one kind:

* ``COLLECTIVE``: NCCL/RCCL kernels, XLA collectives (all-reduce, all-gather, reduce-scatter,
  all-to-all, collective-permute) and peer-to-peer copies;
* ``COPY``: memory copies and sets (CUPTI's ``MemcpyH2D``/``MemcpyD2H``/``MemcpyD2D``,
  ``Memset``, ROCm's ``__amd_rocclr_copyBuffer``/``fillBuffer`` kernels behind ``hipMemcpy``
  and its older tracer's ``CopyDeviceToDevice``/``CopyHostToDevice``/...;
  on TPUs the ops xprof counts as off duty: infeed, outfeed, host send/recv);
* ``COMPUTE``: every other kernel.

A kernel's launch is the host event with the same ``correlation_id`` (CUPTI's and ROCm's API
events: ``cudaLaunchKernel``, ``hipModuleLaunchKernel``, or TensorFlow's host copy of the
kernel's name).  Host intervals in which the host waits for input (the step table's input
ops: ``IteratorGetNext``, host-to-device transfers, infeed enqueue) or blocks on the device
(``*Synchronize``, blocking copies, ``BlockHostUntilReady``, ``block_until_ready``) are kept as
interval sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..._native.kernels import argsort, code_counts, join_one_on_ids, sparse_lookup
from ...constants import (CORRELATION_ID_KEEP, DEVICE_PLANE_PREFIXES, GPU_PLANE_PREFIX,
                         TPU_PLANE_PREFIX, XLA_MODULES_LINE, XLA_OPS_LINE)
from ..runtime.hostdata.host import HOST_PLANE, HostData
from ..trace.intervals import Intervals, union

__all__ = ["COMPUTE", "COLLECTIVE", "COPY", "NO_LAUNCH", "DeviceActivity", "device_activity",
           "device_busy", "host_input_events", "host_waits", "tpu_module_spans", "stream_names",
           "is_device_plane", "is_collective", "is_copy", "launch_links",
           "duplicate_launches_reason"]

COMPUTE, COLLECTIVE, COPY = 0, 1, 2
NO_LAUNCH = np.iinfo(np.int64).min  # the launch time of activity without a recorded launch
# names are matched lower-cased, by prefix or substring (plain ``str`` methods: fast on the
# long templated kernel names of CUDA programs)
_COLLECTIVE_PREFIX = ("nccl", "rccl")
_COLLECTIVE_PART = ("all-reduce", "allreduce", "all_reduce", "all-gather", "allgather",
                    "all_gather", "reduce-scatter", "reducescatter", "reduce_scatter",
                    "all-to-all", "alltoall", "all_to_all", "collective-permute",
                    "collectivepermute", "collective_permute", "memcpyp2p", "memcpy p2p",
                    "memcpyptop", "memcpypeer")
_COPY_PREFIX = ("memcpy", "memset", "__amd_rocclr_copybuffer", "__amd_rocclr_fillbuffer",
                "cumemcpy", "cumemset", "cudamemcpy", "cudamemset", "hipmemcpy", "hipmemset",
                "copydevice", "copyhost")  # (the last two: ROCm's older tracer, CopyDeviceToDevice)
_SYNC_PART = ("synchronize", "blockhostuntil", "block_until_ready")
_BLOCKING_COPY_PREFIX = ("cumemcpy", "cumemset", "cudamemcpy", "cudamemset", "hipmemcpy",
                         "hipmemset")
_INPUT_HINT_PREFIX = ("iteratorgetnext", "memcpyhto")
# xprof's off-duty XLA categories (TPU duty cycle): the device waits on the host there
_OFF_DUTY = {"infeed", "outfeed", "host send", "host send-done", "host recv",
             "host recv-done", "megacore fusion"}


def is_copy(name: str) -> bool:
    """Whether a device event's name is a copy or a set of memory (``COPY``), ROCm's copy
    and fill kernels included."""
    return name.lower().startswith(_COPY_PREFIX)


def is_collective(name: str) -> bool:
    """Whether a kernel or XLA op name (or HLO category) is a collective."""
    low = name.lower()
    return low.startswith(_COLLECTIVE_PREFIX) or any(p in low for p in _COLLECTIVE_PART)


def _sync_flags(low: list[str]) -> np.ndarray:
    """bool per lower-cased name: the host blocks on the device there."""
    return np.array([("synchronize" in n or "blockhostuntil" in n or "block_until_ready" in n
                      or (n.startswith(_BLOCKING_COPY_PREFIX) and "async" not in n))
                     for n in low], dtype=bool).reshape(-1)


def _input_hints(low: list[str]) -> np.ndarray:
    """bool per lower-cased name: may be an input op (checked by the step classifier)."""
    return np.array([n.startswith(_INPUT_HINT_PREFIX) or "infeedenqueue" in n for n in low],
                    dtype=bool).reshape(-1)


def is_device_plane(names: pd.Series) -> np.ndarray:
    """bool per plane name: a GPU or TPU device plane."""
    return names.str.startswith(tuple(p + ":" for p in DEVICE_PLANE_PREFIXES)).to_numpy()


@dataclass
class DeviceActivity:
    """One host's device activity, one entry per event, sorted by (device, begin).

    Times are ps relative to the host's origin; ``launch``/``launch_end`` are the linked host
    launch call's start and end (NO_LAUNCH: none recorded)."""

    rows: np.ndarray  # int32 event row
    device: np.ndarray  # int32 plane index
    stream: np.ndarray  # int32 line key
    begin: np.ndarray  # int64
    end: np.ndarray  # int64
    kind: np.ndarray  # int8: COMPUTE, COLLECTIVE, COPY
    launch: np.ndarray  # int64
    launch_end: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, mask: np.ndarray) -> "DeviceActivity":
        """The entries ``mask`` selects (this object itself when it selects all)."""
        if mask.all():
            return self
        return DeviceActivity(*(getattr(self, f)[mask] for f in _FIELDS))

    def of_device(self, plane: int) -> "DeviceActivity":
        """The entries of one device: views of a slice (entries are sorted by device)."""
        lo, hi = np.searchsorted(self.device, [plane, plane + 1])
        return DeviceActivity(*(getattr(self, f)[lo:hi] for f in _FIELDS))

    def intervals(self, mask: np.ndarray) -> Intervals:
        """The union of the entries ``mask`` selects."""
        return union(self.begin[mask], self.end[mask])


_FIELDS = ("rows", "device", "stream", "begin", "end", "kind", "launch", "launch_end")


def _kinds_of(names) -> np.ndarray:
    """Activity kind of each name."""
    kind = np.full(len(names), COMPUTE, np.int8)
    kind[np.array([is_copy(n) for n in names], bool).reshape(-1)] = COPY
    kind[np.fromiter((is_collective(n) for n in names), bool, len(names))] = COLLECTIVE
    return kind


def _metadata_text(hd: HostData, name: str) -> np.ndarray:
    """Object array per event-metadata row: the text stat ``name`` of the row (None)."""
    sp = hd.space
    st = sp.stats
    out = np.full(len(sp.event_metadata_names), None, dtype=object)
    if name not in st.names:
        return out
    md = st.owned_by(1)  # (the metadata's stats: a few rows)
    rows = md[(st.name_code[md] == st.names.index(name)) & (st.kind[md] >= 4)]
    out[st.owner[rows]] = [st.values[int(c)] for c in st.raw_value[rows].tolist()]
    return out


def _tpu_kinds(hd: HostData, rows: np.ndarray) -> np.ndarray:
    """Kinds of TPU ``XLA Ops`` events from their metadata's ``hlo_category``."""
    category = _metadata_text(hd, "hlo_category")
    md = hd.space.events.metadata_row[rows].astype(np.int64)
    cat = np.where(md >= 0, category[np.maximum(md, 0)], None) if len(category) else \
        np.full(len(rows), None, dtype=object)
    cats = pd.Series(cat, dtype=object).fillna("")
    kind = np.full(len(rows), COMPUTE, np.int8)
    kind[cats.isin(_OFF_DUTY).to_numpy()] = COPY
    kind[np.fromiter((is_collective(c) for c in cats), bool, len(cats))] = COLLECTIVE
    return kind


def _activity_rows(hd: HostData) -> tuple[np.ndarray, np.ndarray]:
    """(rows, kinds) of device activity: GPU stream lines (not their counter samples), TPU
    ``XLA Ops`` lines."""
    sp = hd.space
    planes = pd.Series(sp.plane_names, dtype=object)
    gpu = planes.str.startswith(GPU_PLANE_PREFIX + ":").to_numpy()
    tpu = planes.str.startswith(TPU_PLANE_PREFIX + ":").to_numpy()
    if not gpu.any() and not tpu.any():  # a CPU host: no pass over its events
        return np.empty(0, np.int32), np.empty(0, np.int8)
    line_names = pd.Series(sp.line_names, dtype=object)
    tpu_line = tpu[sp.line_plane] & (line_names == XLA_OPS_LINE).to_numpy() \
        if len(line_names) else np.zeros(0, bool)
    on_gpu = hd.line_mask(gpu[sp.line_plane]) & ~hd.derived_line_mask() & \
        ~hd.counter_line_mask() if len(sp.line_plane) else np.zeros(len(hd), bool)
    on_tpu = hd.line_mask(tpu_line) if len(tpu_line) else np.zeros(len(hd), bool)
    rows = np.flatnonzero(on_gpu | on_tpu).astype(np.int32)
    name_code = hd.name_code[rows]
    used = np.flatnonzero(code_counts(name_code, len(hd.names)))  # (no sort)
    kind_of_code = np.zeros(len(hd.names), np.int8)
    kind_of_code[used] = _kinds_of(hd.names[used])
    kinds = kind_of_code[name_code]
    tpu_rows = on_tpu[rows]
    if tpu_rows.any():
        kinds[tpu_rows] = _tpu_kinds(hd, rows[tpu_rows])
    return rows, kinds


def _launch_pairs(hd: HostData, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(host row, position in ``rows``, duplicates) of the host launch of each device row
    that has one: host and device events joined on ``correlation_id``, one launch per device
    row however often the ids repeat (the last launch of an id: CORRELATION_ID_KEEP);
    ``duplicates``: the launches left out because another one has their id."""
    none = (np.empty(0, np.int64), np.empty(0, np.int64), 0)
    corr = hd.int_stat("correlation_id")
    if not len(corr) or not len(rows):
        return none
    on_host = hd.plane_is(HOST_PLANE)[corr.rows]
    dev_val, dev_has = corr.lookup(rows)
    pos = np.flatnonzero(dev_has)
    h, d, dups = join_one_on_ids(corr.rows[on_host], corr.values[on_host],
                                 pos.astype(np.int32), dev_val[pos], keep=CORRELATION_ID_KEEP)
    return h.astype(np.int64), d.astype(np.int64), dups


def duplicate_launches_reason(host: str, duplicates: int) -> list[str]:
    """The sentence saying that ``duplicates`` launches repeat another launch's correlation
    id (none when 0)."""
    if not duplicates:
        return []
    return [f"{host}: {duplicates:,} kernel launches carry a correlation id another launch "
            f"has too: each kernel is linked to the {CORRELATION_ID_KEEP} launch of its id, as "
            f"xprof groups it; those {duplicates:,} others are linked to no kernel"]


def _launches(hd: HostData, rows: np.ndarray, links=None) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) ps of the host launch of each device row (NO_LAUNCH where none is);
    ``links``: :func:`launch_links` of ``hd`` when already found."""
    start = np.full(len(rows), NO_LAUNCH, np.int64)
    end = np.full(len(rows), NO_LAUNCH, np.int64)
    if links is None:
        h, at, _ = _launch_pairs(hd, rows)
    else:  # the device rows of the links are increasing and unique
        h, hit = sparse_lookup(links[1], links[0], rows)
        at = np.flatnonzero(hit)
        h = h[at]
    start[at] = hd.begin[h]
    end[at] = hd.begin[h] + hd.duration[h]
    return start, end


def launch_links(hd: HostData) -> tuple[np.ndarray, np.ndarray, int]:
    """(launch row, device row, duplicates) of every device activity event of ``hd`` whose
    host launch is recorded (the pairs :func:`device_activity` times), by device row;
    ``duplicates``: launches left out for sharing another launch's correlation id."""
    if not len(hd.int_stat("correlation_id")):
        return np.empty(0, np.int64), np.empty(0, np.int64), 0
    rows, _ = _activity_rows(hd)
    h, at, dups = _launch_pairs(hd, rows)
    return h, rows[at].astype(np.int64), dups


def device_busy(hd: HostData) -> Intervals | None:
    """When any of the host's devices runs anything (a kernel, an op, a copy): the union of
    every device activity event, ps on the host's axis; None without device activity."""
    rows, _ = _activity_rows(hd)
    if not len(rows):
        return None
    return union(hd.begin[rows], hd.begin[rows] + hd.duration[rows])


def device_activity(hd: HostData, links=None) -> DeviceActivity:
    """Every device activity event of ``hd`` with its kind and launch (see module doc);
    ``links``: (launch rows, device rows) of :func:`launch_links`, when already found."""
    rows, kinds = _activity_rows(hd)
    sp = hd.space
    device = sp.line_plane[sp.events.line[rows]].astype(np.int32)
    begin = hd.begin[rows]
    order = argsort(device, begin)  # by device, then start (stable)
    rows, kinds, device, begin = rows[order], kinds[order], device[order], begin[order]
    launch, launch_end = _launches(hd, rows, links)
    return DeviceActivity(rows, device, hd.line[rows].astype(np.int32), begin,
                          begin + hd.duration[rows], kinds, launch, launch_end)


def _input_ops(names: np.ndarray, low: list[str]) -> np.ndarray:
    """bool per name (``low``: lower-cased): an input op of the step table (the host waits
    for input, or copies to the device)."""
    from ..steps.breakdown import HOST_TO_DEVICE, HOST_WAIT_INPUT, classify_host

    hint = _input_hints(low)
    is_input = np.zeros(len(names), bool)
    if hint.any():
        kind = classify_host(pd.Series(names[hint], dtype=object))
        is_input[hint] = (kind == HOST_WAIT_INPUT) | (kind == HOST_TO_DEVICE)
    return is_input


def host_waits(hd: HostData) -> dict[str, Intervals]:
    """Interval sets of the host plane: ``input`` (the host waits for input: the step
    table's input ops) and ``sync`` (the host blocks on the device)."""
    on_host = hd.plane_is(HOST_PLANE)
    codes = np.unique(hd.name_code[on_host])
    names = hd.names[codes]
    low = [n.lower() for n in names]
    out = {}
    for key, by_name in (("input", _input_ops(names, low)), ("sync", _sync_flags(low))):
        table = np.zeros(len(hd.names), bool)
        table[codes[by_name]] = True
        rows = np.flatnonzero(on_host & table[hd.name_code])
        out[key] = union(hd.begin[rows], hd.begin[rows] + hd.duration[rows])
    return out


def host_input_events(hd: HostData, shift_ps: int = 0) -> int:
    """How many events of the host plane are input ops (what :func:`host_waits` counts as the
    host waiting for input: tf.data's ``IteratorGetNext``, host-to-device copies, infeed):
    from the host's table of distinct names, then the events of those names on the host's
    lines only (no pass over every event: 0.5 s on a 36 M-event host before)."""
    names = hd.names
    is_input = _input_ops(names, [str(n).lower() for n in names])
    if not is_input.any():
        return 0
    host_lines = hd.plane_lines(lambda s: (s == HOST_PLANE).to_numpy())
    return len(hd.rows_on_lines(host_lines, is_input))


def tpu_module_spans(hd: HostData) -> dict[int, tuple[int, int]]:
    """{TPU plane: (first start, last end) ps of its ``XLA Modules`` events}: xprof's duty
    cycle counts a TPU's time from its first to its last op or module."""
    sp = hd.space
    out: dict[int, tuple[int, int]] = {}
    for i, name in enumerate(sp.line_names):
        plane = int(sp.line_plane[i])
        if name != XLA_MODULES_LINE or not sp.plane_names[plane].startswith(TPU_PLANE_PREFIX + ":"):
            continue
        rows = np.flatnonzero(sp.events.line == i)
        if len(rows):
            lo, hi = int(hd.begin[rows].min()), int((hd.begin[rows] + hd.duration[rows]).max())
            old = out.get(plane, (lo, hi))
            out[plane] = (min(lo, old[0]), max(hi, old[1]))
    return out


def stream_names(hd: HostData) -> np.ndarray:
    """Line name of each line key (object array)."""
    keys, first = np.unique(hd.line_key, return_index=True)
    names = np.empty(len(keys), dtype=object)
    names[keys] = np.asarray(hd.space.line_names, dtype=object)[first]
    return names
