"""The history frame (``WindowLog.frame``): its columns' types and the values a row lacks."""

from __future__ import annotations

import numpy as np

from tfprof_nb.capturing.monitor_log import COLUMNS, WindowLog
from tfprof_nb.capturing.monitor_rule import RegressionRule


def test_the_history_s_columns_keep_their_types_whatever_the_rows_hold():
    """Ints, floats (missing or None: NaN), text (missing or None: ""), ``regressed`` bool, for
    no row as for rows in every state."""
    log = WindowLog(RegressionRule(3, 10.0, 10))
    empty = log.frame()
    assert list(empty.columns) == COLUMNS and len(empty) == 0
    log.open(3, 0.5)  # profiling: no values yet
    log.update(log.open(503, 2.0), steps=10, median_step_ms=np.float64(2.5), top_op=None,
               memory_peak_bytes=4096)
    log.fail(log.open(1003, 4.0), RuntimeError("boom"))
    df = log.frame()
    for frame in (empty, df):
        assert str(frame["steps"].dtype) == "int64" and str(frame["wall_s"].dtype) == "float64"
        assert frame["top_op"].dtype == df["status"].dtype and frame["regressed"].dtype == bool
    assert df["status"].tolist() == ["profiling", "profiling", "failed"]
    assert df["top_op"].tolist() == ["", "", ""] and df["error"].tolist()[2] == "RuntimeError: boom"
    assert np.isnan(df["median_step_ms"][0]) and df["median_step_ms"][1] == 2.5
    assert df["memory_peak_bytes"].tolist()[1] == 4096.0 and np.isnan(df["wall_s"]).all()
