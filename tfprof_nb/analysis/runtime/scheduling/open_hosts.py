"""The scheduling room's entry point: a profile's hosts opened where they will live,
:func:`open_hosts` (decoded in this process, or on the workers of a Dask client)."""

from __future__ import annotations

from ..decoding.decode import check_memory, decode_hosts, select_hosts
from .hosts import Hosts

__all__ = ["open_hosts"]


def open_hosts(files: dict, *, client=None, on_error: str = "skip", one_file: bool = False,
               parallel: bool = True, timeout: float = 600.0, progress: bool | None = None,
               meanwhile=None, window=None, lines=None) -> Hosts:
    """The hosts of ``files`` ({host: path}), with the failure policy ``on_error`` (see
    :class:`.hosts.Hosts`): decoded here after a check that they fit in free memory,
    ``meanwhile()`` run while they decode (:class:`.local_hosts.LocalHosts`; ``one_file``:
    the profile is the one file the user named, whose error is raised as it is), or on the
    workers of a Dask ``client`` (:class:`.dask_hosts.DaskHosts`; ``timeout`` bounds each
    wait).  Nothing here imports pandas before the decode starts.  ``window``/``lines``:
    only a part of each host (:mod:`..decoding.selecting`; scanned first, here each host's
    part checked against free memory instead of its file)."""
    if client is None:
        selects = None
        if window is None and lines is None:
            check_memory(files)
        else:
            selects = select_hosts(files, window, lines)
        data, errors = decode_hosts(files, on_error="raise" if one_file else on_error,
                                    parallel=parallel, progress=progress, meanwhile=meanwhile,
                                    selects=selects)
        from .local_hosts import LocalHosts

        return LocalHosts(data, errors, progress, on_error=on_error)
    from .dask_hosts import DaskHosts

    selects = None
    if window is not None or lines is not None:  # (each host scanned on a worker)
        from ..decoding.selecting import host_shifts, selections
        from .dask_hosts import scanned

        scans = scanned(files, client, timeout)
        selects = selections(scans, host_shifts(scans), window, lines)
    return DaskHosts(files, client, on_error=on_error, timeout=timeout, selects=selects)
