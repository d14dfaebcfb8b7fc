// Decoding the timeline payload the Python widget sends: binary columns plus small JSON
// tables (names interned once, tracks, segments, steps).

export interface Track {
  id: number;
  section: string; // host and plane, e.g. "worker-0 /host:CPU"
  name: string; // line name
  depths: number;
  events: number;
}

export interface Segment {
  track: number;
  depth: number;
  lo: number;
  hi: number;
}

export interface Step {
  name: string;
  start: number;
  end: number;
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
  names: string[];
  tracks: Track[];
  segments: Segment[]; // in timeline rows (what details and selection use)
  steps: Step[];
  t0: number;
  t1: number;
  lod: Lod;
  base: Tile;
  extra: Tile[]; // embedded detail (an offline copy of a large profile)
}

/** The timeline row of block `i` of `tile`. */
export function rowOf(tile: Tile, i: number): number {
  return tile.row ? tile.row[i] : i;
}

/** Whether block `i` of `tile` is one event (not several merged). */
export function single(tile: Tile, i: number): boolean {
  return !tile.count || tile.count[i] === 1;
}

/** A tile from its header and buffers (start, dur, name, count, row, off), as the kernel
 * sends a window. */
export function tileFrom(header: { t0: number; t1: number; exact: boolean; px_per_us: number | null },
  buffers: unknown[]): Tile {
  return {
    t0: header.t0,
    t1: header.t1,
    exact: !!header.exact,
    ppu: header.exact || header.px_per_us === null ? Infinity : header.px_per_us,
    start: column(buffers[0], Float64Array),
    dur: column(buffers[1], Float32Array),
    name: column(buffers[2], Uint32Array),
    count: column(buffers[3], Uint32Array),
    row: column(buffers[4], Uint32Array),
    off: column(buffers[5], Uint32Array),
  };
}

function asView(value: unknown): DataView {
  if (value instanceof DataView) return value;
  if (value instanceof ArrayBuffer) return new DataView(value);
  if (ArrayBuffer.isView(value)) {
    const v = value as ArrayBufferView;
    return new DataView(v.buffer, v.byteOffset, v.byteLength);
  }
  return new DataView(new ArrayBuffer(0));
}

/** A typed array over a (possibly unaligned) binary buffer, copied only when unaligned. */
export function column<T extends Float64Array | Float32Array | Uint32Array>(
  value: unknown,
  Ctor: { new (b: ArrayBuffer, o: number, n: number): T; BYTES_PER_ELEMENT: number },
): T {
  const view = asView(value);
  const size = Ctor.BYTES_PER_ELEMENT;
  const n = Math.floor(view.byteLength / size);
  if (view.byteOffset % size === 0) return new Ctor(view.buffer as ArrayBuffer, view.byteOffset, n);
  const copy = new Uint8Array(n * size);
  copy.set(new Uint8Array(view.buffer, view.byteOffset, n * size));
  return new Ctor(copy.buffer, 0, n);
}

export interface ModelLike {
  get(name: string): unknown;
}

export function decode(model: ModelLike): TimelineData {
  const meta = (model.get("meta") ?? {}) as {
    names?: string[];
    tracks?: Track[];
    segments?: number[][];
    steps?: Step[];
    t0?: number;
    t1?: number;
    lod?: { mode?: string; events?: number; t0?: number; t1?: number; exact?: boolean; px_per_us?: number | null;
      detail?: { t0: number; t1: number; exact: boolean; px_per_us: number | null } };
  };
  const segments = (meta.segments ?? []).map(([track, depth, lo, hi]) => ({ track, depth, lo, hi }));
  const start = column(model.get("ev_start"), Float64Array);
  const count = column(model.get("ev_count"), Uint32Array);
  const lod = meta.lod ?? {};
  const full = lod.mode !== "overview";
  let off = column(model.get("ev_off"), Uint32Array);
  if (full || off.length !== segments.length + 1) {
    // every event: the segments' row ranges are the tile's
    off = Uint32Array.from([...segments.map((s) => s.lo), start.length]);
  }
  const t0 = meta.t0 ?? 0;
  const t1 = meta.t1 ?? 1;
  const base: Tile = {
    t0: lod.t0 ?? t0,
    t1: lod.t1 ?? t1,
    exact: full,
    ppu: full ? Infinity : (lod.px_per_us ?? 0),
    start,
    dur: column(model.get("ev_dur"), Float32Array),
    name: column(model.get("ev_name"), Uint32Array),
    count: full || !count.length ? null : count,
    row: full ? null : column(model.get("ev_row"), Uint32Array),
    off,
  };
  const extra = !full && lod.detail
    ? [tileFrom(lod.detail, ["start", "dur", "name", "count", "row", "off"].map((k) => model.get(`detail_${k}`)))]
    : [];
  return {
    names: meta.names ?? [],
    tracks: meta.tracks ?? [],
    segments,
    steps: meta.steps ?? [],
    t0,
    t1,
    lod: { mode: full ? "full" : "overview", events: lod.events ?? start.length },
    base,
    extra,
  };
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

/** Indices (into names) of names containing `query`, case-insensitive. */
export function matchingNames(names: string[], query: string): Set<number> {
  const q = query.trim().toLowerCase();
  const out = new Set<number>();
  if (!q) return out;
  names.forEach((n, i) => {
    if (n.toLowerCase().includes(q)) out.add(i);
  });
  return out;
}
