// Painting the trace viewer's state on its canvas: section headers, track labels, the blocks
// of each (track, depth) segment that are in view (lod.ts), the search's highlights, the
// selection, the time axis, the measured range and the notice. Names only ever reach the
// page as canvas text.
import { colorOf, single, type Tile } from "../data";
import { makeBlocks, visibleBlocks } from "../lod";
import { paintLinks } from "./arrows";
import { AXIS_H, fmtTime, LABEL_W, ROW, type Row } from "./layout";
import { type TimelineState } from "./state";

/** Frame statistics the painter records: frames drawn, and the last one's time and size. */
export interface FrameStats {
  count: number;
  ms: number;
  visited: number;
  drawn: number;
  arrows: number; // links of the selection drawn
}

export interface Theme {
  dark: boolean;
  fg: string;
  grid: string;
  bg: string;
}

/** The theme of the page around `el`: JupyterLab's variables, the report's, else the
 * browser's colour scheme. */
export function themeOf(el: HTMLElement): Theme {
  const bg = getComputedStyle(el).getPropertyValue("--jp-layout-color0").trim();
  const m = bg.match(/#([0-9a-f]{6})/i);
  let dark: boolean;
  if (m) {
    const v = parseInt(m[1], 16);
    dark = 0.2126 * ((v >> 16) & 255) + 0.7152 * ((v >> 8) & 255) + 0.0722 * (v & 255) < 128;
  } else {
    const body = document.body?.dataset?.jpThemeLight;
    dark = body === "false" ? true : body === "true" ? false
      : window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
  }
  return dark ? { dark, fg: "#ddd", grid: "#444", bg: "#1e1e1e" } : { dark, fg: "#222", grid: "#ccc", bg: "#fff" };
}

export class Painter {
  private blocks = makeBlocks(4096);
  private fitted = new Map<string, string>();

  constructor(private ctx: CanvasRenderingContext2D, private theme: Theme) {}

  /** Draw `state` as it is now; records the frame's statistics in `state.frame`. */
  paint(state: TimelineState): void {
    const started = performance.now();
    const { ctx, theme } = this;
    const tile = state.pickTile();
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, state.width, state.height);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, state.width, state.height - AXIS_H);
    ctx.clip();
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    let visited = 0;
    let drawn = 0;
    for (const r of state.rows) {
      const y = r.y - state.scrollY + AXIS_H;
      if (y > state.height || y + r.h < AXIS_H) continue;
      if (r.kind === "section") {
        this.section(state, r, y);
      } else {
        const [v, d] = this.track(state, tile, r, y);
        visited += v;
        drawn += d;
      }
    }
    ctx.restore();
    const arrows = paintLinks(ctx, state, theme.dark);
    this.axis(state);
    if (state.measure) this.measured(state, state.measure);
    this.notice(state, state.notice());
    Object.assign(state.frame, { count: state.frame.count + 1, ms: performance.now() - started, visited, drawn, arrows });
  }

  private section(state: TimelineState, r: Row, y: number): void {
    const { ctx, theme } = this;
    ctx.fillStyle = theme.dark ? "#2c2c2c" : "#eef1f5";
    ctx.fillRect(0, y, state.width, r.h);
    ctx.fillStyle = theme.fg;
    ctx.fillText(`${state.collapsed.has(r.section) ? "▸" : "▾"} ${r.section}`, 4, y + r.h / 2);
  }

  /** A track's label, its grid line and its blocks; [events visited, blocks drawn]. */
  private track(state: TimelineState, tile: Tile, r: Row, y: number): [number, number] {
    const { ctx, theme } = this;
    ctx.fillStyle = theme.fg;
    ctx.fillText(state.data.tracks[r.track].name.slice(0, 30), 14, y + ROW / 2);
    ctx.strokeStyle = theme.grid;
    ctx.beginPath();
    ctx.moveTo(LABEL_W, y + r.h - 0.5);
    ctx.lineTo(state.width, y + r.h - 0.5);
    ctx.stroke();
    ctx.save();
    ctx.beginPath();
    ctx.rect(LABEL_W, y, state.plotW(), r.h);
    ctx.clip();
    let visited = 0;
    let drawn = 0;
    const ppu = state.pxPerUs();
    for (const seg of state.segments.get(r.track) ?? []) {
      const b = this.blocks;
      visited += visibleBlocks(tile.start, tile.dur, tile.off[seg.s], tile.off[seg.s + 1], state.t0, state.t1, ppu, b);
      const yy = y + 2 + seg.depth * ROW;
      for (let k = 0; k < b.n; k++) this.block(state, tile, b.first[k], b.count[k] === 1, LABEL_W + b.x[k], b.w[k], yy);
      drawn += b.n;
    }
    ctx.restore();
    return [visited, drawn];
  }

  /** Block `i` of `tile` at x, w px on the depth row at yy; `alone`: not merged on screen. */
  private block(state: TimelineState, tile: Tile, i: number, alone: boolean, x: number, w: number, yy: number): void {
    const { ctx, theme } = this;
    const one = alone && single(tile, i);
    const name = state.data.names[tile.name[i]] ?? "";
    ctx.fillStyle = colorOf(name, theme.dark);
    ctx.fillRect(x, yy, w, ROW - 2);
    if (state.search.names.size && state.search.names.has(tile.name[i])) {
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
      const room = Math.min(x + w, state.width) - left - 3;
      if (room > 20) ctx.fillText(this.fit(name, room), left, yy + (ROW - 2) / 2);
    }
  }

  /** `text` cut (with an ellipsis) to `room` px; remembered per text and 8 px of room. */
  private fit(text: string, room: number): string {
    const key = `${text}|${Math.floor(room / 8)}`;
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

  private axis(state: TimelineState): void {
    const { ctx, theme } = this;
    ctx.fillStyle = theme.bg;
    ctx.fillRect(0, 0, state.width, AXIS_H);
    ctx.strokeStyle = theme.grid;
    ctx.fillStyle = theme.fg;
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    const span = state.t1 - state.t0;
    const raw = span / 8;
    const pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? raw;
    for (let t = Math.ceil(state.t0 / step) * step; t <= state.t1; t += step) {
      const x = state.xOf(t);
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H - 6);
      ctx.lineTo(x, AXIS_H);
      ctx.stroke();
      ctx.fillText(fmtTime(t), x + 2, AXIS_H / 2);
    }
    ctx.fillText(`window ${fmtTime(span)}`, 4, AXIS_H / 2);
  }

  private measured(state: TimelineState, range: [number, number]): void {
    const { ctx, theme } = this;
    const [a, b] = range[0] <= range[1] ? range : [range[1], range[0]];
    const x0 = state.xOf(a);
    const x1 = state.xOf(b);
    ctx.fillStyle = theme.dark ? "rgba(100,180,255,0.2)" : "rgba(30,100,220,0.15)";
    ctx.fillRect(x0, AXIS_H, x1 - x0, state.height - AXIS_H);
    ctx.fillStyle = theme.fg;
    ctx.fillText(fmtTime(b - a), Math.min(x1 + 4, state.width - 80), AXIS_H + 10);
  }

  private notice(state: TimelineState, text: string): void {
    if (!text) return;
    const { ctx, theme } = this;
    ctx.font = "11px sans-serif";
    const w = Math.min(ctx.measureText(text).width + 12, state.width - LABEL_W - 8);
    ctx.fillStyle = theme.dark ? "rgba(60,60,20,0.92)" : "rgba(255,248,200,0.95)";
    ctx.fillRect(state.width - w - 4, AXIS_H + 2, w, 18);
    ctx.fillStyle = theme.fg;
    ctx.fillText(text, state.width - w + 2, AXIS_H + 11, w - 8);
  }
}
