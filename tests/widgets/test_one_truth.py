"""One measure, one number per page: on every real capture in tests/data/, a TensorFlow CPU
capture and a JAX CPU capture made here, every card, verdict, finding and tab note a user
reads (the views' states, ``tfprof summary``'s text, ``tp.check``'s evidence) is collected,
and the test fails on

* two statements of one measure and scope with different numbers (each sentence template
  that quotes a measure is listed in ``QUOTES``; a clause labelled as XProf's must quote
  XProf's figure, any other the page's);
* a finding whose number differs from the ``prof.measures`` row it cites, or whose sentence
  names its measure twice;
* two findings giving the same fix, or counting the same time (quoting one measure);
* a card whose (label, scope) shows another value elsewhere.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.findings.evidence import evidence_words
from tfprof_nb.analysis.findings.measure_words import get, measure_text
from tfprof_nb.cli.summary import summarise, summary_text

from ..make_jax_profile import capture
from .test_sentences import CAPTURES, Said, _said, said_of

_N = r"(?P<v>\d+\.\d) ?%"
# measure key -> the sentence templates that quote it (a named group v holds the number)
QUOTES = {
    "input_wait_pct": [rf"wait(?:s)? for input (?:only )?{_N}", rf"Waiting for input {_N}",
                       rf"because {_N} of the total step time sampled is waiting for input"],
    "device_idle_pct": [rf"Devices idle in (?:the steps|their active spans) {_N}",
                        rf"'Devices idle in (?:the steps|their active spans)', reads {_N}",
                        rf"part of 'Devices idle in (?:the steps|their active spans)', which "
                        rf"reads {_N}"],
    "duty_cycle_pct": [rf"[Dd]uty cycle:? {_N}", rf"[Dd]uty cycle, {_N}",
                       rf"busy the other {_N}: the device duty cycle"],
    "host_wait_pct": [rf"idles? {_N} of (?:its|their) time [^.]*?the host launches late",
                      rf"Waiting for the host's late launches {_N}"],
    "launch_gap_pct": [rf"idles? {_N} of (?:its|their) time [^.]*?short gaps",
                       rf"Idle in short launch gaps {_N}"],
    "copy_sync_pct": [rf"idles? {_N} of (?:its|their) time [^.]*?copying"],
    "dependency_wait_pct": [rf"idles? {_N} of (?:its|their) time [^.]*?dependency"],
    "all_other_pct": [rf"{_N} as 'All Others'", rf"{_N} of the (?:total )?step time "
                      r"(?:sampled )?(?:is )?(?:spent on|is host work between the ops)",
                      rf"'All Others'[^.;0-9]*?{_N}"],
    "kernel_launch_pct": [rf"'Kernel Launch'[^.;0-9]*?{_N}",
                          rf"{_N} of the total step time sampled is spent on 'Kernel Launch'"],
    "small_kernels_pct": [rf"kernel runs under 10 us {_N}",
                          rf"kernel runs \(all devices\) lasting under 10 us {_N}"],
}
# XProf's own figure of a measure, in a clause labelled as XProf's
XPROF_QUOTES = {
    "input_wait_pct": [rf"breakdown counts {_N} of the step time waiting for input",
                       rf"XProf's rule gives {_N} \(XProf's step breakdown counts as input"],
    "duty_cycle_pct": [rf"XProf's rule gives {_N} \(XProf sums every device"],
    "device_idle_pct": [rf"XProf's rule gives {_N} \(XProf's overview counts TPU idle"],
}


def _jax_cpu(tmp_path_factory):
    return capture(tmp_path_factory.mktemp("jax_truth"), "marked")


@pytest.fixture(params=[*CAPTURES, "jax_cpu"])
def said(request, tmp_path_factory) -> Said:
    if request.param != "jax_cpu":
        return _said(request.param, request)
    from .test_sentences import _SAID

    if "jax_cpu" not in _SAID:
        _SAID["jax_cpu"] = said_of(tp.load(_jax_cpu(tmp_path_factory)))
    return _SAID["jax_cpu"]


_LIMITS = dict(max_step_ms=1e9, max_input_pct=100, min_duty_cycle_pct=0, max_idle_pct=100,
               max_host_bound_pct=100, max_kernel_launch_pct=100, allow_missing=True)


def _everything(said: Said) -> list[str]:
    """Every sentence a user reads about this profile: the views (cards with their scope,
    statements, findings, notes), ``tfprof summary`` and ``tp.check``'s evidence."""
    out = list(said.sentences())  # cards: test_cards_show_one_value_per_label_and_scope
    out += [str(f) for f in said.prof.recommendations()]
    out += summary_text(summarise(said.prof)).split("\n\n")
    out += [row.evidence for row in tp.check(said.prof, **_LIMITS).rows]
    return [re.sub(r"\s+", " ", s) for s in out if s]


def _clauses(sentence: str) -> list[str]:
    """A sentence cut where a clause labelled as XProf's starts or ends (';' or '. ')."""
    return [c for c in re.split(r";|\. (?=[A-Z])", sentence) if c.strip()]


def _quoted(clause: str, patterns: list[str]) -> list[str]:
    return [m.group("v") for p in patterns for m in re.finditer(p, clause)]


def test_every_statement_of_a_measure_quotes_its_number(said):
    table = said.prof.measures
    seen = 0
    for sentence in _everything(said):
        for clause in _clauses(sentence):
            xprof_clause = "XProf" in clause
            for key, patterns in QUOTES.items():
                row = table.loc[key] if key in table.index else None  # (unknown rows too)
                numbers = _quoted(clause, XPROF_QUOTES.get(key, [])) if xprof_clause else []
                if numbers:  # XProf's figure: its own where it differs, else the page's
                    assert row is not None, (key, clause)
                    xprof = row["xprof_value"] if pd.notna(row["xprof_value"]) else row["value"]
                    assert set(numbers) == {f"{xprof:.1f}"}, (key, clause)
                    seen += 1
                    continue
                numbers = _quoted(clause, patterns)
                if not numbers:
                    continue
                assert get(table, key) is not None, f"{key} quoted but not measured: {clause}"
                if row["rule"] == "tfprof" and key in XPROF_QUOTES and xprof_clause \
                        and "XProf's rule" in clause:
                    continue
                assert set(numbers) == {f"{row['value']:.1f}"}, (key, clause)
                seen += 1
    assert seen or said.prof.steps.empty or said.prof.measures.empty


def test_cards_show_one_value_per_label_and_scope(said):
    values: dict = {}
    for tab, state in said.states.items():
        for card in state.get("cards", []):
            key = (card[0], card[2] if len(card) > 2 else "")
            values.setdefault(key, set()).add(card[1])
    assert all(len(v) == 1 for v in values.values()), values
    table = said.prof.measures
    for card in said.states.get("overview", {}).get("cards", []):
        match = table[table.label == card[0]]
        if len(match):
            row = match.iloc[0]
            assert card[1] == measure_text(row["value"], row["unit"]), card
            assert card[2].startswith(str(row["scope"])), card
            xprof = re.search(r"XProf: (\d+\.\d)%", card[2])
            assert (xprof is None) == pd.isna(row["xprof_value"]), card
            if xprof:
                assert xprof.group(1) == f"{row['xprof_value']:.1f}", card


def test_idle_and_duty_cycle_over_one_span_are_said_as_one_measure(said):
    """Without steps the devices' idle share and their duty cycle count the same devices over
    the same spans (MI355X: 7.6% and 92.4%): the overview's cards and ``tfprof summary`` say
    them once, the duty cycle within the idle card; with steps (idle over the steps, duty
    cycle over the whole profile) each keeps its own."""
    table = said.prof.measures
    idle, duty = get(table, "device_idle_pct"), get(table, "duty_cycle_pct")
    cards = said.cards
    text = summary_text(summarise(said.prof))
    if idle is None or duty is None:
        return
    busy = f"busy the other {duty['value']:.1f}%: the device duty cycle"
    if idle["time"] == "profile":
        assert idle["value"] + duty["value"] == pytest.approx(100, abs=0.05)
        assert "Device duty cycle" not in cards
        card = next(c for c in said.states["overview"]["cards"] if c[0] == idle["label"])
        assert card[1] == f"{idle['value']:.1f}%" and card[2].endswith(busy), card
        assert text.count("duty cycle") == 1 and busy in re.sub(r"\s+", " ", text), text
    else:
        assert cards["Device duty cycle"] == f"{duty['value']:.1f}%"
        assert busy not in text and "Device duty cycle" in text


def test_findings_cite_their_measures_once(said):
    table = said.prof.measures
    findings = said.prof.recommendations()
    for f in findings:
        for key, value in f.evidence.items():
            measured = key.removeprefix("xprof_")
            if measured in table.index and isinstance(value, float):
                assert value == table.at[measured, "value"], (f.kind, key)
        if f.measure:
            row = get(table, f.measure)
            assert row is not None and f.evidence[f.measure] == row["value"]
            assert measure_text(row["value"], row["unit"]) in f.what, f.what
            assert f.measure not in evidence_words(f.evidence, (f.measure,))
            label = table.at[f.measure, "label"].lower()
            assert label not in evidence_words(f.evidence, (f.measure,)).lower()
    fixes = [f.fix for f in findings]
    assert len(fixes) == len(set(fixes)), fixes
    measures = [f.measure for f in findings if f.measure]
    assert len(measures) == len(set(measures)), measures


def test_no_finding_counts_the_step_breakdowns_host_time_beside_the_devices_own(said):
    """With the GPUs' own accounting, XProf's 'All Others' is evidence beside the host
    finding, never a finding of its own (the same time twice)."""
    kinds = [f.kind for f in said.prof.recommendations()]
    assert kinds.count("host_overhead") <= 1 and kinds.count("launch_bound") <= 1
    if get(said.prof.measures, "host_wait_pct") is not None:
        assert not any(f.measure == "all_other_pct" for f in said.prof.recommendations())


def test_device_totals_leave_out_devices_idle_through_the_steps():
    """BERT: GPU:1 and GPU:4 ran nothing inside the step (GPU:4 ran its own 650 ms before):
    the totals count GPU:6 alone and say so once; no duty cycle is given as XProf's (its
    GPU overview shows none)."""
    prof = tp.load(_data("gpu_bert_multiworker"))
    table = prof.measures
    idle = table.loc["device_idle_pct"]
    assert idle["devices"] == "GPU:6" and idle["excluded"] == "GPU:1, GPU:4"
    util = prof.gpu_utilization
    six = util[(util.stream == "all") & (util.step == 0) & (util.device == "/device:GPU:6")]
    assert idle["value"] == pytest.approx(100 * six.idle_us.sum() / six.wall_us.sum())
    duty = table.loc["duty_cycle_pct"]
    assert duty["value"] == pytest.approx(
        prof.duty_cycle.set_index("device").loc["/device:GPU:6", "duty_cycle_pct"])
    # XProf's GPU overview shows no duty cycle: no figure is given as XProf's (the
    # all-device 4.8% was, and the overview object gave it under the measure's name)
    assert pd.isna(duty["xprof_value"]) and duty["rule"] == "tfprof"
    ov = prof.overview()
    assert ov.device_duty_cycle_pct == duty["value"] and ov.xprof_device_duty_cycle_pct is None
    assert round(ov.device_duty_cycle_pct, 1) == 3.0
    assert "4.8%" not in repr(ov)
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView
    from tfprof_nb.widgets.overview_view import OverviewView

    for view in (OverviewView, GpuUtilizationView):  # said once a page, not in each sentence
        values = view.state(prof).values
        said = values["statements"] + [str(f) for f in values.get("recommendations", [])] + \
            [f["what"] for f in values.get("findings", [])] + \
            [" ".join(c) for c in values.get("cards", [])]
        assert sum("GPU:1, GPU:4" in s for s in said) == 1, said
    verdict = prof.overview().verdict
    assert verdict["classification"] == "both" and "MODERATELY" in verdict["statement"]
    assert "XProf's rule" in verdict["xprof_statement"]
    assert "POTENTIALLY" in verdict["xprof_statement"]


def test_the_page_verdict_is_ours_and_xprofs_is_labelled():
    """H200 (a JAX loop fed from Python): no input events on the host, so the page cannot
    tell whether it is input-bound (it said 'NOT input-bound', from a wait it cannot see);
    XProf's 'POTENTIALLY' (its 'All Others' share) appears only as XProf's, and the host
    finding carries that share as evidence."""
    prof = tp.load(_data("jax_h200_nocmdbuf.xplane.pb"))
    from tfprof_nb.widgets.overview_view import OverviewView

    statements = OverviewView.state(prof).values["statements"]
    potentially = [s for s in statements if "POTENTIALLY" in s]
    assert potentially and all(s.startswith("XProf's rule") for s in potentially)
    assert statements[0].startswith("This page cannot tell whether your program is "
                                    "input-bound: the host has none of the events XProf's "
                                    "rule counts as input")
    assert prof.overview().verdict["classification"] == "unknown"
    host = [f for f in prof.recommendations() if f.kind == "host_overhead"]
    assert len(host) == 1 and host[0].measure == "host_wait_pct"
    assert host[0].evidence["xprof_all_other_pct"] == prof.measures.at["all_other_pct", "value"]


def test_tpu_idle_has_its_scope_and_xprofs_whole_profile_figure():
    prof = tp.load(_data("tpu_v6e_jax_inference.xplane.pb"))
    row = prof.measures.loc["device_idle_pct"]
    assert row["time"] == "steps" and row["value"] < 1
    assert row["xprof_value"] == pytest.approx(prof.overview().device["idle_pct"])
    from tfprof_nb.widgets.overview_view import OverviewView

    cards = {c[0]: c for c in OverviewView.state(prof).values["cards"]}
    assert "TPU idle" not in cards  # XProf's whole-profile figure is in the card's scope
    assert "XProf: 13.4%" in cards["Devices idle in the steps"][2]


def _data(name: str):
    from ..conftest import DATA

    return DATA / name


def test_the_mean_step_names_the_steps_it_counts_and_leaves_the_median_to_its_own_row():
    """Two workers: the mean's extremes are each aligned step's slowest host's (step 1532 on
    127.0.0.1_26432, 10.625 ms), named by that host's own number (it named the first host's
    1590, a 4.7 ms step), and the mean's row gives no median of its own beside the median
    measure (6.083 ms there against 6.114)."""
    prof = tp.load(_data("tf_two_workers_loaded"))
    mean = prof.measures.loc["step_time_mean_ms"]
    assert pd.isna(mean["median"])
    steps = prof.steps
    for key, name in (("min", "min_of"), ("max", "max_of")):
        number, host = str(mean[name]).removeprefix("step ").split(" on ")
        row = steps[(steps.host == host) & (steps.index == int(number))]
        assert row.duration_ms.tolist() == [mean[key]]
    assert mean["max_of"] == "step 1532 on 127.0.0.1_26432"


def test_without_steps_the_words_speak_of_the_profile_and_of_one_device_as_one():
    """MI300X (legacy tracer, no steps): GPU:0 ran only copies, so it is left out "in the
    profile" (the note spoke of 'the profile's steps', which it has none of), and the one GPU
    counted is "its active span", not "each device's"."""
    prof = tp.load(_data("mi300x_jax_conv_legacy.xplane.pb"))
    from tfprof_nb.analysis.findings.measure_words import excluded_note, left_out_words

    idle = prof.measures.loc["device_idle_pct"]
    assert (idle["devices"], idle["excluded"]) == ("GPU:7", "GPU:0")
    note = excluded_note(prof.measures)
    assert note.startswith("GPU:0 ran no kernel in the profile") and "steps" not in note
    assert left_out_words(idle) == " (GPU:0 left out: no kernel in the profile)"
    statement = prof.overview().verdict["statement"]
    assert statement.endswith("the device figures are over its active span.")


def test_the_headers_duration_says_where_the_events_run_outside_it():
    """BERT: the capture ran 2,646.6 ms (start to stop) but its events run from 128.7 to
    2,775.3 ms on the profile's time axis, where the memory tab puts GPU_1_bfc's peak at
    2,775.2 ms: the header says both; an H200 capture's events lie inside its duration and
    the header gives the duration alone."""
    from tfprof_nb.widgets.memory_timeline_view import peak_words
    from tfprof_nb.widgets.overview_view import profile_header

    from ..conftest import DATA

    prof = tp.load(DATA / "gpu_bert_multiworker")
    events = prof.events
    first, last = events.start_us.min(), (events.start_us + events.duration_us).max()
    assert last > prof.duration_us
    said = dict(map(tuple, profile_header(prof)))["Duration"]
    assert said == (f"{prof.duration_us / 1e3:,.1f} ms (the capture's start to stop; its "
                    f"events run from {first / 1e3:,.1f} to {last / 1e3:,.1f} ms on the time "
                    "axis the pages use)")
    peaks = prof.memory_summary
    late = peaks[peaks.peak_time_us > prof.duration_us]
    assert len(late) and all(first <= t <= last for t in late.peak_time_us)
    assert any(f"at {late.peak_time_us.iloc[0] / 1e3:,.1f} ms" in s
               for s in peak_words(peaks, prof.memory_breakdown).values())
    h200 = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")
    assert dict(map(tuple, profile_header(h200)))["Duration"] == \
        f"{h200.duration_us / 1e3:,.1f} ms"
