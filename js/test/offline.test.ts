import { describe, expect, it } from "vitest";
import { eventDetails, type DetailsBlock } from "../src/details";
import { moduleSource, unpack, unpackDetails } from "../src/payload";
import { detailsResponder, standInModel } from "../src/standin";
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

// what Python builds (tfprof_nb.offline.details) of rows 0, 1, 2 of the timeline: label and
// text codes of each field, the same for every event or one per event (a column; NO_ROW: none),
// or the code of the event's own start (in the tile), duration or id (in the block), which the
// page writes; then each event's stats
const [OWN_START, OWN_DURATION, OWN_ID, NO_ROW] = [0xffffffff, 0xfffffffe, 0xfffffffd, 0xfffffffc];
const LABELS = ["name", "category", "start", "duration", "host", "plane", "track", "step", "event id", "tf_op", "group_id"];
const TEXTS = ["a", "/host:CPU", "tf_Compute", "b", "python", "MatMul", "<b>x</b>", "MatMul:MatMul", "3", "7",
  "<i>y</i>", "1e-05"];
const block: DetailsBlock = {
  labels: LABELS, texts: TEXTS,
  fields: [[0, new Uint8Array([5, 6, 6])], [1, new Uint8Array([5, 0xff, 0xff])], [2, OWN_START],
    [3, OWN_DURATION], [4, new Uint8Array([0, 0, 3])], [5, 1], [6, new Uint16Array([2, 2, 4])],
    [7, new Uint32Array([9, NO_ROW, NO_ROW])], [8, OWN_ID]],
  off: new Uint32Array([0, 2, 2, 4]), key: new Uint32Array([9, 10, 9, 10]), val: new Uint32Array([7, 8, 10, 11]),
  dur: new Float64Array([2.0004, 0.0625, 10]), id: new Uint32Array([10, 11, 12]),
  rows: null, linkSrc: null, linkDst: null, linkKind: null, linkLabels: [],
};
const FIELDS_0 = [["name", "MatMul"], ["category", "MatMul"], ["start", "1.000 us"], ["duration", "2.000 us"],
  ["host", "a"], ["plane", "/host:CPU"], ["track", "tf_Compute"], ["step", "7"], ["event id", "10"]];
const ARGS_0 = [["tf_op", "MatMul:MatMul"], ["group_id", "3"]];

describe("event details without a kernel", () => {
  it("shows the fields, then the stats as Arguments, in Python's order, text as it is, and writes the numbers", () => {
    const d = eventDetails(timelineState(""), "", 0, block);
    expect(Object.entries(d)).toEqual([...FIELDS_0, ["Arguments", ARGS_0]]);
    const other = eventDetails(timelineState(""), "", 2, block);
    expect(other).toMatchObject({ name: "<b>x</b>", start: "2.000 us", duration: "10.000 us", host: "b",
      track: "python", "event id": "12", Arguments: [["tf_op", "<i>y</i>"], ["group_id", "1e-05"]] });
    expect(Object.keys(other)).not.toContain("step"); // Python wrote none
    expect(Object.keys(other)).not.toContain("category");
    expect(eventDetails(timelineState(""), "", 1, block)).toEqual({ name: "<b>x</b>", start: "5.000 us",
      duration: "0.062 us", host: "a", plane: "/host:CPU", track: "tf_Compute", "event id": "11", Arguments: [] });
    const far = { ...block, id: new Float64Array([2 ** 60, 0, 0]) }; // ids past 2**32 come as float64
    expect(eventDetails(timelineState(""), "", 0, far)["event id"]).toBe("1152921504606846976");
  });

  it("keeps a stat named like a field among the arguments, after the fields, every one", () => {
    // row 0's stats: tf_op, name, tf_op again, step
    const clash: DetailsBlock = { ...block, off: new Uint32Array([0, 4, 4, 5]), key: new Uint32Array([9, 0, 9, 7, 10]),
      val: new Uint32Array([7, 10, 8, 11, 10]) };
    const d = eventDetails(timelineState(""), "", 0, clash);
    expect(Object.entries(d)).toEqual([...FIELDS_0, ["Arguments",
      [["tf_op", "MatMul:MatMul"], ["name", "<i>y</i>"], ["tf_op", "3"], ["step", "1e-05"]]]]);
    expect(d.name).toBe("MatMul");
  });

  it("gives an event the page embeds no rows of its name and place only", () => {
    expect(eventDetails(timelineState(""), "", 1)).toEqual(
      { name: "<b>x</b>", host: "a", plane: "/host:CPU", track: "tf_Compute" });
    expect(eventDetails(timelineState(""), "", 3, block)).toEqual({});
    expect(eventDetails(timelineState(""), "", 3)).toEqual({});
  });

  it("keeps any stat's key as it is, in its place", () => {
    const odd: DetailsBlock = { ...block, labels: ["__proto__", "name", "0"], texts: ["p", "renamed"], fields: [],
      off: new Uint32Array([0, 3, 3, 3]), key: new Uint32Array([1, 0, 2]), val: new Uint32Array([1, 0, 0]) };
    const d = eventDetails(timelineState(""), "", 0, odd);
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
    expect(Object.entries(d)).toEqual([["Arguments", [["name", "renamed"], ["__proto__", "p"], ["0", "p"]]]]);
  });

  it("answers a selection through a prefixed model, like the kernel does", async () => {
    const state = timelineState("timeline__");
    const model = standInModel(state, detailsResponder(state, () => Promise.resolve(block)));
    const seen: Record<string, unknown>[] = [];
    model.on("change:timeline__details", () => seen.push(model.get("timeline__details")));
    model.set("timeline__selected_index", 0);
    model.set("timeline__selected_index", 2); // the rows load once; only the last selection answers
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ name: "<b>x</b>", "event id": "12" });
  });

  it("answers without rows when there are none to read", () => {
    const state = timelineState("");
    const model = standInModel(state, detailsResponder(state));
    model.set("selected_index", 0);
    expect(model.get("details")).toEqual({ name: "MatMul", host: "a", plane: "/host:CPU", track: "tf_Compute" });
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
    const cols = wire({ off: new Uint32Array([0, 1, 1]), key: new Uint32Array([0]), val: new Uint32Array([0]),
      dur: new Float64Array([1.5, 2.5]), id: new Uint32Array([3, 4]), field0: new Uint8Array([0, 0]) });
    const raw = { labels: ["k", "start", "name"], texts: ["7.0"], fields: [[2, "field0"], [1, OWN_START]],
      columns: { schema: cols.schema, buffers: cols.buffers.map(() => null) } };
    const d = await unpackDetails(await pack(raw, cols.buffers.map((_, i) => ["columns", "buffers", i]), cols.buffers));
    expect(d.labels).toEqual(["k", "start", "name"]);
    expect(d.texts).toEqual(["7.0"]);
    expect(d.fields).toEqual([[2, new Uint8Array([0, 0])], [1, OWN_START]]); // a column by its name
    expect(Array.from(d.off)).toEqual([0, 1, 1]);
    expect(Array.from(d.dur)).toEqual([1.5, 2.5]);
    expect(Array.from(d.id)).toEqual([3, 4]);
    expect(d.rows).toBeNull();
  });

  it("inflates a view's module", async () => {
    const source = "export default { render() {} };";
    const deflated = new Uint8Array(await new Response(new Blob([source]).stream()
      .pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
    expect(await moduleSource(btoa(String.fromCharCode(...deflated)))).toBe(source);
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
    const partial: DetailsBlock = { ...block, fields: [[0, new Uint8Array([6])], [2, OWN_START], [3, OWN_DURATION]],
      off: new Uint32Array([0, 0]), key: new Uint32Array(0), val: new Uint32Array(0),
      dur: new Float64Array([10]), id: new Uint32Array([12]), rows: new Uint32Array([2]) };
    // the start from the overview's block that holds the event alone
    expect(eventDetails(state, "", 2, partial)).toEqual({ name: "<b>x</b>", start: "2.000 us", duration: "10.000 us",
      Arguments: [] });
    const other = eventDetails(state, "", 0, partial); // not in the block: its name and place
    expect(other).toEqual({ name: "MatMul", host: "a", plane: "/host:CPU", track: "tf_Compute" });
  });
});
