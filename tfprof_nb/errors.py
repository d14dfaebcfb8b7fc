"""Exceptions raised by tfprof_nb."""

from __future__ import annotations

__all__ = ["Cancelled", "CaptureError", "CaptureWarning", "HostAnalysisError", "LoadWarning",
           "ObjectStoreError", "PerformanceCheckError", "ProfileFormatError"]


class ProfileFormatError(ValueError):
    """A profile file cannot be read: wrong type, truncated or corrupt.

    The message names the file and what is wrong with it; ``path`` and ``offset`` (the byte
    offset where decoding stopped, when known) are available as attributes.
    """

    def __init__(self, path, problem: str, offset: int | None = None):
        self.path = None if path is None else str(path)
        self.problem = problem
        self.offset = offset
        where = f" at byte {offset}" if offset is not None else ""
        name = self.path if self.path is not None else "<bytes>"
        super().__init__(f"{name}: {problem}{where}")


class Cancelled(KeyboardInterrupt):
    """Work stopped early because it was interrupted (Ctrl-C, Jupyter's stop button): raised
    by the compiled kernels' wrappers in worker threads once their run's cancel token is set."""


class ObjectStoreError(OSError):
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


class CaptureError(RuntimeError):
    """A profile could not be captured (profiler busy, worker unreachable, ...)."""


class CaptureWarning(UserWarning):
    """Capture finished with less than was asked (e.g. the data ran out early)."""


class LoadWarning(UserWarning):
    """Some hosts of a profile could not be read and were left out (``Profile.load_errors``
    says why)."""


class HostAnalysisError(RuntimeError):
    """An analysis step failed on one host; ``host``, ``step`` and ``cause`` say where and
    why.  The other hosts' results are kept."""

    def __init__(self, host: str, step: str, cause):
        self.host, self.step, self.cause = host, step, cause
        super().__init__(f"host {host!r}: the {step!r} analysis failed: {cause}")


class PerformanceCheckError(AssertionError):
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
