"""XLA test profiles, made once per test session (see tests/make_xla_profile.py) and shared
by the XLA test modules: real CPU captures (TensorFlow ``jit_compile``, JAX) and synthetic GPU
XSpaces around real HLO protos compiled by JAX and TensorFlow."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from .oracle import gviz_frame, run_tool

MAKER = Path(__file__).resolve().parents[1] / "make_xla_profile.py"
_MADE: dict = {}
_ORACLE: dict = {}


def make(tmp_path_factory, scenario: str) -> Path:
    """The output directory of ``make_xla_profile.py <dir> <scenario>`` (made once)."""
    if scenario not in _MADE:
        need = {"jax": ["jax"], "gpu": ["jax", "tensorflow"], "tf_jit": ["tensorflow"],
                "gpu_collectives": ["jax", "tensorflow"]}
        for module in need[scenario]:
            if importlib.util.find_spec(module) is None:
                pytest.skip(f"{module} is not installed")
        out = tmp_path_factory.mktemp(f"xla_{scenario}")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", JAX_PLATFORMS="cpu")
        subprocess.run([sys.executable, str(MAKER), str(out), scenario], check=True, env=env,
                       timeout=300, capture_output=True)
        _MADE[scenario] = out
    return _MADE[scenario]


def xplane(directory: Path) -> Path:
    """The (first) .xplane.pb file of a capture's logdir."""
    files = sorted(Path(directory).glob("**/*.xplane.pb"))
    assert files, f"no profile under {directory}"
    return files[0]


def oracle(path: Path, tool: str, group_by: str | None = None):
    """xprof's ``tool`` output for ``path`` (run once per file, tool and grouping)."""
    key = (str(path), tool, group_by)
    if key not in _ORACLE:
        if group_by is None:
            _ORACLE[key] = run_tool(path, tool)
        else:  # op_profile's grouping
            import shutil
            import tempfile

            from xprof.convert.raw_to_tool_data import xspace_to_tool_data

            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / Path(path).name
                shutil.copy(path, copy)
                raw, _ = xspace_to_tool_data([str(copy)], tool, {"use_saved_result": False,
                                                                 "group_by": group_by})
            _ORACLE[key] = json.loads(raw)
    return _ORACLE[key]


def oracle_frame(path: Path, tool: str, index: int | None = None) -> pd.DataFrame:
    data = oracle(path, tool)
    return gviz_frame(data[index] if index is not None else data)


def programs(gpu_dir: Path) -> dict:
    """{program id: {"module": name, "instructions": [(name, opcode, fused), ...]}}."""
    return {int(k): v for k, v in json.loads((gpu_dir / "programs.json").read_text()).items()}
