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

export interface TimelineData {
  start: Float64Array; // us from profile start, sorted within each segment
  dur: Float32Array; // us
  name: Uint32Array; // index into names
  names: string[];
  tracks: Track[];
  segments: Segment[];
  steps: Step[];
  t0: number;
  t1: number;
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
  const start = column(model.get("ev_start"), Float64Array);
  const dur = column(model.get("ev_dur"), Float32Array);
  const name = column(model.get("ev_name"), Uint32Array);
  const meta = (model.get("meta") ?? {}) as {
    names?: string[];
    tracks?: Track[];
    segments?: number[][];
    steps?: Step[];
    t0?: number;
    t1?: number;
  };
  const segments = (meta.segments ?? []).map(([track, depth, lo, hi]) => ({ track, depth, lo, hi }));
  return {
    start,
    dur,
    name,
    names: meta.names ?? [],
    tracks: meta.tracks ?? [],
    segments,
    steps: meta.steps ?? [],
    t0: meta.t0 ?? 0,
    t1: meta.t1 ?? 1,
  };
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
