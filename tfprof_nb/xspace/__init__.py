"""Fast decoder of TensorFlow profiler ``*.xplane.pb`` files (XSpace protobuf) into numpy.

No TensorFlow needed: the wire format is walked by compiled C code (``tfprof_nb._native``)
straight into columnar tables.  :func:`read_xspace` decodes one file, :func:`decode_xspace`
bytes.
Files on object stores and web servers are read through a local cache (:func:`clear_cache`
empties it).
"""

from .cache import clear_cache
from .decoder import KIND_NAMES, decode_xspace
from .model import EventTable, StatTable, XSpaceData, stat_value
from .reading import read_xspace

__all__ = ["KIND_NAMES", "EventTable", "StatTable", "XSpaceData", "clear_cache",
           "decode_xspace", "read_xspace", "stat_value"]
