// Area selection: a time range across some tracks (dragged on the canvas, as in Perfetto), and
// the summary of the events inside it: per name, how many, their time inside the range (wall)
// and that time less their children's (self), longest first. Summed here from an exact tile
// that covers the range (every event is in the browser), else by the kernel
// (TimelineSource.area_summary, the same rules). No DOM.
import { decodeColumns, numeric, type Wire } from "../columns";
import { type Segment, type Tile } from "../data";
import { lowerBound, upperBound } from "../lod";

export interface Area {
  t0: number;
  t1: number;
  tracks: number[]; // track ids
}

export interface AreaRow {
  name: string;
  count: number;
  wall: number; // us inside the range
  self: number; // wall less the children's time inside the range
}

export interface AreaRequest {
  kind: "area";
  id: number;
  t0: number;
  t1: number;
  tracks: number[];
}

/** The kernel's answer: typed columns name (code), count, wall, self. */
export interface AreaAnswer {
  kind: "area";
  id: number;
  rows?: Wire;
  events?: number;
  names?: number; // distinct names (rows holds the longest MAX_AREA_ROWS)
  error?: string;
}

export const MAX_AREA_ROWS = 500; // names listed (the longest)

/** Time of [a, b) inside [t0, t1). */
const inside = (a: number, b: number, t0: number, t1: number) => Math.max(0, Math.min(b, t1) - Math.max(a, t0));

/** The blocks of segment `s` of `tile` that overlap [t0, t1): [first, end). */
function span(tile: Tile, s: number, t0: number, t1: number): [number, number] {
  const lo = tile.off[s];
  const hi = tile.off[s + 1];
  let i = lowerBound(tile.start, lo, hi, t0);
  if (i > lo && tile.start[i - 1] + tile.dur[i - 1] > t0) i -= 1;
  return [i, lowerBound(tile.start, lo, hi, t1)];
}

/** Each block's time inside the area less its children's (blocks at the next depth of its
 * track that start inside it: the last block of the depth above starting at or before the
 * child), for the blocks of `segs` (one track's segments by depth). */
function selfTimes(tile: Tile, segs: { depth: number; s: number }[], t0: number, t1: number,
  self: Map<number, number>): void {
  const byDepth = new Map(segs.map((g) => [g.depth, g.s]));
  for (const g of segs) {
    const parent = byDepth.get(g.depth - 1);
    const [a, b] = span(tile, g.s, t0, t1);
    for (let i = a; i < b; i++) {
      const end = tile.start[i] + tile.dur[i];
      self.set(i, (self.get(i) ?? 0) + inside(tile.start[i], end, t0, t1));
      if (parent === undefined) continue;
      const p = upperBound(tile.start, tile.off[parent], tile.off[parent + 1], tile.start[i]) - 1;
      if (p < tile.off[parent]) continue;
      const pEnd = tile.start[p] + tile.dur[p];
      if (tile.start[i] >= pEnd) continue;
      const shared = inside(Math.max(tile.start[i], tile.start[p]), Math.min(end, pEnd), t0, t1);
      if (shared > 0) self.set(p, (self.get(p) ?? 0) - shared);
    }
  }
}

/** The area's summary from `tile` (exact, covering the area): rows by wall time, longest
 * first, and the number of events. */
export function summarize(tile: Tile, segments: Segment[], names: string[], area: Area):
  { rows: AreaRow[]; events: number; names: number } {
  const wanted = new Set(area.tracks);
  const byTrack = new Map<number, { depth: number; s: number }[]>();
  segments.forEach((g, s) => {
    if (!wanted.has(g.track)) return;
    if (!byTrack.has(g.track)) byTrack.set(g.track, []);
    byTrack.get(g.track)!.push({ depth: g.depth, s });
  });
  const self = new Map<number, number>();
  for (const segs of byTrack.values()) selfTimes(tile, segs, area.t0, area.t1, self);
  const byName = new Map<number, AreaRow>();
  for (const [i, own] of self) {
    const code = tile.name[i];
    let row = byName.get(code);
    if (!row) byName.set(code, row = { name: names[code] ?? "", count: 0, wall: 0, self: 0 });
    row.count += 1;
    row.wall += inside(tile.start[i], tile.start[i] + tile.dur[i], area.t0, area.t1);
    row.self += Math.max(own, 0);
  }
  // the kernel's order: time, then count, then name code (the same rows past MAX_AREA_ROWS)
  const rows = Array.from(byName.entries()).sort(([ca, a], [cb, b]) => b.wall - a.wall || b.count - a.count || ca - cb)
    .map(([, row]) => row);
  return { rows: rows.slice(0, MAX_AREA_ROWS), events: self.size, names: rows.length };
}

/** The summary rows the kernel sent. */
export function decodeArea(msg: AreaAnswer, buffers: unknown[], names: string[]): AreaRow[] {
  if (!msg.rows) return [];
  const c = decodeColumns(msg.rows, buffers);
  const code = numeric(c, "name", Uint32Array);
  const count = numeric(c, "count", Uint32Array);
  const wall = numeric(c, "wall", Float64Array);
  const self = numeric(c, "self", Float64Array);
  return Array.from(code, (k, i) => ({ name: names[k] ?? "", count: count[i], wall: wall[i], self: self[i] }));
}
