"""XLA programs on TPU, GPU and CPU: the TPU planes, the per-host XLA ops (:mod:`.ops`)
combined into the ``xla`` unit, HLO stats, the op profile, the roofline, source lines, command
buffers; their HLO protos are decoded by :mod:`tfprof_nb.xspace.hlo_proto`.  Programs' memory:
:mod:`.memory`."""
