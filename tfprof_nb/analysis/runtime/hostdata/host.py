"""One host's decoded profile and what the analyses derive from it (each computed once).

:class:`HostData` is the unit every per-host analysis step receives: it lives where the host
was decoded (this process, a thread, or a Dask worker) and never travels.  Event columns are
the decoder's narrow arrays; derived columns are built on first use and cached.  Stats are
read sparsely (:class:`SparseStat`: the event rows that have a stat and their values), so no
per-event object or per-stat dense array is ever made.

``HostData`` is composed of parts, one module each, over one :class:`~.host_core.HostCore`
(the decoded columns and the cache of derived arrays):

* :mod:`.host_names`: event names and their codes, events selected by name;
* :mod:`.host_lines`: planes and lines, events selected by line;
* :mod:`.host_times`: start, duration, end, the host's span;
* :mod:`.host_stats`: stats read sparsely (:mod:`.sparse_stat`);
* :mod:`.host_nesting`: which event contains which on a line.
"""

from __future__ import annotations

from ....constants import HOST_PLANE
from .host_lines import HostLines
from .host_names import HostNames
from .host_nesting import HostNesting
from .host_stats import INT_KINDS, HostStats
from .host_times import HostTimes
from .sparse_stat import SparseStat

__all__ = ["HostData", "SparseStat", "HOST_PLANE", "INT_KINDS"]


class HostData(HostNames, HostLines, HostTimes, HostStats, HostNesting):
    """One host: its decoded :class:`XSpaceData` and derived, cached per-event arrays.

    Times (``begin``) are picoseconds relative to the host's own origin (``space.origin_ns``);
    analyses add the profile's shift for the host to what they return.
    """

    def __repr__(self) -> str:
        return f"<HostData {self.name!r}: {len(self):,} events>"
