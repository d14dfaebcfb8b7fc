import { describe, expect, it } from "vitest";
import { fmt, toCsv, type TableSpec } from "../src/table";

describe("CSV export", () => {
  it("puts a ' before text cells a spreadsheet would read as a formula, never before numbers", () => {
    const names = ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "MatMul", "a-b"];
    const spec: TableSpec = {
      columns: [
        { name: "op", label: "op", type: "string" },
        { name: "t", label: "t", type: "number" },
      ],
      data: { op: names, t: [-1.5, 2, -3, 4, 5, 6, 7] },
    } as unknown as TableSpec;
    const lines = toCsv(spec, [0, 1, 2, 3, 4, 5, 6]).trim().split("\n");
    expect(lines).toEqual([
      "op,t", '"\'=HYPERLINK(""http://x"")",-1.5', "'+1,2", "'-2,-3", "'@SUM(A1),4", "'\tx,5",
      "MatMul,6", "a-b,7",
    ]);
  });
});

describe("cells as the table shows them", () => {
  it("separates thousands alike for whole and fractional numbers of one column", () => {
    expect(fmt(569322282078473, "number")).toBe("569,322,282,078,473");
    expect(fmt(564885712820175.6, "number")).toBe("564,885,712,820,175.6");
    expect(fmt(2013.66, "number")).toBe("2,013.7");
    expect(fmt(12.3456, "number")).toBe("12.35");
    // a share reads as the sentences write it: 63.2, not 63.25 (whose 63.3 a reader rounds to)
    expect(fmt(63.2451, "number", "host_bound_pct")).toBe("63.2");
    expect(fmt(5, "number", "busy_pct")).toBe("5.0");
    expect(fmt(12.3456, "number", "busy_us")).toBe("12.35");
    expect(fmt(63.25, "number", "host_bound_pct")).toBe("63.2"); // (an exact tie: to even)
    expect(fmt(63.75, "number", "host_bound_pct")).toBe("63.8");
    expect(fmt(12345.67, "number", "x_pct")).toBe("12,345.7");
    expect(fmt(-0.04, "number", "x_pct")).toBe("-0.0");
    expect(fmt(null, "number")).toBe("");
    expect(fmt("a<b>", "string")).toBe("a<b>");
  });
});
