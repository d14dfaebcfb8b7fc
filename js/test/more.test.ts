import { describe, expect, it } from "vitest";
import { podStep } from "../src/pod";
import { layout } from "../src/tfdata";

describe("pod", () => {
  it("turns one step into one column per host", () => {
    const s = podStep({
      steps: [1, 2], hosts: ["a", "b"], categories: [{ name: "x", label: "X" }],
      values: { x: [[1, 2], [3, 4]] }, duration: [[1, 2], [3, 4]],
    }, 1);
    expect(s.steps).toEqual(["a", "b"]);
    expect(s.values.x).toEqual([3, 4]);
  });
});

describe("tf.data layout", () => {
  it("puts children one layer below their parent", () => {
    const node = (id: string, parent: string) => ({
      id, parent, name: id, long_name: id, start_us: 0, total_us: 1, self_us: 1, calls: 1,
      critical: false, bottleneck: false,
    });
    const pos = layout([node("r", "0"), node("p", "r"), node("m", "p"), node("s", "p")]);
    expect(pos.get("r")!.depth).toBe(0);
    expect(pos.get("p")!.depth).toBe(1);
    expect([pos.get("m")!.depth, pos.get("s")!.depth]).toEqual([2, 2]);
    expect([pos.get("m")!.order, pos.get("s")!.order]).toEqual([0, 1]);
  });
});

import { icicle, topSlices } from "../src/charts";

describe("charts", () => {
  it("keeps the top slices and folds the rest into other", () => {
    const s = topSlices(Array.from({ length: 12 }, (_, i) => ({ label: `s${i}`, value: i + 1 })), 4);
    expect(s.map((x) => x.label)).toEqual(["s11", "s10", "s9", "other"]);
    expect(s[3].value).toBe(1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9);
  });

  it("lays scopes out inside their parents", () => {
    const r = icicle([
      { scope: "a", parent: null, name: "a", value: 10 },
      { scope: "a/b", parent: "a", name: "b", value: 6 },
      { scope: "a/c", parent: "a", name: "c", value: 4 },
      { scope: "d", parent: null, name: "d", value: 10 },
    ]);
    const get = (s: string) => r.find((x) => x.scope === s)!;
    expect(get("a").x1 - get("a").x0).toBeCloseTo(0.5);
    expect(get("a/b").depth).toBe(1);
    expect(get("a/b").x0).toBeCloseTo(get("a").x0);
    expect(get("a/c").x1).toBeCloseTo(get("a").x1);
  });
});
