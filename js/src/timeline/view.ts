// The trace viewer's view of its data, without the DOM: the time window shown (clamped to the
// profile) and the scroll, the tracks as arranged (tracks.ts), the tiles (tiles.ts) and what
// is where. state.ts adds the selection, the area and the search. Every change tells the
// listeners what changed and who changed it.
import { type Tile, type TimelineData } from "../data";
import { AXIS_H, blockAt, eventOf, LABEL_W, rowAt, rowTop, SCROLLBAR_W, segmentsByTrack, type Row } from "./layout";
import { type EventInfo } from "./search";
import { missingDetail, sharpEnough, TileStore, type WindowAnswer, type WindowRequest } from "./tiles";
import { Tracks, type Choice } from "./tracks";

const MIN_SPAN = 1e-3; // us: 1 ns
const MARGIN = 0.02; // the view may reach this share of the profile past either end

export type Change = "data" | "view" | "scroll" | "layout" | "select" | "links" | "critical" | "area" | "tiles" | "search" | "hover";
/** Who made a change: the user (sync it to the model) or the model (do not echo it). */
export type Source = "user" | "model";
export type Listener = (what: Change, source: Source) => void;

/** Frame statistics the painter records: frames drawn, and the last one's time and size. */
export interface FrameStats {
  count: number;
  ms: number;
  visited: number;
  drawn: number;
  arrows: number; // links of the selection drawn
  critical?: number; // arrows of the critical path drawn
}

export class TimelineView {
  data!: TimelineData;
  t0 = 0;
  t1 = 1;
  scrollY = 0;
  readonly tracks = new Tracks();
  /** Segments of each track: depth and index into the tiles' segment offsets. */
  segments = new Map<number, { depth: number; s: number }[]>();
  /** The event (or merged block) under the pointer, for the tooltip. */
  hover: EventInfo | null = null;
  /** Where the pointer is over the canvas, px (null: elsewhere). */
  pointer: [number, number] | null = null;
  tiles!: TileStore;
  /** The tile drawn last (what a click hits). */
  current!: Tile;
  readonly frame: FrameStats = { count: 0, ms: 0, visited: 0, drawn: 0, arrows: 0 };
  private listeners: Listener[] = [];

  constructor(data: TimelineData, readonly kernel: boolean, public width = 900, public height = 520) {
    this.setData(data, "model");
  }

  onChange(fn: Listener): () => void {
    this.listeners.push(fn);
    return () => { this.listeners = this.listeners.filter((f) => f !== fn); };
  }

  emit(what: Change, source: Source = "user"): void {
    for (const f of this.listeners) f(what, source);
  }

  get rows(): Row[] { return this.tracks.rows; }
  get contentH(): number { return this.tracks.height; }
  get pinnedH(): number { return this.tracks.pinnedH; }
  get collapsed(): Set<string> { return this.tracks.choices.collapsed; }

  /** New data (the first state): every tile, the rows, the whole profile in view. */
  setData(data: TimelineData, source: Source = "model"): void {
    this.data = data;
    this.segments = segmentsByTrack(data.segments);
    this.tiles = new TileStore(data.base, data.extra);
    this.current = data.base;
    this.t0 = data.t0;
    this.t1 = data.t1;
    this.tracks.layout(data);
    this.emit("data", source);
  }

  /** Lay the rows out again after a change of the tracks' arrangement. */
  relayout(): void {
    this.tracks.layout(this.data);
    this.scrollBy(0);
    this.emit("layout");
  }

  toggleSection(section: string): void {
    this.tracks.toggleSection(section);
    this.relayout();
  }

  toggleTrack(choice: Choice, key: string): void {
    this.tracks.toggle(choice, key);
    this.relayout();
  }

  filterTracks(query: string): void {
    this.tracks.setFilter(query);
    this.relayout();
  }

  /** Fold the tracks with nothing in the window (again: unfold them); how many are folded. */
  foldEmpty(): number {
    const n = this.tracks.foldEmpty(this.data, this.current, this.t0, this.t1);
    this.relayout();
    return n;
  }

  showAllTracks(): void {
    this.tracks.showAll();
    this.relayout();
  }

  // ---- the window shown ---------------------------------------------------------------
  plotW(): number { return this.width - LABEL_W - SCROLLBAR_W; }

  /** The plot's height under the axis and the pinned rows: what scrolls. */
  viewH(): number { return Math.max(0, this.height - AXIS_H - this.pinnedH); }

  pxPerUs(): number { return this.plotW() / Math.max(this.t1 - this.t0, 1e-9); }

  xOf(t: number): number { return LABEL_W + (t - this.t0) * this.pxPerUs(); }

  tOf(x: number): number { return this.t0 + (x - LABEL_W) / this.pxPerUs(); }

  view(): [number, number] { return [this.t0, this.t1]; }

  /** Show [a, b]: at least 1 ns wide, at most the profile and a margin, inside them. */
  setView(a: number, b: number, source: Source = "user"): void {
    const margin = Math.max((this.data.t1 - this.data.t0) * MARGIN, 1);
    const lo = this.data.t0 - margin;
    const hi = this.data.t1 + margin;
    let span = Math.min(Math.max(b - a, MIN_SPAN), hi - lo);
    if (!(span > 0)) span = MIN_SPAN;
    if (span === b - a && a >= lo && b <= hi) {
      [this.t0, this.t1] = [a, b]; // (as asked, to the last bit: tiles are chosen by their ends)
    } else {
      const start = Math.min(Math.max((a + b) / 2 - span / 2, lo), hi - span);
      [this.t0, this.t1] = [start, start + span];
    }
    this.emit("view", source);
    this.setHover(null); // what was under the pointer has moved: no stale tooltip
  }

  /** Zoom by `factor` (< 1: in) keeping the time under `atX` (px) in place. */
  zoom(factor: number, atX: number): void {
    const t = this.tOf(atX);
    this.setView(t - (t - this.t0) * factor, t + (this.t1 - t) * factor);
  }

  /** Where the keys zoom (W/S), px: at the pointer when it is over the tracks, else the
   * middle of the plot. */
  keyZoomX(): number {
    const p = this.pointer;
    const over = p && p[0] >= LABEL_W && p[0] < LABEL_W + this.plotW() && p[1] >= AXIS_H && p[1] < this.height;
    return over ? p[0] : LABEL_W + this.plotW() / 2;
  }

  pan(dxPx: number): void {
    const dt = dxPx / this.pxPerUs();
    this.setView(this.t0 + dt, this.t1 + dt);
  }

  scrollTo(y: number): void {
    this.scrollY = Math.max(0, Math.min(y, Math.max(0, this.contentH - this.viewH())));
    this.emit("scroll");
  }

  scrollBy(dy: number): void {
    this.scrollTo(this.scrollY + dy);
  }

  /** Whether the rows can scroll further by `dy` (the page scrolls once they cannot). */
  canScroll(dy: number): boolean {
    return dy < 0 ? this.scrollY > 0 : this.scrollY < this.contentH - this.viewH() - 0.5;
  }

  resize(width: number, height = this.height): void {
    this.width = width;
    this.height = height;
    this.scrollBy(0);
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
    if (x >= LABEL_W + this.plotW()) return null; // (the scrollbar's column)
    return blockAt({ rows: this.rows, pinnedH: this.pinnedH, scrollY: this.scrollY, segments: this.segments,
      tile: this.current, names: this.data.names, tOf: (v) => this.tOf(v), pxPerUs: () => this.pxPerUs() }, x, y);
  }

  /** The row at canvas y (null: none). */
  rowAt(y: number): Row | null { return rowAt(this, y); }

  /** The section whose header is at y px, null when none. */
  sectionAt(y: number): string | null {
    const r = this.rowAt(y);
    return r && r.kind === "section" ? r.section : null;
  }

  /** Canvas y of the top of row `r`. */
  rowTop(r: Row): number { return rowTop(this, r); }

  /** What the loaded tiles know of timeline row `row` (null when none holds it alone). */
  infoOf(row: number): EventInfo | null {
    return eventOf([this.current, ...this.tiles.list], row, this.data.names);
  }

  setHover(info: EventInfo | null): void {
    if (info?.row === this.hover?.row && info?.start === this.hover?.start) return;
    this.hover = info;
    this.emit("hover");
  }
}
