// The trace viewer's conventions (Perfetto's and Chrome's): the wheel, the zoom's bounds,
// areas and their summary, tracks pinned, hidden, filtered and folded, counter tracks, a
// search that frames each match, a click on merged events.
import { describe, expect, it } from "vitest";
import { decode, type TimelineData } from "../src/data";
import { summarize } from "../src/timeline/area";
import { valueAt } from "../src/timeline/counters";
import { wheel } from "../src/timeline/controls";
import { AXIS_H, COUNTER_H, FOLDED, HEADER, ROW } from "../src/timeline/layout";
import { TimelineState } from "../src/timeline/state";
import { meta, table, tileWire, wire } from "./wire";

// Track 0 (host a): depth 0 holds A [10, 40) and B [60, 90); depth 1 holds a child C
// [15, 25) of A and D [35, 45) that starts inside A and ends after it. Track 1 (host b): E
// [30, 35). Rows in timeline order: 0-1 depth 0, 2-3 depth 1, 4 track 1.
const NAMES = ["A", "B", "C", "D", "E"];
const META = {
  names: NAMES,
  tracks: [
    { id: 0, section: "a /host:CPU", host: "a", plane: "/host:CPU", name: "tf_Compute", depths: 2, events: 4 },
    { id: 1, section: "b /host:CPU", host: "b", plane: "/host:CPU", name: "python", depths: 1, events: 1 },
  ],
  segments: [[0, 0, 0, 2], [0, 1, 2, 4], [1, 0, 4, 5]],
  steps: [],
  t0: 0,
  t1: 100,
};

function data(counters = false): TimelineData {
  const m: Record<string, unknown> = meta({ ...META, lod: { mode: "full", events: 5 } });
  if (counters) {
    m.counter_tracks = table([{ section: "a Counters", name: "memory in use (GPU_0_bfc)", unit: "bytes", max: 300 }]);
    m.counter_points = wire({ counter: new Uint32Array([0, 0, 0]), t: new Float64Array([0, 20, 50]),
      v: new Float64Array([100, 300, 0]) });
  }
  const state: Record<string, unknown> = {
    meta: m,
    tile: tileWire({ t0: 0, t1: 100, exact: true, px_per_us: null }, {
      start: new Float64Array([10, 60, 15, 35, 30]), dur: new Float32Array([30, 30, 10, 10, 5]),
      name: new Uint32Array([0, 1, 2, 3, 4]), off: new Uint32Array([0, 2, 4, 5]) }),
  };
  return decode({ get: (k) => state[k] });
}

const wheelEvent = (e: Partial<WheelEvent>) => ({ deltaX: 0, deltaY: 0, deltaMode: 0, ctrlKey: false, metaKey: false,
  shiftKey: false, offsetX: 700, ...e }) as WheelEvent;

describe("the wheel", () => {
  it("leaves the page its scroll unless the viewer has focus or Ctrl/⌘ is held", () => {
    const s = new TimelineState(data(), false, 1200, AXIS_H + 30);
    expect(wheel(s, wheelEvent({ deltaY: 100 }), false)).toBe(false);
    expect(s.view()).toEqual([0, 100]);
    expect(s.scrollY).toBe(0);
    expect(wheel(s, wheelEvent({ deltaY: -100, ctrlKey: true }), false)).toBe(true); // zooms in
    expect(s.t1 - s.t0).toBeLessThan(100);
    expect(wheel(s, wheelEvent({ deltaY: 100, metaKey: true }), false)).toBe(true);
  });

  it("with focus, scrolls the tracks until they end, then the page; sideways pans", () => {
    const s = new TimelineState(data(), false, 1200, AXIS_H + 30);
    expect(wheel(s, wheelEvent({ deltaY: 20 }), true)).toBe(true);
    expect(s.scrollY).toBe(20);
    expect(wheel(s, wheelEvent({ deltaY: 1000 }), true)).toBe(true);
    expect(s.scrollY).toBe(s.contentH - 30);
    expect(wheel(s, wheelEvent({ deltaY: 10 }), true)).toBe(false); // at the end: the page's
    s.setView(20, 40);
    expect(wheel(s, wheelEvent({ deltaX: 100 }), true)).toBe(true);
    expect(s.t0).toBeCloseTo(22);
    expect(wheel(s, wheelEvent({ deltaY: -100, shiftKey: true }), true)).toBe(true);
    expect(s.t0).toBeCloseTo(20);
  });
});

describe("the window", () => {
  it("stays on the profile: zoom out stops at it and a margin, pans stop at its ends", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    s.zoom(50, 700);
    expect(s.t1 - s.t0).toBeCloseTo(104); // 100 us and 2 % on each side
    expect(s.t0).toBeCloseTo(-2);
    s.setView(-1000, -900);
    expect(s.view()).toEqual([-2, 98]);
    s.setView(10, 20);
    s.pan(1e6);
    expect(s.t1).toBeCloseTo(102);
    expect(s.t1 - s.t0).toBeCloseTo(10);
  });
});

describe("area selection", () => {
  it("sums each name's time inside the range and its self time, longest first", () => {
    const d = data();
    const all = summarize(d.base, d.segments, d.names, { t0: 0, t1: 100, tracks: [0, 1] });
    const by = Object.fromEntries(all.rows.map((r) => [r.name, r]));
    expect(all.events).toBe(5);
    expect(by.A).toEqual({ name: "A", count: 1, wall: 30, self: 30 - 10 - 5 }); // C inside, D half
    expect(by.D.self).toBe(10);
    expect(all.rows.map((r) => r.name)).toEqual(["A", "B", "C", "D", "E"]);
    const part = summarize(d.base, d.segments, d.names, { t0: 20, t1: 38, tracks: [0] });
    const p = Object.fromEntries(part.rows.map((r) => [r.name, r]));
    expect(Object.keys(p).sort()).toEqual(["A", "C", "D"]); // B and track 1 left out
    expect(p.A).toEqual({ name: "A", count: 1, wall: 18, self: 18 - 5 - 3 });
    expect(p.C.wall).toBe(5);
  });

  it("is selected by dragging over tracks, summed in the browser when it holds every event", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    const track0 = s.rows.find((r) => r.kind === "track" && r.track === 0)!;
    s.selectArea([s.xOf(20), s.rowTop(track0) + 1, s.xOf(38), s.rowTop(track0) + 5]);
    expect(s.area.area).toMatchObject({ tracks: [0] });
    expect(s.area.area!.t0).toBeCloseTo(20);
    expect(s.areaRequest()).toBeNull();
    expect(s.area.status).toBe("3 events, 3 names");
    expect(s.area.label()).toContain("on 1 track");
    s.fitSelection();
    expect(s.t0).toBeCloseTo(20);
    expect(s.t1).toBeCloseTo(38);
  });

  it("asks the kernel when no tile holds every event of the range, and says so offline", () => {
    const d = data();
    d.lod.mode = "overview";
    d.base.exact = false;
    const live = new TimelineState(d, true, 1200, 400);
    live.selectArea([live.xOf(20), AXIS_H, live.xOf(38), 400]);
    expect(live.areaRequest()).toMatchObject({ kind: "area", tracks: [0, 1] });
    const offline = new TimelineState(d, false, 1200, 400);
    offline.selectArea([offline.xOf(20), AXIS_H, offline.xOf(38), 400]);
    expect(offline.areaRequest()).toBeNull();
    expect(offline.area.status).toContain("not embedded");
  });
});

describe("area selection, as the review found it", () => {
  it("sums once when the drag ends, never on every move, and not again for an answer", () => {
    const d = data();
    d.lod.mode = "overview";
    d.base.exact = false;
    const s = new TimelineState(d, true, 1200, 400);
    s.selectArea([s.xOf(20), AXIS_H, s.xOf(30), 400], false); // dragging
    expect(s.areaRequest()).toBeNull();
    s.selectArea([s.xOf(20), AXIS_H, s.xOf(38), 400], true); // released
    const request = s.areaRequest()!;
    expect(request.kind).toBe("area");
    expect(s.areaRequest()).toBeNull(); // asked once
    expect(s.area.receive({ kind: "area", id: request.id, events: 0 }, [], s.data.names)).toBe(true);
    expect(s.areaRequest()).toBeNull(); // an empty answer asks nothing more
    expect(s.area.status).toBe("0 events, 0 names");
  });

  it("keeps to the profile, so a full copy covers an area dragged past its ends", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    s.zoom(10, 700); // out to the profile and its margins
    s.selectArea([0, AXIS_H, 5000, 400]);
    expect([s.area.area!.t0, s.area.area!.t1]).toEqual([0, 100]);
    expect(s.areaRequest()).toBeNull();
    expect(s.area.status).toBe("5 events, 5 names");
  });

  it("takes a child from its parent late in a long profile (no epsilon lost in the starts)", () => {
    const d = data();
    const late = 2e7; // 20 s: past 2^24 us, where start + 1e-9 == start
    d.base.start = Float64Array.from(d.base.start, (v) => v + late);
    d.base.start[2] = d.base.start[0]; // C starts with A
    const rows = summarize(d.base, d.segments, d.names, { t0: late, t1: late + 100, tracks: [0] }).rows;
    const a = rows.find((r) => r.name === "A")!;
    expect(a.self).toBe(30 - 10 - 5);
  });

  it("takes only the tracks in sight: not rows scrolled under the pinned ones", () => {
    const s = new TimelineState(data(), false, 1200, AXIS_H + 60);
    s.toggleTrack("pinned", "1");
    s.scrollTo(20); // track 0's first row now lies under the pinned track
    const pinned = s.rows.find((r) => r.pinned)!;
    s.selectArea([s.xOf(20), s.rowTop(pinned) + 2, s.xOf(40), s.rowTop(pinned) + pinned.h - 2]);
    expect(s.area.area!.tracks).toEqual([1]);
  });

  it("forgets the selection, the area and the search with new data", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    s.select(4);
    s.selectArea([s.xOf(20), AXIS_H, s.xOf(38), 400]);
    s.find("A");
    s.setData(data());
    expect([s.selected, s.selection, s.area.area, s.search.query, s.search.hits.length]).toEqual([-1, null, null, "", 0]);
  });
});

describe("tracks", () => {
  it("pins, hides, filters and folds tracks; folds the empty ones and unfolds them", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    s.toggleTrack("pinned", "1");
    expect(s.pinnedH).toBe(ROW + 4);
    expect(s.rows.filter((r) => r.pinned).map((r) => r.track)).toEqual([1]);
    expect(s.rowAt(AXIS_H + 2)?.track).toBe(1);
    s.toggleTrack("pinned", "1");
    s.toggleTrack("hidden", "0");
    expect(s.rows.map((r) => r.kind)).toEqual(["section", "track"]);
    expect(s.tracks.hiddenCount()).toBe(1);
    s.showAllTracks();
    s.filterTracks("PYTHON");
    expect(s.rows.filter((r) => r.kind === "track").map((r) => r.track)).toEqual([1]);
    s.filterTracks("");
    s.setView(50, 100); // track 1's only event is at 30
    expect(s.foldEmpty()).toBe(1);
    expect(s.rows.find((r) => r.track === 1)!.h).toBe(FOLDED);
    expect(s.foldEmpty()).toBe(0);
    expect(s.rows.find((r) => r.track === 1)!.h).toBe(ROW + 4);
  });
});

describe("counter tracks", () => {
  it("come after the device planes, before the host threads, and read their value at a time", () => {
    const s = new TimelineState(data(true), false, 1200, 400);
    expect(s.rows[0]).toMatchObject({ kind: "section", section: "a Counters" }); // (no device here)
    expect(s.rows[1]).toMatchObject({ kind: "counter", track: 0, h: COUNTER_H });
    const c = s.data.counters[0];
    expect(Array.from(c.v)).toEqual([100, 300, 0]);
    expect(valueAt(c, 25)).toBe(300);
    expect(valueAt(c, 20)).toBe(300);
    expect(valueAt(c, -1)).toBeNull();
  });
});

describe("search and clicks", () => {
  it("frames each match (about half the window) and scrolls to its track", () => {
    const s = new TimelineState(data(), false, 1200, AXIS_H + HEADER + 10);
    s.find("E");
    s.gotoMatch(1);
    expect(s.selected).toBe(4);
    expect(s.t0).toBeCloseTo(27.5);
    expect(s.t1).toBeCloseTo(37.5);
    expect(s.scrollY).toBeGreaterThan(0);
  });

  it("a click on merged events selects none and says what they are; empty space clears", () => {
    const s = new TimelineState(data(), false, 1200, 400);
    s.click({ row: 0, start: 10, dur: 80, name: "A", count: 2 });
    expect(s.selected).toBe(-1);
    expect(s.merged?.count).toBe(2);
    s.click({ row: 4, start: 30, dur: 5, name: "E", count: 1 });
    expect(s.selected).toBe(4);
    expect(s.merged).toBeNull();
    s.click(null);
    expect(s.selected).toBe(-1);
    expect(s.selection).toBeNull();
  });
});
