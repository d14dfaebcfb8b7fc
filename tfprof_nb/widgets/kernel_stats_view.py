"""The GPU kernel stats view: the top kernels by total time (a chart) and the kernel stats
table, with each kernel's hardware counters where the profile has them."""

from __future__ import annotations

import traitlets

from .._words import counted
from ..analysis.gpu.activity import is_copy
from ..analysis.xla.buffer_words import xprof_buffer_words
from ._view import View, ViewState
from .op_counter_columns import with_op_counters
from .traits import FigureTrait, TableData, TableTrait

__all__ = ["KernelStatsView"]


def _tensor_core_words(stats) -> list[str]:
    """What the Tensor-Core column cannot tell: XProf's rule reads it from the kernel's name,
    so kernels of eligible ops whose names it does not know (cuBLAS's nvjet_*, XLA's
    gemm_fusion_* on Hopper) read false whatever they run on."""
    if not len(stats):
        return []
    unknown = stats[stats.is_op_tensor_core_eligible & ~stats.is_kernel_using_tensor_core]
    if unknown.empty:
        return []
    kernels = list(dict.fromkeys(unknown.kernel_name.astype(str)))
    names = ", ".join(kernels[:2]) + (f" and {len(kernels) - 2} more" if len(kernels) > 2 else "")
    verb = "reads" if len(unknown) == 1 else "read"
    whose = "its name carrying" if len(kernels) == 1 else "their names carrying"
    return [f"'Is kernel using tensor core' follows XProf's rule, which reads it from the "
            f"kernel's name: {_rows_words(unknown, 'of Tensor-Core-eligible ops')} {verb} "
            f"false ({names}), {whose} none of the patterns it knows; false there says only "
            "that the name does not tell."]


# no GPU gives a thread more registers (NVIDIA: 255; AMD CDNA: 512 vector registers)
MOST_REGISTERS = 512


def _register_words(stats) -> list[str]:
    """What the registers column holds where the capture's stat is not a count: 0 (the
    tracer recorded none: ROCm's) or more than any GPU has (ROCm's older tracer); the table
    keeps the capture's value, as XProf's kernel stats do."""
    if not len(stats):
        return []
    regs = stats.registers_per_thread
    rows = _rows_words(stats)
    out = []
    zero, over = int((regs == 0).sum()), int((regs > MOST_REGISTERS).sum())
    if zero:
        out.append(f"Registers per thread read 0 in {zero} of {rows}: the capture records no "
                   "count for them (XProf's kernel stats show 0 too), so that 0 means "
                   "unknown, not none.")
    if over:
        out.append(f"Registers per thread read up to {int(regs.max()):,} in {over} of {rows}: "
                   "the capture's stat as XProf shows it, not a count (no GPU has more than "
                   f"{MOST_REGISTERS} a thread): its tracer wrote something else there.")
    return out


def _rows_words(stats, of: str = "") -> str:
    """"the table's 12 rows (8 kernels, a row for each launch shape)"; "the table's 3 rows"
    where each row is a kernel of its own; ``of``: what the rows are of, said after "rows"
    ("3 rows of Tensor-Core-eligible ops")."""
    kernels = stats.kernel_name.nunique()
    said = f"the table's {counted(len(stats), 'row')}" + (f" {of}" if of else "")
    return said if kernels == len(stats) else \
        f"{said} ({counted(kernels, 'kernel')}, a row for each launch shape)"


def _copy_words(stats) -> list[str]:
    """The rows that are copies or fills, not computation: ROCm runs hipMemcpy and hipMemset
    as kernels (``__amd_rocclr_copyBuffer``, ``__amd_rocclr_fillBuffer``), which XProf's
    kernel stats list, as this table does, while the device figures (the duty cycle's
    kernels, the GPU tab) count them as copies."""
    if not len(stats):
        return []
    copies = stats[[is_copy(str(n)) for n in stats.kernel_name]]
    if copies.empty:
        return []
    runs = copies.groupby(copies.kernel_name.astype(str), sort=False).occurrences.sum()
    fills = ["fill" in name.lower() for name in runs.index]
    named = ", ".join(f"{name} ({counted(int(n), 'run')})" for name, n in runs.items())
    total, them = int(stats.occurrences.sum()), "them" if len(runs) != 1 else "it"
    kind, behind = ("fill", "hipMemset") if all(fills) else ("copy", "hipMemcpy") \
        if not any(fills) else ("copy and fill", "hipMemcpy and hipMemset")
    what = f"{kind} kernel{'s' * (len(runs) != 1)} behind {behind}"
    return [f"{named}: ROCm's {what}, listed here as XProf's kernel stats list {them}; the "
            f"device figures (the duty cycle, the GPU tab's kernels) count {them} as copies: "
            f"their {counted(total - int(runs.sum()), 'kernel run')} are the table's "
            f"{total:,} without {them}."]


def _op_name_words(stats) -> list[str]:
    """Why the op name column is blank on every row: the file's kernels name no op (no
    ``tf_op`` or ``hlo_op`` stat), and XProf's kernel stats leave it blank too."""
    if not len(stats) or (stats.op_name.astype(str).str.strip() != "").any():
        return []
    return ["The op name is blank on every row: the file's kernels carry no tf_op or hlo_op "
            "stat naming the op they ran for, and XProf's kernel stats leave it blank too."]


class KernelStatsView(View):
    """The top GPU kernels by total time (a chart) and the kernel stats table."""

    tab, title, bundle, position = "kernels", "GPU kernel stats", "kernel_stats", 40
    statements = traitlets.List().tag(sync=True)
    figure = FigureTrait()
    table = TableTrait()

    @classmethod
    def reason(cls, prof) -> str | None:
        return None if len(prof.kernel_stats) else \
            "No GPU in this profile: there are no kernels to show."

    @classmethod
    def state(cls, prof) -> ViewState:
        table = TableData(prof.kernel_stats, "GPU kernel stats", "kernel_name")
        buffers = xprof_buffer_words(prof.hlo_stats, "kernel_stats")
        return ViewState({"statements": ([buffers] if buffers else [])
                          + _tensor_core_words(prof.kernel_stats)
                          + _copy_words(prof.kernel_stats) + _register_words(prof.kernel_stats)
                          + _op_name_words(prof.kernel_stats),
                          "figure": prof.plot.kernels(),
                          "table": with_op_counters(table, prof, "kernel", {"op": "kernel_name"})})
