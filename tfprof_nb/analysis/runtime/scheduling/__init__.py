"""Where a profile's hosts live and how their host steps run: the :class:`.hosts.Hosts`
protocol, opened by :func:`.open_hosts.open_hosts` (the room's entry point) as
:class:`.local_hosts.LocalHosts` (worker threads, :mod:`.ready_queue`, thread priorities in
:mod:`.priority`) or :class:`.dask_hosts.DaskHosts` (Dask workers)."""
