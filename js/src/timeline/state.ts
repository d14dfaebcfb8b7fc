// The trace viewer's state, without the DOM: its view (view.ts: the window, the scroll, the
// tracks, the tiles), the selected event and its links, the area selected and its summary
// (areastate.ts) and the search (search.ts). Every change tells the listeners what changed
// and who changed it; the view (timeline.ts) paints, syncs the model and talks to the kernel
// in answer. Tests and benchmarks read and drive this object (the view's root element holds
// it as `__timeline`).
import { segmentOf, type TimelineData } from "../data";
import { AreaState } from "./areastate";
import { AXIS_H, LABEL_W, ROW } from "./layout";
import { CriticalPath, type CriticalAnswer } from "./critical";
import { Links, rowY, spanning, type LinksAnswer } from "./links";
import { queryOf, Search, type EventInfo, type RowFind, type SearchAnswer, type SearchRequest } from "./search";
import { TimelineView, type Source } from "./view";

export type { EventInfo } from "./search";
export type { Change, Listener, Source } from "./view";

export class TimelineState extends TimelineView {
  selected = -1;
  selection: EventInfo | null = null;
  /** The block of merged events clicked last (no event selected then). */
  merged: EventInfo | null = null;
  /** The events linked to the selection (a launch and its kernels, flows), as answered. */
  readonly links = new Links();
  /** The critical path of a step, as answered, and the step asked for (-1: off). */
  readonly critical = new CriticalPath();
  criticalStep = -1;
  readonly area = new AreaState();
  readonly search = new Search();

  constructor(data: TimelineData, kernel: boolean, width = 900, height = 520) {
    super(data, kernel, width, height);
  }

  /** New data: what was selected, linked, summed and found belongs to the old (its rows and
   * name codes mean other events now). */
  setData(data: TimelineData, source: Source = "model"): void {
    if (this.search) {
      this.selected = -1;
      this.selection = null;
      this.merged = null;
      this.links.clear();
      this.critical.clear();
      this.area.clear();
      this.search.set("", data.names, [], false, false);
      this.hover = null;
      this.scrollY = 0;
    }
    super.setData(data, source);
  }

  /** New data from the model: as setData, then the search in the box (if any) made again on
   * the new data (its rows and names are others), its first match still shown when that was
   * awaited (a table's row shown just before the data came). Returns the request for the
   * kernel. */
  replaceData(data: TimelineData): SearchRequest | null {
    const { query, jump } = this.search;
    this.setData(data);
    if (!query) return null;
    const request = this.find(query);
    if (jump) this.gotoMatch(1);
    return request;
  }

  // ---- selection, area, search --------------------------------------------------------
  /** A click on `hit` (null: empty space, which clears the selection): an event is
   * selected; a block of merged events is not (`merged`: the status says what it holds). */
  click(hit: EventInfo | null): void {
    const merged = hit && (hit.count ?? 1) > 1 ? hit : null;
    this.select(hit && !merged ? hit.row : -1, merged ? null : hit, "user", merged);
  }

  /** Select timeline row `row` (-1: none); `info` when the caller knows the event. */
  select(row: number, info: EventInfo | null = null, source: Source = "user",
    merged: EventInfo | null = null): void {
    this.merged = merged;
    this.selected = row;
    this.selection = row < 0 ? null : info && info.row === row ? info : this.infoOf(row);
    if (row !== this.links.row) this.links.clear();
    this.emit("select", source);
  }

  /** The events linked to the selection, as the kernel (or the offline host) answers. */
  receiveLinks(answer: LinksAnswer | null | undefined): void {
    if (!this.links.take(answer, this.selected)) return;
    if (!this.selection && answer!.event?.row === this.selected) this.selection = answer!.event;
    this.emit("links", "model");
  }

  /** The critical path of step `step` (a row of the step menu; -1: off) is wanted. */
  askCritical(step: number): void {
    this.criticalStep = step;
    if (step !== this.critical.step) this.critical.clear();
    this.emit("critical", "user");
  }

  /** The critical path, as the kernel answers. */
  receiveCritical(answer: CriticalAnswer | null | undefined): void {
    if (this.criticalStep < 0 || !this.critical.take(answer, this.criticalStep)) return;
    this.emit("critical", "model");
  }

  /** Select `p` (an event linked to the selection, or a match): show both, scroll to it. */
  jumpTo(p: EventInfo): void {
    if (this.selection) this.setView(...spanning(this.selection, p));
    this.select(p.row, p);
    this.scrollToRow(p.row);
  }

  /** Scroll so that timeline row `row`'s event is in view (a pinned track always is). */
  scrollToRow(row: number): void {
    const y = rowY(this.data, this, row);
    const seg = segmentOf(this.data.segments, row);
    const track = seg && this.rows.find((r) => r.kind === "track" && r.track === seg.track);
    if (y === null || track?.pinned) return;
    const top = AXIS_H + this.pinnedH;
    if (y < top + ROW / 2 || y > this.height - ROW / 2) this.scrollBy(y - (top + this.viewH() / 2));
  }

  /** Show the selected area, else the selected event with a margin. */
  fitSelection(): void {
    const a = this.area.area;
    if (a) {
      this.setView(a.t0, a.t1);
    } else if (this.selection) {
      const s = this.selection;
      const pad = Math.max(s.dur * 0.1, 0.5);
      this.setView(s.start - pad, s.start + s.dur + pad);
    }
  }

  /** Select the area from canvas (x0, y0) to (x1, y1) (null: none), inside the plot and
   * the profile; `final` when the drag ended (the area is summed then, not on every move). */
  selectArea(box: [number, number, number, number] | null, final = true): void {
    if (!box) {
      this.area.clear();
    } else {
      const [x0, y0, x1, y1] = box;
      const right = LABEL_W + this.plotW();
      const x = (v: number) => Math.min(Math.max(v, LABEL_W), right);
      const t = (v: number) => Math.min(Math.max(this.tOf(x(v)), this.data.t0), this.data.t1);
      const [a, b] = [t(Math.min(x0, x1)), t(Math.max(x0, x1))];
      this.area.set({ t0: a, t1: b, tracks: this.tracks.tracksBetween(this, this.data, y0, y1, this.height) }, final);
    }
    this.emit("area");
  }

  /** Summarise the area from the tiles when one covers it exactly; else the request for the
   * kernel (null: none needed, or no kernel). */
  areaRequest() {
    return this.area.summarise(this.tiles.list, this.data, this.kernel);
  }

  /** Search for `query` (see search.ts): the request for the kernel, which finds the
   * events whenever there is one. */
  find(query: string): SearchRequest | null {
    const overview = this.data.lod.mode !== "full";
    const request = this.search.set(query, this.data.names, this.tiles.list, this.kernel,
      overview && !this.kernel, this.data.longNames);
    this.emit("search");
    return request;
  }

  receiveSearch(msg: SearchAnswer, buffers: unknown[]): void {
    if (!this.search.receive(msg, buffers, this.data.names)) return;
    this.emit("search");
    if (this.search.jump) {
      this.search.jump = false;
      this.gotoMatch(1);
    }
  }

  /** Show a table's row: search its query (queryOf: what the box then says), the first
   * match shown (when the kernel's answer comes, with one); returns the query and the
   * request for the kernel. */
  showRow(find: RowFind): { query: string; request: SearchRequest | null } {
    const query = queryOf(find);
    const request = this.find(query);
    this.gotoMatch(1); // (when the kernel's answer comes, with one)
    return { query, request };
  }

  /** Show and select the next (1) or previous (-1) match: framed (it takes about half the
   * window) and its track scrolled into view. */
  gotoMatch(delta: number): void {
    if (this.search.pending) {
      this.search.jump = true; // (the first match, once the kernel's answer comes)
      return;
    }
    const m = this.search.step(delta);
    this.emit("search");
    if (!m) return;
    const pad = Math.max(m.dur * 0.5, 0.5);
    this.setView(m.start - pad, m.start + m.dur + pad);
    this.select(m.row, m);
    this.scrollToRow(m.row);
  }
}
