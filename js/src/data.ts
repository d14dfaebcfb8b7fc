// Decoding the timeline payload the Python widget sends: a tile of typed columns (see
// columns.ts) and `meta`: the names (interned once), notes, and typed tables of the tracks,
// segments and steps.
import { decodeColumns, decodeRows, numeric, type Wire } from "./columns";

export interface Track {
  id: number;
  section: string; // host and plane, e.g. "worker-0 /host:CPU"
  host: string;
  plane: string;
  name: string; // line name
  depths: number;
  events: number;
}

/** A counter track: a value over time (memory in use, the launch queue, a device's clock). */
export interface CounterTrack {
  section: string;
  name: string;
  unit: string;
  after?: string; // the event section it follows (a device's counters after its plane)
  t: Float64Array; // us, ascending
  v: Float64Array;
  max: number;
}

export interface Segment {
  track: number;
  depth: number;
  lo: number;
  hi: number;
}

export interface Step {
  name: string; // as the step menu says it
  start: number;
  end: number;
  host: string;
  step_name: string;
}

/** What the browser draws for a time window: per segment, blocks sorted by start (single
 * events, or neighbours merged per pixel column). The first state's tile holds every event
 * (`exact`, rows are the indices) or an overview; the kernel answers zooms with more. */
export interface Tile {
  t0: number;
  t1: number;
  ppu: number; // px per us it was made for (Infinity when exact: right at any zoom)
  exact: boolean;
  start: Float64Array; // us from profile start, sorted within each segment
  dur: Float32Array; // us
  name: Uint32Array; // index into names (of the block's first event)
  count: Uint32Array | null; // events merged into each block (null: one each)
  row: Uint32Array | null; // timeline row of each block's first event (null: its index)
  off: Uint32Array; // segments + 1: the blocks of segment s are off[s]..off[s+1]
}

export interface Lod {
  mode: "full" | "overview";
  events: number;
}

export interface TimelineData {
  names: string[]; // each name code's label (an event's display name, as XProf's viewer)
  longNames: Record<string, string>; // code -> the event's name, where its label differs
  tracks: Track[];
  segments: Segment[]; // in timeline rows (what details and selection use)
  steps: Step[];
  notes: string[]; // what the view cannot show, and why (e.g. steps that failed)
  t0: number;
  t1: number;
  lod: Lod;
  base: Tile;
  extra: Tile[]; // embedded detail (an offline copy of a large profile)
  counters: CounterTrack[]; // memory in use per allocator, the GPU launch queue, ...
}

/** The timeline row of block `i` of `tile`. */
export function rowOf(tile: Tile, i: number): number {
  return tile.row ? tile.row[i] : i;
}

/** The segment holding timeline row `row` (segments are sorted by their first row). */
export function segmentOf(segments: Segment[], row: number): Segment | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid];
    if (row < s.lo) hi = mid - 1;
    else if (row >= s.hi) lo = mid + 1;
    else return s;
  }
  return undefined;
}

/** Whether block `i` of `tile` is one event (not several merged). */
export function single(tile: Tile, i: number): boolean {
  return !tile.count || tile.count[i] === 1;
}

/** A tile as the kernel sends it: its header and typed columns (start, dur, name, off, and
 * for merged blocks count and row; see tfprof_nb.widgets.timeline_lod). */
export interface TileWire extends Wire {
  t0: number;
  t1: number;
  exact: boolean;
  px_per_us: number | null;
}

/** A tile from its wire form (buffers inside it, or given apart as a message carries them). */
export function decodeTile(wire: TileWire, buffers?: unknown[]): Tile {
  const c = decodeColumns(wire, buffers ?? wire.buffers ?? []);
  return {
    t0: wire.t0,
    t1: wire.t1,
    exact: !!wire.exact,
    ppu: wire.exact || wire.px_per_us === null ? Infinity : wire.px_per_us,
    start: numeric(c, "start", Float64Array),
    dur: numeric(c, "dur", Float32Array),
    name: numeric(c, "name", Uint32Array),
    count: numeric(c, "count", Uint32Array, true),
    row: numeric(c, "row", Uint32Array, true),
    off: numeric(c, "off", Uint32Array),
  };
}

export interface ModelLike {
  get(name: string): unknown;
}

interface Meta {
  names?: string[];
  long_names?: Record<string, string>;
  tracks?: Wire;
  segments?: Wire;
  steps?: Wire;
  counter_tracks?: Wire; // section, name, unit, max, after (the section it follows) per counter
  counter_points?: Wire; // counter, t, v: each counter's points in time order
  notes?: string[];
  t0?: number;
  t1?: number;
  lod?: { mode?: string; events?: number };
}

/** The timeline a model holds: its tables (`meta`), its first tile (`tile`) and, in an
 * offline copy of a large profile, every event of one range (`detail`). */
export function decode(model: ModelLike): TimelineData {
  const meta = (model.get("meta") ?? {}) as Meta;
  const wire = (model.get("tile") ?? null) as TileWire | null;
  const base = wire && wire.schema.length ? decodeTile(wire) : emptyTile();
  const detail = model.get("detail") as TileWire | null | undefined;
  const full = meta.lod?.mode !== "overview";
  return {
    names: meta.names ?? [],
    longNames: meta.long_names ?? {},
    tracks: decodeRows<Track>(meta.tracks),
    segments: decodeRows<Segment>(meta.segments),
    steps: decodeRows<Step>(meta.steps),
    notes: meta.notes ?? [],
    t0: meta.t0 ?? 0,
    t1: meta.t1 ?? 1,
    lod: { mode: full ? "full" : "overview", events: meta.lod?.events ?? base.start.length },
    base,
    extra: !full && detail ? [decodeTile(detail)] : [],
    counters: decodeCounters(meta),
  };
}

/** The counter tracks of `meta`: each counter's points (a table sorted by counter, then
 * time) sliced out of one set of columns. */
function decodeCounters(meta: Meta): CounterTrack[] {
  const tracks = decodeRows<{ section: string; name: string; unit: string; max: number; after?: string }>(
    meta.counter_tracks);
  if (!tracks.length || !meta.counter_points?.schema) return [];
  const c = decodeColumns(meta.counter_points);
  const which = c.counter as ArrayLike<number>; // (a frame's integers: int32 or uint32)
  if (!ArrayBuffer.isView(which)) throw new Error("counter points: no counter column");
  const t = numeric(c, "t", Float64Array);
  const v = numeric(c, "v", Float64Array);
  let lo = 0;
  return tracks.map((track, k) => {
    let hi = lo;
    while (hi < which.length && which[hi] === k) hi++;
    const out = { ...track, t: t.subarray(lo, hi), v: v.subarray(lo, hi) };
    lo = hi;
    return out;
  });
}

function emptyTile(): Tile {
  return { t0: 0, t1: 1, exact: true, ppu: Infinity, start: new Float64Array(0), dur: new Float32Array(0),
    name: new Uint32Array(0), count: null, row: null, off: new Uint32Array(1) };
}

/** Of `tiles`, the best to draw [t0, t1] at `ppu` px per us: among those covering the
 * window, an exact one, else the finest; the first (the overview) when none covers it. */
export function bestTile(tiles: Tile[], t0: number, t1: number): Tile {
  let best = tiles[0];
  let quality = -1;
  for (const t of tiles) {
    if (t.t0 > t0 || t.t1 < t1) continue;
    const q = t.exact ? Infinity : t.ppu;
    if (q > quality) {
      best = t;
      quality = q;
    }
  }
  return best;
}

/** A stable colour per name (same name, same colour, in every view). */
export function colorOf(name: string, dark: boolean): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  const hue = (h >>> 0) % 360;
  return dark ? `hsl(${hue}, 55%, 45%)` : `hsl(${hue}, 60%, 70%)`;
}

/** Indices (into names) of names containing `query`, case-insensitive: a label or, where
 * it differs, the event's name (`long`, by code). */
export function matchingNames(names: string[], query: string,
  long: Record<string, string> = {}): Set<number> {
  const q = query.trim().toLowerCase();
  const out = new Set<number>();
  if (!q) return out;
  names.forEach((n, i) => {
    if (n.toLowerCase().includes(q) || (long[i] ?? "").toLowerCase().includes(q)) out.add(i);
  });
  return out;
}
