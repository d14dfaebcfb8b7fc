// The trace viewer's state, without the DOM: the time window shown and the scroll, the rows
// (sections and tracks, some collapsed), the selected event, the tiles (tiles.ts) and the
// search (search.ts). Every change tells the listeners what changed and who changed it; the
// view (timeline.ts) paints, syncs the model and talks to the kernel in answer. Tests and
// benchmarks read and drive this object (the view's root element holds it as `__timeline`).
import { type Tile, type TimelineData } from "../data";
import { AXIS_H, blockAt, eventOf, LABEL_W, layoutRows, sectionAt, segmentsByTrack, type Row } from "./layout";
import { Links, rowY, scrollShowing, spanning, type LinksAnswer } from "./links";
import { type FrameStats } from "./paint";
import { Search, type EventInfo, type SearchAnswer, type SearchRequest } from "./search";
import { missingDetail, sharpEnough, TileStore, type WindowAnswer, type WindowRequest } from "./tiles";

export type { EventInfo } from "./search";
const MIN_SPAN = 1e-3; // us: 1 ns

export type Change = "data" | "view" | "scroll" | "layout" | "select" | "links" | "measure" | "tiles" | "search";
/** Who made a change: the user (sync it to the model) or the model (do not echo it). */
export type Source = "user" | "model";
export type Listener = (what: Change, source: Source) => void;

export class TimelineState {
  data!: TimelineData;
  t0 = 0;
  t1 = 1;
  scrollY = 0;
  rows: Row[] = [];
  contentH = 0;
  readonly collapsed = new Set<string>();
  /** Segments of each track: depth and index into the tiles' segment offsets. */
  segments = new Map<number, { depth: number; s: number }[]>();
  selected = -1;
  selection: EventInfo | null = null;
  /** The events linked to the selection (a launch and its kernels), as answered. */
  readonly links = new Links();
  measure: [number, number] | null = null;
  tiles!: TileStore;
  /** The tile drawn last (what a click hits). */
  current!: Tile;
  readonly search = new Search();
  readonly frame: FrameStats = { count: 0, ms: 0, visited: 0, drawn: 0, arrows: 0 };
  private listeners: Listener[] = [];

  constructor(data: TimelineData, readonly kernel: boolean, public width = 900, public height = 520) {
    this.setData(data, "model");
  }

  onChange(fn: Listener): () => void {
    this.listeners.push(fn);
    return () => { this.listeners = this.listeners.filter((f) => f !== fn); };
  }

  private emit(what: Change, source: Source = "user"): void {
    for (const f of this.listeners) f(what, source);
  }

  /** New data (the first state): every tile, the rows, the whole profile in view. */
  setData(data: TimelineData, source: Source = "model"): void {
    this.data = data;
    this.segments = segmentsByTrack(data.segments);
    this.tiles = new TileStore(data.base, data.extra);
    this.current = data.base;
    this.t0 = data.t0;
    this.t1 = data.t1;
    this.layout();
    this.emit("data", source);
  }

  /** The rows: a header per section (host and plane), then its tracks unless collapsed. */
  layout(): void {
    const { rows, height } = layoutRows(this.data.tracks, this.collapsed);
    this.rows = rows;
    this.contentH = height;
  }

  toggleSection(section: string): void {
    if (this.collapsed.has(section)) this.collapsed.delete(section);
    else this.collapsed.add(section);
    this.layout();
    this.scrollBy(0);
    this.emit("layout");
  }

  // ---- the window shown ---------------------------------------------------------------
  plotW(): number { return this.width - LABEL_W; }

  pxPerUs(): number { return this.plotW() / Math.max(this.t1 - this.t0, 1e-9); }

  xOf(t: number): number { return LABEL_W + (t - this.t0) * this.pxPerUs(); }

  tOf(x: number): number { return this.t0 + (x - LABEL_W) / this.pxPerUs(); }

  view(): [number, number] { return [this.t0, this.t1]; }

  /** Show [a, b] (at least 1 ns wide). */
  setView(a: number, b: number, source: Source = "user"): void {
    if (b - a < MIN_SPAN) {
      const c = (a + b) / 2;
      a = c - MIN_SPAN / 2;
      b = c + MIN_SPAN / 2;
    }
    this.t0 = a;
    this.t1 = b;
    this.emit("view", source);
  }

  /** Zoom by `factor` (< 1: in) keeping the time under `atX` (px) in place. */
  zoom(factor: number, atX: number): void {
    const t = this.tOf(atX);
    this.setView(t - (t - this.t0) * factor, t + (this.t1 - t) * factor);
  }

  pan(dxPx: number): void {
    const dt = dxPx / this.pxPerUs();
    this.setView(this.t0 + dt, this.t1 + dt);
  }

  scrollTo(y: number): void {
    this.scrollY = Math.max(0, Math.min(y, Math.max(0, this.contentH - (this.height - AXIS_H))));
    this.emit("scroll");
  }

  scrollBy(dy: number): void {
    this.scrollTo(this.scrollY + dy);
  }

  resize(width: number, height = this.height): void {
    this.width = width;
    this.height = height;
    this.emit("layout");
  }

  // ---- level of detail ----------------------------------------------------------------
  /** The tile to draw now (remembered as `current`). */
  pickTile(): Tile {
    this.current = this.tiles.best(this.t0, this.t1);
    return this.current;
  }

  /** Whether the tile drawn last shows the view as finely as the profile allows. */
  sharp(): boolean { return sharpEnough(this.current, this.pxPerUs()); }

  /** Whether the kernel may have detail this view lacks (an overview, a kernel at hand). */
  wantsDetail(): boolean { return this.data.lod.mode !== "full" && this.kernel; }

  /** The window to ask the kernel for now (null: none needed, or no kernel). */
  detailRequest(now: number): WindowRequest | null {
    return this.wantsDetail() ? this.tiles.request(this.t0, this.t1, this.plotW(), now) : null;
  }

  receiveWindow(msg: WindowAnswer, buffers: unknown[], now: number): boolean {
    const taken = this.tiles.receive(msg, buffers, now);
    if (taken) this.emit("tiles");
    return taken;
  }

  expireWindow(id: number): void {
    if (this.tiles.expire(id)) this.emit("tiles");
  }

  /** What is said on the canvas: the kernel's word, else where detail is missing. */
  notice(): string {
    return this.tiles.notice || (sharpEnough(this.current, this.pxPerUs()) ? "" :
      missingDetail(this.kernel, this.data.extra[0]));
  }

  // ---- what is where ------------------------------------------------------------------
  /** The event (or merged block) drawn at (x, y) px of the canvas, null when none. */
  hit(x: number, y: number): EventInfo | null {
    return blockAt({ rows: this.rows, segments: this.segments, tile: this.current, names: this.data.names,
      scrollY: this.scrollY, tOf: (v) => this.tOf(v), pxPerUs: () => this.pxPerUs() }, x, y);
  }

  /** The section whose header is at y px, null when none. */
  sectionAt(y: number): string | null {
    return sectionAt(this.rows, this.scrollY, y);
  }

  /** What the loaded tiles know of timeline row `row` (null when none holds it alone). */
  infoOf(row: number): EventInfo | null {
    return eventOf([this.current, ...this.tiles.list], row, this.data.names);
  }

  // ---- selection, measure, search -----------------------------------------------------
  /** Select timeline row `row` (-1: none); `info` when the caller knows the event. */
  select(row: number, info: EventInfo | null = null, source: Source = "user"): void {
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

  /** Select `p` (an event linked to the selection): show both, scroll to its track. */
  jumpTo(p: EventInfo): void {
    if (this.selection) this.setView(...spanning(this.selection, p));
    this.select(p.row, p);
    const y = rowY(this.data, this.rows, p.row);
    if (y !== null) this.scrollTo(scrollShowing(y, this.scrollY, this.height - AXIS_H));
  }

  /** Show the measured range, else the selected event with a margin. */
  fitSelection(): void {
    if (this.measure) {
      const [a, b] = this.measure;
      this.setView(Math.min(a, b), Math.max(a, b));
    } else if (this.selection) {
      const s = this.selection;
      const pad = Math.max(s.dur * 0.1, 0.5);
      this.setView(s.start - pad, s.start + s.dur + pad);
    }
  }

  setMeasure(range: [number, number] | null): void {
    this.measure = range;
    this.emit("measure");
  }

  /** Search names for `query`: the request for the kernel when it finds the events. */
  find(query: string): SearchRequest | null {
    const overview = this.data.lod.mode !== "full";
    const request = this.search.set(query, this.data.names, this.tiles.list, overview && this.kernel,
      overview && !this.kernel);
    this.emit("search");
    return request;
  }

  receiveSearch(msg: SearchAnswer, buffers: unknown[]): void {
    if (this.search.receive(msg, buffers, this.data.names)) this.emit("search");
  }

  /** Show and select the next (1) or previous (-1) match. */
  gotoMatch(delta: number): void {
    const m = this.search.step(delta);
    this.emit("search");
    if (!m) return;
    const pad = Math.max(m.dur * 2, (this.t1 - this.t0) * 0.02, 1);
    this.setView(m.start - pad, m.start + m.dur + pad);
    this.select(m.row, m);
  }
}
