"""Op charts: where the time goes by op and op type (pies), and the top GPU kernels."""

from __future__ import annotations

import re

import pandas as pd

from ._style import PALETTE, new_figure, plain, plain_all, subplots

__all__ = ["op_stats_figure", "kernels_figure", "top_slices", "short_kernel_name",
           "kernel_label"]


def top_slices(series: pd.Series, top: int = 10) -> pd.Series:
    """The ``top`` largest values of ``series`` and the rest summed as "Other"."""
    series = series[series > 0].sort_values(ascending=False, kind="stable")
    if len(series) <= top:
        return series
    return pd.concat([series.iloc[:top], pd.Series({"Other": series.iloc[top:].sum()})])


def short_kernel_name(name: str) -> str:
    """A kernel's name without return type, namespaces, template and call arguments
    ("void tensorflow::functor::FillKernel<float, 3>(...)" -> "FillKernel")."""
    name = re.sub(r"^\s*void\s+", "", str(name))
    base = re.split(r"[<(]", name, maxsplit=1)[0].strip() or name
    return base.rsplit("::", 1)[-1] or base


def kernel_label(kernel: str, op_name=None, width: int = 60) -> str:
    """A short label for a kernel: its short name and the last part of its op's name."""
    label = short_kernel_name(kernel)
    if isinstance(op_name, str) and op_name:
        label += " · " + "/".join(op_name.split("/")[-2:])
    return label if len(label) <= width else label[:width - 1] + "…"


# words of C++ template arguments that tell nothing apart (namespaces, containers, plumbing)
_PLUMBING = frozenset({"Eigen", "internal", "tensorflow", "functor", "void", "const", "long",
                       "int", "unsigned", "TensorEvaluator", "TensorAssignOp", "TensorMap",
                       "Tensor", "MakePointer", "GpuDevice", "false", "true", "std"})


def _words(name: str) -> list[str]:
    """The identifiers of a kernel's template and call arguments, in order, once each."""
    inner = str(name).split("<", 1)[1] if "<" in str(name) else ""
    seen: dict[str, None] = {}
    for word in re.findall(r"[A-Za-z_]\w*", inner):
        if word not in _PLUMBING and len(word) > 2:
            seen.setdefault(word, None)
    return list(seen)


def kernel_labels(kernels, ops, width: int = 60) -> list[str]:
    """Short labels of kernels (:func:`kernel_label`); kernels that would share one (C++
    templates: fourteen ``EigenMetaKernel`` of different expressions) add the first words of
    their template arguments that not all of them have, and a number where still alike."""
    labels = [kernel_label(k, o, width) for k, o in zip(kernels, ops)]
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    for label, rows in groups.items():
        if len(rows) < 2:
            continue
        words = [_words(kernels[i]) for i in rows]
        common = set.intersection(*(set(w) for w in words))
        extras = [", ".join([w for w in own if w not in common][:4]) for own in words]
        seen: dict[str, int] = {}
        for i, extra in zip(rows, extras):
            seen[extra] = seen.get(extra, 0) + 1
            if extras.count(extra) > 1 or not extra:
                extra = f"{extra} #{seen[extra]}".strip()
            full = f"{label} ({extra})"
            labels[i] = full if len(full) <= width + 40 else full[:width + 39] + "…"
    return labels


def op_stats_figure(ops: pd.DataFrame, theme: str = "light", top: int = 10):
    """Self time by op and by op type, on the host and on devices (``prof.op_stats`` with or
    without its IDLE rows): one pie each, the ``top`` largest slices and "Other"."""
    sides = [s for s in ("Host", "Device")  # a side whose ops take no time has no pie
             if ((ops.host_or_device == s) & (ops.total_self_time_us > 0)).any()]
    specs = [{"type": "domain"}, {"type": "domain"}]
    titles = [f"{side} {what}" for side in sides for what in ("self time by op",
                                                               "self time by type")]
    fig = subplots(theme, rows=max(len(sides), 1), cols=2, specs=[specs] * max(len(sides), 1),
                   subplot_titles=titles or None, vertical_spacing=0.12)
    fig.update_layout(meta={**fig.layout.meta, "kind": "op_stats"}, showlegend=False,
                      height=380 * max(len(sides), 1),
                      uniformtext={"minsize": 9, "mode": "hide"})  # labels where they fit
    for r, side in enumerate(sides, start=1):
        part = ops[ops.host_or_device == side]
        for c, key in enumerate(("operation", "type"), start=1):
            sums = top_slices(part.groupby(key, sort=False).total_self_time_us.sum(), top)
            fig.add_pie(labels=plain_all(sums.index), values=sums.to_numpy(float),
                        name=f"{side} {key}", hole=0.35, sort=False,
                        textinfo="label+percent", textposition="inside",
                        insidetextorientation="horizontal", marker={"colors": PALETTE},
                        hovertemplate="%{label}<br>%{value:,.1f} us (%{percent})<extra></extra>",
                        row=r, col=c)
    return fig


def kernels_figure(kernels: pd.DataFrame, theme: str = "light", top: int = 20):
    """The ``top`` GPU kernels by total time (``prof.kernel_stats``), coloured by Tensor Core
    use, with their launch configuration on hover."""
    top_rows = kernels.head(top).iloc[::-1]  # largest at the top of a horizontal bar chart
    colors = ["#59a14f" if tc else "#4e79a7" for tc in top_rows.is_kernel_using_tensor_core]
    # ranked short labels (the full name is in the hover): kernels whose names share a long
    # prefix stay apart
    labels = kernel_labels(list(top_rows.kernel_name.astype(str)), list(top_rows.op_name))
    names = [f"{r}. {plain(label)}" for r, label in zip(top_rows["rank"], labels)]
    custom = top_rows[["kernel_name", "op_name", "occurrences", "avg_duration_us", "grid_dim",
                       "block_dim", "registers_per_thread", "occupancy_pct",
                       "is_kernel_using_tensor_core"]].astype(object)
    for col in ("kernel_name", "op_name", "grid_dim", "block_dim"):
        custom[col] = plain_all(custom[col])
    custom = custom.to_numpy()
    fig = new_figure(theme=theme, title={"text": f"Top {len(top_rows)} GPU kernels by total "
                                         "time"},
                     xaxis={"title": {"text": "Total time (us)"}},
                     yaxis={"type": "category"}, meta={"kind": "kernels"},
                     height=max(240, 22 * len(top_rows) + 90), showlegend=False)
    fig.add_bar(x=top_rows.total_duration_us.to_numpy(float), y=names, orientation="h",
                marker={"color": colors}, customdata=custom,
                hovertemplate="<b>%{customdata[0]}</b><br>op %{customdata[1]}<br>"
                "%{customdata[2]} calls, avg %{customdata[3]:.2f} us, total %{x:,.1f} us<br>"
                "grid %{customdata[4]} block %{customdata[5]}, %{customdata[6]} regs, "
                "occupancy %{customdata[7]:.0f}%<br>Tensor Cores: %{customdata[8]}"
                "<extra></extra>")
    return fig
