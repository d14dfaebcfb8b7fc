import { describe, expect, it } from "vitest";
import { rowOrder, toCsv, type TableSpec } from "../src/table";
import { themed } from "../src/figure";

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

describe("figures", () => {
  it("recolour a figure's layout to the page, every axis included", () => {
    const out = themed({ font: { size: 12 }, xaxis: { title: "t" }, yaxis2: {}, paper_bgcolor: "#fff" },
      { font: "#eee", grid: "g", line: "l", bg: "#111" });
    expect(out.font).toEqual({ size: 12, color: "#eee" });
    expect(out.paper_bgcolor).toBe("rgba(0,0,0,0)");
    expect(out.xaxis).toEqual({ title: "t", gridcolor: "g", zerolinecolor: "g", linecolor: "l" });
    expect(out.yaxis2.gridcolor).toBe("g");
    expect(out.hoverlabel.bgcolor).toBe("#111");
  });
});
