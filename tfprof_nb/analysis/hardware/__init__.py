"""The hardware beside the trace: counter samples (the sampler's file, the profile's counter
lines) and each op's counters during its executions."""
