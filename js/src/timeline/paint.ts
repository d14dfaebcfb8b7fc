// Painting the trace viewer's state on its canvas: the scrolled rows, then the pinned rows
// over them (section headers, track labels, the blocks of each (track, depth) segment in view
// (lod.ts), counter tracks (counters.ts)), the search's highlights, the selection and its
// links, the area selected, the time axis and the notice. Names only ever reach the page as
// canvas text.
import { colorOf, single, type Tile } from "../data";
import { makeBlocks, visibleBlocks } from "../lod";
import { paintLinks } from "./arrows";
import { paintCritical } from "./critical";
import { paintCounter } from "./counters";
import { paintArea, paintAxis, paintNotice } from "./decor";
import { AXIS_H, LABEL_W, ROW, type Row } from "./layout";
import { type TimelineState } from "./state";
import { type Theme } from "./theme";

export class Painter {
  private blocks = makeBlocks(4096);
  private fitted = new Map<string, string>();
  private visited = 0;
  private drawn = 0;

  constructor(private ctx: CanvasRenderingContext2D, private theme: Theme) {}

  /** Draw `state` as it is now; records the frame's statistics in `state.frame`. */
  paint(state: TimelineState): void {
    const started = performance.now();
    const { ctx, theme } = this;
    const tile = state.pickTile();
    this.visited = 0;
    this.drawn = 0;
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, state.width, state.height);
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    const body = AXIS_H + state.pinnedH;
    this.region(state, tile, false, body, state.height - body);
    if (state.pinnedH) {
      this.region(state, tile, true, AXIS_H, state.pinnedH);
      ctx.fillStyle = theme.grid;
      ctx.fillRect(0, body - 1, state.width, 1);
    }
    const critical = paintCritical(ctx, state, theme.dark);
    const arrows = paintLinks(ctx, state, theme.dark);
    paintArea(ctx, state, theme);
    paintAxis(ctx, state, theme);
    paintNotice(ctx, state, theme, state.notice());
    Object.assign(state.frame, { count: state.frame.count + 1, ms: performance.now() - started,
      visited: this.visited, drawn: this.drawn, arrows, critical });
  }

  /** The rows of one region (pinned or scrolled), clipped to it. */
  private region(state: TimelineState, tile: Tile, pinned: boolean, top: number, h: number): void {
    const { ctx } = this;
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, top, state.width, h);
    ctx.clip();
    ctx.fillStyle = this.theme.bg;
    ctx.fillRect(0, top, state.width, h);
    for (const r of state.rows) {
      if (r.pinned !== pinned) continue;
      const y = state.rowTop(r);
      if (y > top + h || y + r.h < top) continue;
      if (r.kind === "section") this.section(state, r, y);
      else if (r.kind === "counter") this.counter(state, r, y);
      else this.track(state, tile, r, y);
    }
    ctx.restore();
  }

  private section(state: TimelineState, r: Row, y: number): void {
    const { ctx, theme } = this;
    ctx.fillStyle = theme.dark ? "#2c2c2c" : "#eef1f5";
    ctx.fillRect(0, y, state.width, r.h);
    ctx.fillStyle = theme.fg;
    ctx.fillText(`${state.collapsed.has(r.section) ? "▸" : "▾"} ${r.section}`, 4, y + r.h / 2);
  }

  /** A row's label (with the pin mark), its bottom line, and the plot clipped to it. */
  private label(state: TimelineState, r: Row, y: number, name: string): void {
    const { ctx, theme } = this;
    ctx.fillStyle = theme.fg;
    ctx.globalAlpha = r.folded ? 0.6 : 1;
    ctx.font = r.folded ? "9px sans-serif" : "11px sans-serif";
    const mark = r.pinned ? "📌 " : "";
    ctx.fillText(this.fit(mark + name, LABEL_W - 20), 14, y + Math.min(ROW, r.h) / 2);
    ctx.globalAlpha = 1;
    ctx.font = "11px sans-serif";
    ctx.strokeStyle = theme.grid;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(0, y + r.h - 0.5);
    ctx.lineTo(state.width, y + r.h - 0.5);
    ctx.stroke();
  }

  private counter(state: TimelineState, r: Row, y: number): void {
    const c = state.data.counters[r.track];
    this.label(state, r, y, `${c.name}`);
    if (r.folded) return;
    this.ctx.save();
    this.ctx.beginPath();
    this.ctx.rect(LABEL_W, y, state.plotW(), r.h);
    this.ctx.clip();
    paintCounter(this.ctx, state, c, y, r.h, this.theme.dark);
    this.ctx.restore();
  }

  /** A track's label, its grid line and its blocks. */
  private track(state: TimelineState, tile: Tile, r: Row, y: number): void {
    const { ctx } = this;
    this.label(state, r, y, state.data.tracks[r.track].name);
    if (r.folded) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, y, state.plotW(), r.h);
    ctx.clip();
    const ppu = state.pxPerUs();
    for (const seg of state.segments.get(r.track) ?? []) {
      const b = this.blocks;
      this.visited += visibleBlocks(tile.start, tile.dur, tile.off[seg.s], tile.off[seg.s + 1], state.t0, state.t1, ppu, b);
      const yy = y + 2 + seg.depth * ROW;
      for (let k = 0; k < b.n; k++) this.block(state, tile, b.first[k], b.count[k] === 1, LABEL_W + b.x[k], b.w[k], yy);
      this.drawn += b.n;
    }
    ctx.restore();
  }

  /** Block `i` of `tile` at x, w px on the depth row at yy; `alone`: not merged on screen. */
  private block(state: TimelineState, tile: Tile, i: number, alone: boolean, x: number, w: number, yy: number): void {
    const { ctx, theme } = this;
    const one = alone && single(tile, i);
    const name = state.data.names[tile.name[i]] ?? "";
    ctx.fillStyle = colorOf(name, theme.dark);
    ctx.fillRect(x, yy, w, ROW - 2);
    if (state.search.marks(tile.row ? tile.row[i] : i, tile.name[i])) {
      ctx.strokeStyle = theme.dark ? "#ffeb3b" : "#d50000";
      ctx.lineWidth = 2;
      ctx.strokeRect(x + 1, yy + 1, Math.max(w - 2, 1), ROW - 4);
    }
    if (one && (tile.row ? tile.row[i] : i) === state.selected) {
      ctx.strokeStyle = theme.fg;
      ctx.lineWidth = 3;
      ctx.strokeRect(x, yy, Math.max(w, 2), ROW - 2);
    }
    if (w > 40 && one) {
      ctx.fillStyle = theme.dark ? "#fff" : "#111";
      const left = Math.max(x, LABEL_W) + 3;
      const room = Math.min(x + w, LABEL_W + state.plotW()) - left - 3;
      if (room > 20) ctx.fillText(this.fit(name, room), left, yy + (ROW - 2) / 2);
    }
  }

  /** `text` cut (with an ellipsis) to `room` px; remembered per text and 8 px of room. */
  private fit(text: string, room: number): string {
    const key = `${text}|${Math.floor(room / 8)}|${this.ctx.font}`;
    const hit = this.fitted.get(key);
    if (hit !== undefined) return hit;
    let out = text;
    if (this.ctx.measureText(out).width > room) {
      let lo = 0;
      let hi = text.length;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (this.ctx.measureText(text.slice(0, mid) + "…").width <= room) lo = mid;
        else hi = mid - 1;
      }
      out = lo > 0 ? text.slice(0, lo) + "…" : "";
    }
    if (this.fitted.size > 5000) this.fitted.clear();
    this.fitted.set(key, out);
    return out;
  }
}
