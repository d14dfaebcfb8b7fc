"""%%tfprof in a real IPython kernel (nbclient), on cells that call Keras model.fit."""

from __future__ import annotations

import json

import nbformat
import pytest
from nbclient import NotebookClient

SETUP = """
import os, json
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
import numpy as np, keras, tensorflow as tf
x = np.random.rand(640, 8).astype("float32"); y = np.random.rand(640, 1).astype("float32")
model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
model.compile("sgd", "mse")

def markers(p):
    steps, roots, ev = p.stat("step_num"), p.stat("_r"), p.events
    idx = steps.index.intersection(roots.index)
    idx = idx[ev.loc[idx, "name"] == "train"]
    return sorted(steps.loc[idx].tolist())

def gen():
    for i in range(50):
        if i == 4:
            raise ValueError("corrupt record")
        yield np.ones((8, 8), np.float32), np.ones((8, 1), np.float32)

bad_ds = tf.data.Dataset.from_generator(gen, output_signature=(
    tf.TensorSpec((8, 8), tf.float32), tf.TensorSpec((8, 1), tf.float32)))
"""


def _run(cells: list[str], tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    return nb


def _text(cell) -> str:
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type == "error":
            out.append(f"{o.ename}: {o.evalue}")
        elif "text/plain" in o.get("data", {}):
            out.append(o.data["text/plain"])
    return "".join(out)


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("magic")
    cells = [
        "%load_ext tfprof_nb",
        SETUP,
        "%%tfprof --steps 3 --warmup 2\nmodel.fit(x, y, batch_size=32, epochs=1, verbose=0)",
        "print(json.dumps({'markers': markers(_tfprof), 'hosts': _tfprof.hosts}))",
        "%%tfprof --steps 10 --warmup 1 --out failed --no-show\n"
        "model.fit(bad_ds, epochs=1, verbose=0)",
        "print(json.dumps({'markers': markers(failed)}))",
        "%tfprof --out one --no-show model.predict(x[:64], verbose=0)",
        "print(json.dumps({'events': len(one.events), 'lines': len(one.lines)}))",
        "%tfprof --help",
        "%tfprof --steps -3 model.predict(x[:8])",
        # a custom loop with tp.Capture takes the magic's window as its defaults
        "%%tfprof --steps 2 --warmup 1 --out loop --no-show --sample-ms 20\n"
        "import tfprof_nb as tp\n"
        "ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)\n"
        "with tp.Capture(progress=False) as cap:\n"
        "    for xb, yb in cap.iterate(ds):\n"
        "        model.train_on_batch(xb, yb)",
        "print(json.dumps({'markers': markers(loop)}))",
        # a cell with neither fit nor tp loops is profiled whole
        "%%tfprof --out whole --no-show --sample-ms 0\n"
        "for _ in range(3):\n"
        "    tf.linalg.matmul(tf.ones([64, 64]), tf.ones([64, 64]))",
        "print(json.dumps({'matmuls': int(whole.events.name.astype(str)"
        ".str.contains('MatMul').sum())}))",
        # --every is checked before any line of the cell runs
        "%%tfprof --every 5\nran_every_5 = True\n"
        "model.fit(x, y, batch_size=32, epochs=1, verbose=0)",
        "%%tfprof --every 0 --steps 1\nran_every_0 = True\n"
        "model.fit(x, y, batch_size=32, epochs=1, verbose=0)",
        "%%tfprof --every 20 --remote grpc://127.0.0.1:1\nran_remote = True",
        "%%tfprof --every 20 --whole-cell\nran_whole = True",
        "print(json.dumps({n: n in globals() for n in "
        "['ran_every_5', 'ran_every_0', 'ran_remote', 'ran_whole']}))",
        # the hardware sampler's file beside each profile (--sample-ms; 0: none)
        "from tfprof_nb.xspace.hardware_file import read_hardware\n"
        "def hw(p):\n"
        "    path = p.source[0].replace('.xplane.pb', '.hardware.npz')\n"
        "    return os.path.exists(path) and read_hardware(open(path, 'rb').read()).meta\n"
        "print(json.dumps({n: hw(globals()[n]) and hw(globals()[n])['period_ms'] "
        "for n in ['_tfprof', 'failed', 'loop', 'whole']}))",
        "%tfprof --sample-ms -5 model.predict(x[:8])",
    ]
    return _run(cells, tmp)


def test_fit_cell_profiles_the_step_window(executed):
    out = _text(executed.cells[2])
    views = [o for o in executed.cells[2].outputs if o.output_type == "display_data"
             and "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 1  # the dashboard
    assert "Profile: 1 host" in out and "stored in `_tfprof`" in out
    # the progress line is one output updated in place (no widget a saved notebook would
    # lose): its last text stays in the notebook
    progress = [o["data"]["text/plain"] for o in executed.cells[2].outputs
                if o.output_type == "display_data" and "tfprof-progress" in
                o.get("data", {}).get("text/html", "")]
    assert any("profiled 3 steps" in text for text in progress), progress
    res = json.loads(_text(executed.cells[3]))
    assert res["markers"] == [2, 3, 4]
    assert len(res["hosts"]) == 1


def test_failing_cell_keeps_partial_profile_and_shows_the_error(executed):
    assert "corrupt record" in _text(executed.cells[4])
    assert any(o.output_type == "error" for o in executed.cells[4].outputs)
    res = json.loads(_text(executed.cells[5]))
    assert res["markers"][:1] == [1] and len(res["markers"]) >= 2


def test_line_magic_profiles_one_statement(executed):
    res = json.loads(_text(executed.cells[7]))
    assert res["events"] > 0 and res["lines"] > 0


def test_help_and_bad_options(executed):
    assert "--steps" in _text(executed.cells[8]) and "--remote" in _text(executed.cells[8])
    assert "ValueError: steps must be" in _text(executed.cells[9])


def test_capture_in_a_cell_takes_the_magic_window(executed):
    assert json.loads(_text(executed.cells[11]))["markers"] == [1, 2]


def test_cell_without_step_api_is_profiled_whole(executed):
    assert "Error" not in _text(executed.cells[12])
    assert json.loads(_text(executed.cells[13]))["matmuls"] >= 3


def test_every_is_checked_before_the_cell_runs(executed):
    """``--every`` smaller than ``--steps``, not positive, or with ``--remote`` or
    ``--whole-cell``: an error naming the magic's options, and no line of the cell ran."""
    texts = [_text(executed.cells[i]) for i in range(14, 18)]
    assert "ValueError: --every (5) must be at least --steps (10)" in texts[0]
    assert "ValueError: --every must be a positive number of steps, got 0" in texts[1]
    assert "ValueError: --every cannot be combined with --remote" in texts[2]
    assert "ValueError: --every cannot be combined with --whole-cell" in texts[3]
    assert not any("every_steps" in t for t in texts)  # no Python argument names


def test_sample_ms_sets_the_hardware_samplers_period(executed):
    """Every profile of the cells has the sampler's file (the failing cell's partial one
    too) at the default 50 ms or ``--sample-ms``'s period; ``--sample-ms 0`` none."""
    periods = json.loads(_text(executed.cells[19]))
    assert periods == {"_tfprof": 50, "failed": 50, "loop": 20, "whole": False}
    assert "ValueError: sample_ms must be in 0..60000" in _text(executed.cells[20])
    assert json.loads(_text(executed.cells[18])) == dict.fromkeys(
        ["ran_every_5", "ran_every_0", "ran_remote", "ran_whole"], False)
