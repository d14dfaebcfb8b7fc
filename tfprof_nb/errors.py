"""Exceptions raised by tfprof_nb."""

from __future__ import annotations

import errno

__all__ = ["AnalysisWarning", "Cancelled", "CaptureError", "CaptureWarning", "HostAnalysisError", "LoadWarning",
           "ObjectStoreError", "PerformanceCheckError", "ProfileFormatError",
           "ProfileFileNotFoundError", "TfprofError", "TruncatedProfileError"]


class TfprofError(Exception):
    """Base of the errors tfprof_nb raises itself (each also derives from the built-in error
    it refines: ValueError, OSError, ...).  ``hint`` says what to do about it, in one
    sentence; in IPython they show as their message and hint, the traceback folded away
    (:mod:`tfprof_nb._error_display`)."""

    hint: str | None = None


class ProfileFormatError(TfprofError, ValueError):
    """A profile file cannot be read: wrong type, truncated or corrupt.

    The message names the file and what is wrong with it; ``path`` and ``offset`` (the byte
    offset where decoding stopped, when known) are available as attributes.
    """

    hint = ("tp.load reads the *.xplane.pb files TensorFlow's and JAX's profilers write: "
            "check that the file is one, and copy or capture it again if it was cut short")

    def __init__(self, path, problem: str, offset: int | None = None,
                 hint: str | None = None):
        self.path = None if path is None else str(path)
        self.problem = problem
        self.offset = offset
        if hint is not None:
            self.hint = hint
        where = f" at byte {offset}" if offset is not None else ""
        name = self.path if self.path is not None else "<bytes>"
        super().__init__(f"{name}: {problem}{where}")

    def __reduce__(self):  # travels back from Dask workers intact
        return type(self), (self.path, self.problem, self.offset, self.__dict__.get("hint"))


class TruncatedProfileError(ProfileFormatError):
    """A profile file ends before its data does (an interrupted copy or capture).

    ``size`` is where the data stops (the file's size), ``missing`` the least number of bytes
    it lacks, ``inside`` the records the end falls in, outermost first, each (what, ordinal
    or None, name or None) (see :mod:`tfprof_nb.xspace.truncation`); ``offset`` is where
    decoding stopped, as for any ProfileFormatError (the start of the outermost record cut
    short)."""

    hint = ("the file was cut short: copy it again, or capture again and let the profiler "
            "finish writing before reading it")

    def __init__(self, path, problem: str, offset: int | None, size: int, missing: int = 0,
                 inside=()):
        self.path = None if path is None else str(path)
        self.problem, self.offset, self.size = problem, offset, size
        self.missing, self.inside = missing, list(inside)
        ValueError.__init__(self, f"{self.path or '<bytes>'}: {problem}")

    def __reduce__(self):
        return type(self), (self.path, self.problem, self.offset, self.size, self.missing,
                            self.inside)


class ProfileFileNotFoundError(TfprofError, FileNotFoundError):
    """A path given to ``tp.load`` (or another reader) does not exist: ``path``; the
    message names the closest existing name beside it, when one is close."""

    hint = ("check the path: tp.load takes a logdir, a run directory, an .xplane.pb file or "
            "a list of them")

    def __init__(self, path, message: str):
        super().__init__(errno.ENOENT, message)
        self.path = self.filename = str(path)

    def __str__(self) -> str:
        return self.strerror

    def __reduce__(self):
        return type(self), (self.path, self.strerror)


class Cancelled(KeyboardInterrupt):
    """Work stopped early because it was interrupted (Ctrl-C, Jupyter's stop button): raised
    by the compiled kernels' wrappers in worker threads once their run's cancel token is set."""


class ObjectStoreError(TfprofError, OSError):
    """A profile on an object store or web server (``s3://``, ``gs://``, ``https://``, any
    fsspec URL) could not be listed or read: the connection failed, dropped or timed out, or
    fewer bytes came than the object has.  ``url`` and ``problem`` say which and what; the
    transport's own exception is chained as ``__cause__``.  A missing object or bucket raises
    FileNotFoundError and a refused credential PermissionError, both naming the URL."""

    def __init__(self, url, problem: str):
        self.url = str(url)
        self.problem = problem
        super().__init__(f"{self.url}: {problem}")

    def __reduce__(self):  # travels back from Dask workers intact
        return type(self), (self.url, self.problem)


class CaptureError(TfprofError, RuntimeError):
    """A profile could not be captured (profiler busy, worker unreachable, ...)."""


class CaptureWarning(UserWarning):
    """Capture finished with less than was asked (e.g. the data ran out early)."""


class LoadWarning(UserWarning):
    """Some hosts of a profile could not be read and were left out (``Profile.load_errors``
    says why)."""


class AnalysisWarning(UserWarning):
    """An analysis step failed on some hosts, which were left out of the results that need
    it (``tp.load(..., on_error="skip")``; ``Profile.skipped(name)`` says why)."""


class HostAnalysisError(TfprofError, RuntimeError):
    """An analysis step failed on one host; ``host``, ``step`` and ``cause`` say where and
    why.  The other hosts' results are kept."""

    def __init__(self, host: str, step: str, cause):
        self.host, self.step, self.cause = host, step, cause
        super().__init__(f"host {host!r}: the {step!r} analysis failed: {cause}")


class PerformanceCheckError(TfprofError, AssertionError):
    """A profile broke a performance limit: raised by ``tp.check(...).assert_ok()``.

    The message lists each failed limit (and each limit whose measure the profile lacks,
    unless ``allow_missing``) with its measured value and threshold; ``result`` is the whole
    check result (``.table``, ``.failures``, ``.to_dict()``).
    """

    def __init__(self, message: str, result=None):
        self.result = result
        super().__init__(message)

    def __reduce__(self):  # travels between processes intact
        return type(self), (str(self), self.result)
