import { describe, expect, it } from "vitest";
import { rowOrder, toCsv, type TableSpec } from "../src/table";
import { stack } from "../src/stepgraph";

const spec: TableSpec = {
  columns: [
    { name: "operation", label: "operation", type: "string" },
    { name: "time", label: "time", type: "number" },
  ],
  data: { operation: ["MatMul", "Add", "matmul_grad", 'a,"q"'], time: [3, 1, 2, null] },
};

describe("table", () => {
  it("sorts both ways with missing values last, and filters case-insensitively", () => {
    expect(rowOrder(spec, { sortBy: "time", descending: true, filter: "", page: 0 })).toEqual([0, 2, 1, 3]);
    expect(rowOrder(spec, { sortBy: "time", descending: false, filter: "", page: 0 })).toEqual([1, 2, 0, 3]);
    expect(rowOrder(spec, { sortBy: null, descending: true, filter: "MATMUL", page: 0 })).toEqual([0, 2]);
  });

  it("exports CSV with quoting", () => {
    expect(toCsv(spec, [3, 0])).toBe('operation,time\n"a,""q""",\nMatMul,3\n');
  });
});

describe("step graph", () => {
  it("stacks categories per step and skips empty ones", () => {
    const segs = stack({
      steps: ["1", "2"],
      categories: [{ name: "a", label: "A" }, { name: "b", label: "B" }],
      values: { a: [1, 0], b: [2, 3] },
      duration: [3, 3],
    });
    expect(segs).toEqual([
      { step: 0, cat: 0, y0: 0, y1: 1 },
      { step: 0, cat: 1, y0: 1, y1: 3 },
      { step: 1, cat: 1, y0: 0, y1: 3 },
    ]);
  });
});
