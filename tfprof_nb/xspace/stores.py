"""Object stores and web servers through fsspec: which paths are URLs, the file systems that read
them (with bounded timeouts), the remote files of a profile, and errors that name the URL.

fsspec is imported only when a URL is given, so ``import tfprof_nb`` and local loads stay light.
``s3://`` needs s3fs (``pip install "tfprof-nb[s3]"``), ``gs://`` gcsfs (``[gcs]``), ``http(s)://``
aiohttp; any other protocol fsspec knows works with its package installed.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from posixpath import basename

from ..errors import ObjectStoreError

__all__ = [
    "CONNECT_TIMEOUT_S",
    "READ_TIMEOUT_S",
    "RemoteFile",
    "entry_mtime",
    "entry_version",
    "filesystem",
    "is_url",
    "remote_errors",
    "remote_file",
]

# Bounds on every request to a store: a dead or stalled server fails in tens of seconds, not
# never.  Pass storage_options to change them (e.g. {"config_kwargs": {"read_timeout": 120}}).
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 30.0
S3_RETRIES = 2  # s3fs's own retries of a failed request (each with botocore's attempts)

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*(::[A-Za-z][A-Za-z0-9+.\-]*)*://")
_LOCAL_PROTOCOLS = ("file", "local")
_EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs"}


def is_url(path) -> bool:
    """Whether ``path`` is a URL (``protocol://...``) rather than a local path."""
    return isinstance(path, str) and bool(_URL.match(path))


def local_path_of(url: str) -> str | None:
    """The local path of a ``file://`` URL, else None."""
    protocol, _, rest = url.partition("://")
    return rest if protocol.lower() in _LOCAL_PROTOCOLS else None


@dataclass(frozen=True)
class RemoteFile:
    """One host's profile file on a store: its URL, size, version (ETag, generation or
    modification time: None when the store gives none) and the storage options to open it
    with (credentials stay out of ``repr`` and comparisons).  Picklable: Dask workers get
    these and read the file themselves."""

    url: str
    size: int | None
    version: str | None
    storage_options: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return basename(self.url.rstrip("/"))

    @property
    def parent(self) -> PurePosixPath:
        return PurePosixPath(self.url.split("://", 1)[1]).parent

    def __str__(self) -> str:
        return self.url


def _defaults(protocol: str) -> dict:
    """Timeouts for the protocols we know, and no listings cache (each load sees the store as
    it is now); the user's storage options override them."""
    return {"use_listings_cache": False, **_timeouts(protocol)}


def _timeouts(protocol: str) -> dict:
    if protocol in ("s3", "s3a"):
        return {"config_kwargs": {"connect_timeout": CONNECT_TIMEOUT_S,
                                  "read_timeout": READ_TIMEOUT_S,
                                  "retries": {"max_attempts": 2, "mode": "standard"}}}
    if protocol in ("gs", "gcs"):
        return {"requests_timeout": 2 * READ_TIMEOUT_S}
    if protocol in ("http", "https"):
        import aiohttp

        return {"client_kwargs": {"timeout": aiohttp.ClientTimeout(
            total=None, sock_connect=CONNECT_TIMEOUT_S, sock_read=READ_TIMEOUT_S)}}
    return {}


def _merged(defaults: dict, options: dict) -> dict:
    """``options`` over ``defaults``, one level deep for dict values (config_kwargs, ...)."""
    out = dict(defaults)
    for key, value in options.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


_filesystems: dict = {}
_MAX_FILESYSTEMS = 8
_lock = threading.Lock()


def filesystem(url: str, storage_options: dict | None = None):
    """``(fs, path)`` for ``url``: an fsspec file system with bounded timeouts (one per
    protocol, options and environment in this process, the last few kept) and the path in
    it."""
    if "::" in url:
        raise ValueError(f"{url}: chained fsspec URLs are not supported (tfprof_nb caches "
                         "remote files itself): pass the store's own URL")
    protocol = url.split("://", 1)[0].lower()
    try:
        import fsspec
        from fsspec.utils import tokenize

        cls = fsspec.get_filesystem_class(protocol)
    except ImportError as exc:
        extra = _EXTRAS.get(protocol)
        hint = f'pip install "tfprof-nb[{extra}]"' if extra else "install its fsspec package"
        raise ImportError(f"{url}: reading {protocol}:// URLs needs a package that is not "
                          f"installed ({exc}); {hint}") from exc
    except ValueError as exc:  # fsspec: "Protocol not known"
        raise ValueError(f"{url}: {exc}") from exc
    options = _merged(_defaults(protocol), dict(storage_options or {}))
    # credentials and endpoints also come from the environment (AWS_*, GOOGLE_*, ...): a
    # change there must give a new client
    key = (protocol, tokenize(options, sorted(os.environ.items())))
    with _lock:
        fs = _filesystems.pop(key, None)
        if fs is None:
            with remote_errors(url):
                fs = cls(skip_instance_cache=True, **options)
            if protocol in ("s3", "s3a"):
                fs.retries = S3_RETRIES  # ours alone: made with skip_instance_cache
        _filesystems[key] = fs  # most recently used last
        while len(_filesystems) > _MAX_FILESYSTEMS:
            del _filesystems[next(iter(_filesystems))]
    return fs, cls._strip_protocol(url)


def _transport_errors() -> tuple:
    """Exception types of a failed transfer (network, server, timeouts) for the installed
    clients; a bug (TypeError, ...) is not one of them and propagates as it is."""
    errors: list = [OSError, TimeoutError]
    for module, names in (("fsspec.exceptions", ("FSTimeoutError",)),
                          ("aiohttp", ("ClientError",)),
                          ("botocore.exceptions", ("BotoCoreError", "ClientError")),
                          ("google.auth.exceptions", ("GoogleAuthError",))):
        try:
            mod = __import__(module, fromlist=list(names))
        except ImportError:
            continue
        errors.extend(getattr(mod, n) for n in names if hasattr(mod, n))
    return tuple(errors)


@contextlib.contextmanager
def remote_errors(url: str, doing: str = "reading"):
    """Turn a transport's exception into one naming ``url``: FileNotFoundError (missing
    object or bucket), PermissionError (credential refused) or ObjectStoreError (network,
    timeout, server error).  Our own ObjectStoreErrors pass unchanged."""
    try:
        yield
    except ObjectStoreError:
        raise
    except _transport_errors() as exc:
        raise _named(exc, url, doing) from exc


def _describe(exc: BaseException) -> str:
    """The first non-empty message along the exception's chain (timeouts often have none)."""
    seen = exc
    for _ in range(6):
        if seen is None:
            break
        if str(seen):
            return str(seen) if seen is exc else f"{type(seen).__name__}: {seen}"
        seen = seen.__cause__ or seen.__context__
    return type(exc).__name__


def _http_wrapped(exc: BaseException) -> bool:
    """fsspec's HTTP file system reports every failure to look a URL up as FileNotFoundError
    with aiohttp's error as its cause: that cause says what happened."""
    cause = exc.__cause__
    return isinstance(exc, FileNotFoundError) and cause is not None and \
        type(cause).__module__.split(".")[0] == "aiohttp"


def _kind(exc: BaseException) -> str:
    """"missing", "denied", "timeout" or "failed"."""
    if _http_wrapped(exc):
        cause = exc.__cause__
        status = getattr(cause, "status", None)
        if status == 404:
            return "missing"
        return _kind(cause) if status is None else ("denied" if status in (401, 403)
                                                    else "failed")
    if isinstance(exc, FileNotFoundError) or getattr(exc, "status", None) == 404:
        return "missing"
    if isinstance(exc, PermissionError) or getattr(exc, "status", None) in (401, 403):
        return "denied"
    if isinstance(exc, TimeoutError) or "timeout" in type(exc).__name__.lower():
        return "timeout"
    return "failed"


def _named(exc: BaseException, url: str, doing: str) -> BaseException:
    kind = _kind(exc)
    cause = _describe(exc.__cause__ if _http_wrapped(exc) else exc)
    detail = f" ({cause})" if cause not in url else ""  # s3fs's message may be the path
    if kind == "missing":
        what = "bucket does not exist" if "bucket" in cause.lower() else "no such object"
        return FileNotFoundError(f"{url}: {what}{detail}")
    if kind == "denied":
        return PermissionError(f"{url}: access denied while {doing}{detail}; check the "
                               "credential")
    if kind == "timeout":
        return ObjectStoreError(url, f"timed out while {doing}{detail}; the server did not "
                                "answer within the timeouts")
    return ObjectStoreError(url, f"failed while {doing}: {cause}")


_VERSION_KEYS = ("ETag", "etag", "generation", "VersionId", "version_id", "md5Hash",
                 "LastModified", "Last-Modified", "updated", "mtime", "last_modified")
_TIME_KEYS = ("LastModified", "mtime", "updated", "last_modified", "Last-Modified", "created")


def entry_mtime(entry: dict) -> float:
    """Modification time (epoch seconds) of a listing entry, 0.0 when it has none."""
    for key in _TIME_KEYS:
        value = entry.get(key)
        if isinstance(value, datetime):
            return value.timestamp()
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            with contextlib.suppress(ValueError):
                return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
            with contextlib.suppress(ValueError, TypeError):
                from email.utils import parsedate_to_datetime

                return parsedate_to_datetime(value).timestamp()
    return 0.0


def entry_version(entry: dict) -> str | None:
    """The version of a listing or ``info`` entry: ETag, generation or modification time."""
    return next((str(entry[k]) for k in _VERSION_KEYS if entry.get(k) not in (None, "")), None)


def remote_file(fs, entry: dict, storage_options: dict | None) -> RemoteFile:
    """A RemoteFile from a listing or ``info`` entry of ``fs``."""
    version = entry_version(entry)
    size = entry.get("size")
    return RemoteFile(fs.unstrip_protocol(entry["name"]),
                      None if size is None else int(size), version,
                      dict(storage_options or {}))
