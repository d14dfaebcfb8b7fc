"""The context links are joined once per host while kept: the steps' grouping and the flow
links (two host steps that start side by side) share one join."""

from __future__ import annotations

import numpy as np
import pytest

from tfprof_nb.analysis.runtime.hostdata.host import HostData
from tfprof_nb.analysis.trace import flow_links, grouping
from tfprof_nb.xspace import read_xspace


def test_context_links_are_joined_once_while_kept(cpu_python_file, monkeypatch):
    hd = HostData("h", read_xspace(cpu_python_file))
    joins = []
    real = grouping._context_links
    monkeypatch.setattr(grouping, "_context_links", lambda h: joins.append(1) or real(h))
    src, dst = grouping.producer_consumer_links(hd)
    table = flow_links.host_flow_links(hd)  # (the flow links' host step reads the same join)
    again = grouping.producer_consumer_links(hd)
    assert len(joins) == 1 and again[0] is src and again[1] is dst and len(src) > 10
    context = table[table.kind == 0]
    assert np.array_equal(context.producer_event, src)
    assert np.array_equal(context.consumer_event, dst)
    with pytest.raises(ValueError):  # (shared: no reader may change them)
        src[0] = 0
    hd.release(keep_core=True)  # a step's end drops them: the next reader joins again
    fresh = grouping.producer_consumer_links(hd)
    assert len(joins) == 2 and fresh[0] is not src
    assert np.array_equal(fresh[0], src) and np.array_equal(fresh[1], dst)
