"""tfprof_nb's own errors in a real Jupyter kernel: their message and a hint, the traceback
folded away (escaped HTML); every other error, and Ctrl-C, as IPython shows it."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from .conftest import DATA

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
CUT = 300 * 1024


@pytest.fixture(scope="module")
def kernel():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3",
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        reply, outputs = _execute(kc, "import tfprof_nb as tp")
        assert reply["status"] == "ok", outputs
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _execute(kc, code: str, when_output=None, timeout: float = 300):
    """Run ``code``: (its execute_reply's content, its outputs as (msg_type, content)), calling
    ``when_output(msg_type, content)`` on each output as it comes."""
    msg_id = kc.execute(code)
    outputs = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        if kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append((kind, content))
            if when_output is not None:
                when_output(kind, content)
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], outputs


def _of(outputs, kind: str) -> list[dict]:
    return [content for k, content in outputs if k == kind]


def _short_error(outputs) -> list[str]:
    """The lines of the one error output, colours removed."""
    errors = _of(outputs, "error")
    assert len(errors) == 1, outputs
    return [ANSI.sub("", line) for line in errors[0]["traceback"]]


def _folded_traceback(outputs) -> str:
    """The HTML of the one display of a folded traceback (beside a progress line, where the
    work took long enough to show one)."""
    shown = [c["data"] for c in _of(outputs, "display_data")
             if "tfprof-progress" not in c["data"].get("text/html", "")]
    assert len(shown) == 1, outputs
    assert shown[0]["text/plain"] == "(the full traceback: run %tb)"
    html = shown[0]["text/html"]
    assert html.startswith("<details") and "<details open" not in html  # folded
    return html


def test_a_typo_in_a_path_shows_its_message_a_hint_and_a_folded_traceback(kernel, tmp_path):
    _, kc = kernel
    folder = tmp_path / "<img src=x onerror=alert(1)>"  # a name that is HTML
    run = folder / "logs" / "plugins" / "profile" / "run1"
    run.mkdir(parents=True)
    shutil.copy(DATA / "mi300x_jax08_gemm.xplane.pb", run / "host.xplane.pb")
    typo = folder / "lgos"
    reply, outputs = _execute(kc, f"prof = tp.load({str(typo)!r})")
    assert reply["status"] == "error" and reply["ename"] == "ProfileFileNotFoundError"
    assert _short_error(outputs) == [
        f"ProfileFileNotFoundError: {typo}: no such file or directory (did you mean "
        f"{str(folder / 'logs')!r}?)",
        "Hint: check the path: tp.load takes a logdir, a run directory, an .xplane.pb file or "
        "a list of them"]
    html = _folded_traceback(outputs)
    assert "find_profile_files" in html and "Cell In[" in html  # the frames, one click away
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "\x1b[" not in html
    assert not _of(outputs, "stream")
    # %tb shows the whole traceback as IPython would
    _, tb = _execute(kc, "%tb")
    assert "find_profile_files" in "".join(ANSI.sub("", line) for c in _of(tb, "error")
                                           for line in c["traceback"])
    # the kernel goes on
    reply, _ = _execute(kc, "assert 'prof' not in globals()")
    assert reply["status"] == "ok"


def test_a_truncated_capture_says_where_it_ends(kernel, tmp_path):
    _, kc = kernel
    cut = tmp_path / "cut.xplane.pb"
    cut.write_bytes((DATA / "gpu_bert_multiworker" / "34.83.195.179_6003.xplane.pb")
                    .read_bytes()[:CUT])
    reply, outputs = _execute(kc, f"tp.load({str(cut)!r})")
    assert reply["status"] == "error"
    message, hint = _short_error(outputs)
    assert message.startswith(f"TruncatedProfileError: {cut}: ends at byte 307,200 inside the ")
    assert "the file is truncated" in message and "at byte 0" not in message
    assert hint.startswith("Hint: the file was cut short: copy it again")
    assert "read_local_xspace" in _folded_traceback(outputs)


def test_a_users_own_error_keeps_ipythons_traceback(kernel):
    _, kc = kernel
    code = "def parse(s):\n    raise ValueError(f'bad record {s!r}')\nparse('<x>')"
    reply, outputs = _execute(kc, code)
    assert reply["status"] == "error" and reply["ename"] == "ValueError"
    lines = "\n".join(_short_error(outputs))
    assert "Traceback (most recent call last)" in lines and "parse('<x>')" in lines
    assert "ValueError: bad record '<x>'" in lines and "Hint" not in lines
    assert not _of(outputs, "display_data")
    reply, outputs = _execute(kc, "open('/no/such/file/here')")  # not ours either
    assert reply["ename"] == "FileNotFoundError"
    assert "Traceback (most recent call last)" in "\n".join(_short_error(outputs))
    assert not _of(outputs, "display_data")


def test_an_interrupt_keeps_ipythons_traceback(kernel):
    km, kc = kernel

    def interrupt_once_running(kind, content):
        if kind == "stream" and "sleeping" in content["text"]:
            km.interrupt_kernel()

    reply, outputs = _execute(
        # One call: IPython compiles each statement just before it runs it, so an interrupt
        # sent after a separate print could land in the compiler, not in the sleep.
        kc, "import time\ndef wait():\n    print('sleeping', flush=True)\n    time.sleep(600)\n"
        "wait()",
        when_output=interrupt_once_running, timeout=120)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    lines = "\n".join(_short_error(outputs))
    assert "Traceback (most recent call last)" in lines and "time.sleep(600)" in lines
    assert "Hint" not in lines and not _of(outputs, "display_data")
