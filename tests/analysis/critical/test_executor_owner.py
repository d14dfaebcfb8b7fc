"""Each node's executor owner (executor_waits._owner): itself when it is an executor event,
else its nearest executor ancestor, -1 without one (checked against a walk up each chain on a
random forest)."""

from __future__ import annotations

import numpy as np

from tfprof_nb.analysis.critical.executor_waits import _owner


class _Forest:
    def __init__(self, parent):
        self.parent = parent

    def __len__(self):
        return len(self.parent)


def test_owner_is_the_nearest_executor_ancestor():
    rng = np.random.default_rng(4)
    n = 400
    parent = np.array([-1 if i == 0 or rng.random() < 0.1 else rng.integers(0, i)
                       for i in range(n)], np.int64)
    executor = np.flatnonzero(rng.random(n) < 0.15)
    want = []
    for i in range(n):
        k = i
        while k >= 0 and k not in set(executor.tolist()):
            k = int(parent[k])
        want.append(k)
    assert _owner(_Forest(parent), executor).tolist() == want
    assert (np.asarray(want) >= 0).any() and (np.asarray(want) < 0).any()
