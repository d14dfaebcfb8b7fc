import { describe, expect, it } from "vitest";
import { lowerBound, makeBlocks, visibleBlocks } from "../src/lod";
import { colorOf, column, decode, matchingNames } from "../src/data";

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

describe("decode", () => {
  it("reads binary columns, also from unaligned buffers", () => {
    const starts = Float64Array.from([1.5, 2.5]);
    const raw = new Uint8Array(1 + starts.byteLength);
    raw.set(new Uint8Array(starts.buffer), 1);
    const col = column(new DataView(raw.buffer, 1, starts.byteLength), Float64Array);
    expect(Array.from(col)).toEqual([1.5, 2.5]);
    const model = {
      get: (k: string) =>
        ({
          ev_start: new DataView(starts.buffer),
          ev_dur: new DataView(Float32Array.from([1, 2]).buffer),
          ev_name: new DataView(Uint32Array.from([0, 1]).buffer),
          meta: { names: ["a", "<b>"], tracks: [], segments: [[0, 0, 0, 2]], steps: [], t0: 0, t1: 4 },
        })[k],
    };
    const d = decode(model);
    expect(d.names[1]).toBe("<b>");
    expect(d.segments[0]).toEqual({ track: 0, depth: 0, lo: 0, hi: 2 });
    expect(Array.from(d.dur)).toEqual([1, 2]);
  });

  it("colours are stable per name and search is case-insensitive", () => {
    expect(colorOf("MatMul", false)).toBe(colorOf("MatMul", false));
    expect(colorOf("MatMul", false)).not.toBe(colorOf("Conv2D", false));
    expect([...matchingNames(["MatMul", "matmul_grad", "Add"], "MATMUL")]).toEqual([0, 1]);
  });
});
