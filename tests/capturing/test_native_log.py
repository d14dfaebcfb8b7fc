"""The profilers' own log lines stay out of a cell's output; a cell's own stderr does not."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

from tfprof_nb.capturing.native_log import parse_native_log, quiet_profiler_log, what_matters

ROOT = Path(__file__).resolve().parents[2]
# what TensorFlow 2.x logs around a capture (as a kernel showed it)
REAL = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795875245.063956   30079 profiler_session.cc:117] Profiler session initializing.
I0000 00:00:1795875245.063986   30079 profiler_session.cc:132] Profiler session started.
I0000 00:00:1795875236.477023   30079 cpu_feature_guard.cc:227] This TensorFlow binary is optimized.
To enable the following instructions: AVX2 FMA, rebuild TensorFlow.
2024-01-02 03:04:05.678901: W external/xla/cupti_tracer.cc:1130] CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
E0000 00:00:1795875245.180025   30079 profiler_session.cc:150] Profiler session tear down failed.
"""


def test_log_lines_are_parsed_and_the_first_warning_said_in_one_line():
    records, rest = parse_native_log(REAL + "not a log line\n")
    assert [r.severity for r in records] == ["I", "I", "I", "W", "E"]
    assert records[2].message.endswith("optimized. To enable the following instructions: AVX2 "
                                       "FMA, rebuild TensorFlow.")
    assert rest == ""  # (after a record, a line is its continuation)
    assert parse_native_log("C output first\n" + REAL)[1] == "C output first\n"
    assert what_matters(records, "TensorFlow's profiler") == (
        "[tfprof_nb] TensorFlow's profiler warned: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES "
        "(external/xla/cupti_tracer.cc:1130) (+1 more)")
    assert what_matters(records[:3], "TensorFlow's profiler") is None  # INFO only: nothing
    long = parse_native_log("E0000 00:00:1.0 1 a.cc:1] " + "x" * 500)[0]
    assert len(what_matters(long, "JAX's profiler")) < 220


def test_fd2_lines_are_held_and_other_output_passes(capfd):
    log: list = []
    with quiet_profiler_log("TensorFlow's profiler", log):
        os.write(2, b"someone's own C output\n")  # (after a record: its continuation)
        os.write(2, b"I0000 00:00:1.5   7 profiler_session.cc:132] Profiler session started.\n")
        os.write(2, b"W0000 00:00:1.6   7 cupti_tracer.cc:9] CUPTI could not be loaded\n")
        logging.getLogger("tensorflow").warning("a Python-side profiler warning")
    err = capfd.readouterr().err
    assert "Profiler session started" not in err and "cupti_tracer.cc:9]" not in err
    assert "someone's own C output\n" in err
    assert "[tfprof_nb] TensorFlow's profiler warned: CUPTI could not be loaded " \
           "(cupti_tracer.cc:9) (+1 more)" in err
    assert [r.message for r in log] == ["Profiler session started.", "CUPTI could not be loaded",
                                        "a Python-side profiler warning"]
    os.write(2, b"after\n")  # fd 2 is back
    assert capfd.readouterr().err == "after\n"


def test_an_interrupt_inside_puts_fd2_back(capfd):
    with pytest.raises(KeyboardInterrupt):
        with quiet_profiler_log("JAX's profiler"):
            os.write(2, b"held\n")
            raise KeyboardInterrupt
    os.write(2, b"after\n")
    assert capfd.readouterr().err == "held\nafter\n"


def _stderr_of(kc, code: str, timeout: float = 120) -> tuple[str, str]:
    """Run ``code`` in the kernel: (its reply's status, all the kernel's stderr up to its end).
    A kernel passes what is written to fd 2 on from a thread of its own, maybe after the
    cell ended: a second cell writes a marker to fd 2, and everything up to the marker is
    read (a pipe keeps its order)."""
    msg_id = kc.execute(code)
    marker = f"end-of-cell-{msg_id}"
    marker_id = kc.execute(f"import os as _os; _os.write(2, b'{marker}\\n')")
    status, text, seen = None, "", False
    deadline = time.monotonic() + timeout
    while not seen and time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        content = msg["content"]
        if msg["msg_type"] == "stream" and content["name"] == "stderr":
            text += content["text"]
            seen = marker in text
    while status is None:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            status = reply["content"]["status"]
    while kc.get_shell_msg(timeout=timeout)["parent_header"].get("msg_id") != marker_id:
        pass
    assert seen, text
    return status, text.split(marker)[0]


def test_a_tfprof_cell_shows_no_profiler_log_but_its_own_stderr(tmp_path):
    from jupyter_client.manager import start_new_kernel

    # TensorFlow's default log level; fd 2 passed on to the cell as in any kernel (ipykernel
    # does not where it sees PYTEST_CURRENT_TEST)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "PYTEST_CURRENT_TEST")}
    km, kc = start_new_kernel(kernel_name="python3", env={**env, "PYTHONPATH": str(ROOT)})
    try:
        status, _ = _stderr_of(kc, "%load_ext tfprof_nb\nimport sys, tensorflow as tf")
        assert status == "ok"
        status, err = _stderr_of(
            kc, "%%tfprof --no-show\n"
            "print('my own warning', file=sys.stderr)\n"
            "for _ in range(3):\n"
            "    tf.linalg.matmul(tf.ones([64, 64]), tf.ones([64, 64]))\n"
            "print('my own last word', file=sys.stderr)")
        assert status == "ok", err
        assert "my own warning\n" in err and "my own last word\n" in err
        assert "Profiler session" not in err and "profiler_session.cc" not in err, err
        assert "save_profile.cc" not in err and "[tfprof_nb]" not in err, err
        # the control: TensorFlow's profiler started directly logs those lines to the cell
        status, err = _stderr_of(kc, f"tf.profiler.experimental.start({str(tmp_path)!r})\n"
                                     "tf.profiler.experimental.stop()")
        assert status == "ok" and "Profiler session started." in err, err
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
