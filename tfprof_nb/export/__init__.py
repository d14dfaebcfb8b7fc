"""Exports of every event of a profile to other trace viewers, with no cap on their number.

* :func:`write_chrome_trace` (``prof.to_chrome_trace(path)``): Chrome's Trace Event Format
  JSON, optionally gzip-compressed, for chrome://tracing, ui.perfetto.dev and other tools.
* :func:`write_perfetto` (``prof.to_perfetto(path)``): Perfetto's protobuf trace, smaller and
  faster to open in ui.perfetto.dev and trace_processor.

Both lay out a process per (host, plane) and a thread per line plus a ``Steps`` thread per
host, write each event with its stats, stream the file a chunk of events at a time and replace
the target only once it is complete.
"""

from .chrome import write_chrome_trace
from .perfetto import write_perfetto

__all__ = ["write_chrome_trace", "write_perfetto"]
