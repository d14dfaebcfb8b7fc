import { describe, expect, it } from "vitest";
import { lowerBound, makeBlocks, visibleBlocks } from "../src/lod";
import { colorOf, decode, matchingNames } from "../src/data";
import { typed } from "../src/columns";
import { meta, tileWire } from "./wire";
import kernelCases from "./lod_cases.json";

function seg(starts: number[], durs: number[]) {
  return { start: Float64Array.from(starts), dur: Float32Array.from(durs) };
}

describe("lowerBound", () => {
  it("finds the first start >= t", () => {
    const s = Float64Array.from([0, 10, 20, 30]);
    expect(lowerBound(s, 0, 4, -1)).toBe(0);
    expect(lowerBound(s, 0, 4, 10)).toBe(1);
    expect(lowerBound(s, 0, 4, 11)).toBe(2);
    expect(lowerBound(s, 0, 4, 99)).toBe(4);
  });
});

describe("visibleBlocks", () => {
  it("draws wide events one by one and clips to the window", () => {
    const { start, dur } = seg([0, 100, 200, 300], [50, 50, 50, 50]);
    const out = makeBlocks(4);
    const visited = visibleBlocks(start, dur, 0, 4, 120, 260, 1, out);
    expect(visited).toBe(2); // the event at 100 reaches into view, then 200
    expect(out.n).toBe(2);
    expect(out.first[0]).toBe(1);
    expect(out.x[0]).toBeCloseTo(-20);
    expect(out.w[0]).toBeCloseTo(50);
  });

  it("merges sub-pixel events into one block per pixel column", () => {
    const n = 10000;
    const starts = Array.from({ length: n }, (_, i) => i * 0.01); // 10 ns apart
    const durs = Array.from({ length: n }, () => 0.005);
    const { start, dur } = seg(starts, durs);
    const out = makeBlocks(8);
    // 100 us drawn on 100 px: 100 events per pixel
    visibleBlocks(start, dur, 0, n, 0, 100, 1, out);
    expect(out.n).toBeLessThanOrEqual(101);
    expect(out.n).toBeGreaterThan(0);
    let total = 0;
    for (let i = 0; i < out.n; i++) total += out.count[i];
    expect(total).toBe(n);
  });

  it("zooming in shows fewer, wider blocks", () => {
    const { start, dur } = seg([0, 1, 2, 3, 4, 5], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    const far = makeBlocks(2);
    visibleBlocks(start, dur, 0, 6, 0, 6, 0.1, far);
    const near = makeBlocks(2);
    visibleBlocks(start, dur, 0, 6, 2, 4, 100, near);
    expect(far.n).toBe(1);
    expect(near.n).toBe(3);
    expect(near.w[0]).toBeGreaterThanOrEqual(1);
  });
});

describe("visibleBlocks and the kernel", () => {
  // the kernel's blocks of each case (tfprof_nb/_native/timeline.c, written by
  // tests/widgets/test_timeline_lod.py): a frame merges what it draws by the same rule
  it("merges the events the kernel merges, case by case", () => {
    expect(kernelCases.length).toBeGreaterThan(5);
    for (const c of kernelCases) {
      const out = makeBlocks(4);
      visibleBlocks(Float64Array.from(c.start), Float32Array.from(c.dur), 0, c.start.length, c.t0, c.t1, c.ppu, out, c.min_px);
      expect(Array.from(out.first.subarray(0, out.n))).toEqual(c.first);
      expect(Array.from(out.count.subarray(0, out.n))).toEqual(c.count);
    }
  });
});

describe("decode", () => {
  it("reads binary columns, also from unaligned buffers", () => {
    const starts = Float64Array.from([1.5, 2.5]);
    const raw = new Uint8Array(1 + starts.byteLength);
    raw.set(new Uint8Array(starts.buffer), 1);
    const col = typed(new DataView(raw.buffer, 1, starts.byteLength), Float64Array);
    expect(Array.from(col)).toEqual([1.5, 2.5]);
    const model = {
      get: (k: string) =>
        ({
          tile: tileWire({ t0: 0, t1: 4, exact: true, px_per_us: null }, {
            start: starts, dur: Float32Array.from([1, 2]), name: Uint32Array.from([0, 1]),
            off: Uint32Array.from([0, 2]) }),
          meta: meta({ names: ["a", "<b>"], tracks: [], segments: [[0, 0, 0, 2]], steps: [], t0: 0, t1: 4 }),
        })[k],
    };
    const d = decode(model);
    expect(d.names[1]).toBe("<b>");
    expect(d.segments[0]).toEqual({ track: 0, depth: 0, lo: 0, hi: 2 });
    expect(Array.from(d.base.dur)).toEqual([1, 2]);
    expect(d.base.exact).toBe(true);
    expect(Array.from(d.base.off)).toEqual([0, 2]);
  });

  it("colours are stable per name and search is case-insensitive", () => {
    expect(colorOf("MatMul", false)).toBe(colorOf("MatMul", false));
    expect(colorOf("MatMul", false)).not.toBe(colorOf("Conv2D", false));
    expect([...matchingNames(["MatMul", "matmul_grad", "Add"], "MATMUL")]).toEqual([0, 1]);
  });

  it("search finds an event by its label or, where that differs, by its own name", () => {
    // (labels are display names, as XProf's viewer: an HLO op's instruction, a TF op's type)
    const labels = ["copy-done.4", "Cast", "train"];
    const long = { "0": "%copy-done.4 = f32[5,1024]{1,0} copy-done(%copy-start.4)",
      "1": "replica_4/bert/encoder/Cast" };
    expect([...matchingNames(labels, "f32[5,1024]", long)]).toEqual([0]);
    expect([...matchingNames(labels, "BERT/encoder", long)]).toEqual([1]);
    expect([...matchingNames(labels, "cast", long)]).toEqual([1]);
    expect([...matchingNames(labels, "encoder")]).toEqual([]);
  });
});

describe("tiles", () => {
  const f64 = (a: number[]) => Float64Array.from(a);
  const f32 = (a: number[]) => Float32Array.from(a);
  const u32 = (a: number[]) => Uint32Array.from(a);

  it("decodes an overview and the embedded detail of an offline copy", async () => {
    const { decode, bestTile } = await import("../src/data");
    const state: Record<string, unknown> = {
      tile: tileWire({ t0: 0, t1: 100, exact: false, px_per_us: 2 }, {
        start: f64([0, 50]), dur: f32([40, 50]), name: u32([0, 1]), count: u32([30, 1]),
        row: u32([0, 31]), off: u32([0, 2]) }),
      detail: tileWire({ t0: 10, t1: 12, exact: true, px_per_us: null }, {
        start: f64([10, 11]), dur: f32([0.5, 0.5]), name: u32([0, 0]), count: u32([1, 1]),
        row: u32([5, 6]), off: u32([0, 2]) }),
      meta: meta({ names: ["a", "b"], tracks: [], segments: [[0, 0, 0, 32]], steps: [], t0: 0, t1: 100,
        lod: { mode: "overview", events: 32 } }),
    };
    const d = decode({ get: (k: string) => state[k] });
    expect(d.lod.mode).toBe("overview");
    expect(d.base.exact).toBe(false);
    expect(d.base.ppu).toBe(2);
    expect(Array.from(d.base.row!)).toEqual([0, 31]);
    expect(d.extra).toHaveLength(1);
    expect(d.extra[0].exact).toBe(true);
    const tiles = [d.base, ...d.extra];
    expect(bestTile(tiles, 10.5, 11.5)).toBe(d.extra[0]); // exact beats the overview
    expect(bestTile(tiles, 5, 11.5)).toBe(d.base); // the detail does not cover it
    expect(bestTile(tiles, -10, 500)).toBe(d.base); // nothing covers it: the overview
  });

  it("prefers the finest tile that covers the view", async () => {
    const { bestTile, decodeTile } = await import("../src/data");
    const mk = (t0: number, t1: number, ppu: number) => decodeTile(tileWire(
      { t0, t1, exact: false, px_per_us: ppu },
      { start: f64([]), dur: f32([]), name: u32([]), count: u32([]), row: u32([]), off: u32([0]) }));
    const base = mk(0, 100, 1);
    const fine = mk(40, 60, 50);
    const finer = mk(45, 55, 500);
    expect(bestTile([base, fine, finer], 46, 54)).toBe(finer);
    expect(bestTile([base, fine, finer], 41, 59)).toBe(fine);
  });
});
