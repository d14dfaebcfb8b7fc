// The trace viewer's DOM around its canvas: the toolbar (step menu, search, previous and
// next match, fit, reset), the status line, the selected event's details and the notes (what
// the view cannot show, and why). Everything is text (textContent), never markup.
import { type Step } from "../data";
import { fmtTime } from "./layout";
import { type Links, type Partner } from "./links";
import { type Theme } from "./paint";

const MAX_STEP_OPTIONS = 500; // entries of the step menu

const STYLE = `
.tfprof-timeline { font: 12px var(--jp-ui-font-family, sans-serif); color: var(--tl-fg); border: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-bar { display: flex; gap: 6px; align-items: center; padding: 4px; flex-wrap: wrap; }
.tfprof-timeline .tl-bar input { width: 180px; }
.tfprof-timeline canvas { display: block; outline: none; cursor: grab; }
.tfprof-timeline .tl-notes { padding: 2px 6px; color: #b26b00; }
.tfprof-timeline .tl-notes:empty { display: none; }
.tfprof-timeline .tl-status { padding: 2px 6px; min-height: 16px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tfprof-timeline .tl-links { padding: 2px 6px; display: flex; gap: 6px; flex-wrap: wrap; align-items: center; }
.tfprof-timeline .tl-links:empty { display: none; }
.tfprof-timeline .tl-links button { max-width: 420px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tfprof-timeline .tl-details { padding: 4px 6px; max-height: 180px; overflow: auto; border-top: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-details table { border-collapse: collapse; }
.tfprof-timeline .tl-details td { padding: 1px 8px 1px 0; vertical-align: top; word-break: break-all; }
.tfprof-timeline .tl-details td:first-child { font-weight: 600; white-space: nowrap; }
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
  notes: HTMLElement;
  canvas: HTMLCanvasElement;
  status: HTMLElement;
  links: HTMLElement;
  details: HTMLElement;
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text = ""): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = cls;
  if (text) e.textContent = text;
  return e;
}

/** The viewer's elements, appended to `el`. */
export function buildPanel(el: HTMLElement, theme: Theme): Panel {
  const root = h("div", "tfprof-timeline");
  root.style.setProperty("--tl-fg", theme.fg);
  root.style.setProperty("--tl-grid", theme.grid);
  root.style.background = theme.bg;
  const style = document.createElement("style");
  style.textContent = STYLE;
  const p: Panel = {
    root, steps: h("select", "tl-steps"), search: h("input", "tl-search"), prev: h("button", "tl-prev", "◀"),
    next: h("button", "tl-next", "▶"), found: h("span", "tl-found"), fit: h("button", "tl-fit", "fit selection"),
    reset: h("button", "tl-reset", "reset"), notes: h("div", "tl-notes"), canvas: h("canvas", "tl-canvas"),
    status: h("div", "tl-status"), links: h("div", "tl-links"), details: h("div", "tl-details"),
  };
  p.search.placeholder = "search names";
  p.search.type = "search";
  p.canvas.tabIndex = 0;
  const bar = h("div", "tl-bar");
  const help = h("span", "tl-help",
    "wheel/W S: zoom · drag/A D: pan · shift+wheel: scroll · alt+drag: measure · click: details");
  bar.append(p.steps, p.search, p.prev, p.next, p.found, p.fit, p.reset, help);
  root.append(style, bar, p.notes, p.canvas, p.status, p.links, p.details);
  el.append(root);
  return p;
}

/** The step menu: every k-th step, at most MAX_STEP_OPTIONS entries spanning the whole
 * profile (a menu of thousands costs seconds to build and cannot be read). */
export function fillSteps(select: HTMLSelectElement, steps: Step[]): void {
  const every = Math.max(1, Math.ceil(steps.length / MAX_STEP_OPTIONS));
  const options = [new Option("zoom to step…", "")];
  for (let i = 0; i < steps.length; i += every) options.push(new Option(steps[i].name, String(i)));
  select.replaceChildren(...options);
}

/** The selected event's details (as Python or the offline host answers them): a table. */
export function showDetails(el: HTMLElement, details: Record<string, unknown>): void {
  const table = document.createElement("table");
  for (const [k, v] of Object.entries(details)) {
    const tr = document.createElement("tr");
    const a = document.createElement("td");
    a.textContent = k;
    const b = document.createElement("td");
    b.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
    tr.append(a, b);
    table.append(tr);
  }
  el.replaceChildren(table);
}

/** The selection's linked events: what they are, each a button that jumps to it. */
export function showLinks(el: HTMLElement, links: Links, jump: (p: Partner) => void): void {
  if (!links.partners.length) {
    el.replaceChildren();
    return;
  }
  const launch = links.partners[0].role === "launch";
  const items: HTMLElement[] = [h("span", "tl-links-label", launch ? "launched by:" : "launches:")];
  for (const p of links.partners) {
    const b = h("button", "tl-link", `${launch ? "←" : "→"} ${p.name} (${fmtTime(p.dur)})`);
    b.title = `${p.name} at ${fmtTime(p.start)}: show it`;
    b.addEventListener("click", () => jump(p));
    items.push(b);
  }
  if (links.more > 0) items.push(h("span", "tl-links-more", `and ${links.more} more`));
  el.replaceChildren(...items);
}
