// The trace viewer's DOM around its canvas: the toolbar (step menu, search, previous and next
// match, fit, reset, the track filter, fold empty tracks, show hidden tracks, the keys), the
// viewer box (canvas, scrollbar, tooltip, menus; resizable), the status line, the selected
// event's links and details, the area's summary and the notes (what the view cannot show, and
// why). Everything is text (textContent), never markup.
import { type Step } from "../data";
import { ARGUMENTS } from "../details";
import { type AreaRow } from "./area";
import { fmtTime } from "./layout";
import { type Links, type Partner } from "./links";
import { type Theme } from "./theme";

const MAX_STEP_OPTIONS = 500; // entries of the step menu

const STYLE = `
.tfprof-timeline { font: 12px var(--jp-ui-font-family, sans-serif); color: var(--tl-fg); border: 1px solid var(--tl-grid); max-width: 100%; box-sizing: border-box; }
.tfprof-timeline .tl-bar { display: flex; gap: 6px; align-items: center; padding: 4px; flex-wrap: wrap; }
.tfprof-timeline .tl-bar input { width: 160px; }
.tfprof-timeline .tl-bar button, .tfprof-timeline .tl-bar select { font: inherit; }
.tfprof-timeline .tl-box { position: relative; outline: none; }
.tfprof-timeline .tl-box:focus-within { box-shadow: inset 0 0 0 2px var(--tl-accent); }
.tfprof-timeline canvas { display: block; outline: none; cursor: crosshair; }
.tfprof-timeline .tl-scroll { position: absolute; width: 10px; background: var(--tl-track); }
.tfprof-timeline .tl-thumb { position: absolute; left: 1px; right: 1px; border-radius: 4px; background: var(--tl-grid); cursor: default; }
.tfprof-timeline .tl-grip { height: 6px; cursor: ns-resize; background: var(--tl-track); border-top: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-tip { position: absolute; pointer-events: none; background: var(--tl-bg); border: 1px solid var(--tl-grid); padding: 3px 6px; border-radius: 4px; white-space: pre; max-width: 480px; overflow: hidden; text-overflow: ellipsis; box-shadow: 0 2px 6px rgba(0,0,0,.2); z-index: 3; }
.tfprof-timeline .tl-overlay { position: absolute; inset: 24px 30px auto auto; background: var(--tl-bg); border: 1px solid var(--tl-grid); padding: 8px 12px; border-radius: 6px; z-index: 4; box-shadow: 0 2px 10px rgba(0,0,0,.25); }
.tfprof-timeline .tl-overlay table { border-collapse: collapse; }
.tfprof-timeline .tl-overlay td { padding: 1px 10px 1px 0; }
.tfprof-timeline .tl-menu { position: absolute; background: var(--tl-bg); border: 1px solid var(--tl-grid); border-radius: 4px; z-index: 4; display: flex; flex-direction: column; box-shadow: 0 2px 8px rgba(0,0,0,.25); }
.tfprof-timeline .tl-menu button { border: none; background: none; color: inherit; text-align: left; padding: 4px 12px; font: inherit; cursor: pointer; }
.tfprof-timeline .tl-menu button:hover, .tfprof-timeline .tl-menu button:focus { background: var(--tl-track); }
.tfprof-timeline .tl-notes { padding: 2px 6px; color: #b26b00; }
.tfprof-timeline .tl-notes:empty, .tfprof-timeline .tl-critical-note:empty, .tfprof-timeline .tl-links:empty, .tfprof-timeline .tl-area:empty { display: none; }
.tfprof-timeline .tl-status { padding: 2px 6px; min-height: 16px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tfprof-timeline .tl-links { padding: 2px 6px; display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
.tfprof-timeline .tl-links button { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tfprof-timeline .tl-area { padding: 4px 6px; max-height: 240px; overflow: auto; border-top: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-area table, .tfprof-timeline .tl-details table { border-collapse: collapse; }
.tfprof-timeline .tl-area th { text-align: left; position: sticky; top: 0; background: var(--tl-bg); padding: 1px 10px 1px 0; white-space: nowrap; }
.tfprof-timeline .tl-area td { padding: 1px 10px 1px 0; white-space: nowrap; }
.tfprof-timeline .tl-area td.tl-area-name { max-width: 60ch; overflow: hidden; text-overflow: ellipsis; }
.tfprof-timeline .tl-area-find { border: none; background: none; color: inherit; font: inherit; padding: 0; cursor: pointer; text-align: left; max-width: 60ch; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tfprof-timeline .tl-area-find:hover, .tfprof-timeline .tl-area-find:focus { text-decoration: underline; }
.tfprof-timeline .tl-area td.tl-num, .tfprof-timeline .tl-area th.tl-num { text-align: right; font-variant-numeric: tabular-nums; }
.tfprof-timeline .tl-details { padding: 4px 6px; max-height: 180px; overflow: auto; border-top: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-details td { padding: 1px 8px 1px 0; vertical-align: top; word-break: break-all; }
.tfprof-timeline .tl-details td:first-child { font-weight: 600; white-space: nowrap; }
.tfprof-timeline .tl-details .tl-args-title { font-weight: 600; margin-top: 4px; padding-top: 2px; border-top: 1px solid var(--tl-grid); }
`;

export interface Panel {
  root: HTMLElement;
  steps: HTMLSelectElement;
  search: HTMLInputElement;
  prev: HTMLButtonElement;
  next: HTMLButtonElement;
  found: HTMLSpanElement;
  fit: HTMLButtonElement;
  reset: HTMLButtonElement;
  filter: HTMLInputElement;
  foldEmpty: HTMLButtonElement;
  showAll: HTMLButtonElement;
  help: HTMLButtonElement;
  notes: HTMLElement;
  box: HTMLElement;
  canvas: HTMLCanvasElement;
  scroll: HTMLElement;
  thumb: HTMLElement;
  grip: HTMLElement;
  status: HTMLElement;
  links: HTMLElement;
  critical: HTMLButtonElement; // shows the step's critical path (a toggle)
  criticalNote: HTMLElement; // what bounds that step
  area: HTMLElement;
  details: HTMLElement;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text = ""): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = cls;
  if (text) e.textContent = text;
  return e;
}

function button(cls: string, text: string, title: string): HTMLButtonElement {
  const b = h("button", cls, text);
  b.type = "button";
  b.title = title;
  b.setAttribute("aria-label", title);
  return b;
}

/** The viewer's elements, appended to `el`. */
export function buildPanel(el: HTMLElement, theme: Theme): Panel {
  const root = h("div", "tfprof-timeline");
  for (const [k, v] of [["fg", theme.fg], ["grid", theme.grid], ["bg", theme.bg],
    ["track", theme.dark ? "#2a2a2a" : "#f0f2f5"], ["accent", theme.dark ? "#64b4ff" : "#1e64dc"]]) {
    root.style.setProperty(`--tl-${k}`, v);
  }
  root.style.background = theme.bg;
  const style = document.createElement("style");
  style.textContent = STYLE;
  const p: Panel = {
    root, steps: h("select", "tl-steps"), search: h("input", "tl-search"),
    prev: button("tl-prev", "◀", "previous match (shift+Enter)"), next: button("tl-next", "▶", "next match (Enter)"),
    found: h("span", "tl-found"), fit: button("tl-fit", "fit", "fit the selection or area (F)"),
    reset: button("tl-reset", "reset", "show the whole profile (0)"), filter: h("input", "tl-filter"),
    foldEmpty: button("tl-fold-empty", "fold empty", "fold the tracks with nothing in the window (again: unfold them)"),
    showAll: button("tl-show-all", "", "show the hidden tracks"), help: button("tl-help", "?", "keys and mouse (?)"),
    notes: h("div", "tl-notes"), box: h("div", "tl-box"), canvas: h("canvas", "tl-canvas"),
    scroll: h("div", "tl-scroll"), thumb: h("div", "tl-thumb"), grip: h("div", "tl-grip"),
    status: h("div", "tl-status"), links: h("div", "tl-links"),
    critical: button("tl-critical", "critical path", "show the chain of events that bounds the step chosen in the step menu"),
    criticalNote: h("div", "tl-critical-note"), area: h("div", "tl-area"), details: h("div", "tl-details"),
  };
  Object.assign(p.search, { placeholder: "search names", type: "search" });
  p.search.setAttribute("aria-label", "search event names");
  Object.assign(p.filter, { placeholder: "filter tracks", type: "search" });
  p.filter.setAttribute("aria-label", "show only the tracks whose name has this text");
  p.steps.setAttribute("aria-label", "zoom to a step");
  p.canvas.tabIndex = 0;
  p.canvas.setAttribute("role", "application");
  p.canvas.setAttribute("aria-label", "trace viewer: click to focus; W/S zoom, A/D pan, ? for the keys");
  p.grip.title = "drag to resize the viewer";
  p.showAll.style.display = "none";
  p.scroll.append(p.thumb);
  p.box.append(p.canvas, p.scroll);
  const bar = h("div", "tl-bar");
  p.critical.setAttribute("aria-pressed", "false");
  bar.append(p.steps, p.critical, p.search, p.prev, p.next, p.found, p.fit, p.reset, p.filter, p.foldEmpty, p.showAll, p.help);
  root.append(style, bar, p.notes, p.box, p.grip, p.status, p.criticalNote, p.links, p.area, p.details);
  el.append(root);
  return p;
}

/** The step menu: every k-th step, at most MAX_STEP_OPTIONS entries spanning the whole
 * profile (a menu of thousands costs seconds to build and cannot be read). */
export function fillSteps(select: HTMLSelectElement, steps: Step[]): void {
  const every = Math.max(1, Math.ceil(steps.length / MAX_STEP_OPTIONS));
  // (without steps the menu says so and offers nothing, rather than an empty "zoom to step")
  select.disabled = steps.length === 0;
  const options = [new Option(steps.length ? "zoom to step…" : "no steps", "")];
  for (let i = 0; i < steps.length; i += every) options.push(new Option(steps[i].name, String(i)));
  select.replaceChildren(...options);
}

/** A table of label and text rows, as text. */
function pairsTable(rows: [string, unknown][], cls: string): HTMLTableElement {
  const table = h("table", cls);
  for (const [k, v] of rows) {
    const tr = document.createElement("tr");
    tr.append(h("td", "", k), h("td", "", String(v)));
    table.append(tr);
  }
  return table;
}

/** The selected event's details as Python formatted them (live, or embedded in an offline
 * page), as Perfetto shows a slice's: its fields, then its stats under their own title
 * (ARGUMENTS), all as text; and a button copying the name. */
export function showDetails(el: HTMLElement, details: Record<string, unknown>, copy: () => void): void {
  const fields = Object.entries(details).filter(([k]) => k !== ARGUMENTS);
  const raw = details[ARGUMENTS];
  const args = Array.isArray(raw) ? raw.filter((p): p is [string, unknown] => Array.isArray(p) && p.length === 2)
    .map(([k, v]) => [String(k), v] as [string, unknown]) : [];
  const items: HTMLElement[] = [];
  if (fields.length) {
    const b = button("tl-copy", "copy name", "copy the event's name (Ctrl+C)");
    b.addEventListener("click", copy);
    items.push(b);
  }
  items.push(pairsTable(fields, "tl-fields"));
  if (args.length) items.push(h("div", "tl-args-title", ARGUMENTS), pairsTable(args, "tl-args"));
  el.replaceChildren(...items);
}

/** The selection's linked events: what they are, each a button that jumps to it. */
export function showLinks(el: HTMLElement, links: Links, jump: (p: Partner) => void): void {
  if (!links.partners.length) {
    el.replaceChildren();
    return;
  }
  const items: HTMLElement[] = [h("span", "tl-links-label", "linked:")];
  for (const p of links.partners) {
    const b = h("button", "tl-link", `${p.role === "from" ? "←" : "→"} ${p.label} ${p.name} (${fmtTime(p.dur)})`);
    b.title = `${p.label}: ${p.name} at ${fmtTime(p.start)}: show it`;
    b.addEventListener("click", () => jump(p));
    items.push(b);
  }
  if (links.more > 0) items.push(h("span", "tl-links-more", `and ${links.more} more`));
  el.replaceChildren(...items);
}

/** The area's summary: its status, then per name the count, time and self time in the range
 * (a click on a name searches it). */
export function showArea(el: HTMLElement, status: string, rows: AreaRow[], find: (name: string) => void): void {
  if (!status && !rows.length) {
    el.replaceChildren();
    return;
  }
  const table = document.createElement("table");
  const head = document.createElement("tr");
  for (const [label, num] of [["name", false], ["count", true], ["time in range", true], ["self time", true],
    ["average", true]] as [string, boolean][]) head.append(h("th", num ? "tl-num" : "", label));
  table.append(head);
  for (const r of rows) {
    const tr = document.createElement("tr");
    const name = h("td", "tl-area-name");
    const search = button("tl-area-find", r.name, `${r.name}\n(search this name)`);
    search.addEventListener("click", () => find(r.name));
    name.append(search);
    tr.append(name, h("td", "tl-num", r.count.toLocaleString("en-US")), h("td", "tl-num", fmtTime(r.wall)),
      h("td", "tl-num", fmtTime(r.self)), h("td", "tl-num", fmtTime(r.wall / Math.max(r.count, 1))));
    table.append(tr);
  }
  el.replaceChildren(h("div", "tl-area-status", status), table);
}
