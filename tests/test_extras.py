"""The package's extras: none installs TensorFlow or JAX (capturing uses the framework the
environment has), ``all`` is every optional one, and every optional package tfprof_nb imports
is imported only when used, with an error that names the extra to install."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest's own dependency
    import tomli as tomllib

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tfprof_nb"
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
    "optional-dependencies"]
# this project's own machines: they pin tensorflow-cpu and jax[cpu]
OWN = {"demo", "test"}
OPTIONAL = set(EXTRAS) - OWN - {"all"}
# the top-level modules of the optional packages, and the extras that install them
MODULES = {"duckdb": {"sql"}, "s3fs": {"s3"}, "gcsfs": {"gcs"}, "fsspec": {"s3", "gcs"},
           "dask": {"dask"}, "distributed": {"dask"}, "pyarrow": {"parquet"},
           "pynvml": {"gpu"}, "mcp": {"mcp"}, "jupyterlab": {"lab"}}
# imports with a fallback, where nothing is missing to say: (module file, imported module)
FALLBACKS = {
    # NVML's clock-reason bits: NVML's documented values without pynvml
    ("analysis/findings/hardware_steps.py", "pynvml"),
    # starting fsspec's loop early; the upload itself says what is missing
    ("capturing/monitor.py", "fsspec"),
    # only where pandas keeps text in arrow (so pyarrow is installed); else object arrays
    ("analysis/critical/text_columns.py", "pyarrow"),
}


def _names(extra: str) -> set[str]:
    return {Requirement(r).name.lower() for r in EXTRAS[extra]}


def test_no_extra_installs_a_framework():
    """Only demo and test name TensorFlow or JAX: a user's own build (tensorflow[and-cuda],
    jax[cuda12]) is never joined by a second one."""
    assert "capture" not in EXTRAS
    frameworks = re.compile(r"^(tensorflow|tf-nightly|jax|jaxlib|keras)($|[-_])")
    for extra in set(EXTRAS) - OWN:
        named = {n for n in _names(extra) if frameworks.match(n)}
        assert not named, (extra, named)
    assert {"tensorflow-cpu", "jax"} <= _names("test")


def test_all_is_every_optional_extra():
    assert OPTIONAL >= {"sql", "s3", "gcs", "dask", "parquet", "lab", "mcp", "gpu"}
    union = {str(Requirement(r)) for extra in OPTIONAL for r in EXTRAS[extra]}
    assert {str(Requirement(r)) for r in EXTRAS["all"]} == union
    # every optional package is in the test set, so the tests exercise it
    assert _names("all") - {"nvidia-ml-py"} <= _names("test")


def _import_sites():
    """(module file relative to the package, imported top-level module, line, inside a
    function) for every import of an optional package in tfprof_nb."""
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node, in_function in _walk(tree, False):
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                mods = [node.module]
            else:
                continue
            for mod in mods:
                top = mod.split(".")[0]
                if top in MODULES:
                    yield path.relative_to(PACKAGE).as_posix(), top, node.lineno, in_function


def _walk(node, in_function):
    for child in ast.iter_child_nodes(node):
        yield child, in_function
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                  ast.Lambda))
        yield from _walk(child, inner)


def test_optional_imports_name_their_extra():
    """The module that imports an optional package says which ``pip install
    "tfprof-nb[extra]"`` brings it (its error when the import fails); a fallback (listed
    above) imports it inside a function.  That nothing imports one eagerly is the next test's."""
    sites = list(_import_sites())
    assert {top for _, top, _, _ in sites} >= {"duckdb", "pyarrow", "pynvml", "fsspec"}
    for rel, top, line, in_function in sites:
        where = f"{rel}:{line} imports {top}"
        if (rel, top) in FALLBACKS:
            assert in_function, where
            continue
        text = (PACKAGE / rel).read_text()
        extras = sorted(MODULES[top])
        assert any(f'pip install "tfprof-nb[{e}]"' in text for e in extras), \
            f'{where}: its error must say pip install "tfprof-nb[{extras[0]}]"'


BLOCKED = r"""
import json, subprocess, sys
for name in sys.argv[2].split(","):
    sys.modules[name] = None
import tfprof_nb as tp
import tfprof_nb.widgets, tfprof_nb.cli
from tfprof_nb.cli import COMMANDS, main
from tfprof_nb.capturing.hardware_sources import available_sources
out = {}
try:
    main(["--help"])
except SystemExit as exc:
    out["help"] = exc.code
prof = tp.load(sys.argv[1])
for key, call in [("sql", lambda: prof.sql("SELECT 1")),
                  ("s3", lambda: tp.load("s3://bucket/logs")),
                  ("gcs", lambda: tp.load("gs://bucket/logs"))]:
    try:
        call()
        out[key] = None
    except ImportError as err:
        out[key] = str(err)
out["sources"] = len(available_sources()[0])
out["commands"] = list(COMMANDS)
print(json.dumps(out))
"""


def test_without_the_optional_packages(gpu_fixture_file, tmp_path):
    """With every optional package blocked (``sys.modules[name] = None``), the package, its
    views and the tfprof command import, a profile loads and the hardware sampler starts; what
    needs a missing package says which extra brings it."""
    blocked = ",".join(sorted(set(MODULES) - {"jupyterlab"}))
    run = subprocess.run([sys.executable, "-c", BLOCKED, str(gpu_fixture_file), blocked],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["help"] == 0
    for extra in ("sql", "s3", "gcs"):
        assert f'pip install "tfprof-nb[{extra}]"' in out[extra], out[extra]
    assert out["sources"] >= 1  # the host, from /proc or psutil
    if "mcp" in out["commands"]:  # tfprof mcp without the mcp package
        code = ("import sys; sys.modules['mcp'] = None; from tfprof_nb.cli import main; "
                "sys.exit(main(['mcp']))")
        mcp = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=120, stdin=subprocess.DEVNULL)
        assert mcp.returncode != 0 and 'pip install "tfprof-nb[mcp]"' in mcp.stderr, mcp.stderr


def test_readme_has_a_row_per_extra():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Extras\n"):]
    section = section[:section.index("\n## ")]
    rows = dict(re.findall(r"^\| `([\w-]+)` \| (.+?) \|", section, re.M))
    assert set(rows) == OPTIONAL | {"all"}
    for extra in OPTIONAL:  # each row names what its extra installs
        for req in map(Requirement, EXTRAS[extra]):
            name = req.name + (f"[{','.join(sorted(req.extras))}]" if req.extras else "")
            assert f"`{name}`" in rows[extra], (extra, name)
