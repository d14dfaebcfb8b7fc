// Where things are on the trace viewer's canvas: the rows (a header per section, a track per
// line, sections collapsible), and which event or section is at a point. Pure functions.
import { lowerBound } from "../lod";
import { type Segment, type Tile, type Track } from "../data";
import { type EventInfo } from "./search";

/** Layout in px: a depth row, a section header, the label column, the time axis. */
export const ROW = 18;
export const HEADER = 20;
export const LABEL_W = 190;
export const AXIS_H = 22;

export interface Row {
  kind: "section" | "track";
  section: string;
  track: number;
  y: number;
  h: number;
}

/** The rows of `tracks` (y from the top of the content) and the content's height. */
export function layoutRows(tracks: Track[], collapsed: Set<string>): { rows: Row[]; height: number } {
  const rows: Row[] = [];
  let y = 0;
  let section = "";
  for (const t of tracks) {
    if (t.section !== section) {
      section = t.section;
      rows.push({ kind: "section", section, track: -1, y, h: HEADER });
      y += HEADER;
    }
    if (collapsed.has(section)) continue;
    const h = Math.max(1, t.depths) * ROW + 4;
    rows.push({ kind: "track", section, track: t.id, y, h });
    y += h;
  }
  return { rows, height: y };
}

/** Per track, its segments: nesting depth and index into the tiles' segment offsets. */
export function segmentsByTrack(segments: Segment[]): Map<number, { depth: number; s: number }[]> {
  const out = new Map<number, { depth: number; s: number }[]>();
  segments.forEach((seg, s) => {
    if (!out.has(seg.track)) out.set(seg.track, []);
    out.get(seg.track)!.push({ depth: seg.depth, s });
  });
  return out;
}

/** What `tile` holds of its block `i`. */
export function blockInfo(tile: Tile, i: number, names: string[]): EventInfo {
  return { row: tile.row ? tile.row[i] : i, start: tile.start[i], dur: tile.dur[i], name: names[tile.name[i]] ?? "" };
}

/** What the view shows where: rows, segments, the tile drawn, the window and the scroll. */
export interface Scene {
  rows: Row[];
  segments: Map<number, { depth: number; s: number }[]>;
  tile: Tile;
  names: string[];
  scrollY: number;
  tOf(x: number): number;
  pxPerUs(): number;
}

/** The block of the scene's tile at (x, y) px of the canvas, within 2 px; null when none. */
export function blockAt(scene: Scene, x: number, y: number): EventInfo | null {
  if (x < LABEL_W) return null;
  const yy = y - AXIS_H + scene.scrollY;
  const r = scene.rows.find((row) => row.kind === "track" && yy >= row.y && yy < row.y + row.h);
  if (!r) return null;
  const depth = Math.floor((yy - r.y - 2) / ROW);
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

/** The section whose header is at y px, null when none. */
export function sectionAt(rows: Row[], scrollY: number, y: number): string | null {
  const yy = y - AXIS_H + scrollY;
  const r = rows.find((row) => row.kind === "section" && yy >= row.y && yy < row.y + row.h);
  return r ? r.section : null;
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
