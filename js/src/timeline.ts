// Trace timeline: an anywidget view of every event of a profile, drawn on a canvas with
// level of detail. Small profiles arrive whole; larger ones arrive as an overview and the
// kernel answers each zoom or pan with the window's detail (custom messages with typed
// columns); without a kernel (reports, saved notebooks) the view draws what is embedded and
// says where detail needs one. Names are user data: they only ever reach the page as canvas
// text or textContent, never as HTML.
//
// The parts: timeline/state.ts (what is shown, selected, loaded, searched: no DOM),
// timeline/paint.ts (the canvas), timeline/input.ts (mouse and keys), timeline/panel.ts (the
// toolbar, status and details). This module wires them to the model and the kernel.
import { type Model } from "./model";
import { decode } from "./data";
import { fmtTime } from "./timeline/layout";
import { attachInput } from "./timeline/input";
import { Painter, themeOf } from "./timeline/paint";
import { buildPanel, fillSteps, showDetails, showLinks, type Panel } from "./timeline/panel";
import { TimelineState, type Change, type Source } from "./timeline/state";
import { ANSWER_TIMEOUT } from "./timeline/tiles";

const REQUEST_DELAY = 60; // ms after the last view change before asking for detail
const SYNC_DELAY = 150; // ms after the last view change before telling Python

/** One call of `fn` `ms` after the last request (and a way to cancel it). */
function debounced(fn: () => void, ms: number): { (): void; cancel(): void } {
  let timer: number | undefined;
  const call = () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(fn, ms);
  };
  call.cancel = () => window.clearTimeout(timer);
  return call;
}

/** Ask the kernel for the detail the view needs, and take its answers; returns the
 * debounced asker and the message handler. */
function kernelLink(model: Model, state: TimelineState, repaint: () => void) {
  const later = debounced(() => {
    const request = state.detailRequest(performance.now());
    if (!request) return repaint();
    model.send!(request);
    window.setTimeout(() => state.expireWindow(request.id), ANSWER_TIMEOUT);
  }, REQUEST_DELAY);
  const ask = Object.assign(() => { if (state.wantsDetail()) later(); }, { cancel: later.cancel });
  const onMessage = (msg: any, buffers: unknown[]) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "window" && state.receiveWindow(msg, buffers ?? [], performance.now())) ask();
    else if (msg.kind === "search") state.receiveSearch(msg, buffers ?? []);
  };
  return { ask, onMessage };
}

/** Keep the panel in step with the state. */
function showState(panel: Panel, state: TimelineState, what: Change): void {
  if (what === "search") panel.found.textContent = state.search.status;
  if ((what === "select" || what === "links") && state.selection) {
    const s = state.selection;
    panel.status.textContent = `${s.name} · start ${fmtTime(s.start)} · duration ${fmtTime(s.dur)}`;
  }
  if (what === "select" || what === "links") showLinks(panel.links, state.links, (p) => state.jumpTo(p));
  if (what === "measure" && state.measure) {
    const [a, b] = [Math.min(...state.measure), Math.max(...state.measure)];
    panel.status.textContent = `measured ${fmtTime(b - a)} (from ${fmtTime(a)} to ${fmtTime(b)})`;
  }
  if (what === "data") {
    fillSteps(panel.steps, state.data.steps);
    panel.notes.textContent = state.data.notes.join(" ");
  }
}

/** The toolbar's controls drive the state. */
function wireToolbar(panel: Panel, state: TimelineState, model: Model): void {
  panel.steps.addEventListener("change", () => {
    const s = state.data.steps[Number(panel.steps.value)];
    if (s) state.setView(s.start, s.end);
  });
  panel.search.addEventListener("input", () => {
    const request = state.find(panel.search.value);
    if (request) model.send!(request);
  });
  panel.search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") state.gotoMatch(e.shiftKey ? -1 : 1);
  });
  panel.prev.addEventListener("click", () => state.gotoMatch(-1));
  panel.next.addEventListener("click", () => state.gotoMatch(1));
  panel.fit.addEventListener("click", () => state.fitSelection());
  panel.reset.addEventListener("click", () => state.setView(state.data.t0, state.data.t1));
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const theme = themeOf(el);
  const panel = buildPanel(el, theme);
  const ctx = panel.canvas.getContext("2d")!;
  const state = new TimelineState(decode(model), typeof model.send === "function",
    Math.max(400, el.clientWidth || 900), Number(model.get("height")) || 520);
  const painter = new Painter(ctx, theme);
  let frame = 0;
  const repaint = () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; painter.paint(state); });
  };
  const kernel = kernelLink(model, state, repaint);
  model.on("msg:custom", kernel.onMessage);
  const sync = debounced(() => { model.set("view", state.view()); model.save_changes(); }, SYNC_DELAY);
  const resize = () => {
    const dpr = window.devicePixelRatio || 1;
    state.resize(Math.max(400, el.clientWidth || state.width));
    Object.assign(panel.canvas, { width: Math.round(state.width * dpr), height: Math.round(state.height * dpr) });
    Object.assign(panel.canvas.style, { width: `${state.width}px`, height: `${state.height}px` });
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  };
  state.onChange((what: Change, source: Source) => {
    showState(panel, state, what);
    if (what === "view" || what === "data") kernel.ask();
    if (what === "view" && source === "user") sync();
    if (what === "select" && source === "user") {
      model.set("selected_index", state.selected);
      model.save_changes();
    }
    repaint();
  });
  wireToolbar(panel, state, model);
  const stopInput = attachInput(panel.canvas, state);
  const stopModel = followModel(model, state, panel);
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => { resize(); repaint(); }) : null;
  ro?.observe(el);
  // tests and benchmarks read and drive the state (a typed API; see timeline/state.ts)
  (panel.root as unknown as { __timeline: TimelineState }).__timeline = state;
  showState(panel, state, "data");
  resize();
  const initial = model.get("view") as number[] | null;
  if (initial && initial.length === 2) state.setView(initial[0], initial[1], "model");
  painter.paint(state);
  showDetails(panel.details, model.get("details") ?? {});
  kernel.ask();
  return () => {
    stopInput();
    stopModel();
    ro?.disconnect();
    kernel.ask.cancel();
    sync.cancel();
    model.off?.("msg:custom", kernel.onMessage);
  };
}

/** Changes from Python (or the offline host) reach the state and the panel. */
function followModel(model: Model, state: TimelineState, panel: Panel): () => void {
  const handlers: [string, () => void][] = [
    ["change:view", () => {
      const v = model.get("view") as number[] | null;
      if (v && v.length === 2 && (v[0] !== state.t0 || v[1] !== state.t1)) state.setView(v[0], v[1], "model");
    }],
    ["change:selected_index", () => {
      const i = Number(model.get("selected_index"));
      if (i !== state.selected) state.select(i, null, "model");
    }],
    ["change:details", () => showDetails(panel.details, model.get("details") ?? {})],
    ["change:links", () => state.receiveLinks(model.get("links"))],
    ["change:meta", () => state.setData(decode(model))],
  ];
  for (const [event, fn] of handlers) model.on(event, fn);
  return () => handlers.forEach(([event, fn]) => model.off?.(event, fn));
}

export default { render };
