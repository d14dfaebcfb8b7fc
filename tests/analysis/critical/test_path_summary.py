"""``prof.critical_path_summary`` (:mod:`tfprof_nb.analysis.critical.path_summary`), grouped on
integer codes and summed as pandas sums groups: the same table, floats and dtypes as the
pandas groupbys it replaced (kept here as the reference), on real captures and
on synthetic paths (several hosts sharing resources, steps out of order, ties, object text
columns, step numbers far apart)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tfprof_nb as tp
from tfprof_nb._native.kernels import group_sums
from tfprof_nb.analysis.critical.path_summary import (SUMMARY_COLUMNS, bound_sentence,
                                                      critical_path_summary)
from tfprof_nb.analysis.critical.text_columns import text_codes

DATA = Path(__file__).resolve().parents[2] / "data"


def _reference(cp: pd.DataFrame) -> pd.DataFrame:
    """The summary by pandas groupbys on the text columns' factorized codes (the former
    implementation, git 41f423a)."""
    total = cp.groupby(["host", "step"]).duration_us.sum().sum()
    values = {}
    for c in ("category", "name", "resource"):
        codes, values[c] = pd.factorize(cp[c], sort=True)
        cp = cp.assign(**{c: codes})
    planes = pd.Series([str(r).split(" / ", 1)[0] for r in values["resource"]],
                       dtype=cp.host.dtype)
    plane_of, values["plane"] = pd.factorize(planes, sort=True)
    cp = cp.assign(step_key=cp.groupby(["host", "step"], sort=False).ngroup().to_numpy(),
                   plane=plane_of[cp.resource.to_numpy()])

    def decoded(frame):
        return frame.assign(**{c: values[c].take(frame[c].to_numpy()) for c in values
                               if c in frame})

    by_res = decoded(cp.groupby(["category", "plane"]).duration_us.sum().reset_index()
                     .sort_values("duration_us", ascending=False, kind="stable")
                     .drop_duplicates("category"))
    cats = cp.groupby("category").agg(duration_us=("duration_us", "sum"),
                                      steps=("step_key", "nunique")).reset_index()
    cats = decoded(cats).merge(
        by_res[["category", "plane"]].rename(columns={"plane": "resource"}), on="category")
    cats.insert(0, "level", "category")
    cats["name"] = cats.category
    ops = decoded(cp.groupby(["category", "name", "resource"]).agg(
        duration_us=("duration_us", "sum"), steps=("step_key", "nunique")).reset_index())
    ops.insert(0, "level", "op")
    out = pd.concat([c.sort_values("duration_us", ascending=False, kind="stable")
                     for c in (cats, ops)], ignore_index=True)
    out["share"] = out.duration_us / total if total > 0 else 0.0
    out = out[SUMMARY_COLUMNS]
    idle = cp[cp.kind == "idle"] if "devices_busy_us" in cp else cp.iloc[:0]
    known = idle[idle.devices_busy_us.notna()] if len(idle) else idle
    gaps = known.duration_us.sum() if len(known) else 0.0
    out.attrs["gap_devices_busy_share"] = known.devices_busy_us.sum() / gaps if gaps > 0 \
        else float("nan")
    per_plane = decoded(cp.groupby(["category", "plane"]).duration_us.sum().reset_index())
    out.attrs["planes"] = {str(c): (len(r), r.duration_us.max() / r.duration_us.sum())
                           for c, r in per_plane.groupby("category")}
    out.attrs["devices_busy_share"] = {}
    if "devices_busy_us" in cp:  # (host work on the path while a device ran)
        for c in ("host_compute", "kernel_launch", "host_wait", "input", "compilation"):
            rows = cp[(decoded(cp).category == c) & (cp.kind != "idle")]
            rows = rows[rows.devices_busy_us.notna()]
            if len(rows) and rows.duration_us.sum() > 0:
                out.attrs["devices_busy_share"][c] = \
                    rows.devices_busy_us.sum() / rows.duration_us.sum()
    out.attrs["steps"] = int(cp.step_key.nunique())
    out.attrs["hosts"] = int(cp.host.nunique())
    out.attrs["sentence"] = bound_sentence(out)
    return out


def _same(cp: pd.DataFrame) -> None:
    got, want = critical_path_summary(cp), _reference(cp)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    share = got.attrs.pop("gap_devices_busy_share")
    want_share = want.attrs.pop("gap_devices_busy_share")
    assert share == pytest.approx(want_share, rel=1e-12, nan_ok=True)
    for key in ("planes", "devices_busy_share"):  # (sums in another order: the last bits)
        got_d, want_d = got.attrs.pop(key), want.attrs.pop(key)
        assert got_d.keys() == want_d.keys()
        for k in got_d:
            assert np.ravel(got_d[k]) == pytest.approx(np.ravel(want_d[k]), rel=1e-9)
    assert got.attrs == want.attrs


@pytest.mark.parametrize("name", ["jax_h200_counters", "tpu_v6e_jax_inference.xplane.pb",
                                  "gpu_bert_multiworker"])
def test_the_summary_of_real_paths_is_the_groupbys(name):
    cp = tp.load(DATA / name).critical_path
    assert len(cp)
    _same(cp)


def test_gaps_say_whether_devices_ran_during_them():
    """The path's gaps (idle segments) on the TPU capture: the host waits while the TPUs run
    their programs, and no traced event ties the two (their clocks do not line up with the
    host's), so every gap is device time; on BERT no device runs in the path's gaps. The
    sentence gives the share, which is the path's devices_busy_us over its gaps' time."""

    tpu = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    cp = tpu.critical_path
    gaps = cp[cp.kind == "idle"]
    on_device = cp.resource.astype(str).str.startswith("/device:") & (cp.kind != "idle")
    assert len(gaps) and (cp[on_device].devices_busy_us == 0).all()  # (a device's own work)
    host = cp[~cp.resource.astype(str).str.startswith("/device:") & (cp.kind != "idle")]
    assert len(host) and (host.devices_busy_us <= host.duration_us + 1e-6).all()
    busy = host.devices_busy_us.sum() / host.duration_us.sum()  # (the host's work on the
    assert busy > 0.99 and "on /host:CPU (a device running during 100% of it)" in \
        critical_path_summary(cp).attrs["sentence"]  # path while the TPUs ran: said)
    assert (gaps.devices_busy_us <= gaps.duration_us + 1e-6).all()
    share = gaps.devices_busy_us.sum() / gaps.duration_us.sum()
    assert share > 0.99  # (the module spans of the four TPUs cover the host's waits)
    sentence = critical_path_summary(cp).attrs["sentence"]  # (the walk's own words: the
    # product says none on TPUs, see test_tpu_paths_are_not_told)
    assert (f"gaps with no traced event (during {share * 100:.0f}% of them a device was "
            "running, with no traced event tying it to the path)") in sentence
    bert = tp.load(DATA / "gpu_bert_multiworker")
    cp = bert.critical_path
    assert (cp[cp.kind == "idle"].devices_busy_us == 0).all()
    assert "gaps with no traced event (no device was running then)" in \
        bert.critical_path_summary.attrs["sentence"]


def test_gaps_of_a_host_without_devices_say_nothing_more(cpu_file):
    """A CPU profile: no device, so its gaps carry NaN and the sentence adds nothing."""
    prof = tp.load(cpu_file)
    cp = prof.critical_path
    gaps = cp[cp.kind == "idle"]
    assert gaps.devices_busy_us.isna().all()
    summary = prof.critical_path_summary
    assert np.isnan(summary.attrs["gap_devices_busy_share"])
    assert "a device was running" not in summary.attrs["sentence"]
    assert "no device was running" not in summary.attrs["sentence"]


def _synthetic(n: int, seed: int, text=str) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    host = rng.choice(["w1", "w0", "w2"], n)
    resources = np.array(["/host:CPU / t1", "/device:GPU:0 / Stream #1", "/host:CPU / t0",
                          "/device:GPU:1 / Stream #2"], object)
    frame = pd.DataFrame({
        "host": pd.Series(host, dtype=text), "step": rng.choice([7, 3, 1 << 45, -2], n),
        "duration_us": rng.choice([0.25, 1e-3, 3.0, 0.1, 1e6], n) * rng.integers(1, 4, n),
        "resource": pd.Series(resources[rng.integers(0, 4, n)], dtype=text),
        "category": pd.Series(rng.choice(["idle", "device_compute", "input"], n), dtype=text),
        "name": pd.Series(rng.choice(["b", "a", "é", "Z", "idle"], n), dtype=text)})
    return pd.concat([frame.iloc[: n // 2], frame.iloc[n // 2:]])  # (chunked text columns)


@pytest.mark.parametrize("text", [str, object])
def test_the_summary_of_synthetic_paths_is_the_groupbys(text):
    for seed in range(3):
        _same(_synthetic(5000, seed, text))
    ordered = _synthetic(5000, 3, text).sort_values(["host", "step", "category"], kind="stable")
    _same(ordered)  # (sorted groups: summed as pandas sums those)
    _same(_synthetic(1, 0, text))


def test_text_codes_are_a_sorted_factorize():
    column = _synthetic(3000, 1).name
    for runs in (False, True):
        codes, values = text_codes(column, runs=runs)
        want_codes, want_values = pd.factorize(column, sort=True)
        np.testing.assert_array_equal(codes, want_codes)
        pd.testing.assert_index_equal(values, want_values)
    with pytest.raises(ValueError, match="rows without"):
        text_codes(pd.Series(["a", None, "b"], dtype=str, name="name"))


def test_group_sums_are_pandas_kahan_group_sums():
    """``group_sums`` adds as pandas' Cython group sum (groups not sorted: no reduceat)."""
    rng = np.random.default_rng(0)
    group = rng.integers(0, 40, 200_000)
    values = rng.exponential(3.0, len(group)) * 10.0 ** rng.integers(-7, 7, len(group))
    values[::997] = np.nan
    values[5] = np.inf
    want = pd.Series(values).groupby(group).sum().reindex(range(41), fill_value=0.0)
    np.testing.assert_array_equal(group_sums(group, values, 41), want.to_numpy())
    with pytest.raises(IndexError):
        group_sums(np.array([0, 3]), np.ones(2), 3)


@pytest.mark.parametrize("text", [str, object])
def test_the_summary_with_names_coded_on_a_helper_thread_is_the_groupbys(monkeypatch, text):
    """A long path's names coded on a helper thread beside the other columns: the same."""
    from tfprof_nb.analysis.critical import path_summary

    monkeypatch.setattr(path_summary, "_BESIDE_MIN_ROWS", 1)
    for seed in range(2):
        _same(_synthetic(5000, seed, text))
    _same(tp.load(DATA / "gpu_bert_multiworker").critical_path)


def test_the_sentence_says_a_category_spread_over_devices_and_one_step_as_one():
    """TPU v6e: the path's device compute lies on all four TPUs, 29% of it on TPU:2 (the
    sentence said "on /device:TPU:2", as if all of it were); BERT has one step: "On its
    critical path, the step is bound by" (it said "the steps ... their paths")."""
    summary = critical_path_summary(
        tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb").critical_path)
    cp_planes, top = summary.attrs["planes"]["device_compute"]
    assert cp_planes == 4 and top < 0.95
    assert f" on 4 devices ({top * 100:.0f}% of it on /device:TPU:2)" in \
        summary.attrs["sentence"]
    bert = tp.load(DATA / "gpu_bert_multiworker").critical_path_summary.attrs["sentence"]
    assert bert.startswith("On its critical path, the step is bound by ")


def test_a_pods_sentence_says_its_steps_and_hosts():
    """Two TF workers: the sentence's shares are over both hosts' 283 steps, and each
    category's plane is each host's own /host:CPU (one name, two planes): it says so."""
    prof = tp.load(DATA / "tf_two_workers_loaded")
    cp = prof.critical_path
    steps = cp[["host", "step"]].drop_duplicates()
    assert cp.host.nunique() == 2
    said = prof.critical_path_summary.attrs["sentence"]
    assert said.startswith(f"On their critical paths, the {len(steps)} steps of the 2 hosts "
                           "are bound by "), said
    assert " on each host's /host:CPU" in said and " on /host:CPU" not in said


def test_gaps_with_a_device_running_a_little_say_so():
    """H200 (no command buffers): a device ran during 0.15% of the path's gaps: the sentence
    says 'under 1%', never 'no device was running then' (it did, by its own figure)."""
    prof = tp.load(DATA / "jax_h200_nocmdbuf.xplane.pb")
    summary = prof.critical_path_summary
    share = summary.attrs["gap_devices_busy_share"]
    assert 0 < share < 0.005
    assert ("gaps with no traced event (during under 1% of them a device was running, with "
            "no traced event tying it to the path)") in summary.attrs["sentence"]



def test_tpu_paths_are_not_told():
    """TPU v6e: the walk from a step's end lands on a host thread or a device by chance (no
    edge ties the host's calls to the TPU programs, and the inferred steps overlap): alike
    steps read 100% host compute, 100% gaps or 100% device compute. The overview's sentence
    and the trace viewer's say that the path is not told on TPUs, and why."""
    from tfprof_nb.analysis.critical.path_summary import TPU_PATH_NOTE
    from tfprof_nb.widgets.overview_view import overview_statements
    from tfprof_nb.widgets.timeline_critical import critical_answer, offline_paths

    prof = tp.load(DATA / "tpu_v6e_jax_inference.xplane.pb")
    cp = prof.critical_path
    top = cp.groupby("step").apply(
        lambda s: s.groupby("category").duration_us.sum().idxmax(), include_groups=False)
    assert top.nunique() >= 2  # (alike steps, unlike paths: why none is told)
    assert prof.critical_path_summary.attrs["sentence"] == TPU_PATH_NOTE + "."
    assert TPU_PATH_NOTE + "." in overview_statements(prof.overview())
    rows = np.arange(prof.n_events)
    assert critical_answer(prof, prof.steps, rows, 1)["sentence"] == TPU_PATH_NOTE + "."
    assert offline_paths(prof, prof.steps, rows)["reason"] == TPU_PATH_NOTE + "."


def test_compilation_on_the_path_says_where_the_breakdown_puts_it():
    """Compilation on the path (a first step that compiles) is a category the step-time
    breakdown never fills (XProf's rule puts the host's compile events in host compute): the
    sentence says so beside its share, and says nothing where no compilation is on the path."""
    def summary(categories):
        out = pd.DataFrame({"level": "category", "category": categories, "name": categories,
                            "resource": "/host:CPU", "duration_us": [720.0, 280.0][:len(
                                categories)], "share": [0.72, 0.28][:len(categories)],
                            "steps": 10})
        out.attrs.update(steps=10, hosts=1, planes={})
        return out

    said = bound_sentence(summary(["compilation", "host_compute"]))
    assert said.startswith("On their critical paths, the 10 steps are bound by 72% compilation"
                           " on /host:CPU (events named for compiling; the step-time breakdown "
                           "counts them as host compute, XProf's rule), 28% host work (ops, "
                           "Python and framework code)")
    assert "XProf" not in bound_sentence(summary(["host_compute"]))
    # (the path's host work is every host event of no other category: not the breakdown's
    # "Host compute", XProf's ops on the host, which the same page charts)
    assert "host compute" not in bound_sentence(summary(["host_compute"])).lower()


def test_a_share_few_steps_hold_says_how_few():
    """Keras 2's fit (tests/data/tf_keras2_validation): the path's gaps lie in a few of the 40
    steps (the epochs' ends and validation), so the sentence says in how many, counted from
    the path's own rows; a category every step has is said without a count."""
    prof = tp.load(DATA / "tf_keras2_validation.xplane.pb")
    cp, sentence = prof.critical_path, prof.critical_path_summary.attrs["sentence"]
    n = cp.groupby(["host", "step"]).ngroups
    idle = cp[cp.category == "idle"].groupby(["host", "step"]).ngroups
    assert 0 < idle * 2 <= n
    assert f"gaps with no traced event in {idle} of the {n} steps" in sentence
    host = cp[cp.category == "host_compute"].groupby(["host", "step"]).ngroups
    assert host == n and "host work (ops, Python and framework code) on /host:CPU" in sentence
    assert f"on /host:CPU in {host} of" not in sentence
