"""The device views in headless Chromium, from real profiles: the GPU utilisation tab (NVIDIA
TensorFlow, AMD JAX, TPU), the program memory section of the XLA tab and the overview's device
figures (TPU)."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb.widgets.gpu_utilization_view import device_findings
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.dashboard_view import Dashboard

from ..conftest import DATA
from .harness import WidgetPage, wait_for_plot

TPU = DATA / "tpu_v6e_jax_inference.xplane.pb"
GPU_PROFILES = ["gpu_bert_multiworker/34.83.195.179_6003.xplane.pb",
                "mi300x_jax08_gemm.xplane.pb", "mi355x_jax_te_fused_attn.xplane.pb"]
CAUSES = ["busy", "sync_memcpy", "input", "launch_bound", "host_bound", "other"]


def _csv(page, index: int, root: str = "body") -> pd.DataFrame:
    """The ``index``-th table under ``root`` as its CSV export (values as the page has them)."""
    text = page.js("([sel, i]) => document.querySelectorAll(sel + ' .tfprof-table')[i]"
                   ".__table.csv()", [root, index])
    return pd.read_csv(io.StringIO(text), dtype={"program_id": str})


def _input_unknown(prof) -> bool:
    """Whether the devices' input wait is unknown: the host has no input event (then, with
    steps, the overview's card reads "unknown" too)."""
    unknown = prof.result("input_events") == 0
    if "input_wait_pct" in prof.measures.index:
        assert pd.isna(prof.measures.at["input_wait_pct", "value"]) is unknown
    return unknown


def _expected_devices(prof) -> pd.DataFrame:
    """Per device from prof.gpu_utilization and prof.duty_cycle, computed here on their own:
    each cause's share of the device's wall time over the steps, and (where the profile has
    steps) its busy time and kernels outside them (step -2)."""
    rows = []
    util = prof.gpu_utilization.query("stream == 'all'")
    with_steps = (util.step >= 0).any()
    for (host, device), g in util.groupby(["host", "device"], sort=False):
        inside, outside = g[g.step != -2], g[g.step == -2]
        wall = inside.wall_us.sum()
        duty = prof.duty_cycle[(prof.duty_cycle.host == host) & (prof.duty_cycle.device == device)]
        row = {"device": device, "steps_wall_ms" if with_steps else "active_span_wall_ms":
               wall / 1e3,
               **{f"{c}_pct": 100 * inside[f"{c}_us"].sum() / wall for c in CAUSES}}
        if _input_unknown(prof):  # blank, as the overview's card reads "unknown"
            row["input_pct"] = np.nan
        if with_steps:
            row.update(outside_steps_busy_ms=outside.busy_us.sum() / 1e3,
                       outside_steps_kernels=int(outside.kernels.sum()))
        row["kernels"] = int(duty.kernels.sum())
        if with_steps:  # (without steps the busy share is the duty cycle: one column)
            row["duty_cycle_pct"] = float(duty.duty_cycle_pct.iloc[0])
        else:
            assert row["busy_pct"] == pytest.approx(float(duty.duty_cycle_pct.iloc[0]))
        rows.append(row)
    return pd.DataFrame(rows)


def _gpu_pane(page) -> str:
    return page.js("() => document.querySelector(\"[data-pane='gpu']\").textContent")


@pytest.mark.parametrize("name", GPU_PROFILES)
def test_gpu_tab_draws_the_tables_of_real_gpu_profiles(name, tmp_path):
    prof = tp.load(DATA / name)
    dash = Dashboard(prof)
    assert "gpu" not in dash.reasons and dash.errors == {}
    with WidgetPage(dash, tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='gpu']")
        wait_for_plot(page.page, "[data-pane='gpu']", 3)
        bars = page.js("() => document.querySelector(\"[data-pane='gpu'] .js-plotly-plot\")"
                       "._fullData.map(t => [t.name, Array.from(t.y), t.xaxis])")
        devices = prof.gpu_utilization.query("stream == 'all'")
        steps = devices[devices.step != -2]  # time outside the steps: its own panel (x2)
        in_steps = [b for b in bars if b[2] == "x"]
        unknown = _input_unknown(prof)  # (the JAX captures: no input event on the host)
        parts = 5 if unknown else 6  # unknown: no input part, the host-bound part holds it
        assert [len(b[1]) for b in in_steps] == [len(steps)] * parts  # a bar per device, step
        assert in_steps[0][0] == "Busy (kernels)"
        title = page.js("() => document.querySelector(\"[data-pane='gpu'] .js-plotly-plot\")"
                        ".layout.title.text")  # over the steps, or (none) the active spans
        span = "its" if steps.device.nunique() == 1 else "each one's"  # (one device: its)
        assert title.startswith("Device time per step" if (steps.step >= 0).any() else
                                f"Device time over {span} active span (no steps)")
        names = [b[0] for b in in_steps]
        assert ("Waiting for input" in names) is not unknown
        assert ("Host-bound (input made on the host included)" in names) is unknown
        np.testing.assert_allclose(in_steps[0][1], steps.busy_us / 1e3)
        outside = [b for b in bars if b[2] == "x2"]
        assert sum(len(b[1]) for b in outside) == parts * int((devices.step == -2).sum())
        drawn = page.js("() => document.querySelectorAll(\"[data-pane='gpu'] .js-plotly-plot\")"
                        "[1]._fullData.reduce((a, t) => a + Array.from(t.y)"
                        ".reduce((x, y) => x + y, 0), 0)")
        assert drawn == prof.launch_latency.histogram.launches.sum() > 0
        shown = _csv(page, 0, "[data-pane='gpu']")
        expected = _expected_devices(prof)
        assert list(shown.columns) == list(expected.columns)
        assert shown.device.tolist() == expected.device.tolist()
        np.testing.assert_allclose(shown.drop(columns="device").to_numpy(float),
                                   expected.drop(columns="device").to_numpy(float), rtol=1e-12)
        np.testing.assert_allclose(shown.filter(like="_pct").drop(
            columns="duty_cycle_pct", errors="ignore").sum(axis=1), 100)  # the whole wall
        pane = _gpu_pane(page)
        findings = device_findings(prof)
        assert all(f.what in pane and f.fix in pane for f in findings)
        assert findings or "Nothing stands out." in pane  # mi355x: busy 92 % of its span
        assert f"Device duty cycle: {prof.measures.at['duty_cycle_pct', 'value']:.1f}%" in pane
        assert ("Waiting for input: unknown: the host has none of the events XProf's rule "
                "counts as input" in pane) is unknown
        assert "No chart: no collectives" in pane  # none of these profiles has any
        assert page.console_errors == [] and page.blocked == []


def test_tpu_profile_has_a_device_utilisation_tab_without_kernels(tmp_path):
    """On a TPU the tab is "Device utilisation": the duty cycle, the host plane's counters,
    ops (not kernels), and no launch latency charts (TPU ops are not launched one by one)."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(TPU)
    assert GpuUtilizationView.title_for(prof) == "Device utilisation"
    assert GpuUtilizationView.title_for(tp.load(DATA / GPU_PROFILES[0])) == "GPU utilisation"
    with WidgetPage(GpuUtilizationView(prof), tmp_path, bundle("gpu")) as page:
        wait_for_plot(page.page)
        assert page.js("() => document.querySelectorAll('.js-plotly-plot').length") == 1
        shown = _csv(page, 0)
        np.testing.assert_allclose(shown.duty_cycle_pct, prof.duty_cycle.duty_cycle_pct,
                                   rtol=1e-12)
        assert shown.device.tolist() == [f"/device:TPU:{i}" for i in range(4)]
        assert "ops" in shown.columns and not any("kernel" in c for c in shown.columns)
        assert shown.ops.tolist() == prof.duty_cycle.kernels.tolist()
        notes = page.js("() => Array.from(document.querySelectorAll('.gpu-note'))"
                        ".map(n => n.textContent)")
        assert len(notes) == 1  # no launch latency charts
        outside = prof.gpu_overlap.attrs["collectives_outside"]  # (its all-reduces: before)
        assert (f"no collective ops (all-reduce, all-gather, ...) inside the steps: "
                f"{outside['ms']:,.1f} ms of them ran outside every step, on 4 TPUs") in notes[0]
        text = page.js("() => Array.from(document.querySelectorAll('.db-statement, .gpu-note, "
                       ".gpu-findings, .tfprof-table')).map(e => e.textContent).join(' ')")
        mxu = prof.overview().device["mxu_utilization_pct"]
        assert f"MXU utilisation {mxu:.1f}%" in text
        assert "kernel" not in text.lower()
        assert page.js("() => document.querySelectorAll('.tfprof-table').length") == 1
        assert page.console_errors == []


def test_gpu_tab_says_why_a_cpu_profile_has_none(cpu_file, tmp_path):
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(cpu_file)
    reason = GpuUtilizationView.reason(prof)
    assert reason.startswith("No device activity: no GPU or TPU activity in this profile")
    with WidgetPage(Dashboard(prof), tmp_path, bundle("dashboard")) as page:
        page.page.click(".db-tab[data-tab='gpu']")
        assert page.js("() => document.querySelector(\"[data-pane='gpu'] .db-reason\")"
                       ".textContent") == reason
        assert page.js("() => document.querySelector(\".db-tab[data-tab='gpu']\")"
                       ".classList.contains('tp-tab-empty')")


# --- XLA: program memory ----------------------------------------------------------------------

def _options(page) -> list[list[str]]:
    return page.js("() => Array.from(document.querySelectorAll('.xla-program option'))"
                   ".map(o => [o.value, o.textContent])")


def _memory_figure(page) -> dict:
    """The program memory figure drawn: its meta and the heap trace's largest value."""
    page.page.wait_for_function("() => document.querySelector('.xla-memory .js-plotly-plot "
                                ".main-svg')", timeout=60000)
    return page.js("""() => {
      const gd = document.querySelector('.xla-memory .js-plotly-plot');
      const heap = gd._fullData.find(t => t.name === "Heap");
      return {meta: gd.layout.meta, heap_max: heap ? Math.max(...Array.from(heap.y)) : null};
    }""")


def _check_program(page, prof, program_id: str) -> None:
    """The section shows ``program_id`` as prof.program_memory says it is."""
    mem = prof.program_memory(int(program_id))
    shown = _memory_figure(page)
    assert shown["meta"]["program_id"] == program_id
    assert shown["meta"]["peak_heap_bytes"] == mem.peak_heap_bytes
    if len(mem.heap):
        assert shown["heap_max"] * 2**20 == pytest.approx(mem.peak_heap_bytes, rel=1e-12)
    buffers = _csv(page, 1, ".tfprof-xla")  # the HLO op table first, then the buffers
    assert buffers.hlo_op_name.tolist() == mem.buffers.hlo_op_name.tolist()
    assert buffers.size_bytes.tolist() == mem.buffers.size_bytes.tolist()


def test_program_memory_section_of_the_tpu_profile(tmp_path):
    from tfprof_nb.widgets import XlaView

    prof = tp.load(TPU)
    programs = prof.program_memory()
    view = XlaView(prof)
    with WidgetPage(view, tmp_path, view._module_source) as page:
        options = _options(page)
        assert [o[0] for o in options] == [str(p) for p in programs.program_id]  # 64-bit ids
        assert options[0][1] == "jit_f(12190760917235803885): peak 20 GiB"
        _check_program(page, prof, options[0][0])
        page.page.select_option(".xla-program", options[1][0])
        page.page.wait_for_function("id => document.querySelector('.xla-memory .js-plotly-plot')"
                                    "?.layout.meta.program_id === id", arg=options[1][0])
        _check_program(page, prof, options[1][0])
        # the HLO op table: program ids exact too
        ops = _csv(page, 0, ".tfprof-xla")
        assert ops.program_id.tolist() == [str(p) for p in prof.hlo_stats.program_id]
        assert page.js("() => window.__sent.length") == 0  # all four came with the view
        assert page.console_errors == [] and page.blocked == []


@pytest.mark.parametrize("kernel", [True, False])
def test_programs_beyond_the_state_come_from_the_kernel(kernel, tmp_path, monkeypatch):
    """Only the first program's memory travels with the view here: a live view asks the
    kernel for another, a page without one says where to find it."""
    from tfprof_nb.widgets import XlaView, xla_memory

    monkeypatch.setattr(xla_memory, "STATE_PROGRAMS", 1)
    prof = tp.load(DATA / "mi355x_jax_te_fused_attn.xplane.pb")
    view = XlaView(prof)
    assert list(view.memory_details) == [str(prof.program_memory().program_id[0])]
    with WidgetPage(view, tmp_path, view._module_source, kernel=kernel) as page:
        second = _options(page)[1][0]
        page.page.select_option(".xla-program", second)
        if kernel:
            page.page.wait_for_function("id => document.querySelector('.xla-memory "
                                        ".js-plotly-plot')?.layout.meta.program_id === id",
                                        arg=second)
            _check_program(page, prof, second)
            assert page.js("() => window.__sent") == [
                {"kind": "program_memory", "program": second, "id": 1}]
        else:
            missing = page.js("() => document.querySelector('.xla-mem-missing').textContent")
            assert f"prof.program_memory({second})" in missing
        assert page.console_errors == []


def test_programs_without_a_buffer_assignment_say_so(tmp_path_factory, tmp_path):
    from tfprof_nb.widgets import XlaView

    from ..analysis.xla_profiles import make

    prof = tp.load(make(tmp_path_factory, "gpu") / "full.xplane.pb")
    view = XlaView(prof)
    with WidgetPage(view, tmp_path, view._module_source) as page:
        options = _options(page)
        bare = [o for o in options if o[1].endswith("no buffer assignment")]
        assert options[-2:] == bare and sorted(o[0] for o in bare) == ["11", "12"]  # last
        _check_program(page, prof, options[0][0])
        page.page.select_option(".xla-program", bare[0][0])
        page.page.wait_for_function("() => document.querySelector('.xla-mem-reason')")
        reason = page.js("() => document.querySelector('.xla-mem-reason').textContent")
        assert reason == f"Note: {prof.program_memory(int(bare[0][0])).reasons[0]}"
        assert "no buffer assignment" in reason
        assert page.js("() => document.querySelectorAll('.xla-memory .js-plotly-plot')"
                       ".length") == 0
        notes = page.js("() => document.querySelector('.xla-mem-note').textContent")
        assert notes.startswith("2 of 4 programs have no buffer assignment")
        assert page.console_errors == []


# --- overview: device figures --------------------------------------------------------------

def _cards(page) -> dict:
    return dict(page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                        ".map(c => [c.children[0].textContent, c.children[1].textContent])"))


def test_overview_shows_the_tpu_figures_and_where_steps_come_from(tmp_path):
    from tfprof_nb.widgets import OverviewView

    prof = tp.load(TPU)
    ov = prof.overview()
    with WidgetPage(OverviewView(prof), tmp_path, bundle("overview")) as page:
        cards = _cards(page)
        dev = ov.device
        # the duty cycle is XProf's (every TPU is active in the steps); idle is the steps',
        # XProf's whole-profile TPU idle in that card's scope, as XProf's
        assert cards["Device duty cycle"] == f"{dev['duty_cycle_pct']:.1f}%"
        assert cards["Devices idle in the steps"] == \
            f"{prof.measures.at['device_idle_pct', 'value']:.1f}%"
        scopes = page.js("() => Array.from(document.querySelectorAll('.db-card'))"
                         ".map(c => c.children[2] ? c.children[2].textContent : '')")
        assert any(f"XProf: {dev['idle_pct']:.1f}%" in s for s in scopes)
        assert "TPU idle" not in cards
        assert cards["MXU utilisation"] == f"{dev['mxu_utilization_pct']:.1f}%"
        # no HBM counter on the host plane: no card, a note says why (never "NaN")
        assert np.isnan(dev["hbm_utilization_pct"]) and "HBM utilisation" not in cards
        statements = page.js("() => document.querySelector('.tfprof-overview').textContent")
        assert "has no HBM utilisation counter" in statements and "NaN" not in statements
        assert cards["FLOP rate relative to the roofline"] == \
            f"{dev['flop_rate_utilization_pct']:.1f}%"
        assert cards["Steps"] == f"{len(prof.steps)} (inferred)"
        # where the steps come from, just above the step-time graph, said once
        note = page.js("() => { const n = document.querySelector('.ov-step-note');"
                       " return [n.textContent, n.nextElementSibling.className]; }")
        assert note[0].startswith("Steps inferred from each execution of the repeated XLA "
                                  "program 'jit_f(12190760917235803885)'")
        assert "tfprof-figure" in note[1]
        text = page.js("() => document.body.textContent")
        assert text.count("inferred from each execution") == 1
        devices = _csv(page, 1)  # the run environment lists the TPUs
        assert devices.device.tolist() == [f"/device:TPU:{i}" for i in range(4)]
        assert page.console_errors == []


def test_overview_of_gpu_and_cpu_profiles_gains_only_what_they_have(cpu_file, gpu_fixture_file,
                                                                    tmp_path):
    from tfprof_nb.widgets import OverviewView

    gpu = OverviewView(tp.load(gpu_fixture_file))
    duty = tp.load(gpu_fixture_file).measures.at["duty_cycle_pct", "value"]
    assert ["Device duty cycle", f"{duty:.1f}%"] in [c[:2] for c in gpu.cards]
    assert not any("TPU" in c[0] or "MXU" in c[0] for c in gpu.cards)
    cpu = tp.load(cpu_file)
    view = OverviewView(cpu)
    assert cpu.overview().device == {} and cpu.overview().device_duty_cycle_pct is None
    assert not any("duty cycle" in c[0] for c in view.cards)
    with WidgetPage(view, tmp_path, bundle("overview")) as page:
        assert page.js("() => document.querySelector('.ov-step-note')") is None
        assert "Device duty cycle" not in _cards(page)


@pytest.mark.parametrize("name", ["jax_h200_transformer.xplane.pb",
                                  "jax_h200_nocmdbuf.xplane.pb"])
def test_graph_launches_are_said_apart_from_launch_latency(name):
    """With command buffers (the transformer) most kernels start from one cuGraphLaunch: the
    GPU tab's table counts them (graph launches) and a statement says their latency is not a
    launch of their own, with the table's counts; without them (nocmdbuf) nothing is said."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / name)
    state = GpuUtilizationView.state(prof).values
    kernels = state["kernels"].frame
    per_kernel = prof.launch_latency.per_kernel
    assert kernels.graph_launches.sum() == per_kernel.graph_launches.sum()
    said = [s for s in state["statements"] if "came from a call that started several" in s]
    graph, total = int(per_kernel.graph_launches.sum()), int(per_kernel.launches.sum())
    if graph:
        (text,) = said
        assert text.startswith(f"{graph:,} of the {total:,} launches in the latency table")
        assert graph > 0.9 * total
    else:
        assert said == []


def test_finish_spread_is_said_with_its_share_of_the_step():
    """The TPU capture's devices finish only its last step apart (15.8 ms of a 784 ms step):
    the sentence gives that spread's share of its step, so it reads at its size."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(TPU)
    ends = prof.stragglers
    apart = ends[ends.spread_us > 0]
    widest = apart.loc[apart.spread_us.idxmax()]
    step_ms = prof.steps.duration_ms[prof.steps.index == widest.step].max()
    said = [s for s in GpuUtilizationView.state(prof).values["statements"]
            if s.startswith("Devices finish")]
    assert len(said) == 1
    assert (f"largest spread {widest.spread_us:,.1f} us "
            f"({100 * widest.spread_us / (1e3 * step_ms):.1f}% of that step's {step_ms:,.1f} ms)"
            in said[0]), said
    assert f"Devices finish {len(apart)} of {len(ends)} steps" in said[0]


def test_duty_cycle_says_the_time_outside_the_steps_it_counts():
    """The transformer capture: duty cycle 45.4% beside 'Devices idle in the steps' 32.6%
    (67.4% busy). The duty cycle's span also holds the gaps between the device's steps, which
    no step counts: the sentence gives them, from the utilisation table's outside-steps row."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / "jax_h200_transformer.xplane.pb")
    util = prof.gpu_utilization.query("stream == 'all'")
    outside = util[util.step == -2]
    span = float(prof.duty_cycle.span_us.sum())
    wall, idle = float(outside.wall_us.sum()), float(outside.idle_us.sum())
    busy_in_steps = float(util[util.step >= 0].busy_us.sum())
    assert 100 * busy_in_steps / span == pytest.approx(prof.duty_cycle.duty_cycle_pct.iloc[0])
    (said,) = [s for s in GpuUtilizationView.state(prof).values["statements"]
               if s.startswith("Device duty cycle")]
    assert (f"its active span holds {wall / 1e3:,.1f} ms outside the steps "
            f"({100 * wall / span:.1f}% of it), {idle / 1e3:,.1f} ms of it idle") in said
    assert wall > 0.3 * span  # (13.2 of 40.5 ms)


def test_overlapping_steps_say_why_their_wall_time_is_short_of_their_durations():
    """TPU v6e: 76 of the 100 inferred steps run on past the next one's start; the device
    table's step time (each window cut where the next begins, 77,599.3 ms a TPU) is less than
    the steps' durations the overview averages (78,413.4 ms): the tab says both, and why."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    values = GpuUtilizationView.state(prof).values
    wall = float(values["devices"].frame.steps_wall_ms.iloc[0])
    total = float(prof.steps.duration_ms.sum())
    (said,) = [s for s in values["statements"] if "The steps overlap" in s]
    assert f"the steps' wall time is {wall:,.1f} ms where their durations add up to " \
           f"{total:,.1f} ms" in said and wall < total
    assert "(76 of 100 run on past the next one's start)" in said
    h200 = GpuUtilizationView.state(tp.load(DATA / "jax_h200_counters")).values
    assert not any("The steps overlap" in s for s in h200["statements"])


def test_the_duty_cycle_says_the_steps_time_beyond_the_active_span():
    """H200 counters: the last step runs 21.5 ms past GPU:0's last kernel, time the steps'
    idle share counts (31.0%) and the duty cycle's span (76.7% busy) does not: the tab says
    so, so the two figures reconcile."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    prof = tp.load(DATA / "jax_h200_counters")
    util = prof.gpu_utilization
    rows = util[util.stream == "all"]
    steps_wall = float(rows[rows.step >= 0].wall_us.sum())
    outside = float(rows[rows.step == -2].wall_us.sum())
    beyond = steps_wall - (float(prof.duty_cycle.span_us.sum()) - outside)
    (said,) = [s for s in GpuUtilizationView.state(prof).values["statements"]
               if s.startswith("Device duty cycle")]
    assert f"the steps hold {beyond / 1e3:,.1f} ms outside its active span" in said
    assert beyond > 20_000  # (21.5 ms)


def test_one_step_is_said_as_one():
    """BERT's one step: every sentence of the GPU tab that scopes a figure by the steps says
    "the step" (the overview's label reads 'Device idle in the step'); the 20-step H200
    capture keeps the plural."""
    from tfprof_nb.widgets.gpu_utilization_view import GpuUtilizationView

    bert = tp.load(DATA / "gpu_bert_multiworker")
    assert len(bert.steps) == 1
    said = " ".join(GpuUtilizationView.state(bert).values["statements"])
    for one in ("ran no kernel in the step (any work of theirs ran outside it)",
                "outside the step (95.7% of it)", "which the idle time in the step does not",
                "not in the step's shares", "the device's wall time in the step;"):
        assert one in said, one
    assert "steps" not in said.replace("outside steps", "").replace("every step", ""), said
    h200 = " ".join(GpuUtilizationView.state(tp.load(DATA / "jax_h200_counters"))
                    .values["statements"])
    assert "the device's wall time in the 20 steps;" in h200
    assert "the steps hold" in h200
