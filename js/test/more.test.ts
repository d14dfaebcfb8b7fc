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
