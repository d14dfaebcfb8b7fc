import { describe, expect, it } from "vitest";
import { decode, type TimelineData } from "../src/data";
import { eventDetails, eventLinks, type DetailsBlock } from "../src/details";
import { detailsResponder, standInModel } from "../src/standin";
import { AXIS_H, HEADER, ROW } from "../src/timeline/layout";
import { Links, rowY, spanning, type Partner } from "../src/timeline/links";
import { TimelineState, type Change, type Source } from "../src/timeline/state";
import { meta, tileWire } from "./wire";

// A GPU capture in miniature, device first: rows 0-1 are kernels on the GPU's stream (track
// 0), rows 2-3 the host's launch calls (track 1, the python thread). Launch 2 started kernel
// 0, launch 3 kernel 1.
const NAMES = ["gemm.kd", "copyBuffer.kd", "hipModuleLaunchKernel", "hipMemcpyDtoDAsync"];
function state(prefix = ""): Record<string, unknown> {
  return {
    _tfprof_timelines: [prefix],
    [`${prefix}meta`]: meta({
      names: NAMES,
      tracks: [
        { id: 0, section: "h /device:GPU:0", host: "h", plane: "/device:GPU:0", name: "Stream #16(Kernel)", depths: 1, events: 2 },
        { id: 1, section: "h /host:CPU", host: "h", plane: "/host:CPU", name: "python", depths: 1, events: 2 },
      ],
      segments: [[0, 0, 0, 2], [1, 0, 2, 4]],
      steps: [],
      t0: 0, t1: 100, lod: { mode: "full", events: 4 },
    }),
    [`${prefix}tile`]: tileWire({ t0: 0, t1: 100, exact: true, px_per_us: null }, {
      start: new Float64Array([40, 70, 10, 60]), dur: new Float32Array([20, 5, 4, 2]),
      name: new Uint32Array([0, 1, 2, 3]), off: new Uint32Array([0, 2, 4]) }),
    [`${prefix}selected_index`]: -1,
    [`${prefix}details`]: {},
    [`${prefix}links`]: {},
  };
}

const data = (): TimelineData => { const s = state(); return decode({ get: (k) => s[k] }); };
const KERNEL_0: Partner = { row: 0, start: 40, dur: 20, name: "gemm.kd", role: "to", label: "kernel" };
const LAUNCH_2: Partner = { row: 2, start: 10, dur: 4, name: "hipModuleLaunchKernel", role: "from", label: "launch" };

function record(s: TimelineState): [Change, Source][] {
  const seen: [Change, Source][] = [];
  s.onChange((what, source) => seen.push([what, source]));
  return seen;
}

describe("the selection's links", () => {
  it("takes the answer for the selected row only, and drops it with the selection", () => {
    const s = new TimelineState(data(), true, 1200, 400);
    const seen = record(s);
    s.select(2);
    s.receiveLinks({ row: 3, partners: [KERNEL_0] }); // a late answer for another selection
    expect(s.links.partners).toEqual([]);
    s.receiveLinks({ row: 2, partners: [KERNEL_0], more: 0 });
    expect(s.links.row).toBe(2);
    expect([...s.links.rows]).toEqual([0]);
    expect(seen).toEqual([["select", "user"], ["links", "model"]]);
    s.select(2, null, "model"); // the same row again (Python echoes it): the links stay
    expect(s.links.partners).toHaveLength(1);
    s.select(1);
    expect(s.links.row).toBe(-1);
    expect(s.links.partners).toEqual([]);
  });

  it("knows which end the arrow starts from", () => {
    const links = new Links();
    const launch = { row: 2, start: 10, dur: 4, name: "hipModuleLaunchKernel" };
    expect(links.ends(launch, KERNEL_0)).toEqual([launch, KERNEL_0]);
    const kernel = { row: 0, start: 40, dur: 20, name: "gemm.kd" };
    expect(links.ends(kernel, LAUNCH_2)).toEqual([LAUNCH_2, kernel]);
  });

  it("ignores partners that are not events", () => {
    const links = new Links();
    expect(links.take({ row: 2, partners: [KERNEL_0, { row: NaN } as Partner,
      { ...KERNEL_0, role: "parent" } as unknown as Partner] }, 2)).toBe(true);
    expect(links.partners).toEqual([KERNEL_0]);
    expect(links.take(null, 2)).toBe(false);
  });

  it("fills the selection from the answer when the tiles do not hold the event alone", () => {
    const s = new TimelineState(data(), true, 1200, 400);
    s.select(7); // a row no tile holds
    expect(s.selection).toBeNull();
    const event = { row: 7, start: 1, dur: 2, name: "x" };
    s.receiveLinks({ row: 7, event, partners: [KERNEL_0] });
    expect(s.selection).toEqual(event);
  });

  it("places each end on its track's row, its section's header when folded, a pinned track's row", () => {
    const s = new TimelineState(data(), true, 1200, 400);
    expect(rowY(s.data, s, 0)).toBe(AXIS_H + HEADER + 2 + (ROW - 2) / 2);
    const hostTrack = s.rows.find((r) => r.kind === "track" && r.track === 1)!;
    expect(rowY(s.data, s, 3)).toBe(AXIS_H + hostTrack.y + 2 + (ROW - 2) / 2);
    s.scrollTo(10); // canvas y: the scroll is taken off
    expect(rowY(s.data, s, 3)).toBe(AXIS_H + hostTrack.y - s.scrollY + 2 + (ROW - 2) / 2);
    s.toggleSection("h /host:CPU");
    const header = s.rows.find((r) => r.kind === "section" && r.section === "h /host:CPU")!;
    expect(rowY(s.data, s, 3)).toBe(AXIS_H + header.y - s.scrollY + HEADER / 2);
    expect(rowY(s.data, s, 99)).toBeNull();
    s.toggleSection("h /host:CPU");
    s.toggleTrack("pinned", "1"); // pinned: right under the axis, whatever the scroll
    expect(rowY(s.data, s, 3)).toBe(AXIS_H + 2 + (ROW - 2) / 2);
    s.toggleTrack("hidden", "0");
    expect(rowY(s.data, s, 0)).toBeNull();
  });

  it("jumps to a partner: selects it and shows both ends", () => {
    const s = new TimelineState(data(), true, 1200, AXIS_H + 30); // room for one row
    s.setView(0, 5);
    s.select(2, { row: 2, start: 10, dur: 4, name: "hipModuleLaunchKernel" });
    s.receiveLinks({ row: 2, partners: [KERNEL_0] });
    s.scrollTo(1000);
    const seen = record(s);
    s.jumpTo(KERNEL_0);
    expect(s.selected).toBe(0);
    expect(s.selection).toEqual(KERNEL_0);
    const [a, b] = s.view();
    expect(a).toBeLessThan(10);
    expect(b).toBeGreaterThan(60);
    const y = rowY(s.data, s, 0)!; // scrolled from the bottom to the kernel's row, in view
    expect(y).toBeGreaterThanOrEqual(AXIS_H);
    expect(y).toBeLessThan(AXIS_H + 30);
    expect(seen.map(([w]) => w)).toEqual(["view", "select", "scroll"]);
    expect(s.links.partners).toEqual([]); // until the answer for the kernel comes
  });

  it("frames both ends with a margin", () => {
    expect(spanning({ row: 0, start: 10, dur: 10, name: "" }, { row: 1, start: 100, dur: 0, name: "" }))
      .toEqual([10 - 13.5, 100 + 13.5]);
  });
});

describe("links without a kernel", () => {
  const block: DetailsBlock = {
    labels: ["name"], texts: ["gemm.kd"], fields: [[0, 0]], off: new Uint32Array(5), key: new Uint32Array(0),
    val: new Uint32Array(0), dur: new Float64Array(4), id: new Uint32Array(4), rows: null,
    linkSrc: new Uint32Array([2, 3]), linkDst: new Uint32Array([0, 1]), linkKind: new Uint8Array([0, 0]),
    linkLabels: [["kernel", "launch"]],
  };

  it("pairs a launch with its kernel from the embedded pairs, both ways", () => {
    expect(eventLinks(state(), "", 2, block)).toEqual({ row: 2, more: 0,
      event: { row: 2, start: 10, dur: 4, name: "hipModuleLaunchKernel" }, partners: [KERNEL_0] });
    expect(eventLinks(state(), "", 1, block).partners).toEqual([
      { row: 3, start: 60, dur: 2, name: "hipMemcpyDtoDAsync", role: "from", label: "launch" }]);
    expect(eventLinks(state(), "", 2).partners).toEqual([]); // no block: no pairs
  });

  it("places the ends of an overview's copy by its embedded detail tile", () => {
    // rows 0-1 and 2-3 merged in the overview; rows 0, 2 and 3 alone in the detail of [0, 65]
    const s = state();
    s.meta = { ...(s.meta as object), lod: { mode: "overview", events: 4 } };
    s.tile = tileWire({ t0: 0, t1: 100, exact: false, px_per_us: 0.1 }, {
      start: new Float64Array([40, 10]), dur: new Float32Array([35, 52]), name: new Uint32Array([0, 2]),
      count: new Uint32Array([2, 2]), row: new Uint32Array([0, 2]), off: new Uint32Array([0, 1, 2]) });
    s.detail = tileWire({ t0: 0, t1: 65, exact: true, px_per_us: null }, {
      start: new Float64Array([40, 10, 60]), dur: new Float32Array([20, 4, 2]), name: new Uint32Array([0, 2, 3]),
      count: new Uint32Array([1, 1, 1]), row: new Uint32Array([0, 2, 3]), off: new Uint32Array([0, 1, 3]) });
    const partial: DetailsBlock = { ...block, off: new Uint32Array(4), key: new Uint32Array(0), val: new Uint32Array(0),
      rows: new Uint32Array([0, 2, 3]), linkSrc: new Uint32Array([2]), linkDst: new Uint32Array([0]), linkKind: new Uint8Array([0]) };
    expect(eventLinks(s, "", 2, partial)).toEqual({ row: 2, more: 0,
      event: { row: 2, start: 10, dur: 4, name: "hipModuleLaunchKernel" }, partners: [KERNEL_0] });
    expect(eventLinks(s, "", 1, partial)).toEqual({ row: 1, more: 0, partners: [] }); // merged, not covered
  });

  it("answers a selection with details and links, as the kernel does", async () => {
    const s = state("timeline__");
    const model = standInModel(s, detailsResponder(s, () => Promise.resolve(block)));
    model.set("timeline__selected_index", 0);
    await new Promise((r) => setTimeout(r, 0));
    expect(model.get("timeline__links")).toMatchObject({ row: 0, partners: [{ ...LAUNCH_2 }] });
    expect(model.get("timeline__details")).toEqual({ name: "gemm.kd", Arguments: [] });
    expect(eventDetails(s, "timeline__", 0, block)).toEqual({ name: "gemm.kd", Arguments: [] });
  });
});
