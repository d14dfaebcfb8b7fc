"""``tp.load``: a profile from a path (logdir, run directory, file, or a list of them)."""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import os
import typing
import warnings

from ._interrupt import short_traceback
from ._words import counted
from .errors import LoadWarning
from .xspace.files import find_profile_files, host_names

if typing.TYPE_CHECKING:
    from .profile import Profile

__all__ = ["load"]


def _known_keywords(fn):
    """``fn`` refusing a keyword it does not take with a TypeError that names the closest
    ones it does (``tp.load(path, clinet=c)``: did you mean 'client'?)."""
    known = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for name in kwargs:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=3)
                hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else \
                    f"; it takes {', '.join(known)}"
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument "
                                f"{name!r}{hint}")
        return fn(*args, **kwargs)
    return checked


@_known_keywords
@short_traceback
def load(path, *, parallel: bool = True, on_error: str = "skip", client=None,
         timeout: float = 600.0, storage_options: dict | None = None,
         progress: bool | None = None, strict: bool | None = None, window=None,
         lines=None) -> "Profile":
    """Load a profile: a logdir (newest run), a run directory (all hosts), one ``.xplane.pb``
    file, or a list of these.

    Hosts are decoded independently, in parallel threads.  One failure policy, ``on_error``,
    for loading and analysing: with ``"skip"`` (the default) a host that cannot be read is
    left out with a :class:`LoadWarning` and named in ``prof.load_errors``, and a host whose
    analysis step fails is left out of the tables that need that step with an
    :class:`AnalysisWarning`, its reason in ``prof.skipped(name)`` (the table is made of the
    other hosts); with ``"raise"`` an unreadable host raises :class:`ProfileFormatError` and
    a failing step :class:`HostAnalysisError`.  ``strict=True``/``False`` is the old
    spelling of ``on_error="raise"``/``"skip"`` (deprecated).  With ``client`` (a
    ``dask.distributed.Client``) every host is decoded and analysed on a worker and only
    partial results come back; ``timeout`` (s) bounds each wait for workers.  A profile
    too large for this machine's free memory fails before decoding, suggesting ``client=``.
    ``path`` may be a URL (``s3://``, ``gs://``, ``https://``, any fsspec URL;
    ``storage_options`` go to its file system): hosts are read through a local cache, on the
    workers themselves with ``client``.

    Loading (and later analysing) a big profile shows its progress in a notebook once it
    takes more than a second (``progress=False``: never; True: also outside notebooks, as a
    text line on stderr), and stops within a second on Ctrl-C or Jupyter's stop button
    (KeyboardInterrupt; an interrupted analysis is computed again when next asked for).

    A part of each host (a host bigger than memory): ``window=(start_us, end_us)`` on the
    profile's time axis (that of ``prof.events.start_us``, the same as the whole load's;
    either end None: open) keeps the events overlapping it, whole; ``lines=`` (a line name or
    glob, or a list: matched against a line's name, its display name or
    ``"<plane>/<line>"``, e.g. ``"/device:GPU:0/*"``) keeps only those lines' events.  The
    others are skipped by the decoder before anything is allocated for them (each file is
    scanned once first); a step is kept only if it lies whole inside the window.  The
    refusal of a profile too big for memory gives each host's time span.
    """
    if strict is not None:
        warnings.warn("tp.load(strict=...) is now tp.load(on_error='raise' or 'skip')",
                      DeprecationWarning, stacklevel=4)  # (past the two wrappers)
        on_error = "raise" if strict else "skip"
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', not {on_error!r}")
    files = find_profile_files(path, storage_options)
    named = host_names(files)
    hosts = _open_hosts(named, path, client, on_error=on_error, parallel=parallel,
                        timeout=timeout, progress=progress, window=window, lines=lines)
    if hosts.errors:
        warnings.warn(f"{len(hosts.errors)} of {counted(len(named), 'host')} could not be read "
                      f"and are left out: {', '.join(hosts.errors)} (see prof.load_errors)",
                      LoadWarning, stacklevel=2)
    from .profile import Profile

    return Profile(hosts, source=[str(f) for f in files])


def _open_hosts(files: dict, source, client, on_error: str, parallel: bool, timeout: float,
                progress: bool | None, window=None, lines=None):
    """The hosts ``files`` ({host: path}) of the profile the user named ``source``, opened by
    the scheduling room (pandas and the analyses imported while they decode).  Raises
    ProfileFormatError naming ``source`` when no host could be read (the file's own error
    when ``source`` is that one file)."""
    from .analysis.runtime.decoding.decode import some_host_read
    from .analysis.runtime.scheduling.open_hosts import open_hosts

    hosts = open_hosts(files, client=client, on_error=on_error,
                       one_file=client is None and _one_file(source, files), parallel=parallel,
                       timeout=timeout, progress=progress, meanwhile=_import_analyses,
                       window=window, lines=lines)
    some_host_read(hosts.names, hosts.errors, source)
    return hosts


def _one_file(source, files: dict) -> bool:
    """Whether ``source`` is the profile's one file itself (not a folder or list holding
    it): its error is then the load's, as it is (a truncated file says where it ends)."""
    if len(files) != 1 or isinstance(source, (list, tuple)):
        return False
    (only,) = files.values()
    return str(only) in (str(source), os.path.expanduser(str(source)))


def _import_analyses() -> None:
    """Import pandas, the profile and every analysis (their registry found), about half a
    second on its own: run while the hosts decode (the decoder's walk does not hold the
    GIL)."""
    importlib.import_module("tfprof_nb.profile")
    importlib.import_module("tfprof_nb.analysis.runtime.registry").analyses()
