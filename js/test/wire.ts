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
