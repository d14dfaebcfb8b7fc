"""``tfprof agents``: a short guide for coding agents (which tool or command answers which
question, the units, the MCP server's client configuration); ``tfprof mcp`` sends the same
guide as its instructions."""

from __future__ import annotations

import json
import os
import shutil
import sys

from ._common import EXIT_OK, add_command, emit

__all__ = ["GUIDE", "MCP_CONFIG", "add_parser", "guide", "run"]

MCP_CONFIG = {"mcpServers": {"tfprof": {"command": "tfprof", "args": ["mcp"]}}}

GUIDE = """\
tfprof: TensorFlow and JAX profiles (*.xplane.pb, a logdir, a run directory, or a URL) for agents.
Each question below names the MCP tool (tfprof mcp) and the command giving the same JSON
(add --json). Every tool takes `path`; a profile is loaded once and kept for later calls.

Start:            summary (tfprof summary PATH): devices, steps, step-time breakdown,
                  input-bound verdict, top ops, findings with evidence and fixes.
Slowest ops:      XLA (JAX, TF with jit_compile): table name=hlo_stats sort=total_self_time_us
                  (tfprof table hlo_stats PATH); TensorFlow ops: table name=op_stats, the same
                  sort; GPU kernels: table name=kernel_stats sort=total_duration_us.
                  Filter with filters ["category=loop fusion", "total_self_time_us>100"] or
                  where (a DuckDB clause); limit caps the rows (default 50), rows_matched
                  says how many there are. list_tables names every table.
Input-bound?      measures (input_wait_pct, device_idle_pct, host_wait_pct, duty_cycle_pct)
                  or summary's input_bound; table name=steps for each step's breakdown.
Compare two runs: diff base=OLD new=NEW (tfprof diff OLD NEW): verdict on the median step
                  time with its noise band, ops matched across recompiles, HLO diff.
What if:          what_if scale={{"input": 0.5}} (tfprof what-if PATH --scale input=0.5): each
                  step predicted with those durations scaled (categories or name globs such
                  as "fusion*"), what bounds the steps then (sentence, critical_path).
Hardware:         counters (GPU utilisation, clocks, power, memory, PCIe, host CPU; each op's
                  counters during its executions), filter by device, counter.
Anything else:    sql (tfprof sql PATH "SELECT ..."): DuckDB over events, stats, all tables.
CI limits:        check max_step_ms=..., max_input_pct=..., baseline + max_regression_pct
                  (tfprof check: exit 1 on a failed limit).
Files for people: report output=report.html (offline HTML dashboard); export output=x.pftrace
                  (ui.perfetto.dev) or x.json (chrome://tracing).

Units are in column names: _us microseconds, _ms milliseconds, _bytes, _pct percent (0-100),
_per_s per second. Times are relative to the profile's start. null: no value (NaN).
Errors come back as tool errors with the message; fix the argument and call again.

MCP client configuration (needs pip install "tfprof-nb[mcp]"):
{config}
"""


def add_parser(sub) -> None:
    add_command(sub, "agents", "a short guide for coding agents: which tool answers what, "
                "units, the MCP server's configuration", inputs=False)


def _config() -> dict:
    """:data:`MCP_CONFIG`, with this installation's ``tfprof`` when it is not on PATH."""
    script = os.path.join(os.path.dirname(sys.executable), "tfprof")
    if shutil.which("tfprof") is None and os.path.exists(script):
        return {"mcpServers": {"tfprof": {**MCP_CONFIG["mcpServers"]["tfprof"],
                                          "command": script}}}
    return MCP_CONFIG


def guide(config: dict | None = None) -> str:
    """The guide's text with ``config`` (default :data:`MCP_CONFIG`) as its JSON snippet."""
    return GUIDE.format(config=json.dumps(config or MCP_CONFIG, indent=2))


def run(args) -> int:
    config = _config()
    emit(args, {"guide": guide(config), "mcp_config": config},
         lambda doc: doc["guide"].rstrip())
    return EXIT_OK
