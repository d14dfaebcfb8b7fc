// What the trace viewer paints over its rows: the area selected, the time axis and the
// notice (what the view lacks, and why).
import { AXIS_H, fmtTime, LABEL_W } from "./layout";
import { type TimelineState } from "./state";
import { type Theme } from "./theme";

/** The area selected: shaded over its tracks (wherever they are laid out now), its edges
 * across the plot. */
export function paintArea(ctx: CanvasRenderingContext2D, state: TimelineState, theme: Theme): void {
  const a = state.area.area;
  if (!a) return;
  const [x0, x1] = [state.xOf(a.t0), state.xOf(a.t1)];
  const tracks = new Set(a.tracks);
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, AXIS_H, state.plotW(), state.height - AXIS_H);
  ctx.clip();
  ctx.fillStyle = theme.dark ? "rgba(100,180,255,0.22)" : "rgba(30,100,220,0.16)";
  for (const r of state.rows) {
    if (r.kind === "track" && tracks.has(r.track)) ctx.fillRect(x0, state.rowTop(r), x1 - x0, r.h);
  }
  ctx.strokeStyle = theme.dark ? "#64b4ff" : "#1e64dc";
  ctx.lineWidth = 1;
  for (const x of [x0, x1]) {
    ctx.beginPath();
    ctx.moveTo(x + 0.5, AXIS_H);
    ctx.lineTo(x + 0.5, state.height);
    ctx.stroke();
  }
  ctx.restore();
}

/** A tick of the time axis: where it is, its label, and where the label starts. */
export interface AxisLabel {
  x: number;
  text: string;
  textX: number;
}

/** The ticks of the time axis over [t0, t1] (`xOf`: px of a time), their labels inside the
 * plot [left, right] px (`measure`: a text's width): right of the tick, or ending at the
 * right edge where there is no room; a label that would overlap the one before is left out. */
export function axisLabels(t0: number, t1: number, xOf: (t: number) => number, left: number, right: number,
  measure: (text: string) => number): AxisLabel[] {
  const raw = (t1 - t0) / 8;
  const pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? raw;
  const out: AxisLabel[] = [];
  let end = -Infinity;
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
    const x = xOf(t);
    const text = fmtTime(t);
    const w = measure(text);
    const textX = Math.max(left, Math.min(x + 2, right - 2 - w));
    if (textX < end + 4) continue;
    out.push({ x, text, textX });
    end = textX + w;
  }
  return out;
}

export function paintAxis(ctx: CanvasRenderingContext2D, state: TimelineState, theme: Theme): void {
  ctx.fillStyle = theme.bg;
  ctx.fillRect(0, 0, state.width, AXIS_H);
  ctx.strokeStyle = theme.grid;
  ctx.fillStyle = theme.fg;
  ctx.font = "11px sans-serif";
  ctx.textBaseline = "middle";
  const right = LABEL_W + state.plotW();
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, 0, state.plotW(), AXIS_H);
  ctx.clip();
  for (const { x, text, textX } of axisLabels(state.t0, state.t1, (t) => state.xOf(t), LABEL_W, right,
    (s) => ctx.measureText(s).width)) {
    ctx.beginPath();
    ctx.moveTo(x, AXIS_H - 6);
    ctx.lineTo(x, AXIS_H);
    ctx.stroke();
    ctx.fillText(text, textX, AXIS_H / 2);
  }
  ctx.restore();
  ctx.fillText(`window ${fmtTime(state.t1 - state.t0)}`, 4, AXIS_H / 2);
}

export function paintNotice(ctx: CanvasRenderingContext2D, state: TimelineState, theme: Theme, text: string): void {
  if (!text) return;
  ctx.font = "11px sans-serif";
  const w = Math.min(ctx.measureText(text).width + 12, state.plotW() - 8);
  const right = LABEL_W + state.plotW();
  ctx.fillStyle = theme.dark ? "rgba(60,60,20,0.92)" : "rgba(255,248,200,0.95)";
  ctx.fillRect(right - w - 4, AXIS_H + 2, w, 18);
  ctx.fillStyle = theme.fg;
  ctx.fillText(text, right - w + 2, AXIS_H + 11, w - 8);
}
