"""Critical path: each host's dependency graph (threads, streams, nesting, launches, flows,
host waits on the device) and, per step, the chain of events that bounds it."""
