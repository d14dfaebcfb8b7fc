// What the painters of the selection's links and of a step's critical path read of the trace
// viewer's state (TimelineState has all of it): state.ts owns the links and the path, so the
// modules that paint them see it through these interfaces, never by importing state.ts.
import { type TimelineData } from "../data";
import { type Frame } from "./layout";
import { type Links } from "./links";
import { type EventInfo } from "./search";

/** The plot, right of the labels: where the rows are, the data, the canvas's height and the
 * window's scale. */
export interface Plot extends Frame {
  data: TimelineData;
  height: number;
  plotW(): number;
  xOf(t: number): number;
  pxPerUs(): number;
}

/** The plot with the selected event and its links. */
export interface LinksPlot extends Plot {
  selection: EventInfo | null;
  links: Links;
}

/** The plot with a step's critical path: its events, in order. */
export interface CriticalPlot extends Plot {
  critical: { nodes: readonly EventInfo[] };
}
