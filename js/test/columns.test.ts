import { describe, expect, it } from "vitest";
import { decodeColumns, missing, numeric } from "../src/columns";
import { decodeTable, rowOrder, toCsv } from "../src/table";
import { dv, wire } from "./wire";

describe("typed columns", () => {
  it("decodes numbers, booleans and dictionary-coded strings", () => {
    const w = {
      schema: [
        { name: "t", dtype: "float64" as const },
        { name: "n", dtype: "int32" as const },
        { name: "ok", dtype: "bool" as const },
        { name: "op", dtype: "string" as const, categories: ["MatMul", "<b>x</b>"] },
      ],
      buffers: [dv(new Float64Array([1.5, NaN])), dv(new Int32Array([-3, 4])), dv(new Uint8Array([1, 0])),
        dv(new Int32Array([1, -1]))],
    };
    const c = decodeColumns(w);
    expect(Array.from(c.t as Float64Array)).toEqual([1.5, NaN]);
    expect(c.n).toBeInstanceOf(Int32Array);
    expect(c.ok).toEqual([true, false]);
    expect(c.op).toEqual(["<b>x</b>", null]);
    expect(missing(c.t[1])).toBe(true);
    expect(missing(c.op[1])).toBe(true);
    expect(missing(0)).toBe(false);
  });

  it("says which column is missing or of another dtype", () => {
    const c = decodeColumns(wire({ start: new Float32Array([1]) }));
    expect(() => numeric(c, "start", Float64Array)).toThrow(/start: expected Float64Array, got Float32Array/);
    expect(() => numeric(c, "dur", Float32Array)).toThrow(/dur/);
    expect(numeric(c, "count", Uint32Array, true)).toBeNull();
  });

  it("decodes unaligned buffers (copied) and buffers given apart", () => {
    const raw = new Uint8Array(9);
    raw.set(new Uint8Array(new Float64Array([2.25]).buffer), 1);
    const c = decodeColumns({ schema: [{ name: "x", dtype: "float64" }] }, [new DataView(raw.buffer, 1, 8)]);
    expect(Array.from(c.x as Float64Array)).toEqual([2.25]);
  });
});

describe("tables from typed columns", () => {
  const table = {
    title: "ops", filter_column: "op", page_size: 10, rows: 4,
    schema: [
      { name: "op", dtype: "string" as const, categories: ["MatMul", "Add", 'a,"q"'], label: "op" },
      { name: "time_us", dtype: "float64" as const, label: "time (us)" },
    ],
    buffers: [dv(new Int32Array([0, 1, 2, -1])), dv(new Float64Array([3, 1, NaN, 2]))],
  };

  it("keeps labels and kinds, sorts missing values last both ways, writes CSV", () => {
    const spec = decodeTable(table);
    expect(spec.columns.map((c) => [c.label, c.type])).toEqual([["op", "string"], ["time (us)", "number"]]);
    expect(decodeTable(table)).toBe(spec); // decoded once per value
    expect(rowOrder(spec, { sortBy: "time_us", descending: true, filter: "", page: 0 })).toEqual([0, 3, 1, 2]);
    expect(rowOrder(spec, { sortBy: "time_us", descending: false, filter: "", page: 0 })).toEqual([1, 3, 0, 2]);
    expect(rowOrder(spec, { sortBy: "op", descending: false, filter: "", page: 0 })).toEqual([1, 0, 2, 3]);
    expect(rowOrder(spec, { sortBy: null, descending: true, filter: "a", page: 0 })).toEqual([0, 1, 2]);
    expect(toCsv(spec, [2, 3])).toBe('op,time_us\n"a,""q""",\n,2\n');
  });

  it("is empty without a value", () => {
    expect(decodeTable(undefined)).toEqual({ columns: [], data: {} });
  });
});
