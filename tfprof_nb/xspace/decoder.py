"""Decode a serialized XSpace into numpy columns (see :class:`XSpaceData`)."""

from __future__ import annotations

import errno
import mmap
import os
import sys

import numpy as np

from .. import _native as native
from .._native.layout import COLUMNS, COUNTERS, ERR, KINDS, MESSAGES, SMALL_TABLES, TABLES
from ..errors import (Cancelled, ProfileFileNotFoundError, ProfileFormatError,
                      TruncatedProfileError)
from ._sniff import describe_known_format, describe_non_xspace
from .model import EventTable, StatTable, XSpaceData
from .selection import Selection
from .strings import decode_spans
from .truncation import describe_truncation

__all__ = ["decode_and_close", "decode_xspace", "read_local_xspace"]

# Stat names whose kind numbers are public: StatTable.kind uses these codes.
KIND_NAMES = dict(enumerate(KINDS))


def read_local_xspace(path, threads: int | None = None, progress: np.ndarray | None = None,
                      select: Selection | None = None) -> XSpaceData:
    """Read and decode one local ``.xplane.pb`` file (mapped, not copied; ``threads``,
    ``progress`` and ``select`` as for :func:`decode_xspace`).  A file that changes while it
    is read (a capture rewriting it, a sync) raises ProfileFormatError "changed while it was
    read", and one whose reads fail (a network file system) OSError: the mapping's reads are
    guarded (``_native/guard.h``), never a signal."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ProfileFileNotFoundError(path, f"{path}: no such file")
    if os.path.isdir(path):
        raise ProfileFormatError(path, "is a directory, expected an .xplane.pb file")
    try:
        with open(path, "rb") as f:
            opened = os.fstat(f.fileno())
            try:  # map the file: the page cache is read in place, nothing is copied
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):  # empty files and special files cannot be mapped
                data = f.read()
    except OSError as exc:
        raise ProfileFormatError(path, f"cannot be read ({exc.strerror or exc})") from exc
    try:
        return decode_and_close(data, path, threads, progress, select)
    except ProfileFormatError as exc:
        changed = _change_since(path, opened)
        if changed and "changed while it was read" not in exc.problem:
            raise ProfileFormatError(path, f"changed while it was read ({changed}): read it "
                                     "again once it is written") from exc
        raise


def _change_since(path, opened: os.stat_result) -> str | None:
    """How the file at ``path`` differs from when it was ``opened`` (None: it does not)."""
    try:
        now = os.stat(path)
    except OSError as exc:
        return f"it is gone ({exc.strerror or exc})"
    if now.st_size != opened.st_size:
        return f"its size went from {opened.st_size} to {now.st_size} bytes"
    if now.st_mtime_ns != opened.st_mtime_ns or now.st_ino != opened.st_ino:
        return "it was written again"
    return None


def _unreadable(path, n_bytes: int) -> Exception:
    """The error of a read of ``path``'s mapping that faulted (guard.h): the file shrank, or
    its file system failed the read."""
    try:
        size = os.stat(path).st_size if path is not None else None
    except OSError as exc:
        return ProfileFormatError(path, f"changed while it was read (it is gone: "
                                  f"{exc.strerror or exc}): read it again once it is written")
    if size is not None and size < n_bytes:
        return ProfileFormatError(path, f"changed while it was read (truncated from {n_bytes} "
                                  f"to {size} bytes): read it again once it is written")
    return OSError(errno.EIO, f"{path}: a read failed while it was decoded (an I/O error of "
                   "its file system): read it again")


def decode_and_close(data, path, threads: int | None = None,
                     progress: np.ndarray | None = None,
                     select: Selection | None = None) -> XSpaceData:
    """:func:`decode_xspace` of ``data``, then close it when it is a ``mmap``."""
    try:
        return decode_xspace(data, path=path, threads=threads, progress=progress,
                             select=select)
    finally:
        if isinstance(data, mmap.mmap):
            try:
                data.close()
            except BufferError:  # an error's traceback still holds a view: closed when freed
                pass


# the walker's tables and counters (tfprof_nb/_native/walk.c; layout in _native/layout.py)
(T_P, T_L, T_M, T_SM, T_CH, T_X, T_EV, T_EX, T_ST, T_TX) = range(len(TABLES))
C_CHUNKS, C_ERR, C_ERR_POS, C_STAT_NO_META, C_REFS = (len(TABLES) + i
                                                       for i in range(len(COUNTERS)))
Pc, Lc, Mc, SMc, Xc, EXc = (COLUMNS[t] for t in ("P", "L", "M", "SM", "X", "EX"))
KIND_NONE, KIND_DOUBLE, KIND_UINT64, KIND_INT64, KIND_STR, KIND_BYTES, KIND_REF = \
    range(len(KINDS))
ERR_NO_MEMORY, ERR_CANCELLED, ERR_CHANGED, ERR_UNREADABLE = \
    ERR.NO_MEMORY, ERR.CANCELLED, ERR.CHANGED, ERR.UNREADABLE
ERROR_MESSAGES = MESSAGES  # (layout.py: the one list of the codes and their meanings)
# the most rows of each table of one host (events, stats, lines, metadata): the 32-bit row
# columns address them (tests lower it to reach the error with a small file)
ROW_LIMIT = 2**31 - 1
CHUNK_BYTES = 8 << 20  # events are walked in chunks of about this many bytes, side by side
# ... or fewer: a file's chunks are at least CHUNKS_PER_THREAD a thread (never under
# MIN_CHUNK_BYTES), so the threads finish together (on 2 threads a 35 MB file's 9 chunks
# of 8 MB left one thread walking alone the last 12 % of the time; 39 of 1 MB: 0.5 %)
CHUNKS_PER_THREAD = 16
MIN_CHUNK_BYTES = 1 << 20
_COUNTED_NAMES = 1 << 20  # distinct event names past which the decoder does not count them


def default_threads() -> int:
    """Threads a decode uses by default: one per core."""
    return max(1, os.cpu_count() or 1)


def chunk_bytes(size: int, threads: int) -> int:
    """The walker's chunk size for a file of ``size`` bytes on ``threads`` threads."""
    even = max(MIN_CHUNK_BYTES, size // (max(1, threads) * CHUNKS_PER_THREAD))
    return min(CHUNK_BYTES, even)


def _table(codes: np.ndarray) -> np.ndarray:
    return codes if len(codes) else np.zeros(1, np.int32)


class _Walk:
    """The walker's handle over one buffer (see walk.c): phase 1 on creation, then
    :meth:`events` and :meth:`stats`; :meth:`close` frees it."""

    def __init__(self, buf: np.ndarray, path, release: bool, threads: int,
                 progress: np.ndarray | None, select: Selection | None = None):
        self.buf, self.path = buf, path
        self.head = _head(buf, path)
        self.info = np.zeros(len(TABLES) + len(COUNTERS), np.int64)
        self.progress = progress
        self.row_limit = ROW_LIMIT
        self.h = native.lib().tfp_space_open(
            buf.ctypes.data, buf.size, chunk_bytes(buf.size, threads), int(release), threads,
            self.row_limit,
            None if progress is None else progress.ctypes.data, self.info.ctypes.data)
        if not self.h:
            raise MemoryError(f"{path}: out of memory while decoding")
        try:
            self.check()
            self._frame(threads, select)
        except BaseException:
            self.close()
            raise

    def _frame(self, threads: int, select: Selection | None) -> None:
        """Frame the lines (every event, or those ``select`` keeps); ``select.check`` sees
        the events kept, those in the file and the kept events' stats (counted: a pass the
        walk needs anyway where it cannot reserve the stat columns) before any column is
        made."""
        arrays = None if select is None else select.arrays(self.n(T_L))
        if select is not None and arrays is None:
            raise ProfileFormatError(self.path, "changed while it was read (its lines differ "
                                     "from the scan's): read it again once it is written")
        keep, lo, hi = arrays or (None, None, None)
        native.lib().tfp_space_frame(self.h, threads, *(None if a is None else a.ctypes.data
                                                        for a in (keep, lo, hi)),
                                     self.info.ctypes.data)
        self.check()
        if select is not None and select.check is not None:
            lines = self.tables()["L"]
            native.lib().tfp_space_count(self.h, threads, self.info.ctypes.data)
            self.check()
            select.check(self.n(T_EV), int(lines[:, Lc.events].sum()), self.n(T_ST))

    def n(self, table: int) -> int:
        return int(self.info[table])

    def check(self) -> None:
        code = int(self.info[C_ERR])
        if code == ERR_CANCELLED:
            raise Cancelled(f"decoding {self.path} was interrupted")
        if code == ERR_NO_MEMORY:  # at a field or not, never a sign of a corrupt file
            raise MemoryError(f"{self.path}: {ERROR_MESSAGES[ERR_NO_MEMORY]}")
        if code == ERR.TOO_MANY_ROWS:  # a valid file this decoder cannot hold
            raise ProfileFormatError(self.path, self._too_many())
        if code == ERR.TOO_LONG:
            raise ProfileFormatError(self.path, ERROR_MESSAGES[code],
                                     offset=int(self.info[C_ERR_POS]))
        if code == ERR_UNREADABLE:
            raise _unreadable(self.path, self.buf.size)
        if code:
            _raise_wire_error(self.head, self.path, code, int(self.info[C_ERR_POS]), self.buf)

    def _too_many(self) -> str:
        """The row-limit error with the counts that pass it (those known when it was hit)."""
        limit = self.row_limit
        counts = {"events": self.n(T_EV), "stats": self.n(T_ST), "lines": self.n(T_L),
                  "event metadata": self.n(T_M), "stat metadata": self.n(T_SM)}
        over = [f"{v:,} {k}" for k, v in counts.items() if v > limit]
        return ERROR_MESSAGES[ERR.TOO_MANY_ROWS] + (f": {', '.join(over)}" if over else "") + \
            "; profile fewer steps, or split the capture by host"

    def tables(self) -> dict:
        out = {t: np.zeros((self.n(TABLES.index(t)), len(cols)), np.int64)
               for t, cols in SMALL_TABLES.items() if t != "EX"}
        native.lib().tfp_space_tables(self.h, *(out[t].ctypes.data
                                                for t in ("P", "L", "M", "SM", "CH", "X")))
        return out

    def walk(self, threads: int, ev: "_Names", meta_dtype, st: "_Names",
             name_dtype) -> tuple[dict, dict]:
        """Walk events and stats into new columns: ({event columns}, {stat columns})."""
        n = self.n(T_EV)
        events = dict(line=np.empty(n, np.int32), metadata_row=np.empty(n, meta_dtype),
                      name_code=np.empty(n, ev.dtype(True)), start_ps=np.empty(n, np.int64),
                      duration_ps=np.empty(n, np.int64))
        stats = _StatColumns.reserve(self.n(T_ST), name_dtype) \
            if self.buf.size >= RESERVE_MIN_BYTES and threads <= RESERVE_MAX_THREADS \
            else None  # (T_ST: the bound)
        if stats is None:  # a small file, or no reserving here: the stats are counted first
            native.lib().tfp_space_count(self.h, threads, self.info.ctypes.data)
            self.check()
            stats = _StatColumns.exact(self.n(T_ST), name_dtype)
        e, s = events, stats.arrays
        try:
            native.lib().tfp_space_events(
                self.h, threads, e["line"].ctypes.data, e["metadata_row"].ctypes.data,
                e["metadata_row"].itemsize, e["name_code"].ctypes.data,
                e["name_code"].itemsize, _table(ev.codes).ctypes.data, ev.missing, ev.n_codes,
                e["start_ps"].ctypes.data, e["duration_ps"].ctypes.data,
                s["owner"].ctypes.data, s["owner_kind"].ctypes.data, s["name_code"].ctypes.data,
                s["name_code"].itemsize, s["kind"].ctypes.data, s["raw_value"].ctypes.data,
                stats.rows, _table(st.codes).ctypes.data, len(st.codes), st.missing,
                self.info.ctypes.data)
            del e, s
            self.check()
            return events, stats.trimmed(self.n(T_ST))
        finally:
            stats.close()

    def finish(self, n_codes: int, n_lines: int, n_event_codes: int) -> tuple:
        """(text stat rows, their lengths, event extras) in file order, the number of event
        stats of each of ``n_codes`` stat name codes, the events of each of ``n_lines``
        lines and of each of ``n_event_codes`` event name codes (None when not counted)."""
        nt = self.n(T_TX)
        tx_row, tx_len = np.empty(nt, np.int32), np.empty(nt, np.int32)
        extras = np.empty((self.n(T_EX), len(SMALL_TABLES["EX"])), np.int64)
        counts = np.zeros(n_codes + 1, np.int64)
        line_counts = np.zeros(max(n_lines, 1), np.int64)
        ev_counts = np.full(max(n_event_codes, 1), -1, np.int64)
        native.lib().tfp_space_finish(self.h, tx_row.ctypes.data, tx_len.ctypes.data,
                                      extras.ctypes.data, counts.ctypes.data,
                                      line_counts.ctypes.data,
                                      ev_counts.ctypes.data if n_event_codes else None)
        counted = n_event_codes > 0 and bool((ev_counts >= 0).all())
        return (tx_row, tx_len, extras, counts, line_counts[:n_lines],
                ev_counts if counted else None)

    def close(self) -> None:
        if self.h:
            native.lib().tfp_space_close(self.h)
            self.h = None


_STAT_DTYPES = {"owner": np.int32, "owner_kind": np.int8, "kind": np.int8,
                "raw_value": np.int64}
# Stat columns are reserved to the walker's bound (no count of the stats before the walk) on
# Linux, where a mapping can reserve address space without committing memory, for files of
# RESERVE_MIN_BYTES or more walked on at most RESERVE_MAX_THREADS threads; elsewhere, for
# smaller files (where counting costs little, and the stages of a reserved walk would add a
# tenth to the peak), on more threads, or when reserving fails, the stats are counted first.
# (A reserved walk stages the stats of the chunks walked ahead of the first one not yet done,
# a stage per chunk: on 16 threads 20-30 stages, 16 MB each, put a 422 MB GPU host's decoding
# peak at 1.2-1.35 GB against 0.9 GB counted first; on 2 threads counting first peaked higher.)
RESERVE_STATS = sys.platform.startswith("linux")
RESERVE_MIN_BYTES = 256 << 20
RESERVE_MAX_THREADS = 4
_MAP_NORESERVE = 0x4000  # <sys/mman.h> on Linux (not exported by Python's mmap module)
_HUGE_MIN = 4 << 20  # columns from this size on ask for huge pages (as numpy's arrays do)


def _stat_dtypes(name_dtype) -> dict:
    """{column: dtype} of the stat columns the walker writes."""
    return {**_STAT_DTYPES, "name_code": name_dtype}


class _StatColumns:
    """The walk's stat columns, of ``rows`` rows: numpy arrays (``exact``), or anonymous
    mappings that reserve address space only, their pages committed as the walker writes
    them (``reserved``).  :meth:`trimmed` gives their first rows as arrays (mappings shrunk
    to them)."""

    def __init__(self, rows: int, name_dtype, maps: dict | None):
        self.rows = int(rows)
        self.dtypes = _stat_dtypes(name_dtype)
        self.reserved = maps
        if maps is None:
            self.arrays = {k: np.empty(self.rows, t) for k, t in self.dtypes.items()}
        else:
            self.arrays = {k: np.frombuffer(m, self.dtypes[k]) for k, m in maps.items()}

    @classmethod
    def exact(cls, rows: int, name_dtype) -> "_StatColumns":
        return cls(rows, name_dtype, None)

    @classmethod
    def reserve(cls, rows: int, name_dtype) -> "_StatColumns | None":
        """Columns reserving ``rows`` rows, or None where that cannot be done here."""
        if not RESERVE_STATS or rows <= 0:
            return None
        maps = {}
        try:
            for k, t in _stat_dtypes(name_dtype).items():
                size = int(rows) * np.dtype(t).itemsize
                m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                              | _MAP_NORESERVE)
                maps[k] = m
                if size >= _HUGE_MIN and hasattr(mmap, "MADV_HUGEPAGE"):
                    try:
                        m.madvise(mmap.MADV_HUGEPAGE)
                    except OSError:
                        pass
        except (OSError, ValueError, OverflowError):
            for m in maps.values():
                m.close()
            return None
        return cls(rows, name_dtype, maps)

    def trimmed(self, n: int) -> dict:
        """The columns' first ``n`` rows (``n`` <= rows)."""
        if self.reserved is None:
            return {k: a if len(a) == n else a[:n].copy() for k, a in self.arrays.items()}
        self.arrays = None  # (no view may stay on a mapping that shrinks)
        out = {}
        for k, m in self.reserved.items():
            t = self.dtypes[k]
            size = n * np.dtype(t).itemsize
            if size == 0:
                out[k] = np.empty(0, t)
                continue
            try:  # hand the pages past the rows back, leaving the rows where they are
                m.resize(size)
            except (OSError, ValueError, SystemError, BufferError):
                pass
            out[k] = np.frombuffer(m, t, count=n)
        self.reserved = None
        return out

    def close(self) -> None:
        """Drop the columns (after :meth:`trimmed`, the arrays it gave keep theirs)."""
        self.arrays = None
        if self.reserved is not None:
            for m in self.reserved.values():
                try:
                    m.close()
                except BufferError:  # a view is still held: freed with it
                    pass
            self.reserved = None


_OVERRUNS = (ERR.TRUNCATED_VARINT, ERR.LENGTH_OVERRUN, ERR.FIXED_OVERRUN)


def _raise_wire_error(head: np.ndarray, path, code: int, offset: int,
                      buf: np.ndarray | None = None):
    """Raise the ProfileFormatError of the walker's error ``code`` at ``offset``: a
    TruncatedProfileError saying where the data ends when ``buf`` (the data) is an XSpace cut
    short."""
    problem = ERROR_MESSAGES.get(code, f"decoding failed (code {code})")
    guess = describe_non_xspace(head)
    if code in _OVERRUNS and not guess and buf is not None:
        _raise_if_truncated(buf, path, offset)
    if code == ERR_CHANGED:
        pass  # the bytes were fine when framed
    elif guess:
        problem = f"not an XSpace profile ({guess}); {problem}"
    else:
        problem = f"corrupt XSpace protobuf: {problem}"
    raise ProfileFormatError(path, problem, offset=offset if offset >= 0 else None)


def _raise_if_truncated(buf: np.ndarray, path, offset: int) -> None:
    """Raise TruncatedProfileError saying where ``buf`` ends when it is an XSpace cut short
    (a record running past the data, everything before it well-formed); ``offset``: where
    the walker stopped."""
    found = describe_truncation(lambda off, n: _gathered(buf, path, [off], [n])[0], buf.size)
    if found is not None:
        raise TruncatedProfileError(path, found.problem(), offset if offset >= 0 else None,
                                    size=found.size, missing=found.missing,
                                    inside=found.inside)


def _gathered(buf: np.ndarray, path, offs, lens) -> tuple[bytes, np.ndarray]:
    """The spans buf[offs, offs + lens) copied one after another (through the fault guard of
    guard.h: Python reads no file mapping itself, where a truncated file would end the
    process), and where each starts in the copy."""
    offs = np.ascontiguousarray(offs, np.int64)
    lens = np.ascontiguousarray(lens, np.int64)
    starts = np.zeros(len(lens), np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    out = bytearray(int(lens.sum()))
    if len(lens) and native.lib().tfp_copy_spans(
            buf.ctypes.data, buf.size, offs.ctypes.data, lens.ctypes.data, len(lens),
            np.frombuffer(out, np.uint8).ctypes.data) != 0:
        raise _unreadable(path, buf.size)
    return bytes(out), starts  # (bytes: sliced and decoded faster than a bytearray or view)


def _strings(buf: np.ndarray, path, offs, lens) -> list[str]:
    """:func:`decode_spans` of buf's spans (read through :func:`_gathered`)."""
    copy, starts = _gathered(buf, path, offs, lens)
    return decode_spans(copy, starts, np.asarray(lens))


def _head(buf: np.ndarray, path) -> np.ndarray:
    """The first 64 bytes (or fewer) of ``buf``, copied (to tell what a file looks like)."""
    n = min(64, buf.size)
    return np.frombuffer(_gathered(buf, path, [0], [n])[0], np.uint8)


def _intern_text(buf: np.ndarray, raw, path, tx_row: np.ndarray, tx_len: np.ndarray,
                 kind: np.ndarray, value: np.ndarray) -> list:
    """Replace the buffer offsets of str/bytes stat values by codes into the returned table
    of distinct values (``bytes`` for bytes values, else ``str``); the file's pages are
    handed back as the values are read when ``raw`` is a read-only file mapping."""
    n = len(tx_row)
    if n == 0:
        return []
    rep_off = np.empty(n, np.int64)
    rep_len = np.empty(n, np.int32)
    rep_kind = np.empty(n, np.int8)
    k = native.lib().tfp_intern_text(
        buf.ctypes.data, buf.size, n, tx_row.ctypes.data, tx_len.ctypes.data, kind.ctypes.data,
        value.ctypes.data, rep_off.ctypes.data, rep_len.ctypes.data, rep_kind.ctypes.data,
        int(_pages_can_go(raw)))
    if k == ERR_UNREADABLE:
        raise _unreadable(path, buf.size)
    if k < 0:
        raise MemoryError("out of memory while decoding stat values")
    copy, starts = _gathered(buf, path, rep_off[:k], rep_len[:k])
    kinds = rep_kind[:k]
    if copy.isascii() and not (kinds == KIND_BYTES).any():  # (decoded once, then sliced)
        return decode_spans(copy, starts, rep_len[:k])
    values = []
    for off, length, kind in zip(starts.tolist(), rep_len[:k].tolist(), kinds.tolist()):
        chunk = copy[off:off + length]
        values.append(chunk if kind == KIND_BYTES else chunk.decode("utf-8", "replace"))
    return values


def code_dtype(n_names: int):
    """The narrowest unsigned type of codes into ``n_names`` names (int32 past 65,536):
    names per code column cost 1 or 2 bytes an event or stat instead of 4."""
    return np.uint8 if n_names <= 2**8 else np.uint16 if n_names <= 2**16 else np.int32


def row_dtype(n_rows: int):
    """The narrowest signed type of rows into ``n_rows`` rows, -1 included."""
    return np.int8 if n_rows < 2**7 else np.int16 if n_rows < 2**15 else np.int32


class _Names:
    """Codes of metadata rows' names into a table of distinct names in first-seen order;
    metadata that is missing reads as the name "" (added to the table once a row needs it)."""

    def __init__(self, names: list[str]):
        table: dict[str, int] = {}
        self.codes = np.fromiter((table.setdefault(s, len(table)) for s in names),
                                 dtype=np.int32, count=len(names))
        self.missing = table.get("", len(table))
        self.table = list(table)
        self._has_empty = "" in table
        # events are counted per name code by the decoder when the codes are not too many
        # (each decoding thread holds a count per code)
        self.n_codes = len(table) + 1 if len(table) < _COUNTED_NAMES else 0

    def dtype(self, maybe_missing: bool):
        """The narrowest code type the names (with "" if it may be added) fit."""
        return code_dtype(len(self.table) + (maybe_missing and not self._has_empty))

    def names(self, any_missing: bool) -> list[str]:
        return self.table + ([""] if any_missing and not self._has_empty else [])


def decode_xspace(data, path=None, threads: int | None = None,
                  progress: np.ndarray | None = None,
                  select: Selection | None = None) -> XSpaceData:
    """Decode serialized XSpace bytes (or a read-only ``mmap``).  ``path`` is only used in
    error messages; ``threads`` (default: one per core) walk the events side by side;
    ``progress`` (int64 array: phase, bytes done, bytes total) is updated as it goes;
    ``select`` keeps only some events (see :mod:`.selection`): the others get no row."""
    raw = data if isinstance(data, (bytes, mmap.mmap)) else bytes(data)
    buf = np.frombuffer(raw, dtype=np.uint8)
    if buf.size == 0:
        raise ProfileFormatError(path, "is empty (0 bytes), expected an XSpace profile")
    guess = describe_known_format(_head(buf, path))
    if guess:
        raise ProfileFormatError(path, f"not an XSpace profile ({guess})")
    threads = default_threads() if threads is None else max(1, int(threads))
    w = _walked(buf, raw, path, threads, progress, select)
    space = _space(raw, buf, path, w, _stat_table(buf, raw, path, w, threads))
    if select is not None and select.keep is not None:
        space.selection = select
    # offsets become starts relative to the space's origin, in place
    events = space.events
    events.line_start_ps = space.line_start_ps()
    if len(events):
        span = np.empty(3, np.int64)
        rc = native.lib().tfp_add_gathered_i64(
            events.start_ps.ctypes.data, events.line.ctypes.data, len(events),
            events.line_start_ps.ctypes.data, events.duration_ps.ctypes.data,
            span.ctypes.data, threads)
        if rc == ERR.TIME_RANGE:
            raise ProfileFormatError(path, _time_range(space, int(span[0])))
        if rc != 0:
            raise MemoryError(f"{path}: out of memory making the events' starts")
        events.span_ps = (int(span[0]), int(span[1]))
        events.in_nesting_order = bool(span[2])
    return space


def _time_range(space: XSpaceData, row: int) -> str:
    """The time-range error for event ``row`` (tfp_add_gathered_i64 left its offset in
    ``start_ps``)."""
    ev = space.events
    line = int(ev.line[row])
    plane = int(space.line_plane[line])
    start_ns = int(space.line_timestamp_ns[line])
    return (f"{ERROR_MESSAGES[ERR.TIME_RANGE]}: event {row} of line {space.line_names[line]!r}"
            f" on plane {space.plane_names[plane]!r} has offset_ps "
            f"{int(ev.start_ps[row]):,} and duration_ps {int(ev.duration_ps[row]):,} on a line "
            f"whose timestamp_ns is {start_ns:,} (the profile starts at "
            f"{space.origin_ns():,} ns)")


def _pages_can_go(raw) -> bool:
    """Whether walked pages of ``raw`` may be handed back to the kernel: only those of a
    read-only file mapping, which the kernel reads again from the file (a private or
    writable mapping would lose its changes)."""
    if not isinstance(raw, mmap.mmap):
        return False
    with memoryview(raw) as view:
        return view.readonly


def _walked(buf: np.ndarray, raw, path, threads: int, progress,
            select: Selection | None = None) -> dict:
    """Everything the walker gives: the small tables, the names of the metadata, the event
    and stat columns, the text stats and the extras."""
    walk = _Walk(buf, path, _pages_can_go(raw), threads, progress, select)
    try:
        w = walk.tables()
        w["selected"] = select is not None
        if w["P"].shape[0] == 0:
            guess = describe_non_xspace(walk.head)
            raise ProfileFormatError(
                path, "contains no XPlane: not an XSpace profile "
                f"({guess or 'wrong file type or corrupt'})")
        M, SM = w["M"], w["SM"]
        w["em_names"] = _strings(buf, path, M[:, Mc.name_off], M[:, Mc.name_len])
        w["sm_names"] = _strings(buf, path, SM[:, SMc.name_off], SM[:, SMc.name_len])
        ev_names, st_names = _Names(w["em_names"]), _Names(w["sm_names"])
        ev_cols, cols = walk.walk(threads, ev_names, row_dtype(len(M)), st_names,
                                  st_names.dtype(True))
        tx_row, tx_len, w["EX"], name_counts, line_counts, ev_counts = walk.finish(
            len(st_names.codes), len(w["L"]), ev_names.n_codes)
        no_meta, w["refs"] = walk.n(C_STAT_NO_META) > 0, walk.n(C_REFS)
    finally:
        walk.close()
    w["event_names"] = ev_names.names(bool((w["EX"][:, EXc.what] == 1).any()))
    w["stat_names"] = st_names.names(no_meta)
    for c, names in ((ev_cols, w["event_names"]), (cols, w["stat_names"])):
        if c["name_code"].dtype != code_dtype(len(names)):  # "" was not needed after all
            c["name_code"] = c["name_code"].astype(code_dtype(len(names)))
    w.update(ev_cols=ev_cols, st_cols=cols, tx=(tx_row, tx_len),
             name_counts=name_counts[:len(w["stat_names"])], line_counts=line_counts,
             event_name_counts=None if ev_counts is None
             else ev_counts[:len(w["event_names"])].copy())
    return w


def _stat_table(buf: np.ndarray, raw, path, w: dict, threads: int) -> StatTable:
    """The stats, their text values interned and references resolved (on ``threads``
    threads)."""
    cols = w["st_cols"]
    values = _intern_text(buf, raw, path, *w.pop("tx"), cols["kind"], cols["raw_value"])
    if w["refs"]:
        # references resolve to stat-metadata names, appended to the value table ("" when
        # the referenced metadata is missing)
        ref_names = _Names(w["sm_names"] + [""])
        native.lib().tfp_resolve_refs(cols["kind"].ctypes.data, len(cols["kind"]),
                                      cols["raw_value"].ctypes.data, ref_names.codes.ctypes.data,
                                      len(values), int(ref_names.codes[-1]), threads)
        values = values + ref_names.table
    return StatTable(**cols, names=w["stat_names"], values=values,
                     event_counts=w["name_counts"])


def _space(raw, buf: np.ndarray, path, w: dict, stats: StatTable) -> XSpaceData:
    """The XSpaceData of the walked tables (events' starts still offsets)."""
    P, L, M, SM, CH, X = (w[t] for t in ("P", "L", "M", "SM", "CH", "X"))
    line_plane = L[:, Lc.plane].astype(np.int32)
    events = EventTable(**w["ev_cols"], names=w["event_names"], line_plane=line_plane,
                        metadata_key=M[:, Mc.key].copy(), extras=w["EX"],
                        line_start_ps=np.zeros(len(L), np.int64),
                        name_counts=w["event_name_counts"], line_counts=w["line_counts"])
    space_strings = _strings(buf, path, X[:, Xc.off], X[:, Xc.len])
    meta_bytes, meta_starts = _gathered(buf, path, M[:, Mc.meta_off], M[:, Mc.meta_len])
    field = X[:, Xc.field]
    return XSpaceData(
        path=None if path is None else str(path),
        n_bytes=int(buf.size),
        hostnames=[s for s, f in zip(space_strings, field) if f == 4],
        errors=[s for s, f in zip(space_strings, field) if f == 2],
        warnings=[s for s, f in zip(space_strings, field) if f == 3],
        plane_ids=P[:, Pc.id].copy(),
        plane_names=_strings(buf, path, P[:, Pc.name_off], P[:, Pc.name_len]),
        line_plane=line_plane,
        line_ids=L[:, Lc.id].copy(),
        line_display_ids=L[:, Lc.display_id].copy(),
        line_names=_strings(buf, path, L[:, Lc.name_off], L[:, Lc.name_len]),
        line_display_names=_strings(buf, path, L[:, Lc.dname_off], L[:, Lc.dname_len]),
        line_timestamp_ns=L[:, Lc.timestamp_ns].copy(),
        line_duration_ps=L[:, Lc.duration_ps].copy(),
        event_metadata_plane=M[:, Mc.plane].astype(np.int32),
        event_metadata_key=events.metadata_key,
        event_metadata_id=M[:, Mc.id].copy(),
        event_metadata_names=w["em_names"],
        event_metadata_display_names=_strings(buf, path, M[:, Mc.dname_off],
                                              M[:, Mc.dname_len]),
        event_metadata_bytes=[meta_bytes[o:o + n] for o, n in
                              zip(meta_starts.tolist(), M[:, Mc.meta_len].tolist())],
        event_metadata_children=CH.copy(),
        stat_metadata_plane=SM[:, SMc.plane].astype(np.int32),
        stat_metadata_key=SM[:, SMc.key].copy(),
        stat_metadata_id=SM[:, SMc.id].copy(),
        stat_metadata_names=w["sm_names"],
        stat_metadata_descriptions=_strings(buf, path, SM[:, SMc.desc_off],
                                            SM[:, SMc.desc_len]),
        events=events,
        stats=stats,
        line_file_events=L[:, Lc.events].copy(),
        line_file_span_ps=L[:, [Lc.first_ps, Lc.last_ps]].copy() if w["selected"] else None,
    )
