"""The catalogue of tables (tfprof_nb/table_catalogue.py) is the one place a table is
declared: Profile's properties, prof.sql's tables, ``tfprof table --list`` and docs/API.md's
table of tables all come from it.  A throwaway entry declared once reaches all four (in a
fresh interpreter, since they are built at import); each table's key columns identify its
rows on real captures."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb import table_catalogue as catalogue
from tfprof_nb.cli.tables import table_list, table_names
from tfprof_nb.profile import Profile
from tfprof_nb.sql import EVENT_TABLES, TOOL_TABLES

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SMALL = DATA / "mi300x_jax08_gemm.xplane.pb"


def test_api_md_table_of_tables_is_current():
    text = catalogue.API.read_text()
    assert catalogue.BEGIN in text and catalogue.END in text
    assert catalogue.api_text(text) == text, \
        "docs/API.md's tables are stale: run `python -m tfprof_nb.table_catalogue`"


def test_every_entry_reaches_its_places():
    entries = catalogue.CATALOGUE
    assert {e.kind for e in entries} == set(catalogue.KINDS)
    props, queried = catalogue.profile_entries(), catalogue.queried_entries()
    assert len(props) == sum(e.kind in catalogue.PROPERTY_KINDS for e in entries)  # unique
    assert len(queried) == sum(e.kind in catalogue.QUERIED_KINDS for e in entries)
    for name, entry in props.items():
        attr = inspect.getattr_static(Profile, name)
        assert isinstance(attr, property) and attr.__doc__ == entry.description, name
    assert inspect.getattr_static(Profile, "events").__doc__ == queried["events"].description
    assert list(EVENT_TABLES) + list(TOOL_TABLES) == table_names() == list(queried)
    assert [(r["name"], r["description"], r["keys"]) for r in table_list()] == \
        [(n, e.description, list(e.keys)) for n, e in queried.items()]
    assert all(e.description.endswith(".") and "\n" not in e.description for e in entries)


# a fresh interpreter: the catalogue module is loaded and given one more entry before the
# package imports it, as if the entry had been written in the file
THROWAWAY = r"""
import contextlib, importlib.util, io, json, sys
spec = importlib.util.spec_from_file_location("tfprof_nb.table_catalogue", sys.argv[1])
cat = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = cat
spec.loader.exec_module(cat)
cat.CATALOGUE += (cat.TableEntry("throwaway_planes", "A throwaway copy of planes.", "planes",
                                 keys=("host", "plane")),)
import tfprof_nb as tp
from tfprof_nb.cli import main
prof = tp.load(sys.argv[2])
listed, written = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(listed):
    main(["table", "--list"])
with contextlib.redirect_stdout(written):
    main(["table", "throwaway_planes", sys.argv[2], "--format", "json"])
print(json.dumps({
    "equal": prof.throwaway_planes.equals(prof.planes), "rows": len(prof.planes),
    "doc": type(prof).throwaway_planes.__doc__,
    "sql": int(prof.sql("SELECT count(*) AS n FROM throwaway_planes").n[0]),
    "listed": listed.getvalue().splitlines(), "written": json.loads(written.getvalue()),
    "doc_current": cat.api_text(cat.API.read_text()) == cat.API.read_text()}))
"""


def test_a_table_declared_once_appears_everywhere():
    run = subprocess.run([sys.executable, "-c", THROWAWAY, inspect.getsourcefile(catalogue),
                          str(SMALL)], capture_output=True, text=True, timeout=300,
                         cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.splitlines()[-1])
    assert out["equal"] and out["rows"] > 0
    assert out["doc"] == "A throwaway copy of planes."
    assert out["sql"] == out["rows"]
    assert [line.split(maxsplit=1) for line in out["listed"]][-1] == \
        ["throwaway_planes", "A throwaway copy of planes."]
    assert len(out["written"]) == out["rows"]
    assert not out["doc_current"]  # the doc test would flag docs/API.md


@pytest.fixture(scope="module", params=["jax_h100_nocmdbuf.xplane.pb",
                                        "tpu_v6e_jax_inference.xplane.pb"])
def prof(request):
    return tp.load(DATA / request.param)


def test_key_columns_identify_rows(prof):
    from tfprof_nb.cli.tables import table

    checked = 0
    for name, entry in catalogue.queried_entries().items():
        if name == "stats":
            continue
        frame = table(prof, name)
        assert set(entry.keys) <= set(frame.columns), (name, list(frame.columns))
        if entry.keys and len(frame):
            assert not frame.duplicated(list(entry.keys)).any(), name
            checked += 1
    assert checked >= 15
