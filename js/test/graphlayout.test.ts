import { describe, expect, it } from "vitest";
import { layers, layout, order } from "../src/graphlayout";

describe("graph layout", () => {
  const ids = ["a", "b", "c", "d", "e"];
  const edges: [string, string][] = [["a", "c"], ["b", "c"], ["c", "d"], ["a", "d"], ["e", "d"]];

  it("puts each node in the layer of its longest path", () => {
    const l = layers(ids, edges);
    expect(Object.fromEntries(l)).toEqual({ a: 0, b: 0, c: 1, d: 2, e: 0 });
  });

  it("orders a layer by its neighbours' positions", () => {
    const rows = order(["x", "y", "p", "q"], [["x", "q"], ["y", "p"]], layers(["x", "y", "p", "q"], [["x", "q"], ["y", "p"]]));
    expect(rows[1]).toEqual(["q", "p"]);
  });

  it("places boxes left to right without overlaps", () => {
    const lay = layout(ids, edges, () => ({ w: 100, h: 40 }));
    const boxes = ids.map((id) => lay.pos.get(id)!);
    for (const [s, t] of edges) expect(lay.pos.get(s)!.x + 100).toBeLessThan(lay.pos.get(t)!.x);
    for (const a of boxes) for (const b of boxes) {
      if (a === b || a.x !== b.x) continue;
      expect(a.y + a.h <= b.y || b.y + b.h <= a.y).toBe(true);
    }
    expect(lay.width).toBe(3 * 100 + 2 * 56);
  });
});
