"""The analyses' runtime, in rooms (each subpackage has one entry point):

* here: the unit protocol (:mod:`.unit`), the registry, cached results (:mod:`.results`) and
  the host facts every unit stands on (:mod:`.info`: ``info`` and ``shifts``);
* :mod:`.hostdata`: one host's columns, ``HostData`` (:mod:`.hostdata.host`);
* :mod:`.decoding`: a file into host data, :func:`.decoding.decode.decode_host` (every
  backend's one path);
* :mod:`.scheduling`: where hosts live and how their steps run, opened by
  :func:`.scheduling.open_hosts.open_hosts` (threads here or Dask workers).

It imports no other subpackage of ``tfprof_nb.analysis``."""
