// What the trace viewer shows over its canvas: the keys (`?`), the tooltip of the event under
// the pointer, a track's menu (pin, hide, fold, copy its name), the scrollbar of the rows and
// the grip that resizes the viewer. Text only (textContent).
import { valueAt, fmtValue } from "./counters";
import { AXIS_H, fmtTime, LABEL_W, SCROLLBAR_W, trackKey, type Row } from "./layout";
import { h, type Panel } from "./panel";
import { type EventInfo, type TimelineState } from "./state";

export const KEYS: [string, string][] = [
  ["click", "focus the viewer; select an event (its details, links and flows below)"],
  ["wheel", "scrolls the page; with the viewer focused, scrolls the tracks"],
  ["Ctrl/⌘ + wheel, pinch", "zoom at the pointer"],
  ["W / S", "zoom in / out at the pointer (over the tracks; else the middle)"],
  ["A / D, sideways scroll, shift + wheel", "pan"],
  ["drag", "select an area: its events summed below"],
  ["shift + drag, middle drag, drag the axis", "pan (and scroll)"],
  ["double-click a merged block", "zoom into it"],
  ["↑ / ↓", "scroll the tracks"],
  ["F", "fit the selected area or event"],
  ["0", "show the whole profile"],
  ["Ctrl/⌘ + C", "copy the selected event's name"],
  ["click a track's name", "pin it to the top, hide it, fold it, copy its name"],
  ["Escape", "clear the selection (again: leave the viewer)"],
  ["?", "show or hide these keys"],
];

/** Show or hide the keys over the canvas. */
export function toggleHelp(p: Panel): void {
  const open = p.box.querySelector(".tl-overlay");
  if (open) {
    open.remove();
    return;
  }
  const box = h("div", "tl-overlay");
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-label", "trace viewer keys");
  const table = document.createElement("table");
  for (const [k, v] of KEYS) {
    const tr = document.createElement("tr");
    tr.append(h("td", "", k), h("td", "", v));
    table.append(tr);
  }
  const close = h("button", "tl-overlay-close", "close");
  close.addEventListener("click", () => box.remove());
  box.append(h("b", "", "Trace viewer keys"), table, close);
  p.box.append(box);
}

/** What the tooltip says of `info` (an event or a block of merged events). */
export function describe(info: EventInfo): string {
  if ((info.count ?? 1) > 1) {
    return `${info.count!.toLocaleString("en-US")} events merged (${fmtTime(info.dur)}), the first: ${info.name}\n` +
      "double-click or zoom in to see them";
  }
  return `${info.name}\n${fmtTime(info.dur)} at ${fmtTime(info.start)}`;
}

/** The tooltip at client (x, y) saying `text` ("": none). */
export function showTip(p: Panel, text: string, x: number, y: number): void {
  let tip = p.box.querySelector(".tl-tip") as HTMLElement | null;
  if (!text) {
    tip?.remove();
    return;
  }
  if (!tip) p.box.append(tip = h("div", "tl-tip"));
  tip.textContent = text;
  const rect = p.box.getBoundingClientRect();
  const left = Math.min(x - rect.left + 14, rect.width - 200);
  Object.assign(tip.style, { left: `${Math.max(left, 0)}px`, top: `${y - rect.top + 16}px` });
}

/** The tooltip's text at canvas (x, y): the event there, else a counter's value. */
export function tipAt(state: TimelineState, info: EventInfo | null, x: number, y: number): string {
  if (info) return describe(info);
  const row = x >= LABEL_W ? state.rowAt(y) : null;
  if (row?.kind !== "counter") return "";
  const c = state.data.counters[row.track];
  const v = valueAt(c, state.tOf(x));
  return v === null ? "" : `${c.name}: ${fmtValue(v, c.unit)} at ${fmtTime(state.tOf(x))}`;
}

/** Copy `text` to the clipboard (the page's fallback where the API is refused). */
export function copyText(text: string): void {
  const fallback = () => {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand?.("copy");
    area.remove();
  };
  if (navigator.clipboard?.writeText) navigator.clipboard.writeText(text).catch(fallback);
  else fallback();
}

/** A track's menu at client (x, y): pin or unpin, hide, fold or unfold, copy its name. */
export function trackMenu(p: Panel, state: TimelineState, row: Row, x: number, y: number): void {
  p.box.querySelector(".tl-menu")?.remove();
  const menu = h("div", "tl-menu");
  menu.setAttribute("role", "menu");
  const key = trackKey(row);
  const name = row.kind === "counter" ? state.data.counters[row.track].name : state.data.tracks[row.track].name;
  const items: [string, () => void][] = [
    [state.tracks.has("pinned", row) ? "unpin" : "pin to the top", () => state.toggleTrack("pinned", key)],
    ["hide", () => state.toggleTrack("hidden", key)],
    [state.tracks.has("folded", row) ? "unfold" : "fold", () => state.toggleTrack("folded", key)],
    ["copy name", () => copyText(name)],
  ];
  const away = (e: Event) => { if (!menu.contains(e.target as Node)) close(false); };
  // one way out: the listener goes, and focus goes back to the viewer (not the page)
  const close = (refocus = true) => {
    document.removeEventListener("mousedown", away, true);
    menu.remove();
    if (refocus) p.canvas.focus({ preventScroll: true });
  };
  for (const [label, act] of items) {
    const b = h("button", "tl-menu-item", label);
    b.type = "button";
    b.setAttribute("role", "menuitem");
    b.addEventListener("click", () => { close(); act(); });
    menu.append(b);
  }
  const rect = p.box.getBoundingClientRect();
  Object.assign(menu.style, { left: `${x - rect.left}px`, top: `${y - rect.top}px` });
  p.box.append(menu);
  (menu.firstChild as HTMLElement).focus({ preventScroll: true });
  document.addEventListener("mousedown", away, true);
  menu.addEventListener("keydown", (e) => { if (e.key === "Escape") close(); });
}

/** Place the scrollbar's thumb for `state` (hidden when the rows fit). */
export function placeScrollbar(p: Panel, state: TimelineState): void {
  const top = AXIS_H + state.pinnedH;
  const viewH = state.viewH();
  const fits = state.contentH <= viewH;
  p.scroll.style.display = fits ? "none" : "block";
  if (fits) return;
  Object.assign(p.scroll.style, { top: `${top}px`, height: `${viewH}px`, left: `${state.width - SCROLLBAR_W}px` });
  const size = Math.max(20, viewH * viewH / state.contentH);
  const room = viewH - size;
  const at = room * state.scrollY / Math.max(state.contentH - viewH, 1);
  Object.assign(p.thumb.style, { top: `${at}px`, height: `${size}px` });
}

/** Drag the thumb (or click the track: a page) to scroll; drag the grip to resize (`resized`
 * gets the new height). Returns what stops listening. */
export function attachScroll(p: Panel, state: TimelineState, resized: (height: number) => void): () => void {
  let drag: { y: number; scroll: number; grip: boolean; height: number } | null = null;
  const down = (grip: boolean) => (e: MouseEvent) => {
    e.preventDefault();
    e.stopPropagation();
    drag = { y: e.clientY, scroll: state.scrollY, grip, height: state.height };
  };
  const onTrack = (e: MouseEvent) => {
    if (e.target !== p.scroll) return;
    const thumb = p.thumb.getBoundingClientRect();
    state.scrollBy((e.clientY < thumb.top ? -1 : 1) * state.viewH() * 0.9);
  };
  const onMove = (e: MouseEvent) => {
    if (!drag) return;
    const dy = e.clientY - drag.y;
    if (drag.grip) {
      resized(Math.max(120, Math.round(drag.height + dy)));
    } else {  // the thumb follows the pointer: its travel is the track less its size
      const viewH = state.viewH();
      const room = viewH - Math.max(20, viewH * viewH / state.contentH);
      state.scrollTo(drag.scroll + dy * (state.contentH - viewH) / Math.max(room, 1));
    }
  };
  const onUp = () => { drag = null; };
  const thumbDown = down(false);
  const gripDown = down(true);
  p.thumb.addEventListener("mousedown", thumbDown);
  p.grip.addEventListener("mousedown", gripDown);
  p.scroll.addEventListener("mousedown", onTrack);
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  return () => {
    p.thumb.removeEventListener("mousedown", thumbDown);
    p.grip.removeEventListener("mousedown", gripDown);
    p.scroll.removeEventListener("mousedown", onTrack);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
  };
}
