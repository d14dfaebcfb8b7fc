// Where things are on the trace viewer's canvas: the rows (a header per section, a track per
// line, counter tracks; sections collapsible; tracks pinned to the top, hidden, filtered by
// name or folded thin), and which event, row or section is at a point. Pure functions.
import { lowerBound } from "../lod";
import { type CounterTrack, type Tile, type Track } from "../data";
import { type EventInfo } from "./search";

/** Layout in px: a depth row, a section header, the label column, the time axis, a folded
 * track, a counter track, the scrollbar. */
export const ROW = 18;
export const HEADER = 20;
export const LABEL_W = 190;
export const AXIS_H = 22;
export const FOLDED = 8;
export const COUNTER_H = 40;
export const SCROLLBAR_W = 10;

export interface Row {
  kind: "section" | "track" | "counter";
  section: string;
  track: number; // track id (event tracks), counter index (counters), -1 (headers)
  y: number; // from the top of its region: the pinned rows, or the scrolled content
  h: number;
  pinned: boolean;
  folded: boolean;
}

/** What the user chose to see: folded sections, hidden, pinned and folded tracks (by key),
 * and the track filter. A track's key is its id; a counter's is "c" and its index. */
export interface TrackChoices {
  collapsed: Set<string>;
  hidden: Set<string>;
  pinned: Set<string>;
  folded: Set<string>;
  filter: string;
}

export function emptyChoices(): TrackChoices {
  return { collapsed: new Set(), hidden: new Set(), pinned: new Set(), folded: new Set(), filter: "" };
}

export const trackKey = (r: { kind: string; track: number }): string =>
  r.kind === "counter" ? `c${r.track}` : String(r.track);

interface Item { kind: "track" | "counter"; track: number; section: string; name: string; depths: number }

function items(tracks: Track[], counters: CounterTrack[]): Item[] {
  const bySection = new Map<string, Item[]>();
  const order: string[] = [];
  const add = (it: Item) => {
    if (!bySection.has(it.section)) {
      bySection.set(it.section, []);
      order.push(it.section);
    }
    bySection.get(it.section)!.push(it);
  };
  // device planes first (XProf's order), each followed by its device's counters, then the
  // other counters, then the host's threads
  const host = tracks.findIndex((t) => t.plane.startsWith("/host:"));
  const before = host < 0 ? tracks : tracks.slice(0, host);
  const shown = new Set(before.map((t) => t.section));
  const counter = (c: CounterTrack, i: number) =>
    add({ kind: "counter", track: i, section: c.section, name: c.name, depths: 1 });
  const following = new Map<string, [CounterTrack, number][]>();
  counters.forEach((c, i) => {
    if (c.after && shown.has(c.after)) following.set(c.after, [...(following.get(c.after) ?? []), [c, i]]);
  });
  before.forEach((t, k) => {
    add({ kind: "track", track: t.id, section: t.section, name: t.name, depths: t.depths });
    if (before[k + 1]?.section !== t.section) for (const [c, i] of following.get(t.section) ?? []) counter(c, i);
  });
  counters.forEach((c, i) => { if (!(c.after && shown.has(c.after))) counter(c, i); });
  for (const t of host < 0 ? [] : tracks.slice(host)) {
    add({ kind: "track", track: t.id, section: t.section, name: t.name, depths: t.depths });
  }
  return order.flatMap((s) => bySection.get(s)!);
}

function heightOf(it: Item, folded: boolean): number {
  if (folded) return FOLDED;
  return it.kind === "counter" ? COUNTER_H : Math.max(1, it.depths) * ROW + 4;
}

/** The rows of `tracks` and `counters` as `choices` shows them: pinned rows (y from the top
 * of the pinned region) and the others by section (y from the top of the content); the
 * heights of both regions. */
export function layoutRows(tracks: Track[], counters: CounterTrack[], choices: TrackChoices):
  { rows: Row[]; height: number; pinnedH: number } {
  const rows: Row[] = [];
  const q = choices.filter.trim().toLowerCase();
  let y = 0;
  let pinnedH = 0;
  let section = "";
  for (const it of items(tracks, counters)) {
    const key = trackKey(it);
    if (choices.hidden.has(key)) continue;
    if (q && !`${it.section} ${it.name}`.toLowerCase().includes(q)) continue;
    const folded = choices.folded.has(key);
    const h = heightOf(it, folded);
    if (choices.pinned.has(key)) {
      rows.push({ kind: it.kind, section: it.section, track: it.track, y: pinnedH, h, pinned: true, folded });
      pinnedH += h;
      continue;
    }
    if (it.section !== section) {
      section = it.section;
      rows.push({ kind: "section", section, track: -1, y, h: HEADER, pinned: false, folded: false });
      y += HEADER;
    }
    if (choices.collapsed.has(section)) continue;
    rows.push({ kind: it.kind, section: it.section, track: it.track, y, h, pinned: false, folded });
    y += h;
  }
  return { rows, height: y, pinnedH };
}

/** Per track, its segments: nesting depth and index into the tiles' segment offsets. */
export function segmentsByTrack(segments: { track: number; depth: number }[]): Map<number, { depth: number; s: number }[]> {
  const out = new Map<number, { depth: number; s: number }[]>();
  segments.forEach((seg, s) => {
    if (!out.has(seg.track)) out.set(seg.track, []);
    out.get(seg.track)!.push({ depth: seg.depth, s });
  });
  return out;
}

/** What `tile` holds of its block `i` (`count`: events merged into it). */
export function blockInfo(tile: Tile, i: number, names: string[]): EventInfo {
  return { row: tile.row ? tile.row[i] : i, start: tile.start[i], dur: tile.dur[i], name: names[tile.name[i]] ?? "",
    count: tile.count ? tile.count[i] : 1 };
}

/** Where the rows are on the canvas: the regions' tops and the scroll. */
export interface Frame {
  rows: Row[];
  pinnedH: number;
  scrollY: number;
}

/** Canvas y of the top of `r`. */
export function rowTop(f: Frame, r: Row): number {
  return r.pinned ? AXIS_H + r.y : AXIS_H + f.pinnedH + r.y - f.scrollY;
}

/** The row at canvas y (null: none, or the axis). */
export function rowAt(f: Frame, y: number): Row | null {
  if (y < AXIS_H) return null;
  const pinned = y < AXIS_H + f.pinnedH;
  return f.rows.find((r) => r.pinned === pinned && y >= rowTop(f, r) && y < rowTop(f, r) + r.h) ?? null;
}

/** What the view shows where: the rows, segments, the tile drawn, the window. */
export interface Scene extends Frame {
  segments: Map<number, { depth: number; s: number }[]>;
  tile: Tile;
  names: string[];
  tOf(x: number): number;
  pxPerUs(): number;
}

/** The block of the scene's tile at (x, y) px of the canvas, within 2 px; null when none. */
export function blockAt(scene: Scene, x: number, y: number): EventInfo | null {
  if (x < LABEL_W) return null;
  const r = rowAt(scene, y);
  if (!r || r.kind !== "track" || r.folded) return null;
  const depth = Math.floor((y - rowTop(scene, r) - 2) / ROW);
  const seg = (scene.segments.get(r.track) ?? []).find((g) => g.depth === depth);
  if (!seg) return null;
  const tile = scene.tile;
  const lo = tile.off[seg.s];
  const t = scene.tOf(x);
  const tol = 2 / scene.pxPerUs();
  const i = lowerBound(tile.start, lo, tile.off[seg.s + 1], t + tol) - 1;
  if (i < lo || tile.start[i] + tile.dur[i] + tol < t) return null;
  return blockInfo(tile, i, scene.names);
}

/** What `tiles` know of timeline row `row`: the first that holds it alone; null when none. */
export function eventOf(tiles: Tile[], row: number, names: string[]): EventInfo | null {
  for (const tile of tiles) {
    if (!tile.row) {
      if (row >= 0 && row < tile.start.length) return blockInfo(tile, row, names);
      continue;
    }
    for (let i = 0; i < tile.row.length; i++) {
      if (tile.row[i] === row && (!tile.count || tile.count[i] === 1)) return blockInfo(tile, i, names);
    }
  }
  return null;
}

/** A time in us with a unit that fits it. */
export function fmtTime(us: number): string {
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (a >= 1) return `${us.toFixed(3)} us`;
  return `${(us * 1e3).toFixed(1)} ns`;
}
