"""The 16-bit share of the devices' computation that sentences quote (``precision``), from one
source, so that a card, a statement and a finding about it agree.

Where the profile has XLA programs on GPUs with their HLO, the operand types of the matrix
multiplications and convolutions decide (bf16 or f16 operands: 16 bit); the step breakdown's
16-bit time follows the reference (kernels named half/fp16: bf16 never counts), so it decides
only without an HLO (TensorFlow without XLA).  Where command buffers hide most GPU ops, or XLA
programs run no matrix multiplication whose HLO is known, nothing is claimed.  (The other share
quoted from one source: :mod:`.input_wait`.)
"""

from __future__ import annotations

import pandas as pd

from ..runtime.unit import Analysis
from ..steps.xprof_counted import xprof_steps

__all__ = ["ANALYSES", "LOW_16BIT_PCT", "matmul_precision", "operands", "precision"]

LOW_16BIT_PCT = 10.0  # below this 16-bit share the overview says so (the reference's rule)
_MATMUL_NAME = r"gemm|cublas|cudnn|matmul|convolution|(?:^|[._-])(?:dot|conv)(?:[._-]|$)"
_MATMUL_EXPR = r'custom_call_target="__(?:cublas|cudnn)| dot\(| convolution\('


def operands(expression: str) -> str:
    """The operand list of an HLO instruction's text (``%x = TYPE opcode(OPERANDS), ...``;
    the result type may be a tuple)."""
    rest = expression.partition(" = ")[2]
    if rest.startswith("("):  # a tuple result type
        rest = rest[rest.find(")") + 1:]
    return rest.partition("(")[2].partition(")")[0]


def matmul_precision(hlo: pd.DataFrame) -> tuple[float, float, float]:
    """(16-bit, all) self time of the GPU's matrix multiplications and convolutions whose HLO
    is known (16-bit: bf16 or f16 operands), and the GPU op time with no HLO (command buffers,
    ops missing from the HLO protos), in us."""
    gpu = hlo[hlo.device_type == "GPU"] if len(hlo) else hlo
    if gpu.empty:
        return 0.0, 0.0, 0.0
    known = gpu.resolved.astype(bool)
    expr = gpu.hlo_op_expression.fillna("").astype(str)
    matmul = known & (gpu.hlo_op_name.str.contains(_MATMUL_NAME, case=False)
                      | expr.str.contains(_MATMUL_EXPR))
    half = matmul & expr.map(lambda e: "f16[" in operands(e))
    t = gpu.total_self_time_us
    return float(t[half].sum()), float(t[matmul].sum()), float(t[~known].sum())


def _low_statement(pct16: float, what: str) -> str:
    return (f"Only {pct16:.1f}% of {what} is 16 bit. So you might want to replace more "
            "32-bit ops by 16-bit ops to improve performance (if the reduced accuracy is "
            "acceptable).")


def _from_hlo(hlo: pd.DataFrame) -> dict:
    """The precision of a profile with GPU HLO ops ({}: nothing to claim)."""
    half_us, matmul_us, unknown_us = matmul_precision(hlo)
    if matmul_us <= 0:
        return {}  # no known matrix multiplication (or command buffers hide them)
    pct16 = 100 * half_us / matmul_us
    out = {"source": "hlo", "pct16": pct16, "label": "16-bit matrix multiplications",
           "evidence_key": "matmul_16bit_pct", "matmul_16bit_pct": pct16,
           "unknown_us": unknown_us}
    if pct16 < LOW_16BIT_PCT:
        out["statement"] = _low_statement(
            pct16, "the matrix multiplications' time (their operand types in the HLO)")
    return out


def _from_steps(steps: pd.DataFrame) -> dict:
    """The precision of the step breakdown's device compute over the steps XProf counts
    ({}: none)."""
    steps = xprof_steps(steps)
    known = float(steps.device_compute_16_ms.sum() + steps.device_compute_32_ms.sum()) \
        if len(steps) else 0.0
    if known <= 0:
        return {}
    pct16 = 100 * float(steps.device_compute_16_ms.sum()) / known
    out = {"source": "steps", "pct16": pct16, "label": "16-bit device compute",
           "evidence_key": "device_compute_16bit_pct", "device_compute_16bit_pct": pct16,
           "device_compute_32bit_pct": 100 - pct16}
    if pct16 < LOW_16BIT_PCT:
        out["statement"] = _low_statement(pct16, "device computation")
    return out


def precision(parts: dict, steps: pd.DataFrame, hlo_stats: pd.DataFrame) -> dict:
    """The 16-bit share of device compute from one source (see the module doc): ``source``
    ("hlo" or "steps"), ``pct16``, ``label`` (the card's), ``evidence_key`` (the finding's),
    and ``statement`` when the share is low; {} when nothing can be claimed.  From the HLO,
    ``xprof_pct16`` is the reference's figure where its step breakdown gives one (its overview
    says it: "Only 0.0% of device computation is 16 bit" beside the HLO's 100%)."""
    has_gpu_hlo = len(hlo_stats) and (hlo_stats.device_type == "GPU").any()
    if not has_gpu_hlo:
        return _from_steps(steps)
    out = _from_hlo(hlo_stats)
    xprof = _from_steps(steps)
    if out and xprof:
        out["xprof_pct16"] = xprof["pct16"]
    return out


ANALYSES = (Analysis("precision", combine=precision, needs=("steps", "hlo_stats")),)
