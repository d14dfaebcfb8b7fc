"""The op stats, memory and step charts as users saw them on the real captures, in headless
Chromium: the idle box rules the table and the pies alike, pies carry labels, step numbers do
not collide, and JAX profiles read in JAX's words (TensorFlow ones keep XProf's)."""

from __future__ import annotations

import pytest

import tfprof_nb as tp
from tfprof_nb.analysis.xla.buffer_words import xprof_buffer_words
from tfprof_nb.plot.step_bars import MAX_STEP_TICKS
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView
from tfprof_nb.widgets.memory_timeline_view import MemoryTimelineView
from tfprof_nb.widgets.op_stats_view import OpStatsView
from tfprof_nb.widgets.step_time_graph_view import StepTimeGraphView

from ..conftest import DATA
from .harness import WidgetPage, wait_for_plot

_COLUMN = """name => {  // the cells of the op table's column `name`, in the rows shown
  const ths = Array.from(document.querySelectorAll('.tt-table th'));
  const i = ths.findIndex(th => th.dataset.column === name);
  if (i < 0) return null;
  return Array.from(document.querySelectorAll('.tt-table tr')).slice(1)
    .map(tr => tr.children[i].textContent);
}"""

_PIE_TEXTS = """() => Array.from(document.querySelectorAll('.pielayer .trace'))
  .map(t => Array.from(t.querySelectorAll('.slicetext')).map(s => s.textContent))"""


@pytest.fixture(scope="module")
def h200():
    return tp.load(DATA / "jax_h200_transformer.xplane.pb")


@pytest.fixture(scope="module")
def tpu():
    return tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")


def _idle_everywhere(page) -> dict:
    """Whether IDLE is in the op table's type column and among the drawn pies' labels."""
    return page.js("""() => {
      const gd = document.querySelector('.js-plotly-plot');
      const types = (%s)('type') || [];
      return {table: types.includes('IDLE'),
              pies: gd.data.some(t => (t.labels || []).includes('IDLE'))};
    }""" % _COLUMN)


def test_idle_box_rules_table_and_pies(h200, tmp_path):
    """Unchecked (as it starts): no IDLE row ranks first; checked: IDLE in both; the pies
    show named slices, and the host's one op is a sentence, not a pie."""
    busy = h200.op_stats_table(include_idle=False)
    with WidgetPage(OpStatsView(h200), tmp_path, bundle("opstats")) as page:
        wait_for_plot(page.page)
        assert page.js("() => document.querySelector('.db-idle').checked") is False
        assert _idle_everywhere(page) == {"table": False, "pies": False}
        assert page.js("() => document.querySelector('.db-idle-note').hidden") is True
        assert page.js(_COLUMN, "operation")[0] == busy.operation.iloc[0]
        for texts in page.js(_PIE_TEXTS):  # every pie labels slices other than "Other"
            assert any(t and not t.startswith("Other") for t in texts), texts
        said = page.js("() => Array.from(document.querySelectorAll('.annotation-text'))"
                       ".map(a => a.textContent).join(' | ')")
        assert "One op takes all of it" in said and "One type takes all of it" in said
        page.page.click(".db-idle")
        page.page.wait_for_function("() => (%s)('type')[0] === 'IDLE'" % _COLUMN)
        page.page.wait_for_function("""() => document.querySelector('.js-plotly-plot')
          .data.some(t => (t.labels || []).includes('IDLE'))""")
        assert _idle_everywhere(page) == {"table": True, "pies": True}
        # with the IDLE rows, what they count (XProf's rule) beside the page's idle measure
        page.page.wait_for_selector(".db-idle-note:not([hidden])")
        shown = page.js("() => document.querySelector('.db-idle-note').textContent")
        assert shown == OpStatsView.state(h200).values["idle_note"]
        page.page.click(".db-idle")
        page.page.wait_for_selector(".db-idle-note[hidden]", state="attached")
        page.page.wait_for_function("() => !(%s)('type').includes('IDLE')" % _COLUMN)
        assert _idle_everywhere(page) == {"table": False, "pies": False}
        assert page.console_errors == []


@pytest.mark.parametrize("name", ["jax_h200_transformer.xplane.pb", "gpu_bert_multiworker",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_idle_note_names_xprofs_rule_and_the_pages_measure(name):
    """The IDLE rows are a second figure for idle time, over each side's whole span: the note
    shown with them gives their shares as XProf's rule, then the page's own idle measure and
    the duty cycle, each with the number and scope of its prof.measures row."""
    from tfprof_nb.widgets.op_stats_view import idle_note, typed_op_stats

    prof = tp.load(DATA / name)
    ops = typed_op_stats(prof)
    note = idle_note(prof, ops)
    idle = ops[ops.type == "IDLE"].set_index("host_or_device").self_time_pct
    assert note.startswith("IDLE rows, XProf's rule:")
    whole = ops[ops.type == "IDLE"].set_index("host_or_device").total_self_time_us / idle
    side = "device" if len(prof.duty_cycle) == 1 else "devices"  # (one GPU: the device)
    assert (f"{side} {idle['Device']:.1f}% of {whole['Device'] / 10:,.1f} ms, host "
            f"{idle['Host']:.1f}% of {whole['Host'] / 10:,.1f} ms.") in note
    label = prof.measures.at["device_idle_pct", "label"]
    for key, words in (("device_idle_pct", f"'{label}', reads "),
                       ("duty_cycle_pct", "The device duty cycle, ")):
        row = prof.measures.loc[key]
        assert f"{words}{row['value']:.1f}% ({row['scope']})" in note, (key, note)
    assert ("any op runs" in note) is ("tpu" in name)
    # the duty cycle is over the IDLE rows' span only where the spans are one (the TPU):
    # BERT's IDLE spans all 3 GPUs (623.2 ms), its duty cycle GPU:6's active span (490.5 ms)
    counted = set(prof.measures.at["duty_cycle_pct", "devices"].split(", "))
    duty = prof.duty_cycle
    span = duty[duty.device.str.replace("/device:", "").isin(counted)].span_us.sum() / 1e3
    alike = bool(abs(span - whole["Device"] / 10) <= 1e-9 * whole["Device"] / 10)
    assert ("is the busy share of the same spans" in note) is alike
    assert ("the two do not add up to 100%" in note) is not alike
    assert alike is ("bert" not in name and "tpu" not in name)  # (TPU: modules start first)
    assert ("its XLA Ops and Steps lines" in note) is ("tpu" in name)
    # without the IDLE rows, nothing to say
    assert idle_note(prof, typed_op_stats(prof, include_idle=False)) == ""


@pytest.mark.parametrize("name", ["jax_h200_inputbound.xplane.pb",
                                  "tpu_v6e_jax_inference.xplane.pb"])
def test_the_table_says_what_its_shares_are_of(name):
    """Host and device rows share the % columns, each a share of its own side's time (each
    side's rows add up to 100): with IDLE of the whole time, without it of the ops' time
    (one op reads 24.7% in one and 21.4% in the other on the TPU): each title says which."""
    prof = tp.load(DATA / name)
    state = OpStatsView.state(prof).values
    # one GPU on the H200, four TPUs: each named as it is
    device = "the device's" if "h200" in name else "the devices'"
    for key, words in (("table", f"(self time %: host rows of the host's whole time, device "
                                 f"rows of {device} whole time, IDLE included)"),
                       ("table_without_idle", f"(self time %: host rows of the host's op time, "
                                              f"device rows of {device} op time, IDLE left "
                                              "out)")):
        table = state[key]
        assert table.title.endswith(words), table.title
        sums = table.frame.groupby("host_or_device").self_time_pct.sum()
        sides = {k: v for k, v in sums.to_dict().items() if v > 0}  # (a side of no op time)
        assert sides == {k: pytest.approx(100) for k in sides} and "Device" in sides


def test_jax_op_stats_say_jit_not_function(h200, tmp_path):
    state = OpStatsView.state(h200).values
    for key in ("table", "table_without_idle"):
        frame = state[key].frame
        assert "eager" not in frame and set(frame.execution) <= {"jit", "eager", ""}
    # the numbers stay XProf's: the analysis table keeps its column and values
    assert set(h200.op_stats_table().eager) <= {"Function", "Eager"}
    with WidgetPage(OpStatsView(h200), tmp_path, bundle("opstats")) as page:
        page.page.click(".db-idle")
        page.page.wait_for_function("() => (%s)('type')[0] === 'IDLE'" % _COLUMN)
        column, types = page.js(_COLUMN, "execution"), page.js(_COLUMN, "type")
        assert {(t == "IDLE", e) for t, e in zip(types, column)} == {(True, ""),
                                                                     (False, "jit")}
        assert "Function" not in page.js("() => document.querySelector('.tt-table')"
                                         ".textContent")


def test_tensorflow_op_stats_keep_xprofs_words(cpu_file):
    prof = tp.load(cpu_file)
    frame = OpStatsView.state(prof).values["table"].frame
    assert "execution" not in frame
    idle = frame["type"] == "IDLE"
    assert idle.any() and set(frame.eager[idle]) == {""}
    assert set(frame.eager[~idle]) <= {"Function", "Eager"} and len(frame[~idle])


def test_memory_breakdown_names_the_op_in_the_profiles_words(h200, gpu_fixture_file,
                                                            tmp_path):
    tf = MemoryTimelineView.state(tp.load(gpu_fixture_file)).values["breakdown"]
    assert "tf_op" in tf.frame and tf.filter_column == "tf_op"
    jax = MemoryTimelineView.state(h200).values["breakdown"]
    assert "tf_op" not in jax.frame and jax.filter_column == "op"
    with WidgetPage(MemoryTimelineView(h200), tmp_path, bundle("memory")) as page:
        wait_for_plot(page.page)
        heads = page.js("() => Array.from(document.querySelectorAll('.tt-table th'))"
                        ".map(th => th.textContent)")
        assert "op" in heads and not any("tf" in h for h in heads)
        # (the allocator's step counter, as the chart's hover names it: not prof.steps' step)
        assert "allocator step id" in heads and "step" not in heads


_TICKS = """sel => {  // the x tick labels of the first subplot: their boxes on the page
  const texts = document.querySelectorAll(sel + ' .subplot.xy .xaxislayer-above .xtick text');
  return Array.from(texts).filter(t => t.textContent).map(t => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  });
}"""


def _assert_ticks_apart(ticks: list) -> None:
    assert 2 <= len(ticks) <= MAX_STEP_TICKS + 1
    for a, b in zip(ticks, ticks[1:]):
        apart = a["right"] <= b["left"] or b["right"] <= a["left"] or \
            a["bottom"] <= b["top"] or b["bottom"] <= a["top"]
        assert apart, (a, b)


def test_tpu_step_charts_ticks_apart_outside_steps_apart(tpu, tmp_path):
    """The TPU capture's per-step charts: 100 steps (the step-time graph) and 4 devices x 100
    steps (device time): their step numbers never overlap ("98 4 11"), and the 13-15 s
    outside the steps are drawn apart, on their own axis."""
    (tmp_path / "steps").mkdir()
    with WidgetPage(StepTimeGraphView(tpu), tmp_path / "steps", bundle("stepgraph")) as page:
        wait_for_plot(page.page)
        _assert_ticks_apart(page.js(_TICKS, "body"))
    (tmp_path / "gpu").mkdir()
    with WidgetPage(GpuUtilizationView(tpu), tmp_path / "gpu", bundle("gpu")) as page:
        wait_for_plot(page.page)
        ticks = page.js(_TICKS, "body")
        _assert_ticks_apart(ticks)
        assert [t["text"] for t in ticks].count("0") == 4  # each device's first step
        outside = page.js("() => document.querySelector('.js-plotly-plot').data"
                          ".filter(t => t.xaxis === 'x2').map(t => Array.from(t.x))")
        assert outside and all(x == ["TPU:0", "TPU:1", "TPU:2", "TPU:3"] for x in outside)
        ranges = page.js("() => { const l = document.querySelector('.js-plotly-plot')"
                         "._fullLayout; return [l.yaxis.range[1], l.yaxis2.range[1]]; }")
        assert ranges[0] < 1000 < 12_000 < ranges[1]  # steps of 784 ms are not flattened
        assert page.console_errors == []


def test_op_table_says_why_kernels_are_not_device_ops(h200, tmp_path):
    """BERT's GPUs ran 1,330 kernels, yet its TensorFlow stats (as XProf's) hold no device op:
    none of its kernels carries a tf_op stat. The tab says so, with the kernels' count and busy
    time from the duty-cycle table; where kernels name their ops (the H200) it says nothing of
    that, only (its kernels running inside command buffers) what XProf's table shows there."""
    prof = tp.load(DATA / "gpu_bert_multiworker")
    ev = prof.events
    device_events = ev.index[ev.plane.astype(str).str.startswith("/device:")]
    assert not prof.stat("tf_op").index.isin(device_events).any()
    ops = prof.op_stats_table()
    assert set(ops[ops.host_or_device == "Device"].type) == {"IDLE"}
    duty = prof.duty_cycle
    (said,) = OpStatsView.state(prof).values["statements"]
    assert (f"the devices ran {int(duty.kernels.sum()):,} kernels "
            f"({duty.busy_us.sum() / 1e3:,.1f} ms busy)") in said
    assert OpStatsView.state(h200).values["statements"] == \
        [xprof_buffer_words(h200.hlo_stats, "op_stats")]
    with WidgetPage(OpStatsView(prof), tmp_path, bundle("opstats")) as page:
        wait_for_plot(page.page)
        shown = page.js("() => Array.from(document.querySelectorAll('.db-statement'))"
                        ".map(e => e.textContent)")
        assert shown == [said]
        assert page.console_errors == []


def test_a_pods_op_table_names_its_hosts():
    """Two TF workers, no device: the title names the 2 hosts and no device rows."""
    state = OpStatsView.state(tp.load(DATA / "tf_two_workers_loaded")).values
    assert state["table"].title.endswith(
        "(self time %: host rows of the 2 hosts' whole time, IDLE included)")
