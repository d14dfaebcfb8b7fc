import { describe, expect, it } from "vitest";
import { CriticalPath, type CriticalAnswer } from "../src/timeline/critical";

const ANSWER: CriticalAnswer = {
  step: 2, more: 0, sentence: "Step 7 is bound by 80% device compute on /device:GPU:0",
  nodes: [{ row: 3, start: 10, dur: 4, name: "cudaLaunchKernel", category: "kernel_launch" },
    { row: 0, start: 15, dur: 20, name: "gemm", category: "device_compute" },
    { row: Number.NaN, start: 1, dur: 1, name: "bad", category: "idle" }],
};

describe("the critical path's answer", () => {
  it("is taken for the step asked for only, bad nodes left out", () => {
    const c = new CriticalPath();
    expect(c.take(ANSWER, 1)).toBe(false);
    expect(c.nodes).toEqual([]);
    expect(c.take(ANSWER, 2)).toBe(true);
    expect(c.nodes.map((n) => n.row)).toEqual([3, 0]);
    expect(c.sentence).toBe(ANSWER.sentence);
    c.clear();
    expect([c.step, c.nodes.length, c.sentence]).toEqual([-1, 0, ""]);
  });

  it("refuses what is not an answer", () => {
    const c = new CriticalPath();
    expect(c.take(null, 2)).toBe(false);
    expect(c.take({ step: 2, nodes: "x" as unknown as [] }, 2)).toBe(true);
    expect(c.nodes).toEqual([]);
  });
});
