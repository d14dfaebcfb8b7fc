"""Writing an export file: where it goes, through a temporary file, off the main thread.

:func:`output_file` resolves the target (a directory gets a default file name, missing parent
directories are created) and yields a ``write`` function.  Chunks are written (and
compressed) by one background thread while the caller builds the next one; the temporary file
replaces the target only when everything was written, so a failure never leaves half a file.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["GZIP_LEVEL", "output_file", "target_path"]

# zlib level of .gz exports: level 1 is several times faster than the default 9, and trace
# JSON still shrinks about 8-fold
GZIP_LEVEL = 1
_PENDING = 2  # chunks queued for the writer thread at most


def target_path(path, default_name: str) -> Path:
    """The file to write for ``path``: ``path`` itself, or ``path/default_name`` when it is
    a directory (existing, or named with a trailing slash)."""
    text = os.fspath(path)
    target = Path(text).expanduser()
    if target.is_dir() or text.endswith(("/", os.sep)):
        target = target / default_name
    return target


def _failed(exc: OSError, what: str, target: Path) -> OSError:
    return type(exc)(exc.errno, f"cannot write the {what} to {target}: {exc.strerror}")


@contextlib.contextmanager
def output_file(target: Path, what: str, compress: bool = False):
    """Yield ``write(data)`` for ``target``; the file appears when the block ends cleanly.

    ``data`` is any bytes-like object, owned by the writer from then on.  ``what`` names the
    file in error messages (an OSError naming ``target``).
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.partial")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
    except OSError as exc:
        raise _failed(exc, what, target) from exc
    raw = os.fdopen(fd, "wb")
    sink = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL,
                         mtime=0) if compress else raw
    pending: deque = deque()
    done = False
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfprof-export") as pool:
            def write(data) -> None:
                while len(pending) >= _PENDING:
                    pending.popleft().result()
                pending.append(pool.submit(sink.write, data))

            try:
                yield write
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
            while pending:
                pending.popleft().result()
        if compress:
            sink.close()
        raw.close()
        os.replace(tmp, target)
        done = True
    except OSError as exc:
        raise _failed(exc, what, target) from exc
    finally:
        if not done:
            for f in (sink, raw):
                with contextlib.suppress(OSError, ValueError):
                    f.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)
