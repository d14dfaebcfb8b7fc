// Typed columns: the one decoder of what tfprof_nb.offline.columns sends. A set of columns is
// `{schema: [{name, dtype, categories?}], buffers: [one per column]}`: each buffer holds its
// column's values in its dtype, little-endian (`bool`: a byte each; `string`: int32 codes into
// `categories`, -1 for missing). Missing numbers are NaN. Nothing here guesses a layout.

export type Dtype = "float64" | "float32" | "int32" | "uint32" | "int16" | "uint16" | "int8" | "uint8"
  | "bool" | "string";

export interface Field {
  name: string;
  dtype: Dtype;
  categories?: string[];
  label?: string;
  missing_title?: string; // what an empty cell means (a table column's tooltip)
}

export interface Wire {
  schema: Field[];
  buffers?: unknown[];
}

export type NumericArray = Float64Array | Float32Array | Int32Array | Uint32Array | Int16Array
  | Uint16Array | Int8Array | Uint8Array;
export type Cell = number | string | boolean | null;
export type Column = NumericArray | (string | null)[] | boolean[];

type Ctor<T extends NumericArray> = { new (b: ArrayBuffer, o: number, n: number): T; BYTES_PER_ELEMENT: number };

const CTORS: Record<string, Ctor<NumericArray>> = {
  float64: Float64Array, float32: Float32Array, int32: Int32Array, uint32: Uint32Array,
  int16: Int16Array, uint16: Uint16Array, int8: Int8Array, uint8: Uint8Array,
};

/** The bytes of a binary buffer as the widget manager or a page hands it over. */
export function bytesOf(value: unknown): DataView {
  if (value instanceof DataView) return value;
  if (value instanceof ArrayBuffer) return new DataView(value);
  if (ArrayBuffer.isView(value)) return new DataView(value.buffer, value.byteOffset, value.byteLength);
  return new DataView(new ArrayBuffer(0));
}

/** A typed array over a (possibly unaligned) binary buffer, copied only when unaligned. */
export function typed<T extends NumericArray>(value: unknown, Ctor: Ctor<T>): T {
  const view = bytesOf(value);
  const size = Ctor.BYTES_PER_ELEMENT;
  const n = Math.floor(view.byteLength / size);
  if (view.byteOffset % size === 0) return new Ctor(view.buffer as ArrayBuffer, view.byteOffset, n);
  const copy = new Uint8Array(n * size);
  copy.set(new Uint8Array(view.buffer, view.byteOffset, n * size));
  return new Ctor(copy.buffer, 0, n);
}

/** One column from its schema field and buffer. */
export function decodeColumn(field: Field, buffer: unknown): Column {
  if (field.dtype === "string") {
    const codes = typed(buffer, Int32Array);
    const table = field.categories ?? [];
    return Array.from(codes, (c) => (c >= 0 && c < table.length ? table[c] : null));
  }
  if (field.dtype === "bool") return Array.from(typed(buffer, Uint8Array), (b) => b !== 0);
  const Ctor = CTORS[field.dtype];
  if (!Ctor) throw new Error(`column ${field.name}: unknown dtype ${String(field.dtype)}`);
  return typed(buffer, Ctor);
}

/** Every column of `wire` by name (its buffers inside it, or given apart as a message
 * carries them). */
export function decodeColumns(wire: Wire, buffers: unknown[] = wire.buffers ?? []): Record<string, Column> {
  const out: Record<string, Column> = {};
  wire.schema.forEach((field, i) => {
    out[field.name] = decodeColumn(field, buffers[i]);
  });
  return out;
}

/** The numeric column `name` of `columns` as `Ctor` says it must be (an error naming the column
 * when it is missing or of another dtype); `optional`: null when missing. */
export function numeric<T extends NumericArray>(columns: Record<string, Column>, name: string, Ctor: Ctor<T>,
  optional = false): T {
  const col = columns[name];
  if (col === undefined && optional) return null as unknown as T;
  if (!(col instanceof Ctor)) {
    throw new Error(`column ${name}: expected ${Ctor.name}, got ${col === undefined ? "nothing" : col.constructor.name}`);
  }
  return col as T;
}

/** The rows of a table (typed columns of one length) as objects: for the small tables read
 * row by row (a timeline's tracks, segments and steps). */
export function decodeRows<T>(wire: Wire | null | undefined): T[] {
  if (!wire || !wire.schema) return [];
  const c = decodeColumns(wire);
  const names = wire.schema.map((f) => f.name);
  const n = names.length ? c[names[0]].length : 0;
  return Array.from({ length: n }, (_, i) => Object.fromEntries(names.map((k) => [k, c[k][i]])) as T);
}

/** Whether a cell holds no value (null, or NaN for numbers). */
export function missing(v: unknown): boolean {
  return v === null || v === undefined || (typeof v === "number" && Number.isNaN(v));
}
