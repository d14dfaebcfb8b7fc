// Level of detail: which blocks to draw for one (track, depth) segment at a given zoom.
// Events in a segment are sorted by start and do not overlap (same nesting depth on one
// thread), so the first visible one is found by binary search and sub-pixel neighbours are
// merged into one block per pixel column, as Perfetto's mipmaps and xprof's resolution
// filter do.
//
// The kernel merges by the same rule what it sends (tfprof_nb/_native/timeline.c: a window
// at twice the view's resolution); this merges, every frame, what the page holds at the zoom
// of that frame: every event of a profile that fits the state (no request is ever made), the
// held tile while the kernel's answer is on its way, and every view of a page without a
// kernel. Merging ahead in Python instead would mean a tile per zoom level (2x apart): 6 to 8
// times as many blocks as events on the captures of tests/data, over 30 on the TPU one.
// js/test/lod.test.ts holds this rule to the kernel's blocks (js/test/lod_cases.json,
// written by tests/widgets/test_timeline_lod.py).

export interface Blocks {
  x: Float64Array; // left edge, px
  w: Float64Array; // width, px (>= minPx)
  first: Int32Array; // index of the first event in the block
  count: Int32Array; // events merged into the block
  n: number;
}

export function makeBlocks(capacity: number): Blocks {
  return {
    x: new Float64Array(capacity),
    w: new Float64Array(capacity),
    first: new Int32Array(capacity),
    count: new Int32Array(capacity),
    n: 0,
  };
}

/** Index of the first element of start[lo, hi) that is >= t (hi when none). */
export function lowerBound(start: Float64Array, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first element of start[lo, hi) that is > t (hi when none). */
export function upperBound(start: Float64Array, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Fill `out` with the blocks of events [lo, hi) visible in the time window [t0, t1]
 * (microseconds) drawn at `pxPerUs`, merging events narrower than `minPx` with the block
 * before them when they touch its pixel column. Returns the number of events visited.
 */
export function visibleBlocks(
  start: Float64Array,
  dur: Float32Array,
  lo: number,
  hi: number,
  t0: number,
  t1: number,
  pxPerUs: number,
  out: Blocks,
  minPx = 1,
): number {
  out.n = 0;
  let i = lowerBound(start, lo, hi, t0);
  if (i > lo && start[i - 1] + dur[i - 1] > t0) i -= 1; // one event may reach into view
  let visited = 0;
  let bx = 0;
  let bEnd = -Infinity;
  let open = false;
  for (; i < hi; i++) {
    const s = start[i];
    if (s > t1) break;
    visited++;
    const x0 = (s - t0) * pxPerUs;
    const x1 = x0 + dur[i] * pxPerUs;
    const small = x1 - x0 < minPx;
    if (open && small && x0 <= bEnd + minPx) {
      // merge into the current block
      if (x1 > bEnd) bEnd = x1;
      out.count[out.n - 1] += 1;
      out.w[out.n - 1] = Math.max(bEnd - bx, minPx);
      continue;
    }
    if (out.n === out.x.length) grow(out);
    bx = x0;
    bEnd = Math.max(x1, x0 + minPx);
    out.x[out.n] = x0;
    out.w[out.n] = bEnd - x0;
    out.first[out.n] = i;
    out.count[out.n] = 1;
    out.n += 1;
    open = small;
  }
  return visited;
}

function grow(b: Blocks): void {
  const cap = b.x.length * 2 || 64;
  const x = new Float64Array(cap);
  x.set(b.x);
  const w = new Float64Array(cap);
  w.set(b.w);
  const first = new Int32Array(cap);
  first.set(b.first);
  const count = new Int32Array(cap);
  count.set(b.count);
  b.x = x;
  b.w = w;
  b.first = first;
  b.count = count;
}
