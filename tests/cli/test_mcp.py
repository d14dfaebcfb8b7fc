"""``tfprof mcp`` as an agent's client runs it: the console script in a subprocess, spoken to
with the MCP SDK's own stdio client and session (one server for the module).  Each tool is
called on real captures from tests/data and its numbers are checked against the DataFrames
``tp.load`` gives here; errors come back as error results and the server goes on answering.
Also ``tfprof agents`` and the profile cache."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.cli._common import to_jsonable
from tfprof_nb.cli.check_cmd import run_check
from tfprof_nb.cli.mcp_cmd import ProfileCache
from tfprof_nb.cli.summary import summarise

from ..conftest import DATA

mcp = pytest.importorskip("mcp")
anyio = pytest.importorskip("anyio")

H200 = DATA / "jax_h200_nocmdbuf.xplane.pb"
H200_GRAPHS = DATA / "jax_h200_transformer.xplane.pb"
INPUT_BOUND = DATA / "jax_h200_inputbound.xplane.pb"
COUNTERS = DATA / "jax_h200_counters"
TOOLS = {"summary", "list_tables", "table", "sql", "check", "diff", "report", "export",
         "counters", "measures", "what_if"}
SCRIPT = Path(sys.executable).parent / "tfprof"
# the console script, or (in an environment without it) the module
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "tfprof_nb"]


class Client:
    """A sync face on the SDK's async session (its loop runs in a portal's thread)."""

    def __init__(self, portal, session):
        self.portal, self.session = portal, session

    def tools(self):
        return self.portal.call(self.session.list_tools).tools

    def result(self, tool: str, /, **arguments):
        return self.portal.call(self.session.call_tool, tool, arguments)

    def __call__(self, tool: str, /, **arguments):
        """The tool's JSON document (strict JSON: a NaN would not parse)."""
        res = self.result(tool, **arguments)
        assert not is_error(res), res.content[0].text
        return json.loads(res.content[0].text, parse_constant=_no_constant)

    def error(self, tool: str, /, **arguments) -> str:
        res = self.result(tool, **arguments)
        assert is_error(res), res.content[0].text[:300]
        return res.content[0].text


def is_error(result) -> bool:
    """The result's error flag (``is_error`` in the SDK 2, ``isError`` in 1.x)."""
    return getattr(result, "is_error", None) or getattr(result, "isError", False)


def schema(tool) -> dict:
    return getattr(tool, "input_schema", None) or tool.inputSchema


def _no_constant(name):
    raise AssertionError(f"{name} in JSON output")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    errlog = tmp_path_factory.mktemp("mcp") / "stderr.txt"
    params = StdioServerParameters(command=COMMAND[0], args=COMMAND[1:] + ["mcp"],
                                   env={"TF_CPP_MIN_LOG_LEVEL": "2"})
    with open(errlog, "w") as err, anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params, errlog=err)) as (r, w):
            with portal.wrap_async_context_manager(ClientSession(r, w)) as session:
                portal.call(session.initialize)
                yield Client(portal, session)


@pytest.fixture(scope="module")
def h200():
    return tp.load(H200)


def test_every_tool_is_listed_with_its_schema(server):
    tools = {t.name: t for t in server.tools()}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and schema(tool)["type"] == "object"
        assert schema(tool)["additionalProperties"] is False
    assert schema(tools["table"])["required"] == ["path", "name"]
    assert "hlo_stats" in schema(tools["table"])["properties"]["name"]["enum"]
    assert schema(tools["diff"])["required"] == ["base", "new"]
    assert {t["name"] for t in server("list_tables")["tables"]} >= {"hlo_stats", "counters"}


def test_summary_is_the_summary_command_document(server, h200):
    doc = server("summary", path=str(H200), top=3)
    assert doc == json.loads(json.dumps(to_jsonable(summarise(h200, top=3))))
    assert doc["steps"]["median_ms"] == pytest.approx(h200.steps.duration_ms.median())
    assert len(doc["top_ops"]["device"]) == 3


def test_table_sorts_filters_and_says_how_many_rows_matched(server, h200):
    hlo = h200.hlo_stats
    top = server("table", path=str(H200), name="hlo_stats", sort="total_self_time_us",
                 limit=1, columns=["hlo_op_name", "total_self_time_us", "category"])
    slowest = hlo.loc[hlo.total_self_time_us.idxmax()]
    assert top["rows"] == [{"hlo_op_name": slowest.hlo_op_name, "category": slowest.category,
                            "total_self_time_us": slowest.total_self_time_us}]
    assert top["rows_matched"] == top["rows_total"] == len(hlo) > 1 and "note" in top
    both = server("table", path=str(H200), name="hlo_stats",
                  filters=["category=loop fusion", "total_self_time_us>10"])
    expected = hlo[(hlo.category == "loop fusion") & (hlo.total_self_time_us > 10)]
    assert both["rows_matched"] == len(expected) > 0
    assert [r["hlo_op_name"] for r in both["rows"]] == expected.hlo_op_name.tolist()[:50]
    where = server("table", path=str(H200), name="hlo_stats",
                   where="hlo_op_name LIKE 'fusion%'", sort="occurrences", ascending=True)
    assert where["rows_matched"] == hlo.hlo_op_name.str.startswith("fusion").sum()
    counts = [r["occurrences"] for r in where["rows"]]
    assert counts == sorted(counts)


def test_a_big_table_comes_back_cut_to_the_limit(server, h200):
    events = server("table", path=str(H200), name="events")
    assert events["rows_matched"] == h200.n_events > 50 == events["rows_returned"]
    assert f"{h200.n_events:,} rows matched" in events["note"]


def test_sql_runs_prof_sql_with_a_row_limit(server, h200):
    n = server("sql", path=str(H200), query="SELECT count(*) AS n FROM events")
    assert n["rows"] == [{"n": h200.n_events}]
    rows = server("sql", path=str(H200), query="SELECT * FROM hlo_stats", limit=5)
    assert (rows["rows_returned"], rows["rows_matched"]) == (5, len(h200.hlo_stats))


def test_check_judges_as_the_check_command(server, h200):
    limits = {"max_step_ms": 0.001, "min_duty_cycle_pct": 0.0}
    doc = server("check", path=str(H200), **limits)
    expected = run_check(h200, None, limits, profile=str(H200)).to_dict()
    assert {k: v for k, v in doc.items() if k != "verdict"} == expected
    assert (doc["ok"], doc["failed"], doc["passed"]) == (False, 1, 1)
    assert doc["checks"][0]["value"] == pytest.approx(h200.steps.duration_ms.median())
    assert "no limit given" in server.error("check", path=str(H200))


def test_diff_follows_compare(server, h200):
    doc = server("diff", base=str(H200), new=str(H200_GRAPHS), top=5)
    c = tp.compare(h200, tp.load(H200_GRAPHS), labels=("base", "new"))
    assert doc["verdict"] == c.step_time["verdict"]
    assert doc["median_ms"]["new"] == pytest.approx(c.step_time["new"])
    assert len(doc["ops"]) == min(5, len(c.ops))


def test_report_and_export_write_their_files(server, h200, tmp_path):
    report = server("report", path=str(H200), output=str(tmp_path / "r.html"))
    assert report["report"] == str(tmp_path / "r.html")
    assert os.path.getsize(report["report"]) == report["bytes"]["report"] > 100_000
    trace = server("export", path=str(H200), output=str(tmp_path / "t.pftrace"))
    assert (trace["format"], trace["events"]) == ("perfetto", h200.n_events)
    assert os.path.getsize(tmp_path / "t.pftrace") == trace["bytes"] > 0


def test_counters_and_op_counters_filtered(server):
    prof = tp.load(COUNTERS)
    doc = server("counters", path=str(COUNTERS), device="GPU:0", counter="sm_clock_mhz",
                 limit=5)
    samples = prof.counters[(prof.counters.device == "GPU:0")
                            & (prof.counters.counter == "sm_clock_mhz")]
    assert [s["samples"] for s in doc["series"]] == [len(samples)]
    assert doc["samples"]["rows_matched"] == len(samples) > 5
    assert [r["value"] for r in doc["samples"]["rows"]] == samples.value.head(5).tolist()
    pm = server("counters", path=str(COUNTERS), counter="sm__cycles_active.avg")
    ops = prof.op_counters[prof.op_counters.counter == "sm__cycles_active.avg"]
    assert pm["op_counters"]["rows_matched"] == len(ops) > 0
    got = pd.DataFrame(pm["op_counters"]["rows"])
    assert got["mean"].tolist() == pytest.approx(ops["mean"].head(50).tolist(), nan_ok=True)


def test_measures_are_prof_measures(server, h200):
    rows = server("measures", path=str(H200))["measures"]
    m = h200.measures
    assert [r["key"] for r in rows] == m.index.tolist()
    values = [float("nan") if r["value"] is None else r["value"] for r in rows]  # (JSON null)
    assert values == pytest.approx(m.value.tolist(), nan_ok=True)


def test_what_if_is_prof_what_if(server):
    prof = tp.load(INPUT_BOUND)
    doc = server("what_if", path=str(INPUT_BOUND), scale={"train": 0.25}, path_rows=3)
    want = prof.what_if({"train": 0.25})
    assert doc["median"]["predicted_ms"] == pytest.approx(want.predicted_ms.median())
    assert [r["predicted_ms"] for r in doc["steps"]] == pytest.approx(
        want.predicted_ms.tolist())
    assert len(doc["critical_path"]) == 3 and doc["matched"]["train"]["events"] > 0
    assert "scale" in server.error("what_if", path=str(INPUT_BOUND), scale={})


def test_errors_are_error_results_and_the_server_goes_on(server, tmp_path):
    missing = tmp_path / "missing.xplane.pb"
    assert str(missing) in server.error("summary", path=str(missing))
    assert "'nope' is not one of" in server.error("table", path=str(H200), name="nope")
    assert "no column 'nope'" in server.error("table", path=str(H200), name="hlo_stats",
                                              sort="nope")
    assert "the query failed" in server.error("sql", path=str(H200), query="SELEC 1")
    assert "'path' is a required property" in server.error("measures")
    assert "unknown tool" in server.error("nope")
    assert len(server("list_tables")["tables"]) > 10  # still answering


def test_profiles_are_cached_per_path_most_recent_kept():
    cache = ProfileCache(argparse.Namespace(storage_options=[], progress=False), size=2)
    files = [DATA / f"mi300x_jax08_{n}.xplane.pb" for n in ("gemm", "conv", "elementwise")]
    a = cache(str(files[0]))
    assert cache(str(files[0])) is a and cache(os.path.relpath(files[0])) is a
    b = cache(str(files[1]))
    assert cache(str(files[0])) is a  # a is now the most recent: b goes next
    cache(str(files[2]))
    assert len(cache) == 2 and cache(str(files[0])) is a and cache(str(files[1])) is not b


def test_agents_guide_names_every_tool_and_the_client_config():
    run = subprocess.run(COMMAND + ["agents"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    for name in TOOLS:
        assert f"{name} " in run.stdout or f"{name}=" in run.stdout, name
    assert '"mcpServers"' in run.stdout and "_us" in run.stdout and "_pct" in run.stdout
    doc = json.loads(subprocess.run(COMMAND + ["agents", "--json"], capture_output=True,
                                    text=True, timeout=60).stdout)
    assert doc["mcp_config"]["mcpServers"]["tfprof"]["args"] == ["mcp"]


def test_without_the_sdk_the_error_names_the_extra(tmp_path):
    shadow = tmp_path / "mcp"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('No module named mcp')\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    run = subprocess.run(COMMAND + ["mcp"], capture_output=True, text=True, timeout=60,
                         env=env, stdin=subprocess.DEVNULL)
    assert run.returncode == 2 and run.stdout == ""
    assert 'pip install "tfprof-nb[mcp]"' in run.stderr
