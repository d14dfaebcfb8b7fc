"""``--window START_US:END_US`` and ``--lines PATTERN`` on the commands that load a profile,
on a real H200 capture: a windowed table holds only the events overlapping the window (fewer
than the whole), ``--lines`` equals ``tp.load(lines=...)``, and a bad value, a ``--lines``
matching nothing or a profile too big for memory is one line naming the option, exit 2."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.runtime.decoding import decode as decoding
from tfprof_nb.cli import main

from ..conftest import DATA
from ..test_cli import tfprof

GPU = DATA / "jax_h200_transformer.xplane.pb"  # JAX on an H200: host and GPU lines


@pytest.fixture(scope="module")
def events():
    return tp.load(GPU, progress=False).events


def _middle(events, lo=0.4, hi=0.6) -> tuple[float, float]:
    first = float(events.start_us.min())
    last = float((events.start_us + events.duration_us).max())
    return first + (last - first) * lo, first + (last - first) * hi


def test_a_windowed_table_has_only_the_events_inside_the_window(events, tmp_path):
    lo, hi = _middle(events)
    out = tmp_path / "events.csv"
    tfprof("table", "events", GPU, "--window", f"{lo}:{hi}", "-o", out)  # as users run it
    part = pd.read_csv(out)
    assert 0 < len(part) < len(events) / 2
    end_ps = part.start_ps + part.duration_ps
    assert (part.start_ps <= round(hi * 1e6)).all() and (end_ps >= round(lo * 1e6)).all()
    whole_end = events.start_ps + events.duration_ps
    inside = events[(events.start_ps <= round(hi * 1e6)) & (whole_end >= round(lo * 1e6))]
    assert part.start_ps.tolist() == inside.start_ps.tolist()


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_lines_repeated_or_as_a_comma_list_are_tp_load_lines(events, capsys):
    lines = sorted(set(events.line))
    chosen = [lines[0], lines[-1]]
    want = tp.load(GPU, lines=chosen, progress=False).events
    assert 0 < len(want) < len(events)
    for opts in (["--lines", chosen[0], "--lines", chosen[1]],
                 ["--lines", ",".join(chosen)]):
        code, out, err = _run(capsys, "table", "events", GPU, "--format", "csv", "--no-progress",
                              *opts)
        assert code == 0, err
        got = pd.read_csv(io.StringIO(out))
        assert got.start_ps.tolist() == want.start_ps.tolist()
        assert set(got.line) == set(chosen)
    # an open end and a plane's glob, with the summary
    lo, _ = _middle(events, 0.5)
    code, out, err = _run(capsys, "summary", GPU, "--json", "--no-progress", "--window",
                          f"{lo}:", "--lines", "/device:GPU:0/*")
    assert code == 0, err
    assert '"events":' in out
    code, out, err = _run(capsys, "table", "events", GPU, "--no-progress", "--window=-5:")
    assert code == 0 and len(pd.read_csv(io.StringIO(out))) == len(events), err  # all after -5


@pytest.mark.parametrize("opts, said", [
    (["--window", "12"], "argument --window: expected START_US:END_US"),
    (["--window", "a:b"], "argument --window: START_US and END_US must be numbers"),
    (["--window", "5:1"], "argument --window: '5:1' starts after it ends"),
    (["--lines", "a,,b"], "argument --lines: an empty line name"),
    (["--lines", "no such line*"], "--lines no such line*: matches no line of this profile"),
])
def test_a_bad_value_names_the_option(capsys, opts, said):
    with pytest.raises(SystemExit) as exit_info:  # (argparse's usage error, or our exit 2)
        raise SystemExit(main(["table", "events", str(GPU), "--no-progress", *opts]))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


def test_too_big_for_memory_names_the_options(capsys, monkeypatch):
    monkeypatch.setattr(decoding, "available_memory", lambda: 4096)
    code, _, err = _run(capsys, "summary", GPU, "--no-progress")
    assert code == 2 and "--window START_US:END_US" in err and "--lines PATTERN" in err, err
    code, _, err = _run(capsys, "summary", GPU, "--no-progress", "--window", ":")
    assert code == 2 and "choose a narrower --window or fewer --lines" in err, err
