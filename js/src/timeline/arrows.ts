// Painting the selection's links on the trace viewer's canvas: each linked event outlined,
// and an arrow from the start of each link to its end (from the end of a launch call to the
// start of its kernel, of a producer to its consumer), drawn over the tracks, under the axis.
import { AXIS_H, LABEL_W, ROW } from "./layout";
import { rowY, type Partner } from "./links";
import { type EventInfo } from "./search";
import { type LinksPlot, type Plot } from "./plot";

/** The links' colour: light and dark themes. */
export const LINK_COLORS = { light: "#e65100", dark: "#ffab40" };
const HEAD = 7; // px: the arrowhead's length

/** Canvas y of the middle of row `row`'s event (null: not laid out). */
function canvasY(state: Plot, row: number): number | null {
  return rowY(state.data, state, row);
}

/** An arrow from (x0, y0) to (x1, y1): a curve leaving and entering horizontally, its head
 * pointing right at the end. */
export function arrow(ctx: CanvasRenderingContext2D, x0: number, y0: number, x1: number, y1: number): void {
  const bend = Math.max(Math.abs(x1 - x0) / 2, 24);
  ctx.beginPath();
  ctx.moveTo(x0, y0);
  ctx.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1 - HEAD, y1);
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(x1, y1);
  ctx.lineTo(x1 - HEAD, y1 - HEAD / 2);
  ctx.lineTo(x1 - HEAD, y1 + HEAD / 2);
  ctx.closePath();
  ctx.fill();
}

/** One link: the partner outlined, the arrow from launch to kernel. */
function paintLink(ctx: CanvasRenderingContext2D, state: LinksPlot, sel: EventInfo, p: Partner): boolean {
  const yp = canvasY(state, p.row);
  const ys = canvasY(state, sel.row);
  if (yp === null || ys === null) return false;
  const x = state.xOf(p.start);
  ctx.lineWidth = 3;
  ctx.strokeRect(x, yp - (ROW - 2) / 2, Math.max(p.dur * state.pxPerUs(), 2), ROW - 2);
  const [from, to] = state.links.ends(sel, p);
  const [yf, yt] = from === sel ? [ys, yp] : [yp, ys];
  ctx.lineWidth = 1.5;
  arrow(ctx, state.xOf(from.start + from.dur), yf, state.xOf(to.start), yt);
  return true;
}

/** Paint the links of `state`'s selection; returns how many arrows were drawn. */
export function paintLinks(ctx: CanvasRenderingContext2D, state: LinksPlot, dark: boolean): number {
  const sel = state.selection;
  if (!sel || sel.row !== state.links.row || !state.links.partners.length) return 0;
  ctx.save();
  ctx.beginPath();
  ctx.rect(LABEL_W, AXIS_H, state.plotW(), state.height - AXIS_H);
  ctx.clip();
  const color = dark ? LINK_COLORS.dark : LINK_COLORS.light;
  ctx.strokeStyle = color;
  ctx.fillStyle = color;
  let drawn = 0;
  for (const p of state.links.partners) if (paintLink(ctx, state, sel, p)) drawn++;
  ctx.restore();
  return drawn;
}
