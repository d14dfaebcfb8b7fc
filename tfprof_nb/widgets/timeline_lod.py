"""The trace viewer's level of detail, served by the kernel.

The timeline's events are sorted by (track, nesting depth, start) in segments that each hold
one (track, depth).  A *tile* is what the browser draws for a time window at a resolution:
per segment, the events at least a pixel wide and, merged per pixel column, the narrower ones
(``_native/timeline.c``).  The widget's first state is an overview tile of the whole profile
(or every event, for profiles that fit the state budget); on zoom and pan the browser asks for
the visible window (a custom message) and gets a tile back as binary buffers.

Tile columns, one row per block: ``start`` (float64 us), ``dur`` (float32 us), ``name``
(uint32 name code of the block's first event), ``count`` (uint32 events merged), ``row``
(uint32 timeline row of the first event: what selection and details use), and ``off``
(uint32, segments + 1): the blocks of segment s are off[s]..off[s+1].  A tile goes to the
browser as typed columns (``tfprof_nb.offline.columns``) with its header.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import traitlets

from .._native import kernels
from ..offline.columns import encode_columns

__all__ = ["BLOCK_BYTES", "FULL_EVENT_BYTES", "OVERVIEW_STATE_BUDGET", "STATE_BUDGET",
           "WINDOW_BUDGET", "Tile", "TileTrait", "TimelineIndex"]

BLOCK_BYTES = 24  # start f64, dur f32, name, count, row (uint32 each)
FULL_EVENT_BYTES = 16  # every event: start f64, dur f32, name uint32
STATE_BUDGET = 8 * 2**20  # the widget's first state: every event when they fit, else overview
# ... that overview, at most: a notebook saved with its widget state keeps it (a 33 MB
# capture's 1.18 M events: 55,585 blocks at 8192 px, 1.78 MB of base64 in the notebook; in
# 512 kB 20,716 blocks merged per 2 px, 0.66 MB); a view finer than that asks the kernel for
# its window, as on zoom
OVERVIEW_STATE_BUDGET = 2**19
WINDOW_BUDGET = 2**20  # one window answer
OVERVIEW_PX = 8192  # resolution of the overview: zooming in 4x on a wide view stays sharp
MAX_SEARCH_HITS = 100_000


@dataclass
class Tile:
    """Blocks of a time window (see the module docstring); ``exact``: every event of the
    window alone (no merging), drawable at any zoom."""

    t0: float
    t1: float
    px_per_us: float
    exact: bool
    columns: dict = field(default_factory=dict)  # name -> numpy array

    @property
    def blocks(self) -> int:
        return len(self.columns["start"])

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.columns.values())

    def header(self) -> dict:
        """The tile's JSON part: its window, resolution and size."""
        return {"t0": self.t0, "t1": self.t1, "exact": self.exact, "blocks": self.blocks,
                "px_per_us": None if self.exact or not math.isfinite(self.px_per_us)
                else self.px_per_us}

    def without_blocks(self) -> Tile:
        """This tile (of every event) without the columns that say nothing then: each block
        is one event (``count``) whose row is its index (``row``)."""
        keep = {k: v for k, v in self.columns.items() if k not in ("count", "row")}
        return Tile(self.t0, self.t1, self.px_per_us, self.exact, keep)

    def wire(self) -> dict:
        """The tile as the browser receives it: its header and its columns, typed."""
        return {**self.header(), **encode_columns(self.columns)}

    def message(self) -> tuple[dict, list[memoryview]]:
        """The tile as a custom message carries it: (header with the schema, buffers)."""
        wire = self.wire()
        return {k: v for k, v in wire.items() if k != "buffers"}, wire["buffers"]


class TileTrait(traitlets.TraitType):
    """A synced :class:`Tile`, sent typed (:meth:`Tile.wire`); None: no tile."""

    info_text = "a Tile"

    def __init__(self, **kwargs):
        super().__init__(default_value=None, allow_none=True, **kwargs)
        self.tag(sync=True, to_json=lambda tile, _widget: None if tile is None else tile.wire())

    def validate(self, obj, value):
        if value is None or isinstance(value, Tile):
            return value
        self.error(obj, value)


class TimelineIndex:
    """The timeline's sorted event columns and segments, answering window and search
    queries without per-event Python."""

    def __init__(self, start: np.ndarray, dur: np.ndarray, name: np.ndarray,
                 seg_lo: np.ndarray, seg_hi: np.ndarray, names: list[str],
                 long_names: dict | None = None):
        self.start = np.ascontiguousarray(start, np.float64)
        self.dur = np.ascontiguousarray(dur, np.float32)
        self.name = np.ascontiguousarray(name, np.uint32)
        self.seg_lo = np.ascontiguousarray(seg_lo, np.int64)
        self.seg_hi = np.ascontiguousarray(seg_hi, np.int64)
        self.names = names  # (each code's label: a display name where the event has one)
        self.long_names = long_names or {}  # (str code -> the name, where the label differs)
        self.t0 = float(self.start.min()) if len(self.start) else 0.0
        self.t1 = float((self.start + self.dur).max()) if len(self.start) else 1.0

    def __len__(self) -> int:
        return len(self.start)

    def _tile(self, t0, t1, ppu, exact, b_start, b_end, b_first, b_count, seg_off) -> Tile:
        return Tile(t0, t1, ppu, exact, {
            "start": b_start.astype(np.float64, copy=False),
            "dur": (b_end - b_start).astype(np.float32),
            "name": self.name[b_first],
            "count": b_count.astype(np.uint32),
            "row": b_first.astype(np.uint32),
            "off": seg_off.astype(np.uint32)})

    def window(self, t0: float, t1: float, width_px: float,
               budget: int = WINDOW_BUDGET) -> Tile:
        """The blocks of [t0, t1] drawn ``width_px`` wide, in at most ``budget`` bytes:
        events of a pixel or more alone, narrower ones merged per pixel column; when that
        does not fit, merged per 2, 4, ... pixels."""
        if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
            raise ValueError(f"the window must be a finite range, not [{t0}, {t1}]")
        if not (math.isfinite(width_px) and width_px >= 1):
            raise ValueError(f"the window must be at least 1 px wide, not {width_px}")
        ppu = float(width_px) / (t1 - t0)
        cap = max(budget // BLOCK_BYTES, 1)
        min_px = 1.0
        while True:
            n, b_start, b_end, b_first, b_count, seg_off = kernels.tl_window(
                self.start, self.dur, self.seg_lo, self.seg_hi, t0, t1, ppu, min_px, cap)
            if n <= cap or min_px >= width_px:
                break
            min_px *= 2 if n < 4 * cap else 4
        exact = bool(len(b_count) == 0 or b_count.max() == 1) and n <= cap
        # a tile with every event alone draws right at any zoom: exact
        return self._tile(t0, t1, ppu / min_px, exact, b_start, b_end, b_first, b_count,
                          np.minimum(seg_off, len(b_start)))

    def events_in(self, t0: float, t1: float) -> Tile:
        """Every event overlapping [t0, t1], unmerged (an exact tile)."""
        rows = kernels.tl_rows_in(self.start, self.dur, self.seg_lo, self.seg_hi, t0, t1)
        seg_off = np.searchsorted(rows, self.seg_lo, side="left")
        seg_off = np.append(seg_off, len(rows))
        start = self.start[rows]
        return self._tile(t0, t1, math.inf, True, start, start + self.dur[rows], rows,
                          np.ones(len(rows), np.int64), seg_off)

    def count_in(self, t0: float, t1: float) -> int:
        """How many events overlap [t0, t1]."""
        return len(kernels.tl_rows_in(self.start, self.dur, self.seg_lo, self.seg_hi, t0, t1))

    def full(self) -> Tile:
        """Every event (an exact tile of the whole profile)."""
        return self._tile(self.t0, self.t1, math.inf, True, self.start,
                          self.start + self.dur, np.arange(len(self), dtype=np.int64),
                          np.ones(len(self), np.int64),
                          np.append(self.seg_lo, len(self)))

    def overview(self, budget: int = STATE_BUDGET) -> Tile:
        """Every event when they fit ``budget`` at 16 bytes each, else the whole profile at
        ``OVERVIEW_PX`` (coarser when needed) in ``budget`` bytes."""
        if len(self) * FULL_EVENT_BYTES <= budget:
            return self.full()
        return self.window(self.t0, self.t1 + 1e-9, OVERVIEW_PX, budget)

    def search(self, query: str, limit: int = MAX_SEARCH_HITS):
        """Rows whose name contains ``query`` (case-insensitive), by start: (total, start,
        dur, row, name code) of the first ``limit``."""
        return self.hits(self.named(query), limit)

    def named(self, query: str) -> np.ndarray:
        """The rows whose name (or label) contains ``query`` (case-insensitive), in row
        order."""
        q = query.strip().lower()
        if not q:
            return np.empty(0, np.int64)
        hit = np.array([q in n.lower() or q in self.long_names.get(str(k), "").lower()
                        for k, n in enumerate(self.names)] + [False], bool)
        return np.flatnonzero(hit[:-1][self.name]) if hit.any() else np.empty(0, np.int64)

    def hits(self, rows: np.ndarray, limit: int = MAX_SEARCH_HITS):
        """(total, start, dur, row, name code) of the first ``limit`` of ``rows`` by start."""
        rows = np.asarray(rows, np.int64)
        total = len(rows)
        if total > limit:
            rows = rows[np.argpartition(self.start[rows], limit - 1)[:limit]]
        rows = rows[np.argsort(self.start[rows], kind="stable")]
        return total, self.start[rows], self.dur[rows], rows.astype(np.uint32), self.name[rows]
