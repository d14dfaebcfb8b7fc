"""tfprof_nb's compiled kernels: C code loaded with ctypes.

The XSpace walker and the analyses' hot loops are plain C (``*.c`` here).  Installed wheels
carry the compiled library; a source checkout builds it on first use with the system C
compiler (about two seconds, once per source version) into this directory, or into
``$TFPROF_NB_NATIVE_DIR`` (default ``~/.cache/tfprof_nb/native``) when this directory is
read-only.

ctypes releases the GIL while a kernel runs, so hosts can be analysed in parallel threads.
Use :func:`lib` to get the loaded library with every function's signature declared.
"""

from __future__ import annotations

import ctypes
import os
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .build import SOURCE_DIR, build_library, library_name

__all__ = ["lib", "ptr", "release_free_memory", "CancelToken", "cancel_scope", "current_token",
           "cancel_requested"]

_LOCK = threading.Lock()
_LIB: ctypes.CDLL | None = None

I64, I32, I8, U8, F64 = ctypes.c_int64, ctypes.c_int32, ctypes.c_int8, ctypes.c_uint8, \
    ctypes.c_double
P = ctypes.c_void_p

# name: (restype, argtypes); every array is passed as a raw pointer (see ptr())
_SIGNATURES = {
    "tfp_cancel_scope": (P, [P]),
    "tfp_cancel_set": (I64, [P]),
    "tfp_cancel_get": (I64, [P]),
    "tfp_cancel_probe": (I64, [I64]),
    "tfp_set_populate_min": (I64, [I64]),
    "tfp_space_open": (P, [P, I64, I64, I64, I64, P, P]),
    "tfp_space_tables": (None, [P, P, P, P, P, P, P]),
    "tfp_space_count": (None, [P, I64, P]),
    "tfp_space_events": (None, [P, I64, P, P, I64, P, I64, P, I32, I64, P, P, P, P, P, I64, P,
                                P, I64, P, I64, I32, P]),
    "tfp_space_finish": (None, [P, P, P, P, P, P, P]),
    "tfp_space_close": (None, [P]),
    "tfp_intern_text": (I64, [P, I64, I64, P, P, P, P, P, P, P, I64]),
    "tfp_copy_spans": (I64, [P, I64, P, P, I64, P]),
    "tfp_resolve_refs": (None, [P, I64, P, P, I64, I64, I64]),
    "tfp_set_pass_block": (I64, [I64]),
    "tfp_set_intern_window": (I64, [I64]),
    "tfp_add_gathered_i64": (I64, [P, P, I64, P, P, P, I64]),
    "tfp_argsort_i64": (I64, [P, I64, P, P]),
    "tfp_argsort_i32": (I64, [P, I64, P, P]),
    "tfp_sort_pairs_gather": (I64, [P, P, P, I64, P, P]),
    "tfp_select_rows": (I64, [P, I64, P, I64, I32, I8, P, I64]),
    "tfp_is_nesting_order": (I64, [P, P, P, I64]),
    "tfp_nest_strict": (I64, [P, I64, P, I64, I64, P, P, P, P, P, P, P, P, I64]),
    "tfp_nest_loose": (None, [P, I64, P, P, P, P, P, P, P]),
    "tfp_nest_query": (I64, [P, I64, P, P, P, P, P, P, I64, P, P, I64, P, P, I64, P, I64]),
    "tfp_csr": (I64, [P, P, I64, I64, P, P]),
    "tfp_spread_groups": (I64, [P, I64, P, I64, I64, P, P, P, P, P, P, P, I64, P, P, I64, P,
                                P]),
    "tfp_threadpool_regions": (I64, [I64, P, P, P, P, P, P, P, P]),
    "tfp_regions_from_rows": (I64, [P, P, P, I64, P, I64, P, P, P, P, P, P]),
    "tfp_step_breakdown": (I64, [I64, P, P, P, P, I64, P, P, I64, P, P, P, P, I64]),
    "tfp_nonzero_i32": (I64, [P, I64, P]),
    "tfp_rows_where_i8": (I64, [P, I64, I8, I64, P, I64]),
    "tfp_span": (None, [P, P, I64, P]),
    "tfp_iv_combine": (I64, [P, P, I64, P, P, I64, I64, P, P]),
    "tfp_iv_union": (I64, [P, P, I64, P, P, P]),
    "tfp_stats_at": (I64, [P, I64, P, P, P, P, I64, P, P, I64, P, P, I64, P, P, P]),
    "tfp_stats_seek": (I64, [P, I64, P, P, P, P, I64, P, P, I64, P, I64, P, I64, P, P]),
    "tfp_int_stats": (I64, [P, I64, P, P, P, P, I64, P, I64, P, P, P, P, P, I64]),
    "tfp_code_lookup_u8": (I64, [P, I64, I64, P, P]),
    "tfp_code_gather_i32": (I64, [P, I64, I64, P, I64, I32, P]),
    "tfp_take_rows": (I64, [P, I64, I64, P, I64, P]),
    "tfp_mark_values_at": (I64, [P, I64, P, I64, P, I64]),
    "tfp_code_rows": (I64, [P, I64, I64, P, P, P, I64]),
    "tfp_code_rows_multi": (I64, [P, I64, I64, P, P, P, P]),
    "tfp_stat_name_counts": (I64, [P, I64, P, I64, P]),
    "tfp_code_counts": (I64, [P, I64, I64, P]),
    "tfp_line_name_rows": (I64, [P, P, I64, I64, P, P, P, I64]),
    "tfp_sparse_lookup": (I64, [P, P, I64, I64, P, I64, P, P]),
    "tfp_join_keys": (I64, [P, P, P, I64, P, P, P, I64, I64, I64, P]),
    "tfp_context_links": (I64, [P, I64, P, P, P, P, I64, I32, I32, I32, I32, I64, I64, P, P, P,
                                I64, I64, I64, I64, P]),
    "tfp_join_take": (None, [P, P, P]),
    "tfp_keys_in": (I64, [P, P, I64, P, P, I64, P]),
    "tfp_join_free": (None, [P]),
    "tfp_join_duplicates": (I64, [P]),
    "tfp_is_sorted_by": (I64, [P, P, I64]),
    "tfp_op_stack_walk": (I64, [P, I64, P, P, P, P, P, P, P, P, P, P, P, P]),
    "tfp_op_walk_rows": (I64, [P, I64, P, P, P, P, P, P, P, P, P, P, P, P]),
    "tfp_host_step_rows": (I64, [P, P, I64, I64, P, P, P, P, P, P, P, I64, P, P, P, P]),
    "tfp_inherit_from_allocations": (I64, [I64, P, P, P]),
    "tfp_active_at_peak": (I64, [I64, P, P, P, P, P, I64, I64, P]),
    "tfp_tl_window": (I64, [P, P, P, P, I64, F64, F64, F64, F64, I64, P, P, P, P, P]),
    "tfp_tl_rows_in": (I64, [P, P, P, P, I64, F64, F64, I64, P]),
    "tfp_tl_rows": (None, [P, I64, P, P, P, P, P, P, P]),
}


def _cache_dir() -> Path:
    """Where the library is built when the package's directory is read-only:
    ``$TFPROF_NB_NATIVE_DIR``, else ``$XDG_CACHE_HOME/tfprof_nb/native`` (``~/.cache``).
    (``TFPROF_NB_CACHE`` is the URL cache's on/off switch, not a folder.)"""
    chosen = os.environ.get("TFPROF_NB_NATIVE_DIR")
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "tfprof_nb" / "native"


def _find_or_build() -> Path:
    name = library_name()
    for directory in (SOURCE_DIR, _cache_dir()):
        if (directory / name).is_file():
            return directory / name
    if os.access(SOURCE_DIR, os.W_OK):
        return build_library(SOURCE_DIR)
    return build_library(_cache_dir())


def lib() -> ctypes.CDLL:
    """The native library, built first if needed, with its functions' signatures set."""
    global _LIB
    if _LIB is None:
        with _LOCK:
            if _LIB is None:
                handle = ctypes.CDLL(str(_find_or_build()))
                for fname, (restype, argtypes) in _SIGNATURES.items():
                    fn = getattr(handle, fname)
                    fn.restype = restype
                    fn.argtypes = argtypes
                _LIB = handle
    return _LIB


class _Token(ctypes.Structure):  # common.h's TfpCancel
    _fields_ = [("flag", ctypes.c_int64), ("parent", ctypes.c_void_p)]


class CancelToken:
    """The cancel switch of one run of work (see :mod:`tfprof_nb._interrupt`): kernels called
    on a thread working under it (:func:`cancel_scope`), and on the threads those kernels
    start, stop within about a millisecond once it is cancelled, and their wrappers raise
    :class:`~tfprof_nb.errors.Cancelled`.  A token made inside another run (``parent``) is
    cancelled with it.  Nothing else sees it: other runs, and kernels called on a thread
    under no token, never stop.  Once cancelled, a token stays cancelled."""

    __slots__ = ("_cell", "parent")

    def __init__(self, parent: CancelToken | None = None):
        self._cell = _Token(0, None if parent is None else ctypes.addressof(parent._cell))
        self.parent = parent  # (kept alive as long as this token)

    @property
    def address(self) -> int:
        return ctypes.addressof(self._cell)

    def cancel(self) -> bool:
        """Cancel this run's kernels; returns whether it was cancelled already."""
        return bool(lib().tfp_cancel_set(self.address))

    @property
    def cancelled(self) -> bool:
        """Whether this token or a parent of it is cancelled."""
        return bool(lib().tfp_cancel_get(self.address))


_SCOPE = threading.local()


@contextmanager
def cancel_scope(token: CancelToken | None):
    """Work on this thread under ``token`` (None: under none) while the block runs."""
    before = getattr(_SCOPE, "token", None)
    _SCOPE.token = token
    lib().tfp_cancel_scope(None if token is None else token.address)
    try:
        yield token
    finally:
        lib().tfp_cancel_scope(None if before is None else before.address)
        _SCOPE.token = before


def current_token() -> CancelToken | None:
    """The token this thread works under (:func:`cancel_scope`), or None."""
    return getattr(_SCOPE, "token", None)


def cancel_requested() -> bool:
    """Whether the run this thread works for was cancelled (False under no token)."""
    token = current_token()
    return token is not None and token.cancelled


_TRIM = []


def release_free_memory() -> None:
    """Give memory freed by the analyses back to the OS now (glibc's ``malloc_trim``; a
    no-op elsewhere).  Large temporaries freed in the middle of the heap otherwise stay
    resident until the heap's top is freed."""
    if not _TRIM:
        try:
            _TRIM.append(ctypes.CDLL("libc.so.6").malloc_trim)
        except (OSError, AttributeError):
            _TRIM.append(None)
    if _TRIM[0] is not None:
        _TRIM[0](0)


def ptr(array: np.ndarray, dtype=None) -> int:
    """Address of a C-contiguous array's data (checked: dtype, contiguity, writeable views
    are the caller's business)."""
    if dtype is not None and array.dtype != np.dtype(dtype):
        raise TypeError(f"native kernel expects {np.dtype(dtype)}, got {array.dtype}")
    if not array.flags.c_contiguous:
        raise ValueError("native kernel expects a C-contiguous array")
    return array.ctypes.data
