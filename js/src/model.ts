// What the views share: the widget model they are given, and chart constants.

/** An anywidget model (or a prefixed view of the dashboard's model). */
export interface Model {
  get(name: string): any;
  set(name: string, value: unknown): void;
  save_changes(): void;
  on(event: string, cb: (...args: any[]) => void): void;
  off?(event: string, cb: (...args: any[]) => void): void;
  /** A custom message to the kernel (absent without one: reports, saved notebooks). */
  send?(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

/** Send the kernel `request` (null: nothing to ask). */
export function send(model: Model, request: object | null): void {
  if (request) model.send!(request);
}

/** What a view that only reads (and maybe reports clicks) needs of a model. */
export interface ModelLike {
  get(name: string): any;
  set?(name: string, value: unknown): void;
  save_changes?(): void;
  on?(event: string, cb: () => void): void;
}

/** A row of a table to show in the trace viewer: its events (the kernel finds them; a page
 * without one searches `label`). */
export interface TraceFind {
  table: "ops" | "kernels" | "hlo";
  key: Record<string, unknown>;
  label: string;
}

/** What the dashboard offers the views inside it. */
export interface ViewContext {
  /** Show the trace viewer zoomed to [start, end] (us), on `host` when given. */
  zoomTo?(startUs: number, endUs: number, host?: string): void;
  /** Show the trace viewer with the events of a table's row highlighted, the first framed. */
  showInTrace?(find: TraceFind): void;
}

/** A view module's render function: draws the view of `model` into `el`; returns its
 * cleanup. */
export type Render = (args: { model: Model; el: HTMLElement; ctx?: ViewContext }) => (() => void) | void;

export const SVG_NS = "http://www.w3.org/2000/svg";

export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
  "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
