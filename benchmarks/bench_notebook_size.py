"""How big an executed notebook of views is: its widget state stored, as
``jupyter nbconvert --execute`` stores it.

    python benchmarks/bench_notebook_size.py [--profile FILE.xplane.pb]

A real kernel (nbclient, what nbconvert runs) executes a notebook that loads the benchmark
capture (``bench_notebook.py``'s: 2,500 training steps, about 35 MB) and shows views of it:
a trace viewer and the dashboard, then five views (adding the overview, op stats and input
pipeline views).  Reported: the ``.ipynb``'s size, the bytes of JavaScript in it (the
notebook less its views' modules), the widget state's share, and the reference in the same
run: the same notebook with each view's JavaScript as the layout before one bundle per
notebook stored it (each view's ``_esm`` the whole module, each loader output its own deflated
copy), rebuilt from this one (the data stays as stored now: once per notebook).  Sizes do not
depend on a busy machine.  Targets (issue 43): the two views under 8 MB; five views under 4 MB
plus the bundle.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
import zlib
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_notebook import default_profile  # noqa: E402

STATE = "application/vnd.jupyter.widget-state+json"
ESM = re.compile(r'(<script type="application/octet-stream" class="tfprof-esm"[^>]*'
                 r'data-digest="(\w+)">)([^<]*)(</script>)')
TWO = ["tp.widgets.TraceView(prof)", "prof.show()"]
FIVE = TWO + ["tp.widgets.OverviewView(prof)", "tp.widgets.OpStatsView(prof)",
              "tp.widgets.InputPipelineView(prof)"]


def executed(profile: Path, views: list[str]) -> dict:
    """The notebook of ``views`` run by a real kernel, its widget state stored."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell(
        f"import tfprof_nb as tp\nprof = tp.load({str(profile)!r}, progress=False)\nNone")]
        + [new_code_cell(v) for v in views],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}})
    NotebookClient(nb, timeout=900, kernel_name="python3", store_widget_state=True).execute()
    return json.loads(nbformat.writes(nb))


def _outputs_html(nb: dict):
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if "text/html" in out.get("data", {}):
                yield out


def _edit(nb: dict, esm_state, esm_html) -> str:
    """``nb`` written as nbformat does, each view's ``_esm`` and each loader's module script
    replaced (``esm_state(state, models)``, ``esm_html(match)``)."""
    nb = json.loads(json.dumps(nb))
    models = nb["metadata"]["widgets"][STATE]["state"]
    for model in models.values():
        esm_state(model, models)
    for out in _outputs_html(nb):
        out["data"]["text/html"] = ESM.sub(esm_html, "".join(out["data"]["text/html"]))
    return nbformat.writes(nbformat.from_dict(nb))


def without_modules(nb: dict) -> str:
    """The notebook less its views' modules (shared models' code, ``_esm``, loader copies)."""
    def state(model, models):
        model["state"].pop("_esm", None)
        if "digest" in model["state"]:
            model["buffers"] = []
    return _edit(nb, state, lambda m: "")


def as_before(nb: dict) -> str:
    """The notebook as the layout before one bundle per notebook stored it."""
    codes = {m["state"]["digest"]: base64.b64decode(m["buffers"][0]["data"])
             for m in nb["metadata"]["widgets"][STATE]["state"].values()
             if "digest" in m["state"]}

    def state(model, models):
        ref = model["state"].get("_tfprof_code")
        if ref:
            shared = models[ref.removeprefix("IPY_MODEL_")]["state"]["digest"]
            model["state"]["_esm"] = zlib.decompress(codes[shared]).decode()
            del model["state"]["_tfprof_code"]
    old = json.loads(_edit(nb, state,
                           lambda m: m[1] + base64.b64encode(codes[m[2]]).decode() + m[4]))
    models = old["metadata"]["widgets"][STATE]["state"]
    for key in [k for k, m in models.items() if "digest" in m["state"]]:
        del models[key]
    return nbformat.writes(nbformat.from_dict(old))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", type=Path, default=None)
    args = parser.parse_args(argv)
    profile = args.profile or default_profile()
    print(f"profile: {profile} ({profile.stat().st_size / 2**20:.1f} MB)")
    from tfprof_nb.offline.bundles import STATIC

    bundle = (STATIC / "views.js").stat().st_size / 2**20
    print(f"views.js: {bundle:.2f} MB")
    for name, views in (("trace viewer + dashboard", TWO), ("five views", FIVE)):
        nb = executed(profile, views)
        text = nbformat.writes(nbformat.from_dict(nb))
        bare = len(without_modules(nb))
        before = as_before(nb)
        stateless = nbformat.writes(nbformat.from_dict(
            {**nb, "metadata": {k: v for k, v in nb["metadata"].items() if k != "widgets"}}))
        print(f"{name}: notebook {len(text) / 2**20:.2f} MB (JavaScript "
              f"{(len(text) - bare) / 2**20:.2f} MB, widget state "
              f"{(len(text) - len(stateless)) / 2**20:.2f} MB); JavaScript as before: "
              f"{len(before) / 2**20:.2f} MB (JavaScript {(len(before) - bare) / 2**20:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
