"""``tp.load``: a profile from a path (logdir, run directory, file, or a list of them)."""

from __future__ import annotations

import importlib
import os
import typing
import warnings

from ._interrupt import short_traceback
from .errors import LoadWarning
from .xspace.files import find_profile_files, host_names

if typing.TYPE_CHECKING:
    from .profile import Profile

__all__ = ["load"]


@short_traceback
def load(path, *, parallel: bool = True, strict: bool = False, client=None,
         timeout: float = 600.0, storage_options: dict | None = None,
         progress: bool | None = None) -> "Profile":
    """Load a profile: a logdir (newest run), a run directory (all hosts), one ``.xplane.pb``
    file, or a list of these.

    Hosts are decoded independently, in parallel threads.  A host that cannot be read is left
    out with a :class:`LoadWarning` and named in ``prof.load_errors`` (``strict=True`` raises
    :class:`ProfileFormatError` instead).  With ``client`` (a ``dask.distributed.Client``)
    every host is decoded and analysed on a worker and only partial results come back;
    ``timeout`` (s) bounds each wait for workers.  A profile too large for this machine's
    free memory fails before decoding, suggesting ``client=``.  ``path`` may be a URL
    (``s3://``, ``gs://``, ``https://``, any fsspec URL; ``storage_options`` go to its file
    system): hosts are read through a local cache, on the workers themselves with ``client``.

    Loading (and later analysing) a big profile shows its progress in a notebook once it
    takes more than a second (``progress=False``: never; True: also outside notebooks, as a
    text line on stderr), and stops within a second on Ctrl-C or Jupyter's stop button
    (KeyboardInterrupt; an interrupted analysis is computed again when next asked for).
    """
    files = find_profile_files(path, storage_options)
    named = host_names(files)
    hosts = _open_hosts(named, path, client, strict=strict, parallel=parallel, timeout=timeout,
                        progress=progress)
    if hosts.errors:
        warnings.warn(f"{len(hosts.errors)} of {len(named)} host(s) could not be read and "
                      f"are left out: {', '.join(hosts.errors)} (see prof.load_errors)",
                      LoadWarning, stacklevel=2)
    from .profile import Profile

    return Profile(hosts, source=[str(f) for f in files])


def _open_hosts(files: dict, source, client, strict: bool, parallel: bool, timeout: float,
                progress: bool | None):
    """The hosts ``files`` ({host: path}) of the profile the user named ``source``: decoded
    here after a check that they fit in free memory, pandas and the analyses imported
    meanwhile (``LocalHosts``), or on the workers of a Dask ``client`` (``DaskHosts``).
    Raises ProfileFormatError naming ``source`` when no host could be read (the file's own
    error when ``source`` is that one file)."""
    from .analysis.runtime.decoding import check_memory, decode_hosts, some_host_read

    if client is None:
        check_memory(files)
        spaces, errors = decode_hosts(files, strict=strict or _one_file(source, files),
                                      parallel=parallel, progress=progress,
                                      meanwhile=_import_analyses)
        some_host_read(spaces, errors, source)
        from .analysis.runtime.engine import LocalHosts

        return LocalHosts(spaces, errors, progress)
    from .analysis.runtime.engine import DaskHosts

    hosts = DaskHosts(files, client, strict=strict, timeout=timeout)
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
