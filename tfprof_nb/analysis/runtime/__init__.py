"""The analyses' runtime: the unit protocol (:mod:`.unit`), the registry, cached results,
decoding and where hosts live (:mod:`.engine`), ``HostData`` and the host facts every unit
stands on (:mod:`.info`: ``info``, ``shifts``, ``event_offsets``, ``planes``, ``lines``, ...).
It imports no other subpackage of ``tfprof_nb.analysis``."""
