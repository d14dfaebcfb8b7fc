"""``tfprof mcp``: a Model Context Protocol server over stdio, so that coding agents call the
``tfprof`` commands as tools (:mod:`.mcp_tools` lists them: summary, list_tables, table, sql,
check, diff, report, export, counters, measures).  Needs the ``mcp`` package
(``pip install "tfprof-nb[mcp]"``).

A client starts it as a subprocess (``{"mcpServers": {"tfprof": {"command": "tfprof",
"args": ["mcp"]}}}``; ``tfprof agents`` prints a guide).  Profiles are loaded once per path
and kept (the :data:`CACHE_SIZE` most recently used; a file changed since is loaded again).
A tool's error (a missing path, an unknown table, a query DuckDB refuses, a bug) comes back
as an error result with its message; the server goes on serving.  The tools run one at a
time in a worker thread, so the server still answers pings meanwhile.  stdout carries the
protocol only: what else writes there goes to stderr.  Works with the SDK 1.x
(decorators) and 2.x (handlers).
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict

from ._common import EXIT_OK, CliError, add_command, describe, load_profile, to_jsonable

__all__ = ["CACHE_SIZE", "ProfileCache", "add_parser", "call_tool", "run"]

CACHE_SIZE = 4
_INSTALL = 'tfprof mcp needs the Model Context Protocol SDK: pip install "tfprof-nb[mcp]"'


def add_parser(sub) -> None:
    add_command(sub, "mcp", "a Model Context Protocol server over stdio for coding agents",
                description="Serve the tfprof commands as Model Context Protocol tools over "
                "stdio (for coding agents; tfprof agents prints a guide and a client "
                "configuration). Needs pip install \"tfprof-nb[mcp]\".")


class ProfileCache:
    """Profiles by path, loaded with the command's options, the ``size`` most recently used
    kept.  A local file's key holds its modification time and size, so a file written again
    is loaded again."""

    def __init__(self, args, size: int = CACHE_SIZE):
        self._args, self._size = args, size
        self._profiles: OrderedDict = OrderedDict()

    @staticmethod
    def key(path: str) -> tuple:
        if "://" in path:
            return (path,)
        full = os.path.abspath(os.path.expanduser(path))
        try:
            info = os.stat(full)
        except OSError:
            return (full,)
        return (full, info.st_mtime_ns, info.st_size)

    def __call__(self, path: str):
        key = self.key(path)
        if key in self._profiles:
            self._profiles.move_to_end(key)
            return self._profiles[key]
        prof = load_profile(self._args, key[0])
        self._profiles[key] = prof
        while len(self._profiles) > self._size:
            self._profiles.popitem(last=False)
        return prof

    def __len__(self) -> int:
        return len(self._profiles)


def call_tool(load, name: str, arguments: dict | None) -> tuple[str, bool]:
    """Run tool ``name`` with ``arguments`` (checked against its schema); returns its result
    as JSON text, or an error's message, and whether it is an error."""
    from .mcp_tools import TOOLS

    tool = TOOLS.get(name)
    if tool is None:
        return f"unknown tool {name!r}: the tools are {', '.join(TOOLS)}", True
    arguments = dict(arguments or {})
    try:
        _validate(tool.schema, arguments)
        doc = tool.run(load, arguments)
    except (CliError, KeyError, ValueError, OSError, ImportError) as err:
        return _message(err), True
    except Exception as err:  # the profile's own errors, DuckDB's, or a bug: said, not fatal
        return _other_error(err), True
    return json.dumps(to_jsonable(doc), ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")), False


def _message(err: BaseException) -> str:
    if isinstance(err, KeyError) and err.args:
        return str(err.args[0])
    return describe(err)


def _other_error(err: Exception) -> str:
    from ..errors import ProfileFormatError

    if isinstance(err, ProfileFormatError) or type(err).__module__.startswith("duckdb"):
        return describe(err)
    return f"internal error: {type(err).__name__}: {describe(err)} (a bug in tfprof_nb)"


def _validate(schema: dict, arguments: dict) -> None:
    """CliError naming the first way ``arguments`` break ``schema``."""
    import jsonschema

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(arguments))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path)
        raise CliError(f"argument {where}: {error.message}" if where else
                       f"arguments: {error.message}")


class ToolFailed(Exception):
    """A tool's error, raised for the SDK 1.x to send as an error result."""


def _server(load, major: int):
    """The SDK's server (``major``: its version) with the tools of :mod:`.mcp_tools`, each
    call run by :func:`call_tool` in a worker thread, one at a time."""
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    from .._version import __version__
    from .agents_cmd import guide
    from .mcp_tools import TOOLS

    lock = threading.Lock()
    tools = [types.Tool(name=t.name, description=t.description, inputSchema=t.schema)
             for t in TOOLS.values()]

    def locked(name, arguments):
        with lock:
            return call_tool(load, name, arguments)

    async def run_tool(name, arguments) -> tuple[str, bool]:
        return await anyio.to_thread.run_sync(locked, name, arguments)

    if major < 2:
        return _handlers_v1(Server("tfprof", __version__, guide()), tools, run_tool)

    async def list_tools(ctx, params):
        return types.ListToolsResult(tools=tools)

    async def call(ctx, params):
        text, error = await run_tool(params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    isError=error)

    return Server("tfprof", version=__version__, instructions=guide(),
                  on_list_tools=list_tools, on_call_tool=call)


def _handlers_v1(server, tools, run_tool):
    """``server`` (SDK 1.x) with the tools as its decorators register them."""
    from mcp import types

    @server.list_tools()
    async def list_tools():
        return tools

    @server.call_tool()
    async def call(name, arguments):
        text, error = await run_tool(name, arguments)
        if error:
            raise ToolFailed(text)
        return [types.TextContent(type="text", text=text)]

    return server


def _wire_stdout():
    """The protocol's own copy of stdout, fd 1 pointed at stderr so that nothing else
    writes into the protocol (the SDK 2 does this itself)."""
    import io

    import anyio

    wire = os.dup(1)
    os.dup2(2, 1)
    return anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire, "wb"), encoding="utf-8"))


async def _serve(load, major: int) -> None:
    from mcp.server.stdio import stdio_server

    server = _server(load, major)
    streams = {} if major >= 2 else {"stdout": _wire_stdout()}
    async with stdio_server(**streams) as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _sdk_major() -> int:
    """The MCP SDK's major version; CliError naming the extra when it cannot be imported."""
    import importlib
    import importlib.metadata

    try:
        importlib.import_module("mcp.server.lowlevel")
        return int(importlib.metadata.version("mcp").split(".")[0])
    except ImportError as err:
        raise CliError(f"{_INSTALL} ({describe(err)})") from err


def run(args) -> int:
    major = _sdk_major()
    import anyio

    anyio.run(_serve, ProfileCache(args), major)
    return EXIT_OK
