// Counter tracks: a value over time (memory in use, the launch queue, a device's clocks) drawn
// as a filled step line under the track's peak, at most one point per pixel column (its
// highest value there), and read at a time for the tooltip. No DOM but the canvas.
import { type CounterTrack } from "../data";
import { lowerBound } from "../lod";
import { LABEL_W } from "./layout";
import { type TimelineState } from "./state";

/** A value with its unit, short. */
export function fmtValue(v: number, unit: string): string {
  if (unit === "bytes/s") return `${fmtValue(v, "bytes")}/s`;
  if (unit === "bytes") {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let k = 0;
    let x = v;
    while (Math.abs(x) >= 1024 && k < units.length - 1) {
      x /= 1024;
      k++;
    }
    return `${x.toFixed(k ? 2 : 0)} ${units[k]}`;
  }
  return `${Number.isInteger(v) ? v.toLocaleString("en-US") : v.toFixed(2)}${unit ? ` ${unit}` : ""}`;
}

/** The index of the last point of `c` at or before `t` (-1: none). */
export function pointAt(c: CounterTrack, t: number): number {
  return lowerBound(c.t, 0, c.t.length, t + 1e-9) - 1;
}

/** The counter's value at `t` (null before its first point). */
export function valueAt(c: CounterTrack, t: number): number | null {
  const i = pointAt(c, t);
  return i < 0 ? null : c.v[i];
}

/** Paint counter `c` in the track at y (h px tall): the steps in view, filled. */
export function paintCounter(ctx: CanvasRenderingContext2D, state: TimelineState, c: CounterTrack, y: number,
  h: number, dark: boolean): void {
  const n = c.t.length;
  if (!n || !(c.max > 0)) return;
  const top = y + 4;
  const scale = (h - 6) / c.max;
  const yOf = (v: number) => y + h - 2 - Math.max(v, 0) * scale;
  const right = LABEL_W + state.plotW();
  let i = Math.max(pointAt(c, state.t0), 0);
  ctx.beginPath();
  ctx.moveTo(Math.max(state.xOf(c.t[i]), LABEL_W), y + h - 2);
  let x = Math.max(state.xOf(c.t[i]), LABEL_W);
  let level = c.v[i];
  while (i < n && c.t[i] <= state.t1) {
    const col = Math.floor(state.xOf(c.t[i]));
    let peak = c.v[i];
    let last = c.v[i];
    for (i++; i < n && Math.floor(state.xOf(c.t[i])) === col; i++) {
      peak = Math.max(peak, c.v[i]);
      last = c.v[i];
    }
    const cx = Math.max(col, LABEL_W);
    ctx.lineTo(cx, yOf(level));
    ctx.lineTo(cx, yOf(peak));
    ctx.lineTo(cx + 1, yOf(peak));
    ctx.lineTo(cx + 1, yOf(last));
    x = cx + 1;
    level = last;
  }
  const end = i >= n ? Math.min(state.xOf(c.t[n - 1]), right) : right;
  ctx.lineTo(Math.max(end, x), yOf(level));
  ctx.lineTo(Math.max(end, x), y + h - 2);
  ctx.closePath();
  ctx.fillStyle = dark ? "rgba(120,180,255,0.35)" : "rgba(40,110,200,0.25)";
  ctx.strokeStyle = dark ? "#78b4ff" : "#286ec8";
  ctx.lineWidth = 1;
  ctx.fill();
  ctx.stroke();
  ctx.fillStyle = dark ? "#bbb" : "#555";
  ctx.font = "10px sans-serif";
  ctx.fillText(`peak ${fmtValue(c.max, c.unit)}`, right - 110, top + 4);
  ctx.font = "11px sans-serif";
}
