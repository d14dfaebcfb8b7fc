import { describe, expect, it } from "vitest";
import { counted, fixed, formatInt, formatUs, groupedFixed } from "../src/format";
import cases from "./details_cases.json";

// Python's texts of each case (tests/widgets/test_event_details.py writes and checks the file):
// a number as JSON, else "special" (nan, inf, -inf, -0.0) or "big" (an integer past a double's)
type Case = { x?: number; special?: string; big?: string; text: string | null };
const SPECIAL: Record<string, number> = { nan: NaN, inf: Infinity, "-inf": -Infinity, "-0.0": -0 };

function input(c: Case): number | bigint {
  if (c.big !== undefined) return BigInt(c.big);
  if (c.special !== undefined) return SPECIAL[c.special];
  return c.x!;
}

describe("the numbers a page writes in an event's details, as Python writes them", () => {
  it("writes times with three decimals, ties to even, every digit", () => {
    const us = cases.us as Case[];
    expect(us.length).toBeGreaterThan(100);
    const got = us.map((c) => formatUs(input(c) as number));
    expect(got).toEqual(us.map((c) => c.text));
  });

  it("writes ids with every digit, past 2**53 too; fails where Python fails", () => {
    const ints = cases.int as Case[];
    const got = ints.map((c) => {
      try {
        return formatInt(input(c));
      } catch {
        return null;
      }
    });
    expect(got).toEqual(ints.map((c) => c.text));
    expect(ints.some((c) => c.big !== undefined) && ints.some((c) => c.text === null)).toBe(true);
  });
});

describe("a number with fewer decimals, as Python's f-strings write it", () => {
  it("rounds exact ties to even (toFixed goes up) and keeps every digit", () => {
    // [x, decimals, Python's f"{x:.{decimals}f}"]
    const cases: [number, number, string][] = [[0.25, 1, "0.2"], [0.75, 1, "0.8"], [2.5, 0, "2"],
      [3.5, 0, "4"], [1.05, 1, "1.1"], [63.25, 1, "63.2"], [-0.25, 1, "-0.2"],
      [1e22, 1, "10000000000000000000000.0"], [0.0625, 3, "0.062"], [999.95, 1, "1000.0"],
      [1234567.25, 1, "1234567.2"]];
    expect(cases.map(([x, d]) => fixed(x, d))).toEqual(cases.map((c) => c[2]));
    expect(groupedFixed(1234567.25, 1)).toBe("1,234,567.2");
    expect(groupedFixed(-999.95, 1)).toBe("-1,000.0");
  });
});

describe("a count and its noun", () => {
  it("is singular for one and plural otherwise, with thousands separated", () => {
    expect(counted(1, "row")).toBe("1 row");
    expect(counted(0, "call")).toBe("0 calls");
    expect(counted(12345, "row")).toBe("12,345 rows");
    expect(counted(2, "child", "children")).toBe("2 children");
  });
});
