import { describe, expect, it } from "vitest";
import { decode, type TimelineData } from "../src/data";
import { axisLabels } from "../src/timeline/decor";
import { AXIS_H, HEADER, LABEL_W, ROW } from "../src/timeline/layout";
import { queryOf, rowQueryValue } from "../src/timeline/search";
import { TimelineState, type Change, type Source } from "../src/timeline/state";
import { ANSWER_TIMEOUT, MAX_TILES } from "../src/timeline/tiles";
import { meta, tileWire, wire } from "./wire";

// Two hosts: track 0 (host a, two depths) and track 1 (host b). Rows in timeline order:
// 0-1 track 0 depth 0, 2 track 0 depth 1, 3 track 1 depth 0.
const NAMES = ["MatMul", "Conv2D", "matmul_grad", "Add"];
const META = {
  names: NAMES,
  tracks: [
    { id: 0, section: "a /host:CPU", host: "a", plane: "/host:CPU", name: "tf_Compute", depths: 2, events: 3 },
    { id: 1, section: "b /host:CPU", host: "b", plane: "/host:CPU", name: "python", depths: 1, events: 1 },
  ],
  segments: [[0, 0, 0, 2], [0, 1, 2, 3], [1, 0, 3, 4]],
  steps: [{ name: "a step 1", start: 0, end: 50, host: "a", step_name: "1" }],
  t0: 0,
  t1: 100,
};
const EVENTS = {
  start: new Float64Array([10, 60, 12, 30]), dur: new Float32Array([20, 30, 5, 10]),
  name: new Uint32Array([0, 1, 2, 3]), off: new Uint32Array([0, 2, 3, 4]),
};

function full(): TimelineData {
  const state: Record<string, unknown> = {
    meta: meta({ ...META, lod: { mode: "full", events: 4 } }),
    tile: tileWire({ t0: 0, t1: 100, exact: true, px_per_us: null }, EVENTS),
  };
  return decode({ get: (k) => state[k] });
}

/** An overview: rows 0-1 merged into one block, rows 2 and 3 alone. */
function overview(): TimelineData {
  const state: Record<string, unknown> = {
    meta: meta({ ...META, lod: { mode: "overview", events: 4 } }),
    tile: tileWire({ t0: 0, t1: 100, exact: false, px_per_us: 5 }, {
      start: new Float64Array([10, 12, 30]), dur: new Float32Array([80, 5, 10]), name: new Uint32Array([0, 2, 3]),
      count: new Uint32Array([2, 1, 1]), row: new Uint32Array([0, 2, 3]), off: new Uint32Array([0, 1, 2, 3]) }),
  };
  return decode({ get: (k) => state[k] });
}

function record(state: TimelineState): [Change, Source][] {
  const seen: [Change, Source][] = [];
  state.onChange((what, source) => seen.push([what, source]));
  return seen;
}

/** y px (canvas) of a depth row of the track row `index` of `state.rows`. */
const yOf = (state: TimelineState, index: number, depth = 0) => AXIS_H + state.rows[index].y + 2 + depth * ROW + ROW / 2;

describe("viewport", () => {
  it("zooms around the cursor, pans by pixels, keeps at least a nanosecond", () => {
    const s = new TimelineState(full(), false, 1200, 400); // 1000 px of plot: 10 px per us
    const seen = record(s);
    const x = s.xOf(40);
    s.zoom(0.5, x);
    expect(s.tOf(x)).toBeCloseTo(40);
    expect(s.t1 - s.t0).toBeCloseTo(50);
    s.pan(100); // 100 px at 20 px per us
    expect(s.t0).toBeCloseTo(20 + 5);
    s.setView(5, 5);
    expect(s.t1 - s.t0).toBeCloseTo(1e-3);
    s.setView(1, 2, "model");
    expect(seen).toEqual([["view", "user"], ["view", "user"], ["view", "user"], ["view", "model"]]);
    expect(s.view()).toEqual([1, 2]);
  });

  it("scrolls within the content and folds sections", () => {
    const s = new TimelineState(full(), false, 900, AXIS_H + 30);
    expect(s.rows.map((r) => r.kind)).toEqual(["section", "track", "section", "track"]);
    expect(s.contentH).toBe(2 * HEADER + (2 * ROW + 4) + (ROW + 4));
    s.scrollBy(1000);
    expect(s.scrollY).toBe(s.contentH - 30);
    s.scrollBy(-5000);
    expect(s.scrollY).toBe(0);
    s.toggleSection("a /host:CPU");
    expect(s.rows.map((r) => r.kind)).toEqual(["section", "section", "track"]);
    expect(s.sectionAt(AXIS_H + HEADER + 1)).toBe("b /host:CPU");
  });
});

describe("selection", () => {
  it("hits the event under the pointer, at its depth, and selects it", () => {
    const s = new TimelineState(full(), false, 1200, 400);
    s.pickTile();
    const hit = s.hit(s.xOf(13), yOf(s, 1, 1));
    expect(hit).toEqual({ row: 2, start: 12, dur: 5, name: "matmul_grad", count: 1 });
    expect(s.hit(s.xOf(45), yOf(s, 1, 0))).toBeNull(); // between two events
    expect(s.hit(LABEL_W - 1, yOf(s, 1, 0))).toBeNull(); // the labels
    const seen = record(s);
    s.select(3);
    expect(s.selection).toEqual({ row: 3, start: 30, dur: 10, name: "Add", count: 1 });
    expect(seen).toEqual([["select", "user"]]);
    s.fitSelection();
    expect(s.view()).toEqual([29, 41]);
  });

  it("knows only the events an overview holds alone", () => {
    const s = new TimelineState(overview(), false);
    expect(s.infoOf(2)?.name).toBe("matmul_grad");
    expect(s.infoOf(1)).toBeNull(); // merged into the first block
    s.select(1);
    expect(s.selected).toBe(1);
    expect(s.selection).toBeNull();
  });
});

describe("tiles and level of detail", () => {
  it("asks the kernel for the view and its margins, once until answered or timed out", () => {
    const s = new TimelineState(overview(), true, 1200, 400);
    s.setView(20, 30); // 100 px per us: the overview (5) is too coarse
    s.pickTile();
    expect(s.sharp()).toBe(false);
    const r = s.detailRequest(0)!;
    expect(r).toMatchObject({ kind: "window", t0: 15, t1: 35, width: 2000 });
    expect(s.detailRequest(1)).toBeNull(); // pending
    expect(s.detailRequest(ANSWER_TIMEOUT + 1)!.id).toBeGreaterThan(r.id); // asked again
    expect(s.notice()).toBe("loading detail…");
  });

  it("takes the answer to the pending request only, and draws from it", () => {
    const s = new TimelineState(overview(), true, 1200, 400);
    s.setView(20, 30);
    const r = s.detailRequest(0)!;
    const answer = tileWire({ t0: 15, t1: 35, exact: true, px_per_us: null }, {
      start: new Float64Array([]), dur: new Float32Array([]), name: new Uint32Array([]),
      count: new Uint32Array([]), row: new Uint32Array([]), off: new Uint32Array([0, 0, 0, 0]) });
    const message = { kind: "window" as const, id: r.id, tile: { ...answer, buffers: undefined } };
    expect(s.receiveWindow({ ...message, id: r.id + 100 }, answer.buffers, 5)).toBe(false);
    expect(s.receiveWindow(message, answer.buffers, 7)).toBe(true);
    expect(s.tiles.roundTrips).toEqual([7]);
    expect(s.pickTile()).toBe(s.tiles.list[1]);
    expect(s.sharp()).toBe(true);
    expect(s.detailRequest(8)).toBeNull();
    expect(s.notice()).toBe("");
  });

  it("says what went wrong, keeps the first tile, and never asks without a kernel", () => {
    const s = new TimelineState(overview(), true, 1200, 400);
    s.setView(20, 30);
    let r = s.detailRequest(0)!;
    s.receiveWindow({ kind: "window", id: r.id, error: "bad window" }, [], 1);
    expect(s.notice()).toContain("bad window");
    r = s.detailRequest(2)!;
    s.expireWindow(r.id);
    expect(s.notice()).toContain("No answer from the kernel");
    for (let k = 0; k < MAX_TILES + 3; k++) {
      s.setView(5 + 8 * k, 6 + 8 * k); // views no answer covers yet
      const q = s.detailRequest(10 + k)!;
      const w = tileWire({ t0: q.t0, t1: q.t1, exact: true, px_per_us: null }, {
        start: new Float64Array([]), dur: new Float32Array([]), name: new Uint32Array([]),
        off: new Uint32Array([0, 0, 0, 0]) });
      s.receiveWindow({ kind: "window", id: q.id, tile: w }, w.buffers, 20 + k);
    }
    expect(s.tiles.list).toHaveLength(MAX_TILES + 1);
    expect(s.tiles.list[0]).toBe(s.data.base);
    const offline = new TimelineState(overview(), false, 1200, 400);
    offline.setView(20, 30);
    offline.pickTile();
    expect(offline.detailRequest(0)).toBeNull();
    expect(offline.notice()).toContain("needs a live kernel");
    expect(new TimelineState(full(), true).detailRequest(0)).toBeNull(); // every event is here
  });
});

describe("search", () => {
  it("finds every event of a full profile by start and steps through them", () => {
    const s = new TimelineState(full(), false, 1200, 400);
    expect(s.find("MATMUL")).toBeNull();
    expect(s.search.hits.map((h) => h.row)).toEqual([0, 2]);
    expect(s.search.status).toBe("2 found");
    s.gotoMatch(1);
    expect(s.selected).toBe(0);
    expect(s.t0).toBeLessThan(10);
    expect(s.t1).toBeGreaterThan(30);
    s.gotoMatch(1);
    s.gotoMatch(1);
    expect(s.selected).toBe(0); // cycles
    expect(s.search.status).toBe("1 / 2");
  });

  it("asks the kernel for an overview's matches and reads its typed answer", () => {
    const s = new TimelineState(overview(), true);
    const q = s.find("matmul")!;
    expect(q).toMatchObject({ kind: "search", query: "matmul" });
    expect(s.search.status).toBe("searching…");
    const hits = wire({ start: new Float64Array([10, 12]), dur: new Float32Array([20, 5]),
      row: new Uint32Array([0, 2]), name: new Uint32Array([0, 2]) });
    s.receiveSearch({ kind: "search", id: q.id + 1, total: 9, shown: 2, hits: { schema: hits.schema } }, hits.buffers);
    expect(s.search.hits).toEqual([]); // an answer to an older search
    s.receiveSearch({ kind: "search", id: q.id, total: 9, shown: 2, hits: { schema: hits.schema } }, hits.buffers);
    expect(s.search.hits.map((h) => h.name)).toEqual(["MatMul", "matmul_grad"]);
    expect(s.search.status).toBe("9 found (first 2)");
    const offline = new TimelineState(overview(), false);
    expect(offline.find("matmul")).toBeNull();
    expect(offline.search.status).toBe("1 found in the embedded detail"); // row 2 only: 0 is merged
  });

  it("asks the kernel whenever there is one, the first match shown when Enter came before it", () => {
    const s = new TimelineState(full(), true, 1200, 400); // every event here: the kernel still finds
    const q = s.find("dot_general")!; // (no name has it: the kernel finds events by their stats)
    expect(q).toMatchObject({ kind: "search", query: "dot_general" });
    s.gotoMatch(1); // Enter before the answer
    expect(s.selected).toBe(-1);
    const hits = wire({ start: new Float64Array([30]), dur: new Float32Array([10]),
      row: new Uint32Array([3]), name: new Uint32Array([3]) });
    s.receiveSearch({ kind: "search", id: q.id, total: 1, shown: 1, hits: { schema: hits.schema } }, hits.buffers);
    expect(s.search.status).toBe("1 / 1");
    expect(s.selected).toBe(3);
    expect(s.search.marks(3, 3)).toBe(true); // found: highlighted, whatever its name
    expect(s.search.marks(0, 0)).toBe(false);
  });

  it("searches a table's row again when new data comes before the kernel's answer", () => {
    // (a dashboard's trace tab built by the kernel: the view is drawn and shows the row, then
    // the tab's data arrives; the answer to the first request names rows of the old data)
    const s = new TimelineState(full(), true, 1200, 400);
    const first = s.showRow({ table: "kernels", key: { kernel_name: "MatMul" } }).request!;
    const again = s.replaceData(full())!;
    expect(again).toMatchObject({ kind: "search", query: "kernel: MatMul" });
    expect(again.id).not.toBe(first.id);
    const hits = wire({ start: new Float64Array([30]), dur: new Float32Array([10]),
      row: new Uint32Array([3]), name: new Uint32Array([3]) });
    s.receiveSearch({ kind: "search", id: first.id, total: 1, shown: 1, hits: { schema: hits.schema } }, hits.buffers);
    expect([s.search.status, s.selected]).toEqual(["finding its events…", -1]); // left behind
    s.receiveSearch({ kind: "search", id: again.id, total: 1, shown: 1, hits: { schema: hits.schema } }, hits.buffers);
    expect([s.search.status, s.selected]).toEqual(["1 / 1", 3]);
    const cleared = new TimelineState(full(), true, 1200, 400);
    const old = cleared.find("matmul")!;
    cleared.find(""); // the box emptied: the answer to the old query is not taken
    cleared.receiveSearch({ kind: "search", id: old.id, total: 1, shown: 1, hits: { schema: hits.schema } }, hits.buffers);
    expect([cleared.search.status, cleared.search.hits.length]).toEqual(["", 0]);
    expect(new TimelineState(full(), true).replaceData(full())).toBeNull(); // no search: none asked
  });

  it("searches a table's row as the query a click writes, typed or clicked alike", () => {
    const row = { table: "kernels", key: { kernel_name: "Add" } };
    expect(queryOf(row)).toBe("kernel: Add");
    expect(queryOf({ table: "hlo", key: { hlo_op_name: "fusion.3", program_id: 11964 } })).toBe("hlo op: fusion.3 in program 11964");
    expect(queryOf({ table: "hlo", key: { hlo_op_name: "fusion.3", program_id: null } })).toBe("hlo op: fusion.3");
    expect(queryOf({ table: "ops", key: { operation: "jit(f)/dot_general", host_or_device: "Device" } }))
      .toBe("device op: jit(f)/dot_general");
    expect(queryOf({ table: "ops", key: { operation: "MatMul", host_or_device: "Host" } })).toBe("host op: MatMul");
    expect(rowQueryValue("hlo op: fusion.3 in program 7")).toBe("fusion.3");
    expect(rowQueryValue("matmul")).toBeNull();
    const clicked = new TimelineState(full(), true);
    const { query, request } = clicked.showRow(row);
    const typed = new TimelineState(full(), true);
    expect(typed.find(query)).toEqual(request); // the same request: the same events
    expect(clicked.search.status).toBe("finding its events…");
    expect(clicked.search.marks(0, 0)).toBe(false); // not by name: only the events found
    const offline = new TimelineState(full(), false); // no kernel: the row's name searched
    expect(offline.showRow(row).request).toBeNull();
    expect(offline.selected).toBe(3);
    expect(offline.search.status).toBe("1 / 1");
  });
});


describe("keys, tooltip and axis", () => {
  it("zooms with W/S at the pointer over the tracks, else at the middle", () => {
    const s = new TimelineState(full(), false, 1200, 400);
    const middle = LABEL_W + s.plotW() / 2;
    expect(s.keyZoomX()).toBe(middle); // no pointer
    s.pointer = [LABEL_W + 100, AXIS_H + 30];
    expect(s.keyZoomX()).toBe(LABEL_W + 100);
    const t = s.tOf(LABEL_W + 100);
    s.zoom(0.8, s.keyZoomX());
    expect(s.tOf(LABEL_W + 100)).toBeCloseTo(t, 9); // the time under the pointer stays
    expect(s.t1 - s.t0).toBeCloseTo(80, 9);
    for (const p of [[LABEL_W - 5, AXIS_H + 30], [LABEL_W + 100, AXIS_H - 2], [LABEL_W + s.plotW() + 1, 100]]) {
      s.pointer = p as [number, number]; // the labels, the axis, the scrollbar: not the tracks
      expect(s.keyZoomX()).toBe(middle);
    }
  });

  it("forgets the hovered event when the window changes", () => {
    const s = new TimelineState(full(), false, 1200, 400);
    const seen = record(s);
    s.setHover({ row: 0, start: 10, dur: 20, name: "MatMul" });
    s.setView(0, 50); // a step chosen, reset, a match framed: all set the view
    expect(s.hover).toBeNull();
    expect(seen.slice(-2).map(([w]) => w)).toEqual(["view", "hover"]);
  });

  it("keeps the axis labels inside the plot, the last one too", () => {
    const measure = (t: string) => 7 * t.length;
    const [left, right] = [LABEL_W, LABEL_W + 1000];
    for (const [t0, t1] of [[0, 100], [3, 97.5], [0, 1e6], [12.345, 12.346], [-5, 1234567]]) {
      const xOf = (t: number) => left + ((t - t0) / (t1 - t0)) * 1000;
      const labels = axisLabels(t0, t1, xOf, left, right, measure);
      expect(labels.length).toBeGreaterThan(2);
      for (const [i, l] of labels.entries()) {
        expect(l.textX).toBeGreaterThanOrEqual(left);
        expect(l.textX + measure(l.text)).toBeLessThanOrEqual(right);
        if (i) expect(l.textX).toBeGreaterThan(labels[i - 1].textX + measure(labels[i - 1].text));
      }
    }
    const all = axisLabels(0, 100, (t) => left + t * 10, left, right, measure);
    const last = all[all.length - 1];
    expect(last.text).toBe("100.000 us");
    expect(last.textX + measure(last.text)).toBeLessThanOrEqual(right); // was drawn from x + 2: clipped
  });
});
