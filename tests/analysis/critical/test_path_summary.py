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
    out.attrs["sentence"] = bound_sentence(out)
    return out


def _same(cp: pd.DataFrame) -> None:
    got, want = critical_path_summary(cp), _reference(cp)
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.attrs == want.attrs


@pytest.mark.parametrize("name", ["jax_h200_counters", "tpu_v6e_jax_inference.xplane.pb",
                                  "gpu_bert_multiworker"])
def test_the_summary_of_real_paths_is_the_groupbys(name):
    cp = tp.load(DATA / name).critical_path
    assert len(cp)
    _same(cp)


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
