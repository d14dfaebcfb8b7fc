// Mouse and keyboard on the trace viewer's canvas, turned into changes of its state: wheel
// zooms (shift: scrolls), drag pans, alt+drag measures, a click selects an event or folds a
// section, W/S zoom, A/D pan, F fits the selection, 0 resets, Escape clears.
import { LABEL_W } from "./layout";
import { type TimelineState } from "./state";

interface Drag {
  x: number;
  y: number;
  t0: number;
  t1: number;
  scroll: number;
  measure: boolean;
  moved: boolean;
}

/** Listen to `canvas` for `state`; returns what stops listening. */
export function attachInput(canvas: HTMLCanvasElement, state: TimelineState): () => void {
  let drag: Drag | null = null;
  const at = (e: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    return [e.clientX - rect.left, e.clientY - rect.top];
  };
  const onWheel = (e: WheelEvent) => {
    e.preventDefault();
    if (e.shiftKey) state.scrollBy(e.deltaY);
    else state.zoom(Math.exp(e.deltaY * 0.002), e.offsetX);
  };
  const onDown = (e: MouseEvent) => {
    canvas.focus({ preventScroll: true }); // a click must not scroll the page under the mouse
    drag = { x: e.offsetX, y: e.offsetY, t0: state.t0, t1: state.t1, scroll: state.scrollY, measure: e.altKey, moved: false };
    if (e.altKey) state.setMeasure([state.tOf(e.offsetX), state.tOf(e.offsetX)]);
  };
  const onMove = (e: MouseEvent) => {
    if (!drag) return;
    const [x, y] = at(e);
    if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
    if (drag.measure && state.measure) {
      state.setMeasure([state.measure[0], state.tOf(x)]);
      return;
    }
    const dt = (drag.x - x) / (state.plotW() / (drag.t1 - drag.t0));
    state.setView(drag.t0 + dt, drag.t1 + dt);
    state.scrollTo(drag.scroll + drag.y - y);
  };
  const onUp = (e: MouseEvent) => {
    if (!drag) return;
    const click = !drag.moved && !drag.measure;
    drag = null;
    if (click) clickAt(state, at(e), e.altKey);
  };
  const onKey = (e: KeyboardEvent) => {
    if (keyDown(state, e.key.toLowerCase())) e.preventDefault();
  };
  canvas.addEventListener("wheel", onWheel, { passive: false });
  canvas.addEventListener("mousedown", onDown);
  canvas.addEventListener("keydown", onKey);
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  return () => {
    canvas.removeEventListener("wheel", onWheel);
    canvas.removeEventListener("mousedown", onDown);
    canvas.removeEventListener("keydown", onKey);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
  };
}

/** A click at [x, y]: fold or unfold a section by its header, else select what is there. */
function clickAt(state: TimelineState, [x, y]: number[], alt: boolean): void {
  const section = x < LABEL_W ? state.sectionAt(y) : null;
  if (section !== null) {
    state.toggleSection(section);
    return;
  }
  if (!alt && state.measure) state.setMeasure(null);
  const hit = state.hit(x, y);
  state.select(hit ? hit.row : -1, hit);
}

/** Act on a key; false when the key means nothing here. */
function keyDown(state: TimelineState, key: string): boolean {
  const middle = LABEL_W + state.plotW() / 2;
  if (key === "w") state.zoom(0.8, middle);
  else if (key === "s") state.zoom(1.25, middle);
  else if (key === "a") state.pan(-state.plotW() * 0.1);
  else if (key === "d") state.pan(state.plotW() * 0.1);
  else if (key === "f") state.fitSelection();
  else if (key === "0") state.setView(state.data.t0, state.data.t1);
  else if (key === "escape") {
    state.setMeasure(null);
    state.select(-1);
  } else return false;
  return true;
}
