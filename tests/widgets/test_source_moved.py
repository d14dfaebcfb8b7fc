"""The Source view on a script edited after its capture: a small JAX program written to a
file, captured on CPU with tp.capture, then two lines inserted at its top.  Unchanged, its
device time stands beside its own lines; edited, no time lands on the shifted lines, a
warning at the top of the view says how many lines and how much time, and the lines stand
alone with the file:line and function the profile recorded."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

import tfprof_nb as tp
from tfprof_nb.widgets._base import bundle
from tfprof_nb.widgets.source_view import SourceView
from tfprof_nb.widgets.source_match import frame_mismatch, scopes_of

from .harness import WidgetPage

SCREENSHOTS = os.environ.get("TFPROF_NB_SCREENSHOTS")

PROGRAM = '''import jax
import jax.numpy as jnp


def norm(x):
    x = x - x.mean(-1, keepdims=True)
    return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-5)


def attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / q.shape[-1] ** 0.5
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, -1), v)


@jax.jit
def forward(x, w):
    h = norm(x)
    a = attention(h @ w, h @ w, h @ w)
    return jnp.tanh(a @ w.T)


x = jax.random.normal(jax.random.PRNGKey(0), (8, 256, 128))
w = jax.random.normal(jax.random.PRNGKey(1), (128, 128))


def step(_):
    jax.block_until_ready(forward(x, w))
'''

BLOCKS = """() => Array.from(document.querySelectorAll('.src-block')).map(b => ({
  head: b.querySelector('.src-head').textContent,
  note: (b.querySelector('.src-note, .src-origin') || {}).textContent || '',
  rows: Array.from(b.querySelectorAll('tr.src-line')).map(tr => Array.from(tr.children)
    .map(td => td.textContent))}))"""


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """(profile, the program's file): the program captured on CPU by tp.capture."""
    pytest.importorskip("jax")
    tmp = tmp_path_factory.mktemp("moved")
    path = tmp / "model_program.py"
    path.write_text(PROGRAM)
    spec = importlib.util.spec_from_file_location("model_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    prof = tp.capture(module.step, range(6), steps=3, warmup=1, progress=False,
                      backend="jax", logdir=str(tmp / "logdir"))
    return prof, path


def _in_program(prof, path):
    lines = prof.source_lines
    return lines[(lines.no_source == "") & (lines.file == str(path))]


def test_unchanged_file_has_its_time_beside_its_lines(captured, tmp_path):
    prof, path = captured
    path.write_text(PROGRAM)
    ours = _in_program(prof, path)
    assert len(ours) >= 3
    code = PROGRAM.splitlines()
    for row in ours.itertuples():  # the profile's lines are this program's code
        assert code[row.line - 1].strip() and row.function.split(".")[0] in {
            "norm", "attention", "forward", "step"}
    view = SourceView(prof)
    assert view.warnings == []
    blocks = [b for b in view.code if b["file"] == str(path)]
    assert blocks and not any(b["moved"] for b in blocks)
    placed = {n: (text, us) for b in blocks for n, text, us, *_ in b["lines"] if us is not None}
    for row in ours.itertuples():
        if row.line in placed:
            assert placed[row.line] == (code[row.line - 1], row.self_time_us)
    with WidgetPage(view, tmp_path, bundle("source")) as page:
        page.page.wait_for_selector(".src-block")
        assert page.js("() => document.querySelectorAll('.src-warning').length") == 0
        shown = {int(r[1]): r for b in page.js(BLOCKS) for r in b["rows"]}
        assert any(r[0] and r[2] == code[n - 1] for n, r in shown.items())
        assert page.console_errors == []


def test_two_lines_added_at_the_top_place_no_time(captured, tmp_path):
    prof, path = captured
    path.write_text("# two lines added after the capture\nimport os\n" + PROGRAM)
    try:
        view = SourceView(prof)
    finally:
        path.write_text(PROGRAM)
    ours = _in_program(prof, path)
    (warning,) = view.warnings
    assert warning.startswith(
        f"The code changed since the capture: {len(ours)} line{'s' * (len(ours) > 1)} with "
        f"{ours.self_time_us.sum() / 1e3:,.3f} ms ({ours.self_time_pct.sum():.1f}%) of device "
        "op time could not be matched")
    assert "model_program.py: " in warning
    (block,) = [b for b in view.code if b["file"] == str(path)]
    assert block["moved"] and "the file changed since the capture" in block["note"]
    hot = ours.head(8).sort_values("line")
    assert block["lines"] == [[int(r.line), "", float(r.self_time_us), float(r.self_time_pct),
                               r.function] for r in hot.itertuples()]
    with WidgetPage(view, tmp_path, bundle("source")) as page:
        page.page.wait_for_selector(".src-warning")
        first = page.js("() => document.querySelector('.tfprof-source').firstElementChild"
                        ".className")
        assert "src-warning" in first  # the first thing the view shows
        assert page.js("() => document.querySelector('.src-warning').textContent") == \
            "\u26a0 " + warning
        rows = [r for b in page.js(BLOCKS) if "model_program.py" in b["head"]
                for r in b["rows"]]
        assert [int(r[1]) for r in rows] == hot.line.tolist()  # the recorded lines, alone
        assert [r[2] for r in rows] == [f"(no code shown) recorded in {f}"
                                        for f in hot.function]
        if SCREENSHOTS:
            Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
            page.page.screenshot(path=str(Path(SCREENSHOTS) / "source_moved.png"),
                                 full_page=True)
        assert page.console_errors == []


def test_a_frame_matches_only_where_its_function_is():
    code = PROGRAM.splitlines()
    scopes = scopes_of(PROGRAM)
    assert frame_mismatch(code, scopes, 11, 4, "attention") is None
    assert frame_mismatch(code, scopes, 18, 4, "forward") is None
    assert frame_mismatch(code, scopes, 6, -1, "norm") is None
    assert frame_mismatch(code, scopes, 9, 4, "attention") == "line 9 is blank now"
    assert frame_mismatch(code, scopes, 11, 4, "norm") == \
        "line 11 ran in norm, it is in attention now"
    assert frame_mismatch(code, scopes, 22, 0, "step") == \
        "line 22 ran in step, it is in <module> now"
    assert frame_mismatch(code, scopes, 99, 0, "step").startswith("line 99 is past the end")
    # nested: a lambda and a comprehension name their own scope and the function around
    nested = "def f(xs):\n    g = lambda y: y + 1\n    return [g(x) for x in xs]\n"
    lines, scopes = nested.splitlines(), scopes_of(nested)
    assert frame_mismatch(lines, scopes, 2, 18, "f.<locals>.<lambda>") is None
    assert frame_mismatch(lines, scopes, 3, 12, "f.<locals>.<listcomp>") is None
    assert frame_mismatch(lines, scopes, 3, 12, "f") is None
    assert frame_mismatch(lines, scopes, 2, 4, "f") is None
