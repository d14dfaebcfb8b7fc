"""tfprof_nb's compiled kernels: C code loaded with ctypes.

The XSpace walker and the analyses' hot loops are plain C (``*.c`` here).  Installed wheels
carry the compiled library (found by the wheel's record, ``prebuilt.json``, with no compiler
needed); a source checkout builds it on first use with the system C
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

from .build import SOURCE_DIR, build_library, library_name, prebuilt_library
from .layout import signatures

__all__ = ["lib", "ptr", "release_free_memory", "CancelToken", "cancel_scope", "current_token",
           "cancel_requested"]

_LOCK = threading.Lock()
_LIB: ctypes.CDLL | None = None



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
    """The library for the current sources: ``TFPROF_NB_SANITIZE=1`` asks for the checking
    build (AddressSanitizer + UndefinedBehaviorSanitizer; the process must preload libasan,
    see :func:`tfprof_nb._native.build.sanitizer_env`), always kept in the cache folder."""
    sanitized = os.environ.get("TFPROF_NB_SANITIZE", "") not in ("", "0")
    name = library_name(sanitized)
    places = (_cache_dir(),) if sanitized else (SOURCE_DIR, _cache_dir())
    for directory in places:
        if (directory / name).is_file():
            return directory / name
    prebuilt = None if sanitized else prebuilt_library(SOURCE_DIR)
    if prebuilt is not None:  # a wheel's library, built for its platform
        return prebuilt
    if not sanitized and os.access(SOURCE_DIR, os.W_OK):
        return build_library(SOURCE_DIR)
    return build_library(_cache_dir(), sanitized)


def lib() -> ctypes.CDLL:
    """The native library, built first if needed, with its functions' signatures set."""
    global _LIB
    if _LIB is None:
        with _LOCK:
            if _LIB is None:
                handle = ctypes.CDLL(str(_find_or_build()))
                for fname, (restype, argtypes) in signatures().items():
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
