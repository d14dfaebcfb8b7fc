"""tp.Capture / tp.capture on custom training loops, with real TensorFlow."""

from __future__ import annotations

from pathlib import Path

import pytest

import tfprof_nb as tp

from .conftest import step_markers


def test_iterate_profiles_the_window_after_warmup(dataset, train_step, tmp_path):
    with tp.Capture(steps=4, warmup=2, logdir=str(tmp_path), progress=False) as cap:
        seen = 0
        for batch in cap.iterate(dataset):
            train_step(batch)
            seen += 1
    assert seen == 6
    assert cap.steps_profiled == 4
    assert step_markers(cap.profile) == [2, 3, 4, 5]
    assert cap.profile.hosts and str(cap.run_dir).startswith(str(tmp_path))


def test_input_is_fetched_inside_the_step_marker(dataset, train_step):
    with tp.Capture(steps=3, warmup=1, progress=False) as cap:
        for batch in cap.iterate(iter(dataset)):
            train_step(batch)
    prof = cap.profile
    ev = prof.events
    steps = ev.loc[prof.stat("step_num").index]
    gets = ev[ev["name"].astype(str).str.contains("IteratorGetNext")]
    gets = gets[gets["line"] == "python"] if (gets["line"] == "python").any() else gets
    assert len(gets) >= 3
    inside = 0
    for _, s in steps.iterrows():
        end = s.start_us + s.duration_us
        inside += int(((gets.start_us >= s.start_us) & (gets.start_us <= end)).any())
    assert inside == 3


def test_step_context_manager_and_capture_function(dataset, train_step):
    it = iter(dataset)
    with tp.Capture(steps=2, warmup=1, progress=False) as cap:
        for _ in range(10):
            with cap.step():
                train_step(next(it))
    assert step_markers(cap.profile) == [1, 2]
    prof = tp.capture(train_step, dataset, steps=3, warmup=0, progress=False)
    assert step_markers(prof) == [0, 1, 2]


def test_captures_into_one_logdir_within_a_second_keep_every_profile(dataset, train_step,
                                                                     tmp_path):
    """TensorFlow names a run by the second it saves in and writes into an existing run of
    that name: a second capture in the same second must not replace the first one's file."""
    import time

    from tfprof_nb.capturing.session import run_dirs, wait_for_a_free_run_name

    runs = [tp.capture(train_step, dataset, steps=1, warmup=0, logdir=str(tmp_path),
                       progress=False) for _ in range(3)]
    dirs = run_dirs(tmp_path)
    assert len(dirs) == 3 and {p.parent for r in runs for p in map(Path, r.source)} == dirs
    for run in runs:  # each file on disk is still its own capture
        assert step_markers(tp.load(Path(run.source[0]).parent)) == step_markers(run) == [0]
    # the wait itself: a run named for this second makes it wait for the next one
    taken = time.strftime("%Y_%m_%d_%H_%M_%S")
    (tmp_path / "plugins" / "profile" / taken).mkdir(exist_ok=True)
    wait_for_a_free_run_name(tmp_path)
    assert time.strftime("%Y_%m_%d_%H_%M_%S") != taken


def test_error_mid_capture_keeps_partial_profile_and_propagates(dataset, train_step):
    class Boom(RuntimeError):
        pass

    cap = tp.Capture(steps=5, warmup=1, progress=False)
    with pytest.raises(Boom) as info:
        with cap:
            for i, batch in enumerate(cap.iterate(dataset)):
                if i == 3:
                    raise Boom("bad batch")
                train_step(batch)
    assert str(info.value) == "bad batch"
    assert info.value.tfprof_profile is cap.profile
    assert step_markers(cap.profile) == [1, 2, 3]  # step 3 began, then raised
    assert any("partial profile" in n for n in info.value.__notes__)
    assert list(Path(cap.run_dir).glob("*.hardware.npz"))  # the sampler's file, beside it
    # the profiler was stopped: a new capture can start
    prof = tp.capture(train_step, dataset, steps=1, warmup=0, progress=False)
    assert step_markers(prof) == [0]


def test_data_running_out_warns_and_keeps_what_ran(tf, train_step):
    short = tf.data.Dataset.range(4).map(lambda i: tf.fill([4, 8], tf.cast(i, tf.float32)))
    with pytest.warns(tp.CaptureWarning, match="2 of 5"):
        with tp.Capture(steps=5, warmup=2, progress=False) as cap:
            for batch in cap.iterate(short):
                train_step(batch)
    # step 4 began (its marker holds the fetch that found no data) but did not run: TF's Trace
    # records a marker once it is created, so it stays; two steps ran
    assert step_markers(cap.profile) == [2, 3, 4]
    assert cap.steps_profiled == 2


def test_session_already_running_is_left_alone(tf, dataset, train_step, tmp_path):
    tf.profiler.experimental.start(str(tmp_path / "other"))
    try:
        with pytest.raises(tp.CaptureError, match="already running"):
            with tp.Capture(steps=1, warmup=0, progress=False) as cap:
                for batch in cap.iterate(dataset):
                    train_step(batch)
    finally:
        tf.profiler.experimental.stop()  # still ours to stop: it was left running
    assert list((tmp_path / "other").glob("plugins/profile/*/*.xplane.pb"))


@pytest.mark.parametrize("kwargs, match", [
    ({"steps": -1}, "steps"), ({"steps": 0}, "steps"), ({"warmup": -2}, "warmup"),
    ({"host_tracer_level": 7}, "host_tracer_level"), ({"python_tracer_level": "1"}, "integer"),
    ({"device_tracer_level": 1.5}, "integer"), ({"delay_ms": -5}, "delay_ms"),
])
def test_bad_options_fail_before_anything_starts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tp.Capture(**kwargs)


def test_progress_text_in_a_terminal(dataset, train_step, capsys):
    with tp.Capture(steps=2, warmup=1) as cap:
        for batch in cap.iterate(dataset):
            train_step(batch)
    err = capsys.readouterr().err
    assert "warm-up 1/1" in err and "profiling step 2/2" in err and str(cap.run_dir) in err
