"""prof.sql: DuckDB over the decoded columns (scanned in place) and the tool tables; every
answer compared with the DataFrames."""

from __future__ import annotations

import numpy as np
import pytest

import tfprof_nb as tp


@pytest.fixture(scope="module")
def gpu(gpu_fixture_file):
    return tp.load(gpu_fixture_file)


def test_events_equal_the_events_table(rocm_pod):
    got = rocm_pod.sql("SELECT * FROM events ORDER BY event")
    ev = rocm_pod.events
    assert got.event.tolist() == ev.index.tolist()
    for col in ("host", "plane", "line", "name"):
        assert got[col].tolist() == ev[col].astype(str).tolist(), col
    for col in ("start_us", "duration_us", "start_ps", "duration_ps", "line_id"):
        np.testing.assert_array_equal(got[col].to_numpy(), ev[col].to_numpy())


def test_group_by_over_every_event(gpu):
    got = gpu.sql("SELECT plane, name, count(*) AS n, sum(duration_us) AS us FROM events "
                  "GROUP BY plane, name")
    ref = gpu.events.groupby(["plane", "name"], observed=True).duration_us.agg(["size", "sum"])
    got = got.set_index(["plane", "name"]).sort_index()
    ref = ref.set_axis(ref.index.map(lambda k: (str(k[0]), str(k[1])))).sort_index()
    assert got.n.tolist() == ref["size"].tolist()
    np.testing.assert_allclose(got.us, ref["sum"], rtol=1e-12)


def test_stats_equal_prof_stat(gpu):
    for name, column in (("correlation_id", "int_value"), ("tf_op", "str_value"),
                         ("group_id", "int_value")):
        got = gpu.sql(f"SELECT event, {column} AS v FROM stats WHERE name = '{name}' "
                      "ORDER BY event")
        ref = gpu.stat(name)
        ref = ref[~ref.index.duplicated(keep="last")]
        assert got.event.tolist() == ref.index.tolist()
        assert got.v.astype(str).tolist() == ref.astype(str).tolist()


def test_stats_double_values(rocm_pod):
    # the JAX profile's float stats read through the float view of the same column
    got = rocm_pod.sql("SELECT name, count(*) AS n FROM stats WHERE kind = 1 GROUP BY name")
    for row in got.itertuples():
        ref = rocm_pod.stat(row.name)
        assert ref.dtype == np.float64 and len(ref) >= row.n


def test_tool_tables(gpu):
    steps = gpu.sql("SELECT step, host, duration_ms FROM steps")
    assert steps.step.tolist() == gpu.steps.index.tolist()
    np.testing.assert_array_equal(steps.duration_ms, gpu.steps.duration_ms)
    util = gpu.sql("SELECT device, sum(busy_us) AS busy FROM gpu_utilization "
                   "WHERE stream = 'all' GROUP BY device ORDER BY device")
    ref = gpu.gpu_utilization.query("stream == 'all'").groupby("device").busy_us.sum()
    np.testing.assert_allclose(util.busy, ref.loc[util.device])
    k = gpu.sql("SELECT count(*) AS n, sum(total_duration_us) AS t FROM kernel_stats")
    assert k.n[0] == len(gpu.kernel_stats)
    assert k.t[0] == pytest.approx(gpu.kernel_stats.total_duration_us.sum())
    lat = gpu.sql("SELECT sum(launches) AS n FROM launch_latency")
    assert lat.n[0] == gpu.launch_latency.per_kernel.launches.sum()
    planes = gpu.sql("SELECT * FROM planes")
    assert "stats" not in planes.columns and len(planes) == len(gpu.planes)
    mem = gpu.sql("SELECT count(*) AS n FROM memory_timeline")
    assert mem.n[0] == len(gpu.memory_timeline)


def test_join_events_with_stats(gpu):
    """Kernels and their launches by correlation id, in SQL, equal the launch tables."""
    got = gpu.sql("""
        SELECT count(*) AS n FROM events d
        JOIN stats sd ON sd.event = d.event AND sd.name = 'correlation_id'
        JOIN stats sh ON sh.name = 'correlation_id' AND sh.int_value = sd.int_value
        JOIN events h ON h.event = sh.event AND h.plane = '/host:CPU'
        WHERE d.plane LIKE '/device:GPU%'""")
    assert got.n[0] == gpu.launch_latency.per_kernel.launches.sum()


def test_event_columns_are_scanned_in_place(gpu):
    sql = gpu._results.cached("sql", lambda: None)
    gpu.sql("SELECT count(*) FROM events")
    frame = next(f for f in sql._frames if "start_ps" in f.columns)
    space = gpu.spaces[gpu.hosts[0]]
    assert np.shares_memory(frame.start_ps.to_numpy(), space.events.start_ps)
    assert np.shares_memory(frame.duration_ps.to_numpy(), space.events.duration_ps)
    assert np.shares_memory(frame.line.to_numpy(), space.events.line)


def test_unknown_tables_and_bad_sql_raise(gpu):
    import duckdb

    with pytest.raises(duckdb.Error):
        gpu.sql("SELECT * FROM no_such_table")
    with pytest.raises(duckdb.Error):
        gpu.sql("SELEC 1")
    assert gpu.sql("SELECT 42 AS x").x.tolist() == [42]
