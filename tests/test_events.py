"""The events table (tfprof_nb/events.py): one host's start_ps and duration_ps are its decoded
columns themselves (pandas 3), and a write into prof.events still never reaches them."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pandas as pd

import tfprof_nb as tp

PROFILE = Path(__file__).parent / "data" / "mi300x_jax08_gemm.xplane.pb"
PANDAS_3 = int(pd.__version__.split(".")[0]) >= 3


def test_a_write_into_the_events_frame_leaves_the_decoded_columns():
    prof = tp.load(PROFILE)
    space = prof.spaces[prof.hosts[0]]
    start, duration = space.events.start_ps.copy(), space.events.duration_ps.copy()
    ev = prof.events
    gc.collect()
    shared = np.shares_memory(ev["start_ps"].to_numpy(), space.events.start_ps)
    assert shared == PANDAS_3  # no copy where pandas copies on write
    ev.loc[ev.index[:5], "start_ps"] = -1
    ev.iloc[5:9, ev.columns.get_loc("duration_ps")] = -2
    ev["duration_ps"] += 1
    assert (ev["start_ps"].to_numpy()[:5] == -1).all()  # the frame took the writes
    assert (ev["duration_ps"].to_numpy()[5:9] == -1).all()
    assert np.array_equal(space.events.start_ps, start)
    assert np.array_equal(space.events.duration_ps, duration)
    fresh = tp.load(PROFILE).events
    assert np.array_equal(fresh["start_ps"].to_numpy(), start)
    assert np.array_equal(fresh["duration_ps"].to_numpy(), duration)

