import { describe, expect, it } from "vitest";
import { layout } from "../src/tfdata";
import { fitLabel, icicle } from "../src/charts";
import { prefixed } from "../src/dashboard";

const node = (id: string, parent: string) => ({
  id, parent, name: id, long_name: id, start_us: 0, total_us: 1, self_us: 1, calls: 1,
  critical: false, bottleneck: false,
});

describe("tf.data layout (dagre)", () => {
  it("puts every iterator below the one that calls it, siblings side by side", () => {
    const { boxes, edges, width, height } = layout([node("r", "0"), node("p", "r"), node("m", "p"), node("s", "p")]);
    const y = (id: string) => boxes.get(id)!.y;
    expect(y("r")).toBeLessThan(y("p"));
    expect(y("p")).toBeLessThan(y("m"));
    expect(y("m")).toBe(y("s"));
    expect(boxes.get("m")!.x).not.toBe(boxes.get("s")!.x);
    expect(edges.map((e) => `${e.from}>${e.to}`).sort()).toEqual(["p>m", "p>s", "r>p"]);
    expect(width).toBeGreaterThan(2 * 230);
    expect(height).toBeGreaterThan(3 * 62);
  });

  it("keeps a zip (two children with their own subtrees) readable: no overlapping boxes", () => {
    const nodes = [node("root", "0"), node("zip", "root"), node("a", "zip"), node("b", "zip"),
      node("a1", "a"), node("a2", "a"), node("b1", "b")];
    const { boxes } = layout(nodes);
    const all = [...boxes.values()];
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const overlap = Math.abs(all[i].x - all[j].x) < 230 && Math.abs(all[i].y - all[j].y) < 62;
        expect(overlap).toBe(false);
      }
    }
  });
});

describe("charts", () => {
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
  it("cuts labels to their rectangle", () => {
    expect(fitLabel("forward (cell.py:4)", 200)).toBe("forward (cell.py:4)");
    expect(fitLabel("forward (cell.py:4)", 70)).toBe("forward (…");
    expect(fitLabel("forward", 10)).toBe("");
  });
});

describe("dashboard", () => {
  it("gives each view its own keys under its prefix", () => {
    const state: Record<string, unknown> = { "memory__figure": 1, "ops__table": 2 };
    const seen: string[] = [];
    const model = {
      get: (k: string) => state[k], set: (k: string, v: unknown) => { state[k] = v; },
      save_changes: () => {}, on: (ev: string) => { seen.push(ev); },
    };
    const view = prefixed(model, "memory__");
    expect(view.get("figure")).toBe(1);
    view.set("figure", 3);
    expect(state["memory__figure"]).toBe(3);
    view.on("change:figure", () => {});
    expect(seen).toEqual(["change:memory__figure"]);
  });
});

describe("memory view", () => {
  it("keeps the breakdown rows of the chosen allocator", async () => {
    const { allocatorRows } = await import("../src/memory");
    const spec = {
      title: "Memory breakdown at peak",
      columns: [{ name: "allocator", label: "allocator", type: "string" as const },
        { name: "bytes", label: "bytes", type: "number" as const }],
      data: { allocator: ["GPU_0_bfc", "cpu", "GPU_0_bfc"], bytes: [3, 2, 1] },
    };
    const out = allocatorRows(spec, "GPU_0_bfc");
    expect(out.data.bytes).toEqual([3, 1]);
    expect(out.title).toContain("GPU_0_bfc");
    expect(allocatorRows(spec, null)).toBe(spec);
    expect(allocatorRows(spec, "none").data.bytes).toEqual([]);
  });

  it("says the peak of the allocator the menu shows, the only one without a menu", async () => {
    const { peakWords } = await import("../src/memory");
    const peaks = { GPU_0_bfc: "Peak of GPU_0_bfc: 1 GiB", cpu: "Peak of cpu: 2 MiB" };
    expect(peakWords(peaks, "cpu")).toBe("Peak of cpu: 2 MiB");
    expect(peakWords(peaks, "gone")).toBe("");
    expect(peakWords(peaks, null)).toBe("");
    expect(peakWords({ cpu: "Peak of cpu: 2 MiB" }, null)).toBe("Peak of cpu: 2 MiB");
  });
});

describe("figure menus", () => {
  it("reads the first menu's buttons, none when the figure has no menu", async () => {
    const { menuButtons } = await import("../src/figure");
    const b = [{ label: "Step 1", method: "restyle", args: [{ y: [[1]] }] }];
    expect(menuButtons({ data: [], layout: { updatemenus: [{ buttons: b }] } })).toEqual(b);
    expect(menuButtons({ data: [], layout: {} })).toEqual([]);
    expect(menuButtons(null)).toEqual([]);
  });
});

describe("tf.data nodes table", () => {
  it("groups the rows into pipeline calls, in order", async () => {
    const { executions } = await import("../src/tfdata");
    const col = (values: unknown[]) => values as any;
    const spec = {
      columns: [],
      data: {
        host: col(["a", "a", "a", "b"]), pipeline: col(["p", "p", "p", "p"]), rank: new Int32Array([0, 0, 1, 0]),
        id: col(["1", "2", "1", "1"]), parent: col(["0", "1", "0", "0"]), name: col(["Root", "Map", "Root", "Root"]),
        long_name: col(["Iterator::Root", "Iterator::Root::Map", "Iterator::Root", "Iterator::Root"]),
        start_us: new Float64Array([0, 1, 2, 3]), total_us: new Float64Array([5, 4, 3, 2]),
        self_us: new Float64Array([1, 4, 3, 2]), calls: new Int32Array([1, 2, 1, 1]),
        critical: col([true, true, false, false]), bottleneck: col([false, true, false, false]),
      },
    };
    const calls = executions(spec);
    expect(calls.map((c) => [c.host, c.rank, c.nodes.length])).toEqual([["a", 0, 2], ["a", 1, 1], ["b", 0, 1]]);
    expect(calls[0].nodes[1]).toMatchObject({ id: "2", parent: "1", name: "Map", calls: 2, bottleneck: true });
  });
});
