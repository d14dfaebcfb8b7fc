"""The ``tfprof`` command on real captures: tests/data's GPU and TPU files and the CPU captures
of the fixtures.  What it prints is checked against the profile's own DataFrames, read here with
``tp.load``: the summary's numbers, tables written as CSV, JSON and Parquet and read back,
reports and traces, SQL, diffs, remote capture, and one clear line with exit code 2 for
input it cannot use.

Most commands run in this process through ``tfprof_nb.cli.main(argv)`` (what ``python -m
tfprof_nb`` runs once the interpreter has started), their stdout, stderr and stdin swapped for
buffers and the warning filters a fresh interpreter has; a new interpreter costs about 1.7 s of
imports a call.  What depends on the process runs in a subprocess as users run it: the entry
points (``python -m tfprof_nb`` and the console script, whose summary must equal the in-process
one), capture (TensorFlow's C++ client writes to file descriptor 1), a closed pipe, a blocked
import, and every unusable input (whatever else reaches the terminal would show there)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.measure_words import excluded_note, value_of
from tfprof_nb.plot.op_words import xprof_device_op_notes
from tfprof_nb.cli import COMMANDS, main
from tfprof_nb.cli._common import to_jsonable
from tfprof_nb.cli.formats import FORMULA_START
from tfprof_nb.cli.summary import TOP_OP_COLUMNS
from tfprof_nb.cli.tables import table_names
from tfprof_nb.constants import CATEGORY_COLUMNS
from tfprof_nb.table_catalogue import queried_entries

from .analysis.oracle import step_table
from .conftest import DATA, HERE, free_port, xplane_files
from .export.readers import chrome_tables, read_chrome, read_perfetto

H100 = DATA / "jax_h100_nocmdbuf.xplane.pb"  # JAX on an H100: every GPU and XLA table
H200 = DATA / "jax_h200_nocmdbuf.xplane.pb"  # the same script on an H200
TPU = DATA / "tpu_v6e_jax_inference.xplane.pb"
NO_STEPS = DATA / "mi300x_jax08_gemm.xplane.pb"  # AMD MI300X, no steps
FORMULA_NAMES = ['=HYPERLINK("https://example.invalid","x")', "+1+2", "-2+3", "@SUM(A1)"]


def tfprof(*args, code: int = 0, stdin: str | None = None, script: bool = False,
           process: bool = False):
    """Run ``tfprof ARGS`` and check its exit code: in this process, or in a new one (the
    console script with ``script``, ``python -m tfprof_nb`` with ``process``; always for
    ``capture``)."""
    argv = [str(a) for a in args]
    if script or process or argv[:1] == ["capture"]:
        cmd = [str(Path(sys.executable).parent / "tfprof")] if script else \
            [sys.executable, "-m", "tfprof_nb"]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        run = subprocess.run(cmd + argv, capture_output=True, text=True, timeout=300, env=env,
                             input=stdin)
    else:
        run = _in_process(argv, stdin)
    assert run.returncode == code, (args, run.returncode, run.stderr[-3000:])
    return run


def _in_process(argv: list[str], stdin: str | None) -> subprocess.CompletedProcess:
    """``tfprof_nb.cli.main(argv)`` with its own stdout (text over bytes, as Parquet writes
    bytes), stderr and stdin, under the warning filters of a fresh interpreter (not pytest's,
    which make a warning of ours an error)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err), _stdin(stdin):
        warnings.resetwarnings()  # Python's defaults, the last added first
        for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning,
                         DeprecationWarning):
            warnings.filterwarnings("ignore", category=category)
        warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
        try:
            returncode = main(argv)
        except SystemExit as done:  # argparse's usage errors and --version
            returncode = done.code if isinstance(done.code, int) else 0 if \
                done.code is None else 1
    return subprocess.CompletedProcess(argv, returncode, out.buffer.getvalue().decode("utf-8"),
                                       err.getvalue())


@contextlib.contextmanager
def _stdin(text: str | None):
    saved = sys.stdin
    sys.stdin = io.StringIO(text or "")
    try:
        yield
    finally:
        sys.stdin = saved


def tfprof_json(*args):
    """``tfprof ARGS --json`` parsed (strict JSON: NaN would not parse)."""
    return json.loads(tfprof(*args, "--json").stdout, parse_constant=_no_constant)


def _no_constant(name):
    raise AssertionError(f"{name} in JSON output")


def words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def formula_logdir(tmp_path_factory) -> Path:
    """A CPU capture whose trace names start like spreadsheet formulas."""
    logdir = tmp_path_factory.mktemp("cpu_formula")
    subprocess.run([sys.executable, str(HERE / "make_cpu_profile.py"), str(logdir), "formula"],
                   check=True, timeout=300, capture_output=True,
                   env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    return logdir


@pytest.fixture(scope="module")
def paths(cpu_logdir, gpu_fixture_file, tmp_path_factory) -> dict:
    pod = tmp_path_factory.mktemp("pod") / "plugins" / "profile" / "2024_01_01_00_00_00"
    pod.mkdir(parents=True)  # a run of two hosts: the CPU capture and the GPU one
    shutil.copy(xplane_files(cpu_logdir)[0], pod / "worker-0.xplane.pb")
    shutil.copy(gpu_fixture_file, pod / "worker-1.xplane.pb")
    return {"cpu": cpu_logdir, "gpu": gpu_fixture_file, "h100": H100, "tpu": TPU,
            "pod": pod.parents[2]}


# ---- the command itself ------------------------------------------------------------------

def test_version_help_and_the_console_script():
    version = f"tfprof_nb {tp.__version__}"
    assert tfprof("--version", process=True).stdout.strip() == version
    assert tfprof("--version").stdout.strip() == version
    assert tfprof("--version", script=True).stdout.strip() == version
    helped = tfprof("--help").stdout
    assert all(re.search(rf"^\s+{name}\s", helped, re.M) for name in COMMANDS)
    bare = tfprof(code=2)
    assert bare.stdout == "" and "usage: tfprof" in bare.stderr


# ---- summary -----------------------------------------------------------------------------

def _expected_findings(prof) -> list[tuple]:
    def plain(ev):
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in ev.items()}
    return [(f.kind, f.severity, f.what, f.fix, plain(f.evidence))
            for f in prof.recommendations()]


@pytest.mark.parametrize("which", ["cpu", "gpu", "tpu", "pod"])
def test_summary_numbers_equal_the_dataframes(paths, which):
    doc = tfprof_json("summary", paths[which], "--top", "5")
    prof = tp.load(paths[which])
    from tfprof_nb.analysis.steps.per_step import per_step

    steps = prof.steps
    d = per_step(steps).duration_ms  # (a pod's steps each at its slowest host: tp.check's)
    st = doc["steps"]
    assert (st["count"], st["source"]) == (len(steps), steps.source.iloc[0])
    assert (st["distinct"], st["hosts"]) == (steps.index.nunique(), steps.host.nunique())
    assert st["hosts"] == (2 if which == "pod" else 1)
    assert (st["median_ms"], st["min_ms"], st["max_ms"]) == (d.median(), d.min(), d.max())
    assert st["std_ms"] == (d.std() if len(d) > 1 else 0.0)
    assert st["median_ms"] == prof.measures.at["step_time_median_ms", "value"]
    assert (st["judged"] < st["count"]) == (which == "pod")
    # the mean and the breakdown are XProf's: over the steps it counts (each host's first and
    # last left out where it has more than five), as the page's card
    # (steps inferred from a repeated program, the TPU's: XProf has none, all are counted)
    size = steps.groupby("host").host.transform("size")
    counted = steps if steps.source.iloc[0].startswith("inferred") else \
        steps[(size <= 5) | steps.groupby("host").cumcount().between(1, size - 2)]
    if which == "pod":  # XProf leaves the CPU host out (the run has a GPU): the GPU host's step
        _, props = step_table(sorted(Path(paths["pod"]).rglob("*.xplane.pb")))
        assert f"{st['mean_ms']:.1f}" == props["steptime_ms_average"] != "0.0"
        # and its breakdown reads the first host's steps, the CPU's, which it left out: none
        counted = counted[counted.host == "worker-1"]
        assert st["mean_scope"].startswith("the step XProf counts on worker-1 (")
        assert [r["mean_ms"] for r in doc["breakdown"]] == [None] * len(CATEGORY_COLUMNS)
    assert st["mean_over"] == len(counted)
    assert st["mean_ms"] == counted.duration_ms.mean() == value_of(prof.measures,
                                                                     "step_time_mean_ms")
    rows = {r["column"]: r for r in doc["breakdown"]}
    assert list(rows) == CATEGORY_COLUMNS
    for col, row in rows.items() if which != "pod" else ():
        assert row["mean_ms"] == counted[col].mean()
        assert row["pct"] == 100 * counted[col].mean() / counted.duration_ms.mean()
        assert row["pct"] == pytest.approx(100 * counted[col].sum() / counted.duration_ms.sum(),
                                           abs=1e-9)
    ov = prof.overview()
    assert doc["input_bound"]["input_pct"] == ov.input_wait.get("pct")
    assert doc["input_bound"]["statement"] == ov.verdict["statement"]
    assert doc["devices"]["duty_cycle_pct"] == value_of(prof.measures, "duty_cycle_pct")
    duty = prof.measures.loc["duty_cycle_pct"] if "duty_cycle_pct" in prof.measures.index \
        else None  # (its scope: whose devices, over which time)
    assert doc["devices"]["duty_cycle_scope"] == (None if duty is None else duty["scope"])
    assert doc["devices"]["xprof_duty_cycle_pct"] == ov.xprof_device_duty_cycle_pct
    measured = {m["key"]: m["value"] for m in doc["measures"]}
    assert measured == {k: v for k, v in prof.measures.value.items() if pd.notna(v)}
    devices = pd.DataFrame(doc["devices"]["devices"])
    assert list(devices.get("duty_cycle_pct", [])) == list(prof.duty_cycle.duty_cycle_pct)
    assert doc["devices"]["type"] == ov.environment["device_type"]
    ops = prof.op_stats_table(include_idle=False)
    assert "IDLE left out" in doc["top_ops_pct_of"]  # (what the shares are of, said)
    for side in ("Host", "Device"):
        want = ops[ops.host_or_device == side].head(5)
        # (the op stats' own columns; not their rates, which the summary leaves out)
        got = pd.DataFrame(doc["top_ops"][side.lower()], columns=TOP_OP_COLUMNS)
        assert set(TOP_OP_COLUMNS) <= set(want.columns)
        for col in got.columns:
            assert got[col].tolist() == want[col].tolist(), (side, col)
    assert [(f["kind"], f["severity"], f["what"], f["fix"], f["evidence"])
            for f in doc["findings"]] == _expected_findings(prof)
    assert doc["profile"]["hosts"] == prof.hosts
    assert doc["profile"]["events"] == prof.n_events
    # (then why the device ops are not XProf's, as the op stats view says)
    assert doc["notes"] == [n for n in (excluded_note(prof.measures),) if n] + ov.reasons + \
        xprof_device_op_notes(prof, ops, "summary")


def test_summary_text_says_what_the_tables_say(cpu_logdir):
    text = tfprof("summary", cpu_logdir).stdout
    prof = tp.load(cpu_logdir)
    steps, d = prof.steps, prof.steps.duration_ms
    flat = words(text)
    # the median over every step; the mean and the breakdown XProf's, over the steps it
    # counts (8 steps: the first and last left out), the scope said
    counted = steps.iloc[1:-1]
    assert len(steps) == 8
    assert (f"{len(steps)} steps ({steps.source.iloc[0]}): median {d.median():.3f} ms, min "
            f"{d.min():.3f}, max {d.max():.3f} (std {d.std():.3f}) over all 8;") in flat
    assert (f"mean {counted.duration_ms.mean():.3f} ms over the 6 steps XProf counts, without "
            "the first and last of the 8") in flat
    assert "Step-time breakdown (mean per step over the 6 steps XProf counts" in flat
    for col in CATEGORY_COLUMNS:
        mean = counted[col].mean()
        if mean > 0:
            label = col.removesuffix("_ms").replace("_", " ")
            assert re.search(rf"{label}\s+{mean:.3f} ms\s+"
                             rf"{100 * mean / counted.duration_ms.mean():.1f} %", text), label
    assert words(prof.overview().input_bound["input_statement"]) in flat
    for f in prof.recommendations():
        assert words(f"[{f.severity}] {f.what}") in flat and words(f.fix) in flat
    top = prof.op_stats_table(include_idle=False)
    assert top[top.host_or_device == "Host"].operation.iloc[0][:40] in text
    # its shares are those of the op stats without IDLE, and the heading says so
    first = top[top.host_or_device == "Host"].iloc[0]
    (heading,) = [line for line in text.splitlines() if line.startswith("Top host ops")]
    assert heading.endswith("(% of the host ops' time, IDLE left out; prof.op_stats' % "
                            "counts IDLE)")
    (row,) = [line for line in text.splitlines() if line.startswith("   1  ")][:1]
    assert row.rstrip().endswith(f"{first.self_time_pct:5.1f} %")
    assert "Traceback" not in text and "tfprof_nb]" not in text  # no progress on stdout
    assert tfprof("summary", cpu_logdir, "--progress").stdout == text
    assert tfprof("summary", cpu_logdir, script=True).stdout == text


def test_a_pods_breakdown_says_it_is_one_hosts_over_its_own_time():
    """On a pod the breakdown is one host's (XProf's rule) and its shares are of that host's
    own time in the aligned steps, not of the mean step (each step at its slowest host): the
    header says so, as the measures' rows do."""
    pod = DATA / "tf_two_workers_loaded"
    text, doc = tfprof("summary", pod).stdout, tfprof_json("summary", pod)
    st = doc["steps"]
    assert st["breakdown_scope"] != st["mean_scope"]
    assert "'s breakdown, over its own time" in st["breakdown_scope"]
    assert f"Step-time breakdown (mean per step over {st['breakdown_scope']})" in words(text)
    rows = [r for r in doc["breakdown"] if r["mean_ms"]]
    own = sum(r["mean_ms"] for r in rows)  # the host's own mean step
    assert own < st["mean_ms"]  # (the slowest host's is longer)
    for r in rows:
        assert r["pct"] == pytest.approx(100 * r["mean_ms"] / own)


def test_the_demo_prints_the_summary_command_text(cpu_logdir):
    code = ("import sys, tfprof_nb as tp; from tfprof_nb.demo import print_summary; "
            "print_summary(tp.load(sys.argv[1]))")
    demo = subprocess.run([sys.executable, "-c", code, str(cpu_logdir)], capture_output=True,
                          text=True, check=True, timeout=300)
    assert demo.stdout == tfprof("summary", cpu_logdir).stdout


def test_several_files_one_unreadable_is_a_warning_line(tmp_path, cpu_file):
    bad = tmp_path / "broken.xplane.pb"
    bad.write_bytes(b"\x0a\xff\xff\xff\xff\x0f not a profile")
    run = tfprof("summary", cpu_file, bad, "--json")
    doc = json.loads(run.stdout)
    assert list(doc["profile"]["load_errors"]) == ["broken"]
    warning = [line for line in run.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1 and warning[0].startswith("tfprof: warning: 1 of 2 hosts")


# ---- tables --------------------------------------------------------------------------------

# each table of `tfprof table` as the public API gives it: a catalogue ``table`` is its
# property; the others (``stats``: prof.sql's) are written out here
PUBLIC = {name: (lambda p, name=name: getattr(p, name))
          for name, e in queried_entries().items() if e.kind == "table"} | {
    "events": lambda p: p.events.reset_index(),
    "stats": lambda p: p.sql("SELECT * FROM stats"),
    "steps": lambda p: p.steps.reset_index(),
    "measures": lambda p: p.measures.reset_index(),
    "launch_latency": lambda p: p.launch_latency.per_kernel,
    "launch_histogram": lambda p: p.launch_latency.histogram,
    "launch_outliers": lambda p: p.launch_latency.outliers,
    "launch_queue": lambda p: p.launch_latency.queue,
    "program_memory": lambda p: p.program_memory(),
}


def test_table_list_names_every_table_once():
    listed = tfprof("table", "--list").stdout.splitlines()
    assert [line.split()[0] for line in listed] == table_names()
    assert set(table_names()) == set(PUBLIC) == set(queried_entries())
    assert all(len(line.split(maxsplit=1)) == 2 for line in listed)
    assert [r["name"] for r in tfprof_json("table", "--list")] == table_names()


def _is_text(col: pd.Series) -> bool:
    return col.dtype == object or isinstance(col.dtype, pd.CategoricalDtype) or \
        pd.api.types.is_string_dtype(col.dtype)


def _cell_text(v):
    """What a text column's cell is in CSV: dicts and lists as JSON, missing as None."""
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(to_jsonable(v), ensure_ascii=False)
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) or v == "":
        return None  # CSV has one empty cell for a missing and an empty text
    return str(v)


def _unguarded(v):
    return v[1:] if isinstance(v, str) and v.startswith("'") and \
        v[1:].startswith(FORMULA_START) else v


def assert_csv_equals(text: str, frame: pd.DataFrame, guarded: bool = True) -> None:
    """CSV ``text`` read back with pandas equals ``frame``: numbers exactly, text with the
    formula guard taken off (and, unless ``guarded`` is False, present on every cell that
    starts like a formula)."""
    texts = [c for c in frame.columns if _is_text(frame[c])]
    back = pd.read_csv(io.StringIO(text), dtype={c: str for c in texts},
                       keep_default_na=False, na_values=[""])
    assert list(back.columns) == [str(c) for c in frame.columns] and len(back) == len(frame)
    for col in frame.columns:
        want, got = frame[col], back[str(col)]
        if col in texts:
            expected = [_cell_text(v) for v in want.astype(object)]
            read = [None if isinstance(v, float) else v for v in got.astype(object)]
            if guarded:
                assert not any(isinstance(v, str) and v.startswith(FORMULA_START)
                               for v in read), col
                read = [_unguarded(v) for v in read]
            assert read == expected, col
        elif want.dtype.kind in "iub":
            assert (got.to_numpy() == want.to_numpy()).all(), col
        else:  # floats: the very same doubles, NaN where NaN
            assert np.array_equal(got.to_numpy(np.float64), want.to_numpy(np.float64),
                                  equal_nan=True), col


@pytest.mark.parametrize("name", [n for n in PUBLIC if n != "stats"])
def test_csv_round_trips_every_table(paths, name):
    """On the H100 capture (every GPU and XLA table has rows; stragglers: the TPU's)."""
    path = paths["tpu"] if name == "stragglers" else paths["h100"]
    frame = PUBLIC[name](tp.load(path))
    assert len(frame) > 0 or name in ("launch_outliers", "counters",
                                                          "op_counters")  # (no counter lines)
    assert_csv_equals(tfprof("table", name, path).stdout, frame)


@pytest.mark.parametrize("name", ["op_stats", "memory_timeline", "planes"])
def test_csv_round_trips_on_the_tensorflow_gpu_capture(paths, name):
    frame = PUBLIC[name](tp.load(paths["gpu"]))
    assert_csv_equals(tfprof("table", name, paths["gpu"], "--format", "csv").stdout, frame)


def test_csv_neutralises_formulas_only_in_text_cells(formula_logdir, tmp_path):
    prof = tp.load(formula_logdir)
    events = PUBLIC["events"](prof)
    assert set(FORMULA_NAMES) <= set(events.name.astype(str))
    out = tmp_path / "events.csv"
    run = tfprof("table", "events", formula_logdir, "-o", out)
    assert run.stdout == "" and f"wrote {len(events):,} rows of events" in run.stderr
    text = out.read_text(encoding="utf-8")
    assert_csv_equals(text, events)
    names = set(pd.read_csv(out, dtype={"name": str}).name)
    assert {"'" + n for n in FORMULA_NAMES} <= names and not names & set(FORMULA_NAMES)
    assert (pd.read_csv(out).start_us < 0).sum() == (events.start_us < 0).sum()
    raw = tfprof("table", "events", formula_logdir, "--raw").stdout
    assert_csv_equals(raw, events, guarded=False)
    assert set(FORMULA_NAMES) <= set(pd.read_csv(io.StringIO(raw), dtype={"name": str}).name)
    query = "SELECT name, count(*) AS n FROM events WHERE name NOT LIKE 't%' GROUP BY 1"
    got = pd.read_csv(io.StringIO(tfprof("sql", formula_logdir, query, "--format", "csv")
                                  .stdout), dtype={"name": str})
    assert {"'" + n for n in FORMULA_NAMES} <= set(got.name)


def _json_cells(frame: pd.DataFrame) -> dict:
    return {str(c): [to_jsonable(v) for v in frame[c].astype(object)] for c in frame.columns}


@pytest.mark.parametrize("name", ["steps", "kernel_stats", "planes", "stats", "roofline"])
def test_json_tables_are_records_with_null_for_nan(paths, name):
    frame = PUBLIC[name](tp.load(paths["h100"]))
    rows = tfprof_json("table", name, paths["h100"])
    assert len(rows) == len(frame)
    got = {c: [r[c] for r in rows] for c in map(str, frame.columns)}
    assert got == _json_cells(frame)
    assert json.loads(tfprof("table", name, paths["h100"], "--format", "json").stdout) == rows


@pytest.mark.parametrize("name", ["steps", "kernel_stats", "memory_timeline", "events"])
def test_parquet_round_trips(paths, tmp_path, name):
    pytest.importorskip("pyarrow")
    out = tmp_path / f"{name}.parquet"
    tfprof("table", name, paths["h100"], "-o", out)
    frame = PUBLIC[name](tp.load(paths["h100"]))
    pd.testing.assert_frame_equal(pd.read_parquet(out), frame, check_dtype=False,
                                  check_categorical=False, check_exact=True)


def test_parquet_without_pyarrow_is_refused_before_loading(tmp_path, paths):
    """With pyarrow's import blocked (``sys.modules["pyarrow"] = None``, how Python makes an
    import fail), the command says so in one line, exit code 2, and writes nothing."""
    out = tmp_path / "steps.parquet"
    code = ("import sys; sys.modules['pyarrow'] = None; from tfprof_nb.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    run = subprocess.run([sys.executable, "-c", code, "table", "steps", str(paths["h100"]),
                          "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "" and not out.exists()
    assert run.stderr.strip().splitlines() == [
        'tfprof: error: Parquet needs pyarrow: pip install "tfprof-nb[parquet]" (or write '
        "--format csv or json)"]


def test_closing_the_pipe_early_is_not_an_error(paths):
    proc = subprocess.Popen([sys.executable, "-m", "tfprof_nb", "table", "events",
                             str(paths["h100"])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("event,host,plane,line,name")
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0
    assert proc.stderr.read() == ""


# ---- report, export, sql --------------------------------------------------------------------

def test_report_and_notebook_are_written(cpu_logdir, tmp_path):
    import nbformat

    html, nb = tmp_path / "r.html", tmp_path / "r.ipynb"
    doc = tfprof_json("report", cpu_logdir, "-o", html, "--notebook", nb, "--title", "CI run")
    assert doc["report"] == str(html) and doc["notebook"] == str(nb)
    assert doc["bytes"] == {"report": html.stat().st_size, "notebook": nb.stat().st_size}
    page = html.read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and "<title>CI run</title>" in page
    nbformat.validate(nbformat.read(str(nb), as_version=4))
    text = tfprof("report", cpu_logdir, "-o", html).stdout
    assert text.startswith(f"report: {html} (")


@pytest.mark.parametrize("flag, name", [("--chrome", "t.json"), (None, "t.json.gz"),
                                        ("--perfetto", "t.bin"), (None, "t.pftrace")])
def test_export_writes_every_event(cpu_file, tmp_path, flag, name):
    out = tmp_path / name
    doc = tfprof_json("export", cpu_file, *([flag] if flag else []), "-o", out)
    prof = tp.load(cpu_file)
    assert doc["bytes"] == out.stat().st_size > 0 and doc["events"] == prof.n_events
    if doc["format"] == "chrome":
        assert (out.read_bytes()[:2] == b"\x1f\x8b") == name.endswith(".gz")
        x, _, _ = chrome_tables(read_chrome(out))
        assert len(x) == prof.n_events + len(prof.steps)
    else:
        assert flag == "--perfetto" or name.endswith(".pftrace")
        slices, _, _ = read_perfetto(out)
        assert set(prof.events.name.astype(str)) <= set(slices.name)


def test_sql_prints_writes_and_reads_stdin(cpu_logdir, tmp_path):
    prof = tp.load(cpu_logdir)
    query = "SELECT count(*) AS n, sum(duration_us) AS us FROM events"
    assert tfprof_json("sql", cpu_logdir, query) == [
        {"n": prof.n_events, "us": pytest.approx(prof.events.duration_us.sum(), rel=1e-12)}]
    text = tfprof("sql", cpu_logdir, query).stdout.splitlines()
    assert text[0].split() == ["n", "us"] and text[1].split()[0] == str(prof.n_events)
    by_step = "SELECT step, duration_ms FROM steps ORDER BY step"
    piped = tfprof("sql", cpu_logdir, "-", "--format", "csv", stdin=by_step).stdout
    assert_csv_equals(piped, prof.steps.reset_index()[["step", "duration_ms"]])
    out = tmp_path / "steps.json"
    tfprof("sql", cpu_logdir, by_step, "-o", out)
    assert [r["duration_ms"] for r in json.loads(out.read_text())] == \
        prof.steps.duration_ms.tolist()


# ---- diff ----------------------------------------------------------------------------------

def test_diff_verdict_and_tables_follow_compare():
    doc = tfprof_json("diff", H100, H200, "--top", "4")
    base, new = tp.load(H100), tp.load(H200)
    mb, mn = base.steps.duration_ms.median(), new.steps.duration_ms.median()
    pct = 100 * (mn - mb) / mb
    assert doc["median_ms"] == {"base": mb, "new": mn, "pct": pct}
    # the band is tp.check's, judged the same way (here: too few steps to call +13 % real)
    row = tp.check(new, baseline=base, max_regression_pct=0).rows[0]
    band = doc["noise_band_pct"]
    assert band == {"low": row.details["band_low_pct"], "high": row.details["band_high_pct"]}
    assert band["low"] < 0 < band["high"] and row.passed
    assert doc["verdict"] == (f"NEW is {abs(pct):.1f} % {'slower' if pct > 0 else 'faster'} "
                              f"per step than BASE (median {mb:.3f} ms -> {mn:.3f} ms); noise "
                              f"band {band['low']:+.1f} % to {band['high']:+.1f} % (95 %, from "
                              "both runs' step times): within noise")
    c = tp.compare(base, new)
    steps = pd.DataFrame(doc["steps"]).set_index("metric")
    assert steps.base_ms.tolist() == c.steps.a.tolist()
    assert steps.new_ms.tolist() == c.steps.b.tolist()
    assert steps.delta_ms.tolist() == c.steps.delta.tolist()
    ops = pd.DataFrame(doc["ops"])
    assert ops.operation.tolist() == c.ops.head(4).index.get_level_values(1).tolist()
    assert ops.delta_us.tolist() == c.ops.delta.head(4).tolist()
    kernels = pd.DataFrame(doc["kernels"])
    assert kernels.kernel_name.tolist() == c.kernels.head(4).index.get_level_values(0).tolist()
    text = tfprof("diff", H100, H200).stdout
    assert doc["verdict"] in text.splitlines() and "Mean step time per category" in text


def test_diff_of_a_pod_says_whose_time_each_figure_is():
    """A pod's median step is each step at its slowest host; the category means are over
    every host's step in its own time: the page says each one's scope (one of the pod's own
    hosts as NEW: the median falls 18 %, its mean by 2 %)."""
    pod = DATA / "tf_two_workers_loaded"
    host = sorted(pod.glob("*.xplane.pb"))[0]
    text = tfprof("diff", pod, host).stdout
    base = tp.load(pod).steps
    assert "each step its slowest host's time)" in text.splitlines()[3]
    assert "Mean step time per category (ms), over every step of each run (a pod's: every " \
        "host's step, in its own time); the verdict above judges the median" in text
    mean = re.search(r"whole step\s+([0-9.]+)", text)
    assert float(mean.group(1)) == pytest.approx(base.duration_ms.mean(), abs=1e-3)
    one = tfprof("diff", host, host).stdout
    assert "slowest host" not in one.splitlines()[3]


def test_diff_of_a_profile_with_itself_and_without_steps():
    same = tfprof_json("diff", H100, H100)
    assert same["verdict"].startswith("NEW is as fast per step as BASE")
    assert same["median_ms"]["pct"] == 0.0
    none = tfprof_json("diff", H100, NO_STEPS)
    assert none["verdict"] == "no step time to compare: NEW has no steps"
    assert none["noise_band_pct"] is None


# ---- object stores and capture -----------------------------------------------------------------

def test_storage_options_reach_the_store(s3_server, s3_bucket, object_cache, gpu_fixture_file):
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.options())
    fs.put_file(str(gpu_fixture_file), f"{s3_bucket}/run/worker.xplane.pb")
    url = f"s3://{s3_bucket}/run"
    admin, nobody = s3_server.admin, s3_server.nobody

    def options(cred):
        return ["--storage-option", f"key={cred.key}", "--storage-option",
                f"secret={cred.secret}", "--storage-option", f"endpoint_url={s3_server.endpoint}"]
    doc = tfprof_json("summary", url, *options(admin))
    assert doc["profile"]["events"] == tp.load(gpu_fixture_file).n_events
    assert doc["profile"]["files"] == [f"{url}/worker.xplane.pb"]
    denied = tfprof("summary", url, *options(nobody), code=2)
    assert len(denied.stderr.strip().splitlines()) == 1 and url in denied.stderr


def test_capture_from_a_running_worker(tmp_path):
    port = free_port()
    worker = subprocess.Popen([sys.executable, str(HERE / "capturing" / "remote_worker.py"),
                               str(port), "60"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        assert worker.stdout.readline().strip() == "ready"
        doc = tfprof_json("capture", "--remote", f"grpc://127.0.0.1:{port}", "--duration-ms",
                          "800", "--logdir", tmp_path, "--summary")
    finally:
        worker.kill()
        worker.wait(timeout=30)
    run = Path(doc["run"])
    assert run.parent == tmp_path / "plugins" / "profile"
    assert [str(f) for f in xplane_files(tmp_path)] == doc["files"]
    assert doc["hosts"] == [f"127.0.0.1_{port}"] and doc["events"] > 0
    assert doc["summary"]["steps"]["count"] > 0
    assert tfprof_json("summary", run)["steps"] == doc["summary"]["steps"]
    from tfprof_nb.cli.capture_cmd import _text  # the text form (of the document in memory)
    from tfprof_nb.cli.summary import summarise

    text = _text({**doc, "summary": summarise(tp.load(run))})
    assert text.startswith(f"captured 1 host, {doc['events']:,} events") and "\n\n" in text


# ---- unusable input -------------------------------------------------------------------------

def _bad_inputs(tmp: Path, good: Path) -> dict:
    text = tmp / "notes.xplane.pb"
    text.write_text("hello, not a profile\n")
    empty = tmp / "empty_logdir"
    empty.mkdir()
    return {
        "missing path": ["summary", tmp / "nope"],
        "empty directory": ["summary", empty],
        "text file": ["table", "steps", text],
        "unknown protocol": ["summary", "nosuch://bucket/run"],
        "refused URL": ["summary", f"http://127.0.0.1:{free_port()}/run/h.xplane.pb"],
        "unknown table": ["table", "nope", good],
        "table without path": ["table", "steps"],
        "unknown option": ["summary", good, "--bogus"],
        "bad storage option": ["summary", good, "--storage-option", "novalue"],
        "bad format": ["table", "steps", good, "--format", "xml"],
        "json and csv": ["table", "steps", good, "--format", "csv", "--json"],
        "export kind": ["export", good, "-o", tmp / "trace.xyz"],
        "report under a file": ["report", good, "-o", text / "r.html"],
        "bad query": ["sql", good, "SELEC 1"],
        "unknown sql table": ["sql", good, "SELECT * FROM nosuch"],
        "empty query": ["sql", good, " "],
        "bad address": ["capture", "--remote", "http://x:1", "--logdir", tmp],
        "unreachable worker": ["capture", "--remote", f"127.0.0.1:{free_port()}",
                               "--duration-ms", "100", "--logdir", tmp],
        "negative top": ["summary", good, "--top", "-1"],
        "json into a csv file": ["table", "steps", good, "--json", "-o", tmp / "x.csv"],
    }


BAD = [
    "missing path", "empty directory", "text file", "unknown protocol", "refused URL",
    "unknown table", "table without path", "unknown option", "bad storage option",
    "bad format", "json and csv", "export kind", "report under a file", "bad query",
    "unknown sql table", "empty query", "bad address", "unreachable worker", "negative top",
    "json into a csv file"]


@pytest.mark.parametrize("case", BAD)
def test_unusable_input_is_one_line_and_exit_code_2(tmp_path, cpu_file, case):
    cases = _bad_inputs(tmp_path, cpu_file)
    assert list(cases) == BAD
    args = cases[case]
    run = tfprof(*args, code=2, process=True)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tfprof"), run.stderr
    assert "error" in lines[0] and "Traceback" not in run.stderr
    assert run.stdout == "" or json.loads(run.stdout)["exit_code"] == 2


def test_errors_name_what_is_wrong_as_json_and_with_a_traceback_on_demand(tmp_path):
    missing = tmp_path / "nope"
    doc = json.loads(tfprof("summary", missing, "--json", code=2).stdout)
    assert doc == {"error": f"{missing}: no such file or directory", "exit_code": 2}
    debug = tfprof("summary", missing, "--debug", code=2).stderr
    assert debug.startswith("Traceback") and "FileNotFoundError" in debug
    assert debug.strip().splitlines()[-1] == f"tfprof: error: {missing}: no such file or directory"
