"""Every sentence true: on every real capture in tests/data/ and a CPU TensorFlow capture made
here, no two statements disagree (precision, input wait, device count, tf.data presence) and
no sentence a view prints carries NaN, an enum name, a raw ``key=value`` or a Python repr.

The sentences are taken where users read them: the views' states (cards, statements, tab
titles and reasons, step notes, findings), the dashboard's header and the findings' text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets.dashboard_view import view_classes
from tfprof_nb.widgets.overview_view import profile_header
from tfprof_nb.widgets.traits import TableData

from ..conftest import DATA

CAPTURES = sorted(p.name for p in DATA.glob("*.xplane.pb")) + ["gpu_bert_multiworker", "cpu"]
_SKIPPED_VIEWS = {"timeline"}  # the trace viewer prints no sentences of its own


@dataclass
class Said:
    """What a profile's views say."""

    prof: object
    header: dict
    titles: dict = field(default_factory=dict)  # tab: title
    reasons: dict = field(default_factory=dict)  # tab: why empty
    states: dict = field(default_factory=dict)  # tab: trait values

    @property
    def cards(self) -> dict:
        return {card[0]: card[1] for card in self.states["overview"]["cards"]}

    def sentences(self) -> list[str]:
        """Every sentence the views print (a finding's fix, worded as code, apart)."""
        out = [*self.header.values(), *self.titles.values(), *self.reasons.values()]
        for values in self.states.values():
            for key in ("statements", "recommendations"):
                out += [s.partition(" Fix: ")[0] for s in values.get(key, [])]
            out += [c for card in values.get("cards", []) for c in card]
            out += [values.get(k, "") for k in ("step_note", "no_steps", "summary",
                                                 "idle_note")]
            out += list(values.get("notes", {}).values())
            out += list(values.get("peaks", {}).values())
            out += list(values.get("suggestions", {}).values())
            out += [f"{f['what']} ({f['evidence']})" for f in values.get("findings", [])]
            out += [v.title for v in values.values() if isinstance(v, TableData)]
        return [s for s in out if s]


_SAID: dict = {}


def _said(name: str, request) -> Said:
    if name not in _SAID:
        path = request.getfixturevalue("cpu_file") if name == "cpu" else DATA / name
        _SAID[name] = said_of(tp.load(path))
    return _SAID[name]


def said_of(prof) -> Said:
    """What every view of ``prof`` says (the trace viewer aside)."""
    said = Said(prof, dict(map(tuple, profile_header(prof))))
    for cls in view_classes():
        if cls.tab in _SKIPPED_VIEWS:
            continue
        said.titles[cls.tab] = cls.title_for(prof)
        reason = cls.reason(prof)
        if reason:
            said.reasons[cls.tab] = reason
        else:
            said.states[cls.tab] = cls.state(prof).values
    return said


@pytest.fixture(params=CAPTURES)
def said(request) -> Said:
    return _said(request.param, request)


def _findings(said: Said, kind: str) -> list:
    return [f for f in said.prof.recommendations() if f.kind == kind]


def _pct(text: str) -> float:
    return float(text.rstrip("%"))


# --- precision --------------------------------------------------------------------------------

_MATMUL_HLO = re.compile(r' dot\(|convolution\(|custom_call_target="__cu(?:blas|dnn)')


def test_precision_card_statement_and_finding_agree(said):
    """One 16-bit share: the card, the statement and the finding quote it, or none speaks."""
    share = said.prof.result("precision")
    statements = said.states["overview"]["statements"]
    cards = said.cards
    precision_cards = {k: v for k, v in cards.items() if k.startswith("16-bit")}
    findings = _findings(said, "mixed_precision")
    low = [s for s in statements if "is 16 bit" in s]
    if not share:
        assert not precision_cards and not low and not findings
        return
    assert precision_cards == {share["label"]: f"{share['pct16']:.1f}%"}
    assert low == ([share["statement"]] if "statement" in share else [])
    for s in low:
        assert f"Only {share['pct16']:.1f}%" in s
    for f in findings:
        assert f.evidence[share["evidence_key"]] == share["pct16"] < 50
    if share["source"] == "hlo":  # the HLO's own types: 16 bit means bf16/f16 operands
        hlo = said.prof.hlo_stats
        gpu = hlo[(hlo.device_type == "GPU") & hlo.resolved.astype(bool)]
        matmul = gpu[gpu.hlo_op_expression.fillna("").str.contains(_MATMUL_HLO)]
        half = matmul.hlo_op_expression.str.contains(r"\((?:[^()]*, )?b?f16\[")
        if len(matmul) and half.all():
            assert share["pct16"] == pytest.approx(100) and not low and not findings


def test_bf16_h200_captures_claim_no_32_bit_compute():
    """The H200 bf16 model: the card says its matrix multiplications are 16 bit, or (command
    buffers hiding the ops) nothing; never "0.0 %" nor "replace 32-bit ops"."""
    for name in ("jax_h200_nocmdbuf.xplane.pb", "jax_h200_transformer.xplane.pb"):
        prof = tp.load(DATA / name)
        from tfprof_nb.widgets.overview_view import OverviewView

        values = OverviewView.state(prof).values
        assert not any("32-bit" in s for s in values["statements"])
        assert not any(c[0].startswith("16-bit") and c[1] == "0.0%" for c in values["cards"])


# --- input wait -------------------------------------------------------------------------------

def test_input_wait_card_verdict_and_findings_agree(said):
    wait = said.prof.result("input_wait")
    card = said.cards.get("Waiting for input")
    assert (card is None) == (not wait)
    for f in _findings(said, "input_bound"):
        assert f"{f.evidence['input_wait_pct']:.1f}%" == card
    verdict = said.prof.overview().verdict
    if card:  # the page's verdict quotes the card's number (XProf's 'POTENTIALLY' verdict
        # quotes 'All Others', test_one_truth checks it); XProf's, where shown, as XProf's
        if card == "unknown":  # (no input events on the host: the verdict says so, not NOT)
            from tfprof_nb.analysis.findings.measures import NO_INPUT_EVENTS

            assert verdict["classification"] == "unknown" and wait["no_input_events"]
            assert verdict["statement"].startswith("This page cannot tell whether your program "
                                                   "is input-bound: " + NO_INPUT_EVENTS)
            assert not _findings(said, "input_bound")
        elif verdict["rule"] == "tfprof" or "waiting for input" in verdict["statement"]:
            assert card in verdict["statement"]
        else:
            assert "POTENTIALLY" in verdict["statement"]
        statements = said.states["overview"]["statements"]
        assert statements[0] == verdict["statement"]
        if "xprof_statement" in verdict:
            assert verdict["xprof_statement"].startswith("XProf's rule")
            assert verdict["xprof_statement"] in statements
        if "input" in said.states:
            assert said.states["input"]["statements"][0] == verdict["statement"]


def test_no_input_wait_where_a_device_has_no_kernel():
    """BERT: GPUs whose kernels all ran outside the only step idle through it, waiting for
    nothing of theirs: never input wait there; a device's idle causes in a step come from
    gaps between its own kernels."""
    prof = tp.load(DATA / "gpu_bert_multiworker")
    util = prof.gpu_utilization
    dev = util[(util.stream == "all") & (util.step >= 0)]
    empty = dev[dev.busy_us == 0]
    assert len(empty) == 2 and (empty.input_us == 0).all()
    outside = util[(util.stream == "all") & (util.step == -2)].set_index("device")
    assert outside.loc["/device:GPU:4", "kernels"] == 665


# --- devices ----------------------------------------------------------------------------------

def test_devices_counted_alike_in_header_card_and_environment(said):
    planes = said.prof.planes
    kind = next((k for k in ("GPU", "TPU") if planes.plane.str.startswith(f"/device:{k}").any()),
                None)
    header = said.header["Devices"]
    assert said.cards["Hosts / devices"] == f"{len(said.prof.hosts)} / {header}"
    env_title = said.states["overview"]["environment"].title
    if kind is None:
        assert header == "CPU only"
        return
    mine = planes[planes.plane.str.startswith(f"/device:{kind}")]
    active, idle = int((mine.events > 0).sum()), int((mine.events == 0).sum())
    assert header.startswith(f"{active} {kind}")
    assert (f"({idle} more without events)" in header) == (idle > 0 and active > 0)
    assert env_title == f"Devices: {header}"
    notes = " ".join(said.states["overview"]["statements"])
    for plane in mine[mine.events == 0].plane:
        assert plane in notes  # the others named apart


# --- tf.data ----------------------------------------------------------------------------------

def test_tf_data_tab_says_what_it_draws(said):
    tfd = said.prof.tf_data
    drawn = "tfdata" in said.states and len(said.states["tfdata"]["nodes"]) > 0
    assert drawn == (not tfd.graph.empty)
    if drawn:
        assert "No tf.data activity" not in said.states["tfdata"]["summary"]
    else:
        assert said.reasons["tfdata"] == tfd.summary["message"]
    for b in tfd.bottlenecks.itertuples():
        call = tfd.graph[(tfd.graph.pipeline == b.pipeline) & (tfd.graph["rank"] == 0)]
        bottleneck = call.iterator_id[call.bottleneck].iloc[0]
        upstream_drawn = (call.parent_id == bottleneck).any()
        if not upstream_drawn:
            assert "look upstream" not in b.suggestion_text.lower()
            assert "in the graph" not in b.suggestion_text


# --- names and words --------------------------------------------------------------------------

# "(key=value, ...)": raw keys in parentheses (not a call in code such as f(jit_compile=True))
_NESTED = re.compile(r"\([^()]*\(")  # "(a (b))": a raw value in words' clothes

_RAW_KEY = re.compile(r"(?<![\w.])\([^()]*\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+=[^()]*\)")
_REPR = re.compile(r"np\.\w+\(|array\(|\{'|\['|<\w[\w.]* object at|dtype\(|\bNone\b")


def test_no_nan_enum_raw_key_or_repr_in_any_sentence(said):
    for s in said.sentences():
        assert not re.search(r"\bnan\b", s, re.IGNORECASE), s
        assert "INVALID" not in s and "Unknown" not in s, s
        assert not _RAW_KEY.search(s), s
        assert not _REPR.search(s), s
    for label, value in said.cards.items():
        assert not _NESTED.search(f"{label} {value}"), (label, value)
    for f in said.prof.recommendations():  # the whole text, fix included
        assert not re.search(r"\bnan\b", str(f), re.IGNORECASE) and "INVALID" not in str(f)


def test_names_follow_the_profile(said):
    prof = said.prof
    env = prof.result("environment")
    ops_title = said.titles["ops"]
    assert ops_title == ("TensorFlow stats" if prof.framework.name == "tensorflow" else
                         "Op stats")
    assert said.titles["gpu"] == ("Device utilisation" if env["device_type"] == "TPU" else
                                  "GPU utilisation")
    if "ops" in said.states:  # device ops typed by the HLO the profile has
        table = said.states["ops"]["table"].frame
        device = table[table.host_or_device == "Device"]
        known = set(prof.hlo_stats.hlo_op_name.astype(str)) if len(prof.hlo_stats) else set()
        typed_unknown = device[(device["type"] == "Unknown")]
        assert not set(typed_unknown.operation) & known
    if "memory" in said.states:
        rows = said.states["memory"]["breakdown"].frame
        assert not (rows.data_type == "INVALID").any()
        assert not rows.allocator.astype(str).str.fullmatch(r"\d+").any()


# --- command buffers --------------------------------------------------------------------------

def test_every_table_of_buffered_kernels_says_what_xprofs_shows(said):
    """Where kernels ran inside XLA's command buffers (the H200 captures), every page that
    lists them by op says XProf's table files them under none: the op stats and the
    overview's top ops, the XLA tab's HLO table, the GPU kernel stats and ``tfprof summary``;
    elsewhere no page speaks of it."""
    from tfprof_nb.analysis.xla.buffer_words import xprof_buffer_words
    from tfprof_nb.cli.summary import summarise

    hlo = said.prof.hlo_stats
    words = {t: xprof_buffer_words(hlo, t) for t in ("op_stats", "hlo_stats", "kernel_stats",
                                                      "summary")}
    shown = {tab: said.states.get(tab, {}).get("statements", [])
             for tab in ("overview", "ops", "xla", "kernels")}
    notes = summarise(said.prof)["notes"]
    if not words["op_stats"]:
        assert not any("command buffers" in s and "XProf's" in s
                       for s in [*sum(shown.values(), []), *notes])
        return
    assert words["op_stats"] in shown["overview"] and words["op_stats"] in shown["ops"]
    assert words["hlo_stats"] in shown["xla"] and words["kernel_stats"] in shown["kernels"]
    assert words["summary"] in notes


# --- findings ---------------------------------------------------------------------------------

def test_a_findings_numbers_are_said_once(said):
    """A number the finding's sentence quotes is not quoted again, rounded another way, in
    its evidence (the straggler read "10 % of a step ... lag behind the median host 9.9%")."""
    from tfprof_nb.analysis.findings.evidence import LABELS

    for f in said.prof.recommendations():
        text = f.evidence_text()
        for key, value in f.evidence.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            quoted = any(form in f.what for form in (f"{value:.1f}%", f"{value:.0f} %",
                                                     f"{value:,.1f} us", f"{value:.1f} %"))
            if quoted and key in LABELS:
                assert LABELS[key] not in text, (f.kind, key, f.what, text)


def test_the_run_environment_has_no_blank_column(said):
    """A column the capture fills for no device (BERT's GPU names and vendors) is left out of
    the run environment, not shown blank on every row."""
    env = said.states["overview"]["environment"].frame
    for column in env.columns:
        values = env[column].astype(str).str.strip()
        assert not values.isin(["", "None", "nan", "<NA>"]).all(), column
