// The critical path of a step on the trace viewer's canvas: the events that bound it, in
// order (tfprof_nb/widgets/timeline_critical.py answers `critical_step` with them), each
// outlined over its part on the path, with an arrow from each to the next. No DOM.
import { AXIS_H, LABEL_W, ROW } from "./layout";
import { arrow } from "./arrows";
import { rowY } from "./links";
import { type EventInfo } from "./search";
import { type CriticalPlot } from "./plot";

/** The path's colour: light and dark themes. */
export const CRITICAL_COLORS = { light: "#c2185b", dark: "#ff80ab" };

/** One event on the path: its part on the path (start, dur in us) and its category. */
export interface CriticalNode extends EventInfo {
  category: string;
}

/** The kernel's answer for a step (`critical`). */
export interface CriticalAnswer {
  step: number;
  nodes?: CriticalNode[];
  more?: number;
  sentence?: string;
}

function valid(n: CriticalNode): boolean {
  return !!n && Number.isFinite(n.row) && Number.isFinite(n.start) && Number.isFinite(n.dur);
}

export class CriticalPath {
  /** The step shown (a row of the step menu; -1: none). */
  step = -1;
  nodes: CriticalNode[] = [];
  more = 0;
  sentence = "";

  /** Take `answer` when it is for `step`; false when it answers another request. */
  take(answer: CriticalAnswer | null | undefined, step: number): boolean {
    if (!answer || typeof answer !== "object" || answer.step !== step) return false;
    this.step = step;
    this.nodes = (Array.isArray(answer.nodes) ? answer.nodes : []).filter(valid)
      .map((n) => ({ ...n, name: String(n.name ?? ""), category: String(n.category ?? "") }));
    this.more = Number(answer.more ?? 0) || 0;
    this.sentence = String(answer.sentence ?? "");
    return true;
  }

  clear(): void {
    this.step = -1;
    this.nodes = [];
    this.more = 0;
    this.sentence = "";
  }
}

/** Paint the path: returns how many of its arrows were drawn. */
export function paintCritical(ctx: CanvasRenderingContext2D, state: CriticalPlot, dark: boolean): number {
  const nodes = state.critical.nodes;
  if (!nodes.length) return 0;
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, AXIS_H, state.plotW(), state.height - AXIS_H);
  ctx.clip();
  const color = dark ? CRITICAL_COLORS.dark : CRITICAL_COLORS.light;
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  const ys = nodes.map((n) => rowY(state.data, state, n.row));
  let drawn = 0;
  ctx.lineWidth = 2.5;
  nodes.forEach((n, i) => {
    const y = ys[i];
    if (y !== null) ctx.strokeRect(state.xOf(n.start), y - (ROW - 2) / 2, Math.max(n.dur * state.pxPerUs(), 2), ROW - 2);
  });
  ctx.lineWidth = 1.5;
  for (let i = 1; i < nodes.length; i++) {
    const [a, b] = [nodes[i - 1], nodes[i]];
    const [ya, yb] = [ys[i - 1], ys[i]];
    if (ya === null || yb === null || (ya === yb && b.start - (a.start + a.dur) < 1e-9)) continue;
    arrow(ctx, state.xOf(a.start + a.dur), ya, state.xOf(b.start), yb);
    drawn++;
  }
  ctx.restore();
  return drawn;
}
