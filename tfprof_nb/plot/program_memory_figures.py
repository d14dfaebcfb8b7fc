"""The program memory chart (XProf's memory viewer): an XLA program's heap over its program
order with the peak marked, and the largest buffers live at the peak."""

from __future__ import annotations

import numpy as np

from ._style import plain, plain_all, subplots
from .memory_figures import human_bytes, reduce_extremes

__all__ = ["ALLOCATION_COLORS", "program_memory_figure"]

_MIB = 2.0**20
ALLOCATION_COLORS = {"Parameter": "#4e79a7", "Output": "#59a14f", "Temporary": "#f28e2b",
                     "Constant": "#b07aa1", "Thread-local": "#bab0ac"}
_HEAP_FIELDS = ["event", "hlo_op_name", "logical_buffer_id", "delta_bytes", "heap_bytes"]
_HEAP_HOVER = ("<b>%{customdata[0]}</b> %{customdata[1]} (buffer %{customdata[2]})<br>"
               "change %{customdata[3]:,} B · heap %{customdata[4]:,} B · "
               "position %{x}<extra></extra>")
_BUFFER_FIELDS = ["hlo_op_name", "buffer_shape", "opcode", "framework_op", "allocation_type",
                  "size_bytes", "unpadded_size_bytes", "logical_buffer_id"]
_BUFFER_HOVER = ("<b>%{customdata[0]}</b> %{customdata[1]}<br>%{customdata[2]} · "
                 "%{customdata[3]}<br>%{customdata[4]}, %{customdata[5]:,} B "
                 "(unpadded %{customdata[6]:,} B)<br>buffer %{customdata[7]}, live "
                 "%{customdata[8]}<extra></extra>")


def program_memory_figure(memory, theme: str = "light", top: int = 20,
                          max_points: int = 4000):
    """``memory`` (a :class:`~tfprof_nb.analysis.xla.memory.buffer_assignment.ProgramMemory`):
    the heap and unpadded heap in MiB after each heap-simulator event (program order, not
    time; every event hoverable, the peak marked; long heaps keep each bucket's extremes), and
    the ``top`` largest buffers live at the peak coloured by allocation type."""
    title = f"{memory.name}: memory space {memory.memory_space}"
    if not np.isnan(memory.peak_heap_bytes):
        title += f", peak heap {human_bytes(memory.peak_heap_bytes)}"
    # every buffer's bar gets a label's height (crowded, plotly drops every second label)
    heap_px, bars_px = 330, max(160, _BAR_PX * min(top, len(memory.buffers)))
    fig = subplots(theme, rows=2, cols=1, row_heights=[heap_px, bars_px],
                   vertical_spacing=90 / (heap_px + bars_px + 90),
                   subplot_titles=["", f"Largest buffers live at the peak (top {top})"])
    fig.update_layout(title={"text": plain(title)}, hovermode="closest",
                      height=heap_px + bars_px + 96 + 90 + 60, margin={"t": 96},
                      meta={**fig.layout.meta, "kind": "program_memory",
                            "program_id": str(memory.program_id),
                            "memory_space": memory.memory_space,
                            "peak_heap_bytes": memory.peak_heap_bytes,
                            "peak_position": memory.peak_position,
                            "reasons": list(memory.reasons)})
    fig.update_xaxes(title_text="Program order (heap simulator event)", row=1, col=1)
    fig.update_yaxes(title_text="Heap (MiB)", rangemode="tozero", row=1, col=1)
    fig.update_xaxes(title_text="Size (MiB)", row=2, col=1)
    _heap_traces(fig, memory, max_points)
    _buffer_bars(fig, memory.buffers.head(top))
    return fig


_BAR_PX = 22  # px per buffer's bar: room for its label


def _heap_traces(fig, memory, max_points: int) -> None:
    heap = memory.heap
    if heap.empty:
        return
    x = heap.position.to_numpy(np.int64)
    keep = reduce_extremes(x.astype(float), heap.heap_bytes.to_numpy(float), max_points)
    if memory.peak_position >= 0:
        keep = np.union1d(keep, [memory.peak_position])
    sel = heap.iloc[keep]
    custom = np.column_stack([plain_all(sel.event), plain_all(sel.hlo_op_name),
                              sel[_HEAP_FIELDS[2:]].to_numpy(np.int64).astype(object)])
    fig.add_scatter(x=x[keep], y=sel.heap_bytes.to_numpy(float) / _MIB, name="Heap",
                    mode="lines+markers", line={"shape": "hv", "color": "#4e79a7"},
                    marker={"size": 4}, customdata=custom, hovertemplate=_HEAP_HOVER,
                    row=1, col=1)
    fig.add_scatter(x=x[keep], y=sel.unpadded_heap_bytes.to_numpy(float) / _MIB,
                    name="Unpadded heap", mode="lines",
                    line={"shape": "hv", "dash": "dot", "color": "#76b7b2"},
                    hovertemplate="unpadded %{y:.3f} MiB<extra></extra>", row=1, col=1)
    if memory.peak_position >= 0:
        fig.add_scatter(x=[memory.peak_position], y=[memory.peak_heap_bytes / _MIB],
                        mode="markers+text", name="Peak",
                        marker={"symbol": "star", "size": 14, "color": "#e15759"},
                        text=[f"peak {human_bytes(memory.peak_heap_bytes)}"],
                        textposition="middle right",
                        hovertemplate=f"peak {memory.peak_heap_bytes:,.0f} B at position "
                        "%{x}<extra></extra>", row=1, col=1)


def _buffer_bars(fig, buffers) -> None:
    rows = buffers.iloc[::-1]  # the largest at the top of a horizontal bar chart
    labels = [f"{len(rows) - i}. {name}{index}" for i, (name, index) in
              enumerate(zip(rows.hlo_op_name, rows.shape_index))]
    labels = plain_all(labels)
    for kind, color in ALLOCATION_COLORS.items():
        mine = (rows.allocation_type == kind).to_numpy()
        if not mine.any():
            continue
        part = rows[mine]
        live = [("for the whole program" if ind else f"from position {a} to {f}")
                for ind, a, f in zip(part.indefinite, part.alloc_position, part.free_position)]
        custom = np.column_stack([plain_all(part[c]) for c in _BUFFER_FIELDS[:5]] +
                                 [part[c].to_numpy(np.int64).astype(object)
                                  for c in _BUFFER_FIELDS[5:]] + [np.array(live, object)])
        fig.add_bar(x=part.size_bytes.to_numpy(float) / _MIB,
                    y=[lab for lab, m in zip(labels, mine) if m], orientation="h", name=kind,
                    marker={"color": color}, customdata=custom, hovertemplate=_BUFFER_HOVER,
                    row=2, col=1)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels,
                     tickmode="array", tickvals=labels, automargin=True, row=2, col=1)
