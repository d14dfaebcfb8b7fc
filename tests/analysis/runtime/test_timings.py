"""Where analysis time goes (``prof._results.timings``) and how a result asked for alone runs
its host steps: one batch for every host step its chain needs.  A real capture: the GPU BERT
capture of tests/data."""

from __future__ import annotations

import tfprof_nb as tp
from tfprof_nb.analysis.runtime import registry
from tfprof_nb.analysis.runtime.scheduling import local_hosts

from ...conftest import GPU_FIXTURE_DIR

GPU_FILE = next(GPU_FIXTURE_DIR.glob("*.xplane.pb"))


def test_a_result_runs_its_host_steps_as_one_batch_and_each_is_timed(monkeypatch):
    """``prof.result("input_pipeline")`` runs the host steps of its chain in one batch beside
    the time shifts' (not one batch per need), and every host step and combine that ran has
    one timing record on the thread it ran on."""
    batches: list = []
    run = local_hosts.LocalHosts._run_pairs

    def recording(self, todo, shifts, meanwhile=None):
        batches.append(sorted({step for step, _ in todo}))
        return run(self, todo, shifts, meanwhile)

    monkeypatch.setattr(local_hosts.LocalHosts, "_run_pairs", recording)
    prof = tp.load(GPU_FILE)
    prof.result("input_pipeline")
    chain = [n for n in registry.order(["input_pipeline"]) if registry.get(n).host is not None]
    assert len(chain) > 2 and batches[0] == ["info"]
    assert batches[1:] == [sorted(chain)]
    records = prof._results.timings.records
    host = {r.name for r in records if r.kind == "host"}
    assert host == set(chain) | {"info"}
    combined = {r.name for r in records if r.kind == "combine"}
    assert set(registry.order(["input_pipeline"])) <= combined | set(prof._results.inputs)
    assert all(r.seconds >= 0 and r.cpu_s >= 0 for r in records)
    assert {r.thread for r in records if r.kind == "combine"} == {"MainThread"}
    assert all(r.thread != "MainThread" for r in records if r.kind == "host")
