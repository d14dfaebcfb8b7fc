// The look every view shares: one stylesheet (type scale, spacing, palette in light and dark,
// cards, tables, tabs), added once per document, and small DOM helpers.  Profile strings only
// ever go into the page as text.

const STYLE_ID = "tfprof-nb-style";

const STYLE = `
.tfprof {
  --tp-font: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif);
  --tp-fg: var(--jp-ui-font-color1, #1f2328);
  --tp-fg2: var(--jp-ui-font-color2, #59636e);
  --tp-bg: var(--jp-layout-color0, #ffffff);
  --tp-bg2: var(--jp-layout-color1, #f6f8fa);
  --tp-bg3: var(--jp-layout-color2, #eaeef2);
  --tp-border: var(--jp-border-color2, #d1d9e0);
  --tp-accent: var(--jp-brand-color1, #4e79a7);
  --tp-warn: #c4432b;
  --tp-good: #2f7d32;
  font: 13px/1.45 var(--tp-font);
  color: var(--tp-fg);
}
.tfprof h3.tp-title { font-size: 15px; font-weight: 600; margin: 14px 0 6px; }
.tfprof h4.tp-h { font-size: 13px; font-weight: 600; margin: 16px 0 6px; color: var(--tp-fg); }
.tfprof p.tp-text { margin: 4px 0; max-width: 110ch; }
.tfprof .tp-muted { color: var(--tp-fg2); }
.tfprof .tp-header { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: baseline;
  padding: 8px 2px 10px; border-bottom: 1px solid var(--tp-border); margin-bottom: 8px; }
.tfprof .tp-header b { font-size: 16px; }
.tfprof .tp-header span { color: var(--tp-fg2); }
.tfprof .tp-cards { display: flex; gap: 10px; flex-wrap: wrap; margin: 8px 0; }
.tfprof .tp-card { background: var(--tp-bg2); border: 1px solid var(--tp-border); border-radius: 6px;
  padding: 8px 12px; min-width: 150px; }
.tfprof .tp-card .tp-card-label { display: block; font-size: 11px; text-transform: uppercase;
  letter-spacing: .04em; color: var(--tp-fg2); }
.tfprof .tp-card .tp-card-value { display: block; font-size: 18px; font-weight: 600; margin-top: 2px; }
.tfprof .tp-card .tp-card-scope { display: block; font-size: 11px; color: var(--tp-fg2); margin-top: 2px;
  max-width: 32ch; }
.tfprof .tp-reason { padding: 24px 12px; color: var(--tp-fg2); }
.tfprof .tp-error { padding: 12px; margin: 8px 0; border: 1px solid var(--tp-warn); border-radius: 6px;
  color: var(--tp-warn); white-space: pre-wrap; font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.tfprof .tp-error details { margin-top: 8px; color: var(--tp-fg); }
.tfprof .tp-error summary { cursor: pointer; color: var(--tp-warn); }
.tfprof .tp-error pre { margin: 6px 0 0; max-height: 320px; overflow: auto; }
.tfprof ul.tp-list { margin: 4px 0; padding-left: 20px; max-width: 120ch; }
.tfprof ul.tp-list li { margin: 3px 0; }
.tfprof .tp-tabs { display: flex; flex-wrap: wrap; gap: 2px; border-bottom: 1px solid var(--tp-border); }
.tfprof .tp-tab { padding: 6px 12px; cursor: pointer; border: 1px solid transparent; border-bottom: none;
  background: none; font: inherit;
  border-radius: 6px 6px 0 0; color: var(--tp-fg2); user-select: none; }
.tfprof .tp-tab:hover { color: var(--tp-fg); background: var(--tp-bg2); }
.tfprof .tp-tab.active { color: var(--tp-fg); border-color: var(--tp-border); background: var(--tp-bg);
  margin-bottom: -1px; font-weight: 600; }
.tfprof .tp-tab.tp-tab-empty { opacity: .6; }
.tfprof .tp-tab:focus-visible { outline: 2px solid var(--tp-accent); outline-offset: -2px; }
.tfprof .tp-pane { padding: 8px 2px; }
.tfprof .tp-toolbar { display: flex; gap: 12px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
.tfprof .tp-table-wrap { max-height: 460px; max-width: 100%; overflow: auto; border: 1px solid var(--tp-border); border-radius: 6px; }
.tfprof table.tp-table { border-collapse: collapse; width: 100%; font-size: 12px; }
.tfprof table.tp-table th { position: sticky; top: 0; z-index: 1; background: var(--tp-bg3); text-align: left;
  font-weight: 600; padding: 5px 8px; border-bottom: 1px solid var(--tp-border); cursor: pointer;
  white-space: normal; min-width: 4em; max-width: 12em; vertical-align: bottom; }
.tfprof table.tp-table td { padding: 3px 8px; border-bottom: 1px solid var(--tp-border); max-width: 340px;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tfprof table.tp-table tr:nth-child(even) td { background: var(--tp-bg2); }
.tfprof table.tp-table td.tp-num, .tfprof table.tp-table th.tp-num { text-align: right; font-variant-numeric: tabular-nums; }
.tfprof table.tp-table tr.tp-row-link { cursor: pointer; }
.tfprof table.tp-table tr.tp-row-link:hover td, .tfprof table.tp-table tr.tp-row-link:focus td { background: var(--tp-bg3); }
.tfprof input.tp-filter { padding: 3px 6px; border: 1px solid var(--tp-border); border-radius: 4px;
  background: var(--tp-bg); color: var(--tp-fg); min-width: 220px; }
.tfprof button.tp-button, .tfprof select.tp-select { padding: 3px 10px; border: 1px solid var(--tp-border);
  border-radius: 4px; background: var(--tp-bg2); color: var(--tp-fg); cursor: pointer; }
.tfprof .tp-figure { min-height: 200px; }
`;

/** Where styles for `node` must go: its shadow root (marimo and some hosts render widgets
 * in one, which the document's styles do not reach) or the document's head. */
export function styleHost(node?: Node | null): { root: Document | ShadowRoot; parent: Node } {
  const root = node?.getRootNode?.();
  if (root && typeof ShadowRoot !== "undefined" && root instanceof ShadowRoot) return { root, parent: root };
  return { root: document, parent: document.head ?? document.documentElement };
}

/** Add the shared stylesheet where `node` can see it (once per document or shadow root). */
export function ensureStyle(node?: Node | null): void {
  const { root, parent } = styleHost(node);
  if (root.querySelector(`#${STYLE_ID}`)) return;
  const style = document.createElement("style");
  style.id = STYLE_ID;
  style.textContent = STYLE;
  parent.appendChild(style);
}

/** An element with a class and text content (never markup). */
export function text(tag: string, cls: string, value: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  e.textContent = value;
  return e;
}

/** A view's `statements` (its model's list of sentences), one paragraph each, as text. */
export function statements(root: HTMLElement, model: { get(k: string): any }): void {
  for (const s of (model.get("statements") ?? []) as string[]) root.append(text("p", "tp-text db-statement", s));
}

/** The root element of a view, styled.  Given the view's model, the view shows the
 * widget's `error` (set by Python when answering the page failed) at its top. */
export function viewRoot(el: HTMLElement, cls: string, model?: { get(k: string): any; on?(e: string, cb: () => void): void }): HTMLElement {
  ensureStyle(el);
  const root = document.createElement("div");
  root.className = `tfprof ${cls}`;
  el.append(root);
  if (model) {
    let box: HTMLElement | null = null;
    const show = () => {
      box?.remove();
      box = null;
      const message = model.get("error");
      if (message) {
        box = errorBox(String(message));
        root.prepend(box);
      }
    };
    model.on?.("change:error", show);
    show();
  }
  return root;
}

/** Summary cards: [label, value] pairs, or [label, value, scope]: what the number counts
 * (which devices, which time; XProf's figure where its rule differs), under the value. */
export function cards(items: ([string, string] | [string, string, string])[]): HTMLElement {
  const box = document.createElement("div");
  box.className = "tp-cards";
  for (const [label, value, scope] of items) {
    const c = document.createElement("div");
    c.className = "tp-card db-card";
    c.append(text("span", "tp-card-label", label), text("span", "tp-card-value", value));
    if (scope) c.append(text("span", "tp-card-scope", scope));
    box.append(c);
  }
  return box;
}

/** A view's error in its place: the message, a hint to report it and, folded, the
 * traceback when there is one. */
export function errorBox(message: string, traceback = ""): HTMLElement {
  const box = text("div", "tp-error", `${message}\n\nThis looks like a bug in tfprof_nb: please report ` +
    "it with the message above. The other views still work.");
  if (traceback) {
    const details = document.createElement("details");
    details.className = "tp-traceback";
    details.append(text("summary", "", "Traceback"), text("pre", "", traceback));
    box.append(details);
  }
  return box;
}
