// Typed columns as tfprof_nb.offline.columns writes them, for tests.
import { type Dtype, type NumericArray, type Wire } from "../src/columns";

const DTYPES: [new (...a: any[]) => NumericArray, Dtype][] = [
  [Float64Array, "float64"], [Float32Array, "float32"], [Int32Array, "int32"], [Uint32Array, "uint32"],
  [Int16Array, "int16"], [Uint16Array, "uint16"], [Int8Array, "int8"], [Uint8Array, "uint8"],
];

export const dv = (a: ArrayBufferView) => new DataView(a.buffer, a.byteOffset, a.byteLength);

/** `{schema, buffers}` of typed arrays (their dtype from their type). */
export function wire(columns: Record<string, NumericArray>): Wire & { buffers: DataView[] } {
  const names = Object.keys(columns);
  return {
    schema: names.map((name) => ({ name, dtype: DTYPES.find(([C]) => columns[name] instanceof C)![1] })),
    buffers: names.map((name) => dv(columns[name])),
  };
}

/** A tile's wire form: header plus columns. */
export function tileWire(header: { t0: number; t1: number; exact: boolean; px_per_us: number | null },
  columns: Record<string, NumericArray>) {
  return { ...header, ...wire(columns) };
}

/** A table's wire form from row objects: numbers as float64, the rest as strings. */
export function table(rows: Record<string, unknown>[], columns: string[] = Object.keys(rows[0] ?? {})): Wire & { rows: number } {
  const schema: Wire["schema"] = [];
  const buffers: DataView[] = [];
  for (const name of columns) {
    const values = rows.map((r) => r[name]);
    if (values.every((v) => typeof v === "number")) {
      schema.push({ name, dtype: "float64" });
      buffers.push(dv(Float64Array.from(values as number[])));
    } else {
      const categories = [...new Set(values.map(String))];
      schema.push({ name, dtype: "string", categories });
      buffers.push(dv(Int32Array.from(values, (v) => categories.indexOf(String(v)))));
    }
  }
  return { schema, buffers, rows: rows.length };
}

/** A timeline's `meta` as Python sends it: tracks, segments and steps as typed tables. */
export function meta(m: { tracks: Record<string, unknown>[]; segments: number[][]; steps: Record<string, unknown>[] } & Record<string, unknown>) {
  return {
    ...m,
    tracks: table(m.tracks, ["id", "section", "host", "plane", "name", "depths", "events"]),
    segments: table(m.segments.map(([track, depth, lo, hi]) => ({ track, depth, lo, hi })), ["track", "depth", "lo", "hi"]),
    steps: table(m.steps, ["name", "start", "end", "host", "step_name"]),
  };
}
