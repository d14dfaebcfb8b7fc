import { describe, expect, it } from "vitest";
import { DetailSource, humanBytes, programLabel, type ProgramDetail } from "../src/xlamemory";

describe("program memory selector", () => {
  it("labels programs by their peak in binary units, and those without an assignment", () => {
    expect(humanBytes(21474836512)).toBe("20 GiB");
    // as Python's human_bytes: three significant digits, every digit from 100 on
    expect(humanBytes(786.6 * 2 ** 20)).toBe("787 MiB");
    expect(humanBytes(1000 * 2 ** 20)).toBe("1,000 MiB");
    expect(humanBytes(3 * 2 ** 20 + 2 ** 19)).toBe("3.5 MiB");
    expect(humanBytes(1536)).toBe("1.5 KiB");
    expect(humanBytes(12)).toBe("12 B");
    expect(programLabel("jit_f(7)", 2 ** 30, true)).toBe("jit_f(7): peak 1 GiB");
    expect(programLabel("jit_g(9)", null, false)).toBe("jit_g(9): no buffer assignment");
    expect(programLabel("jit_h(3)", null, true)).toBe("jit_h(3)");
  });
});

const detail = (pid: string): ProgramDetail => ({
  program_id: pid, name: `p(${pid})`, peak_heap_bytes: 1, reasons: [], figure: {},
  buffers: { schema: [] },
});

describe("program memory source", () => {
  it("answers from the state first, else asks the kernel, else says where to look", () => {
    const sent: any[] = [];
    const model = { get: () => null, set: () => {}, save_changes: () => {}, on: () => {},
      send: (m: unknown) => { sent.push(m); } };
    const big = "12190760917235803885"; // 64 bits: stays text all the way
    const source = new DetailSource(model, { [big]: detail(big) });
    const got: (ProgramDetail | string)[] = [];
    source.get(big, (d) => got.push(d));
    expect((got[0] as ProgramDetail).program_id).toBe(big);
    expect(sent).toEqual([]);
    source.get("5", (d) => got.push(d));
    expect(sent).toEqual([{ kind: "program_memory", program: "5", id: 1 }]);
    source.onMessage({ kind: "program_memory", id: 2, detail: detail("6") }, []); // not ours
    expect(got.length).toBe(1);
    const buf = new DataView(new ArrayBuffer(8));
    source.onMessage({ kind: "program_memory", id: 1, detail: detail("5") }, [buf]);
    expect((got[1] as ProgramDetail).buffers.buffers).toEqual([buf]);
    source.get("5", (d) => got.push(d)); // kept: not asked twice
    expect(sent.length).toBe(1);
    source.get("8", (d) => got.push(d));
    source.onMessage({ kind: "program_memory", id: 2, error: "unknown program '8'" }, []);
    expect(got[3]).toContain("unknown program '8'");
    const offline = new DetailSource({ ...model, send: undefined }, { [big]: detail(big) });
    offline.get("5", (d) => got.push(d));
    expect(got[4]).toContain("prof.program_memory(5)");
  });
});
