// Trace timeline: an anywidget view of every event of a profile, drawn on a canvas with
// level of detail. Small profiles arrive whole; larger ones arrive as an overview and the
// kernel answers each zoom or pan with the window's detail (custom messages with typed
// columns), and sums areas and finds search matches over every event; without a kernel
// (reports, saved notebooks) the view draws what is embedded and says where detail needs one.
// Names are user data: they only ever reach the page as canvas text or textContent, never as
// HTML.
//
// The parts, in timeline/: state.ts (what is shown, selected, loaded, searched: no DOM), paint.ts
// (the canvas), controls.ts (mouse and keys), panel.ts and overlays.ts (the DOM around and over
// the canvas). This module wires them to the model and the kernel.
import { send, type Model } from "./model";
import { decode } from "./data";
import { type AreaAnswer } from "./timeline/area";
import { AXIS_H, fmtTime } from "./timeline/layout";
import { attachControls } from "./timeline/controls";
import { attachScroll, copyText, placeScrollbar, showTip, tipAt, toggleHelp, trackMenu } from "./timeline/overlays";
import { Painter } from "./timeline/paint";
import { buildPanel, fillSteps, showArea, showLinks, type Panel } from "./timeline/panel";
import { TimelineState, type Change, type Source } from "./timeline/state";
import { themeOf } from "./timeline/theme";
import { askCritical, showCritical, wireCritical } from "./timeline/critical_toggle";
import { ANSWER_TIMEOUT } from "./timeline/tiles";
import { detailsPane } from "./timeline/details_graph";

const REQUEST_DELAY = 60; // ms after the last view change before asking for detail
const SYNC_DELAY = 150; // ms after the last view change before telling Python
const MIN_HEIGHT = 120;

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
    else if (msg.kind === "search" || msg.kind === "occurrences") state.receiveSearch(msg, buffers ?? []);
    else if (msg.kind === "area" && state.area.receive(msg as AreaAnswer, buffers ?? [], state.data.names)) state.emit("area", "model");
  };
  return { ask, onMessage };
}

/** What the status line says: the selected event, the merged block clicked, the area. */
function statusOf(state: TimelineState): string {
  const s = state.selection;
  if (s) return `${s.name} · start ${fmtTime(s.start)} · duration ${fmtTime(s.dur)}`;
  const m = state.merged;
  if (m) return `${(m.count ?? 0).toLocaleString("en-US")} events merged here over ${fmtTime(m.dur)}: ` +
    "double-click or zoom in to see them";
  return state.area.label();
}

/** Keep the panel in step with the state. */
function showState(panel: Panel, state: TimelineState, what: Change, model: Model): void {
  if (what === "search") panel.found.textContent = state.search.status;
  if (what === "select" || what === "links" || what === "area") panel.status.textContent = statusOf(state);
  if (what === "critical") showCritical(panel, state);
  if (what === "select" || what === "links") showLinks(panel.links, state.links, (p) => state.jumpTo(p));
  if (what === "area") {
    send(model, state.areaRequest()); // (once per area, when its drag ends)
    showArea(panel.area, state.area.status, state.area.rows, (name) => find(panel, state, model, name));
  }
  if (what === "layout" || what === "data") {
    const hidden = state.tracks.hiddenCount();
    panel.showAll.textContent = `show ${hidden} hidden`;
    panel.showAll.style.display = hidden || state.tracks.choices.filter ? "" : "none";
    if (!hidden && state.tracks.choices.filter) panel.showAll.textContent = "show all";
  }
  if (what === "data") {
    fillSteps(panel.steps, state.data.steps);
    panel.notes.textContent = state.data.notes.join(" ");
  }
  // (the window changed: what a tooltip said is no longer under the pointer)
  if ((what === "hover" && !state.hover) || what === "view") showTip(panel, "", 0, 0);
  placeScrollbar(panel, state);
}

/** Search `query` from the toolbar (and put it in the box). */
function find(panel: Panel, state: TimelineState, model: Model, query: string): void {
  panel.search.value = query;
  send(model, state.find(query));
}

/** The toolbar's controls drive the state. */
function wireToolbar(panel: Panel, state: TimelineState, model: Model): void {
  panel.steps.addEventListener("change", () => {
    const s = state.data.steps[Number(panel.steps.value)];
    if (s) state.setView(s.start, s.end);
    if (state.criticalStep >= 0) askCritical(panel, state, model, true);
  });
  wireCritical(panel, state, model);
  panel.search.addEventListener("input", () => find(panel, state, model, panel.search.value));
  panel.search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") state.gotoMatch(e.shiftKey ? -1 : 1);
  });
  panel.prev.addEventListener("click", () => state.gotoMatch(-1));
  panel.next.addEventListener("click", () => state.gotoMatch(1));
  panel.fit.addEventListener("click", () => state.fitSelection());
  panel.reset.addEventListener("click", () => state.setView(state.data.t0, state.data.t1));
  panel.filter.addEventListener("input", () => state.filterTracks(panel.filter.value));
  panel.foldEmpty.addEventListener("click", () => {
    const n = state.foldEmpty();
    panel.foldEmpty.textContent = n ? `unfold ${n}` : "fold empty";
  });
  panel.showAll.addEventListener("click", () => {
    panel.filter.value = "";
    panel.foldEmpty.textContent = "fold empty";
    state.showAllTracks();
  });
  panel.help.addEventListener("click", () => toggleHelp(panel));
}

/** The viewer's height: the model's, but no taller than its rows. */
function fitHeight(state: TimelineState, wanted: number): number {
  return Math.max(MIN_HEIGHT, Math.min(wanted, AXIS_H + state.pinnedH + state.contentH + 2));
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const theme = themeOf(el);
  const panel = buildPanel(el, theme);
  const ctx = panel.canvas.getContext("2d")!;
  const state = new TimelineState(decode(model), typeof model.send === "function",
    Math.max(400, panel.box.clientWidth || el.clientWidth || 900), Number(model.get("height")) || 520);
  state.height = fitHeight(state, state.height);
  const painter = new Painter(ctx, theme);
  let frame = 0;
  const repaint = () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; painter.paint(state); });
  };
  const kernel = kernelLink(model, state, repaint);
  model.on("msg:custom", kernel.onMessage);
  const sync = debounced(() => { model.set("view", state.view()); model.save_changes(); }, SYNC_DELAY);
  const resize = (height = state.height) => {
    const dpr = window.devicePixelRatio || 1;
    state.resize(Math.max(400, panel.box.clientWidth || el.clientWidth || state.width), height);
    Object.assign(panel.canvas, { width: Math.round(state.width * dpr), height: Math.round(state.height * dpr) });
    Object.assign(panel.canvas.style, { width: `${state.width}px`, height: `${state.height}px` });
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  };
  state.onChange((what: Change, source: Source) => {
    showState(panel, state, what, model);
    if (what === "view" || what === "data") kernel.ask();
    if (what === "view" && source === "user") sync();
    if (what === "select" && source === "user") {
      model.set("selected_index", state.selected);
      model.save_changes();
    }
    if (what !== "hover") repaint();
  });
  wireToolbar(panel, state, model);
  const copy = () => { if (state.selection) copyText(state.selection.name); };
  const stopControls = attachControls(panel.canvas, state, {
    label: (row, x, y) => trackMenu(panel, state, row, x, y),
    help: () => toggleHelp(panel),
    copy,
    hover: (info, x, y) => {
      state.setHover(info);
      const rect = panel.canvas.getBoundingClientRect();
      showTip(panel, tipAt(state, info, x - rect.left, y - rect.top), x, y);
    },
  });
  const stopScroll = attachScroll(panel, state, (height) => {
    resize(height);
    model.set("height", height);
    model.save_changes();
    repaint();
  });
  const shown = detailsPane(model, panel, copy);
  const stopModel = followModel(model, state, panel, shown.details);
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => { resize(); repaint(); }) : null;
  ro?.observe(el);
  // tests and benchmarks read and drive the state (a typed API; see timeline/state.ts)
  (panel.root as unknown as { __timeline: TimelineState }).__timeline = state;
  showState(panel, state, "data", model);
  resize();
  const initial = model.get("view") as number[] | null;
  if (initial && initial.length === 2) state.setView(initial[0], initial[1], "model");
  painter.paint(state);
  shown.details();
  showRow(model, state, panel);
  kernel.ask();
  return () => {
    cancelAnimationFrame(frame);
    stopControls();
    stopScroll();
    stopModel();
    ro?.disconnect();
    kernel.ask.cancel();
    sync.cancel();
    model.off?.("msg:custom", kernel.onMessage);
    shown.cleanup();
  };
}

const shownFinds = new WeakMap<object, unknown>();

/** Show the table's row the dashboard asked for (`find`: {table, key, label, nonce}), once:
 * its query in the search box, searched as if typed. */
function showRow(model: Model, state: TimelineState, panel: Panel): void {
  const find = model.get("find") as { table?: string; key?: Record<string, unknown>; nonce?: unknown } | null;
  if (!find?.table || shownFinds.get(state) === find.nonce) return;
  shownFinds.set(state, find.nonce);
  const { query, request } = state.showRow({ table: find.table, key: find.key ?? {} });
  panel.search.value = query;
  send(model, request);
}

/** Changes from Python (or the offline host) reach the state and the panel. */
function followModel(model: Model, state: TimelineState, panel: Panel, details: () => void): () => void {
  const handlers: [string, () => void][] = [
    ["change:view", () => {
      const v = model.get("view") as number[] | null;
      if (v && v.length === 2 && (v[0] !== state.t0 || v[1] !== state.t1)) state.setView(v[0], v[1], "model");
    }],
    ["change:selected_index", () => {
      const i = Number(model.get("selected_index"));
      if (i !== state.selected) state.select(i, null, "model");
    }],
    ["change:details", details],
    ["change:links", () => state.receiveLinks(model.get("links"))],
    ["change:critical", () => state.receiveCritical(model.get("critical"))],
    ["change:meta", () => send(model, state.replaceData(decode(model)))],
    ["change:find", () => showRow(model, state, panel)],
  ];
  for (const [event, fn] of handlers) model.on(event, fn);
  return () => handlers.forEach(([event, fn]) => model.off?.(event, fn));
}

export default { render };
