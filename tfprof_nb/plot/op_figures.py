"""Op charts: where the time goes by op and op type (pies), and the top GPU kernels."""

from __future__ import annotations

import re
import textwrap

import pandas as pd

from ._style import PALETTE, new_figure, plain, plain_all, subplots

_CAPTION_WIDTH = 130  # characters a caption line holds

__all__ = ["op_stats_figure", "kernels_figure", "top_slices", "pie_slices", "short_kernel_name",
           "kernel_label", "PIE_MIN_PCT"]


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


# a pie's slices under this share of its total fold into one "Other (n ops)" slice
PIE_MIN_PCT = 2.0
OTHER_COLOR = "#d7d7d7"
PIE_LABEL_WIDTH = 22  # characters of a slice's label drawn on the pie (hover: the full name)
_NOUNS = {"operation": ("op", "ops"), "type": ("type", "types")}


def pie_slices(series: pd.Series, top: int = 10, min_pct: float = PIE_MIN_PCT,
               noun: tuple[str, str] = ("op", "ops")) -> pd.Series:
    """The slices of a pie of ``series``: its positive values, largest first, at most ``top``
    of them and none under ``min_pct`` % of the total, but at least the three largest; the
    rest summed as one slice labelled with their number ("Other (12 ops)").  One value alone
    is never folded (it is shown as itself)."""
    series = series[series > 0].sort_values(ascending=False, kind="stable")
    total = float(series.sum())
    big = int((series.iloc[:top] / total * 100 >= min_pct).sum()) if total else 0
    keep = max(big, min(3, len(series)))
    if len(series) - keep <= 1:
        return series
    rest = series.iloc[keep:]
    other = f"Other ({len(rest)} {noun[1]})"
    return pd.concat([series.iloc[:keep], pd.Series({other: rest.sum()})])


def _short_labels(names) -> list[str]:
    """What a slice shows of its name: the last part of a scoped name ("jit(step)/jvp()/
    dot_general" -> "dot_general"), cut to PIE_LABEL_WIDTH characters; names that would
    show alike are numbered ("dot_general #2")."""
    out, seen = [], {}
    for name in map(str, names):
        short = name if name.startswith("Other (") else (name.rstrip("/").rsplit("/", 1)[-1]
                                                         or name)
        if len(short) > PIE_LABEL_WIDTH:
            short = short[:PIE_LABEL_WIDTH - 1] + "…"
        seen[short] = seen.get(short, 0) + 1
        out.append(short if seen[short] == 1 else f"{short} #{seen[short]}")
    return out


def _one_slice_sentence(sums: pd.Series, key: str) -> tuple[str, str]:
    """What a pie of one slice would have shown, in words, and the slice's full name for the
    hover (both as plotly's text, the name escaped)."""
    if not len(sums):
        return "No self time.", ""
    name, value = str(sums.index[0]), float(sums.iloc[0])
    shown = name if len(name) <= 2 * PIE_LABEL_WIDTH else name[:2 * PIE_LABEL_WIDTH - 1] + "…"
    return (f"One {_NOUNS[key][0]} takes all of it:<br>{plain(shown)}<br>"
            f"{value:,.1f} us (100%)", plain(name))


def _pie_sides(ops: pd.DataFrame, top: int) -> list[tuple[str, list[tuple[str, pd.Series]]]]:
    """[(side, [(key, slices) for op and type])] of each side whose ops take time."""
    sides = []
    for side in ("Host", "Device"):  # a side whose ops take no time has no pie
        part = ops[ops.host_or_device == side]
        if not (part.total_self_time_us > 0).any():
            continue
        sides.append((side, [(key, pie_slices(
            part.groupby(key, sort=False).total_self_time_us.sum(), top, noun=_NOUNS[key]))
            for key in ("operation", "type")]))
    return sides


def _caption(fig, notes, height: int) -> int:
    """``notes`` (sentences) as a caption under the pies, wrapped: the height it adds."""
    lines = [line for note in notes if note
             for line in textwrap.wrap(note, _CAPTION_WIDTH)]
    if not lines:
        return 0
    added = 18 * len(lines) + 20
    fig.add_annotation(text="<br>".join(plain(line) for line in lines), showarrow=False,
                       xref="paper", yref="paper", x=0.0, y=-20 / height, xanchor="left",
                       yanchor="top", align="left", name="caption", font={"size": 12})
    return added


def op_stats_figure(ops: pd.DataFrame, theme: str = "light", top: int = 10, notes=()):
    """Self time by op and by op type, on the host and on devices (``prof.op_stats`` with or
    without its IDLE rows): one pie each of the ``top`` largest slices, those under
    PIE_MIN_PCT % folded into "Other (n ops)", each labelled with the last part of its name
    (the full name on hover).  A pie of one slice is not drawn: a sentence says what it is;
    a side of only such sentences takes a short row.  ``notes``: sentences shown under the
    pies (what the IDLE slices count, :mod:`.op_words`; a view shows them itself)."""
    sides = _pie_sides(ops, top)
    heights = [380 if any(len(s) > 1 for _, s in pies) else 110 for _, pies in sides] or [380]
    height = sum(heights) + 60 * (len(heights) - 1)
    titles = [f"{side} {what}" for side, _ in sides for what in ("self time by op",
                                                                 "self time by type")]
    fig = subplots(theme, rows=len(heights), cols=2,
                   specs=[[{"type": "domain"}, {"type": "domain"}]] * len(heights),
                   subplot_titles=titles or None, row_heights=heights,
                   vertical_spacing=60 / height if len(heights) > 1 else 0.0)
    added = _caption(fig, notes, height)
    fig.update_layout(meta={**fig.layout.meta, "kind": "op_stats"}, showlegend=False,
                      height=height + 80 + added, uniformtext={"minsize": 9, "mode": "hide"})
    if added:
        fig.update_layout(margin={"b": added + 20})
    for r, (side, pies) in enumerate(sides, start=1):
        for c, (key, sums) in enumerate(pies, start=1):
            if len(sums) < 2:
                cell = fig.get_subplot(r, c)
                text, full = _one_slice_sentence(sums, key)
                fig.add_annotation(text=text, hovertext=full or None, showarrow=False,
                                   xref="paper", yref="paper", x=sum(cell.x) / 2,
                                   y=sum(cell.y) / 2, xanchor="center", yanchor="middle",
                                   name=f"{side} {key}", font={"size": 13})
                continue
            _add_pie(fig, sums, f"{side} {key}", r, c)
    return fig


def _add_pie(fig, sums: pd.Series, name: str, row: int, col: int) -> None:
    """One pie of ``sums``: its named slices in the palette's colours, "Other" in grey."""
    colors = [OTHER_COLOR if str(k).startswith("Other (") else PALETTE[i % len(PALETTE)]
              for i, k in enumerate(sums.index)]
    fig.add_pie(labels=plain_all(sums.index), values=sums.to_numpy(float),
                text=plain_all(_short_labels(sums.index)), name=name, hole=0.35, sort=False,
                textinfo="text+percent", textposition="inside",
                insidetextorientation="horizontal", marker={"colors": colors},
                hovertemplate="%{label}<br>%{value:,.1f} us (%{percent})<extra></extra>",
                row=row, col=col)


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
    title = f"Top {len(top_rows)} GPU kernels by total time" if len(top_rows) else \
        "No GPU kernels in this profile"
    fig = new_figure(theme=theme, title={"text": title},
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
