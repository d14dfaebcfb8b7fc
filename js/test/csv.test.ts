import { describe, expect, it } from "vitest";
import { toCsv, type TableSpec } from "../src/table";

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
