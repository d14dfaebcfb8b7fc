"""Fast decoder of TensorFlow profiler ``*.xplane.pb`` files (XSpace protobuf) into numpy.

No TensorFlow needed: the wire format is walked by compiled C code (``tfprof_nb._native``)
straight into columnar tables.  :func:`read_xspace` decodes one file, :func:`decode_xspace` bytes.
"""

from .decoder import KIND_NAMES, decode_xspace, read_xspace
from .model import EventTable, StatTable, XSpaceData, stat_value

__all__ = ["EventTable", "KIND_NAMES", "StatTable", "XSpaceData", "decode_xspace", "read_xspace",
           "stat_value"]
