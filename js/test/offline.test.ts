import { describe, expect, it } from "vitest";
import { eventDetails, fixed3, type DetailsBlock } from "../src/details";
import { detailsResponder, standInModel, unpack, unpackDetails } from "../src/offline";
import { meta, tileWire, wire } from "./wire";

// two tracks; rows 0-1 on track 0 (host a), row 2 on track 1 (host b)
function timelineState(prefix: string, blocks = false): Record<string, unknown> {
  const extra: Record<string, Uint32Array> = blocks ? { count: new Uint32Array([1, 1, 1]), row: new Uint32Array([0, 1, 2]) } : {};
  return {
    _tfprof_timelines: [prefix],
    [`${prefix}tile`]: tileWire({ t0: 0, t1: 12, exact: !blocks, px_per_us: blocks ? 1 : null }, {
      start: new Float64Array([1, 5, 2]), dur: new Float32Array([2, 1, 10]),
      name: new Uint32Array([0, 1, 1]), off: new Uint32Array([0, 2, 3]), ...extra }),
    [`${prefix}meta`]: meta({
      names: ["MatMul", "<b>x</b>"],
      tracks: [{ id: 0, section: "a /host:CPU", name: "tf_Compute", host: "a", plane: "/host:CPU", depths: 1, events: 2 },
        { id: 1, section: "b /host:CPU", name: "python", host: "b", plane: "/host:CPU", depths: 1, events: 1 }],
      segments: [[0, 0, 0, 2], [1, 0, 2, 3]],
      steps: [{ name: "a step 7", start: 0, end: 4, host: "a", step_name: "7" },
        { name: "b step 9", start: 0, end: 4, host: "b", step_name: "9" }],
    }),
    [`${prefix}selected_index`]: -1,
    [`${prefix}details`]: {},
  };
}

const block: DetailsBlock = {
  keys: ["tf_op", "group_id"],
  values: ["MatMul:MatMul", 3, "<i>y</i>"],
  off: new Uint32Array([0, 2, 2, 3]),
  key: new Uint32Array([0, 1, 0]),
  val: new Uint32Array([0, 1, 2]),
  id: new Uint32Array([10, 11, 12]),
  dur: new Float64Array([2.0004, 1, 10]),
  rows: null, start: null, name: null, linkSrc: null, linkDst: null, linkKind: null, linkLabels: [],
};

describe("event details without a kernel", () => {
  it("gives the Python widget's fields, order and formatting", () => {
    const d = eventDetails(timelineState(""), "", 0, block);
    expect(Object.keys(d)).toEqual(["name", "start", "duration", "host", "plane", "track", "event id", "tf_op", "group_id", "step"]);
    expect(d).toMatchObject({ name: "MatMul", start: "1.000 us", duration: "2.000 us", host: "a",
      track: "tf_Compute", "event id": 10, tf_op: "MatMul:MatMul", group_id: 3, step: "7" });
  });

  it("finds the step of the event's own host and leaves out stats it does not have", () => {
    const d = eventDetails(timelineState(""), "", 2, block);
    expect(d).toMatchObject({ host: "b", step: "9", tf_op: "<i>y</i>" });
    const bare = eventDetails(timelineState(""), "", 1);
    expect(bare["event id"]).toBeUndefined();
    expect(bare.step).toBeUndefined(); // starts at 5, after host a's step
    expect(eventDetails(timelineState(""), "", 3, block)).toEqual({});
  });

  it("keeps any stat name as a plain field", () => {
    const odd: DetailsBlock = { ...block, keys: ["__proto__", "name"], values: ["p", "renamed"],
      off: new Uint32Array([0, 2, 2, 2]), key: new Uint32Array([0, 1]), val: new Uint32Array([0, 1]) };
    const d = eventDetails(timelineState(""), "", 0, odd);
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
    expect(Object.keys(d)).toContain("__proto__");
    expect(Object.keys(d)[0]).toBe("name"); // a stat called "name" keeps the first place
    expect(d.name).toBe("renamed");
  });

  it("answers a selection through a prefixed model, like the kernel does", async () => {
    const state = timelineState("timeline__");
    const model = standInModel(state, detailsResponder(state, () => Promise.resolve(block)));
    const seen: Record<string, unknown>[] = [];
    model.on("change:timeline__details", () => seen.push(model.get("timeline__details")));
    model.set("timeline__selected_index", 0);
    model.set("timeline__selected_index", 2); // the stats load once; only the last selection answers
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ name: "<b>x</b>", "event id": 12 });
  });

  it("answers without stats when there are none to read", () => {
    const state = timelineState("");
    const model = standInModel(state, detailsResponder(state));
    model.set("selected_index", 0);
    expect(model.get("details")).toMatchObject({ name: "MatMul", host: "a" });
  });
});

/** A blob as tfprof_nb.offline.payload.pack writes it: `data` with its buffers taken out. */
async function pack(data: object, paths: (string | number)[][], buffers: ArrayBufferView[]): Promise<string> {
  let offset = 0;
  const places: [number, number][] = [];
  for (const b of buffers) {
    offset += (8 - (offset % 8)) % 8;
    places.push([offset, b.byteLength]);
    offset += b.byteLength;
  }
  const text = JSON.stringify({ data, paths, places });
  const head = new TextEncoder().encode(text + " ".repeat((8 - ((4 + text.length) % 8)) % 8));
  const blob = new Uint8Array(4 + head.length + offset);
  new DataView(blob.buffer).setUint32(0, head.length, true);
  blob.set(head, 4);
  buffers.forEach((b, i) => blob.set(new Uint8Array(b.buffer, b.byteOffset, b.byteLength), 4 + head.length + places[i][0]));
  const packed = new Uint8Array(await new Response(new Blob([blob]).stream()
    .pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
  return btoa(String.fromCharCode(...packed));
}

describe("payload", () => {
  it("unpacks the state with aligned binary buffers back in their places", async () => {
    const start = new Float64Array([1.5, 2.5]);
    const state = await unpack(await pack({ state: { meta: { names: [] }, tile: { t0: 0, buffers: [null, null] } } },
      [["state", "tile", "buffers", 1], ["state", "tile", "buffers", 0]], [new Uint8Array([7]), start]));
    const buffers = (state.tile as { buffers: DataView[] }).buffers;
    expect(buffers[0].byteOffset % 8).toBe(0);
    expect(new Float64Array(buffers[0].buffer, buffers[0].byteOffset, 2)).toEqual(start);
    expect(buffers[1].getUint8(0)).toBe(7);
    expect(state.meta).toEqual({ names: [] });
  });

  it("unpacks event details", async () => {
    const cols = wire({ off: new Uint32Array([0, 1]), key: new Uint32Array([0]), val: new Uint32Array([0]),
      id: new Uint32Array([4]), dur: new Float64Array([2.5]) });
    const d = await unpackDetails(await pack({ keys: ["k"], values: [7], columns: { schema: cols.schema, buffers: cols.buffers.map(() => null) } },
      cols.buffers.map((_, i) => ["columns", "buffers", i]), cols.buffers));
    expect(d.keys).toEqual(["k"]);
    expect(Array.from(d.off)).toEqual([0, 1]);
    expect(Array.from(d.dur)).toEqual([2.5]);
    expect(d.rows).toBeNull();
  });
});

describe("times with three decimals", () => {
  it("writes what Python's format(x, '.3f') writes, exact ties to even", () => {
    // expected strings printed by CPython 3.11
    const cases: [number, string][] = [
      [0.0625, "0.062"], [0.1875, "0.188"], [-0.0625, "-0.062"], [0.3125, "0.312"],
      [123456.0625, "123456.062"], [0.0025, "0.003"], [1.0005, "1.000"], [2.5, "2.500"],
      [0, "0.000"], [21.3096, "21.310"], [4503599627370498, "4503599627370498.000"],
      [5000000000000.0625, "5000000000000.062"], [-0, "-0.000"], [-0.0001, "-0.000"],
      [NaN, "nan"], [Infinity, "inf"], [-Infinity, "-inf"],
      [1e21, "1000000000000000000000.000"], [-1.5e22, "-15000000000000000000000.000"],
    ];
    for (const [x, want] of cases) expect(fixed3(x)).toBe(want);
  });
});

describe("messages through the dashboard", () => {
  it("adds the view's prefix to what it sends and hears only its own answers", async () => {
    const { prefixed } = await import("../src/dashboard");
    const sent: unknown[] = [];
    const handlers: ((m: unknown, b: unknown) => void)[] = [];
    const model = {
      get: () => undefined, set: () => {}, save_changes: () => {},
      on: (ev: string, cb: any) => { if (ev === "msg:custom") handlers.push(cb); },
      off: (ev: string, cb: any) => { const i = handlers.indexOf(cb); if (i >= 0) handlers.splice(i, 1); },
      send: (c: unknown) => sent.push(c),
    };
    const view = prefixed(model, "timeline__");
    const heard: unknown[] = [];
    const cb = (m: unknown) => heard.push(m);
    view.on("msg:custom", cb);
    view.send!({ kind: "window", id: 1 });
    expect(sent).toEqual([{ kind: "window", id: 1, view: "timeline__" }]);
    handlers.forEach((h) => h({ kind: "window", view: "ops__" }, []));
    handlers.forEach((h) => h({ kind: "window", view: "timeline__" }, []));
    expect(heard).toEqual([{ kind: "window", view: "timeline__" }]);
    view.off!("msg:custom", cb);
    expect(handlers).toHaveLength(0);
    const noKernel = prefixed({ ...model, send: undefined } as any, "timeline__");
    expect(noKernel.send).toBeUndefined();
  });
});

describe("event details of an overview's offline copy", () => {
  it("finds a row in the details block that covers some rows only", () => {
    const state = timelineState("", true);
    const partial: DetailsBlock = { ...block, off: new Uint32Array([0, 1]),
      key: new Uint32Array([1]), val: new Uint32Array([1]), id: new Uint32Array([99]),
      dur: new Float64Array([10.25]), rows: new Uint32Array([2]),
      start: new Float64Array([2]), name: new Uint32Array([1]) };
    const d = eventDetails(state, "", 2, partial);
    expect(d).toMatchObject({ name: "<b>x</b>", duration: "10.250 us", host: "b", "event id": 99, group_id: 3 });
    const other = eventDetails(state, "", 0, partial); // not in the block: no stats, still named
    expect(other).toMatchObject({ name: "MatMul", host: "a" });
    expect(other["event id"]).toBeUndefined();
  });
});
