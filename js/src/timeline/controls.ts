// Mouse and keyboard on the trace viewer's canvas, turned into changes of its state, with the
// conventions of Perfetto and Chrome's trace viewer. The wheel scrolls the page unless the
// viewer has focus (a click gives it) or Ctrl/⌘ is held: Ctrl+wheel (and a trackpad pinch)
// zooms; with focus, the wheel scrolls the tracks (the page once they end), sideways and
// shift+wheel pan. Drag selects an area, shift+drag (or the middle button) pans, a click
// selects an event, a double click zooms into a merged block. Keys: W/S zoom (at the pointer
// over the tracks, else the middle), A/D pan, up and down scroll, F fits the selection, 0
// shows everything, Escape clears, ? lists the keys.
import { AXIS_H, LABEL_W, type Row } from "./layout";
import { type EventInfo, type TimelineState } from "./state";

/** What the view does for the input that is not a change of the state. */
export interface ControlHooks {
  label(row: Row, clientX: number, clientY: number): void; // a track's label clicked
  help(): void;
  copy(): void;
  hover(info: EventInfo | null, clientX: number, clientY: number): void;
}

interface Drag {
  x: number;
  y: number;
  t0: number;
  t1: number;
  scroll: number;
  pan: boolean;
  moved: boolean;
  box: [number, number, number, number] | null; // the area dragged so far
}

const ZOOM_PER_PX = 0.002; // wheel zoom: exp(deltaY * this)

/** A wheel event over the canvas: true when the viewer takes it (else the page scrolls). */
export function wheel(state: TimelineState, e: WheelEvent, focused: boolean): boolean {
  const lines = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? state.viewH() : 1;
  const dx = e.deltaX * lines;
  const dy = e.deltaY * lines;
  if (e.ctrlKey || e.metaKey) {
    state.zoom(Math.exp(dy * ZOOM_PER_PX), Math.max(e.offsetX, LABEL_W));
    return true;
  }
  if (!focused) return false;
  if (e.shiftKey && !dx) {
    state.pan(dy);
    return true;
  }
  if (Math.abs(dx) > Math.abs(dy)) {
    state.pan(dx);
    return true;
  }
  if (!state.canScroll(dy)) return false;
  state.scrollBy(dy);
  return true;
}

/** Listen to `canvas` for `state`; returns what stops listening. */
export function attachControls(canvas: HTMLCanvasElement, state: TimelineState, hooks: ControlHooks): () => void {
  let drag: Drag | null = null;
  const at = (e: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  };
  const focused = () => document.activeElement === canvas ||
    (canvas.getRootNode() as Document | ShadowRoot).activeElement === canvas;
  const onWheel = (e: WheelEvent) => {
    if (wheel(state, e, focused())) e.preventDefault();
  };
  const onDown = (e: MouseEvent) => {
    canvas.focus({ preventScroll: true }); // a click must not scroll the page under the mouse
    if (e.button === 2) return;
    const [x, y] = at(e);
    const pan = e.shiftKey || e.button === 1 || y < AXIS_H;
    if (e.button === 1) e.preventDefault();
    drag = { x, y, t0: state.t0, t1: state.t1, scroll: state.scrollY, pan, moved: false, box: null };
  };
  const onMove = (e: MouseEvent) => {
    const [x, y] = at(e);
    state.pointer = e.target === canvas ? [x, y] : null;
    if (!drag) {
      if (e.target === canvas) hooks.hover(state.hit(x, y), e.clientX, e.clientY);
      return;
    }
    if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
    if (!drag.moved) return;
    hooks.hover(null, 0, 0);
    if (drag.pan) {
      const dt = (drag.x - x) / (state.plotW() / (drag.t1 - drag.t0));
      state.setView(drag.t0 + dt, drag.t1 + dt);
      state.scrollTo(drag.scroll + drag.y - y);
    } else if (drag.x >= LABEL_W) {
      const bottom = Math.min(Math.max(y, AXIS_H), state.height); // the rows in sight
      drag.box = [drag.x, drag.y, x, bottom];
      state.selectArea(drag.box, false); // summed once, when the drag ends
    }
  };
  const onUp = (e: MouseEvent) => {
    if (!drag) return;
    const { moved, box } = drag;
    drag = null;
    if (box) state.selectArea(box, true);
    else if (!moved && e.target === canvas) clickAt(state, at(e), hooks, e);
  };
  const onLeave = () => {
    state.pointer = null;
    if (!drag) hooks.hover(null, 0, 0);
  };
  const onDouble = (e: MouseEvent) => {
    const [x, y] = at(e);
    const hit = state.hit(x, y);
    if (hit && (hit.count ?? 1) > 1) state.setView(hit.start, hit.start + hit.dur);
  };
  const onMenu = (e: MouseEvent) => {
    const [x, y] = at(e);
    const row = x < LABEL_W ? state.rowAt(y) : null;
    if (row && row.kind !== "section") {
      e.preventDefault();
      hooks.label(row, e.clientX, e.clientY);
    }
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.altKey || ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() !== "c")) return;
    if (keyDown(state, e, hooks, canvas)) e.preventDefault();
  };
  const listeners: [EventTarget, string, (e: any) => void, AddEventListenerOptions?][] = [
    [canvas, "wheel", onWheel, { passive: false }], [canvas, "mousedown", onDown],
    [canvas, "keydown", onKey], [canvas, "mouseleave", onLeave], [canvas, "dblclick", onDouble],
    [canvas, "contextmenu", onMenu], [window, "mousemove", onMove], [window, "mouseup", onUp],
  ];
  for (const [target, ev, fn, opts] of listeners) target.addEventListener(ev, fn, opts);
  return () => { for (const [target, ev, fn] of listeners) target.removeEventListener(ev, fn); };
}

/** A click at [x, y]: a section header folds or unfolds, a track's label offers its menu,
 * else the event there is selected (none: the selection and the area are cleared). */
function clickAt(state: TimelineState, [x, y]: number[], hooks: ControlHooks, e: MouseEvent): void {
  const row = state.rowAt(y);
  if (row?.kind === "section" && x < LABEL_W + 60) {
    state.toggleSection(row.section);
    return;
  }
  if (row && x < LABEL_W) {
    hooks.label(row, e.clientX, e.clientY);
    return;
  }
  if (state.area.area) state.selectArea(null);
  state.click(state.hit(x, y));
}

/** Act on a key; false when the key means nothing here. */
function keyDown(state: TimelineState, e: KeyboardEvent, hooks: ControlHooks, canvas: HTMLCanvasElement): boolean {
  const key = e.key.toLowerCase();
  if ((e.ctrlKey || e.metaKey) && key === "c") hooks.copy();
  else if (key === "w") state.zoom(0.8, state.keyZoomX());
  else if (key === "s") state.zoom(1.25, state.keyZoomX());
  else if (key === "a") state.pan(-state.plotW() * 0.1);
  else if (key === "d") state.pan(state.plotW() * 0.1);
  else if (key === "arrowdown") state.scrollBy(40);
  else if (key === "arrowup") state.scrollBy(-40);
  else if (key === "f") state.fitSelection();
  else if (key === "0") state.setView(state.data.t0, state.data.t1);
  else if (e.key === "?") hooks.help();
  else if (key === "escape") {
    if (state.selected < 0 && !state.area.area) canvas.blur();
    state.selectArea(null);
    state.select(-1);
  } else return false;
  return true;
}
