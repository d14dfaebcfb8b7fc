// The dashboard: every view of a profile in tabs. It walks its `views` list (tab, title, view
// kind, trait prefix, and why a tab is empty or what failed) and renders each view from the
// dashboard's own model through the view's prefix; nothing here knows a view's traits.
import { type Model, type TraceFind, type ViewContext } from "./model";
import { VIEWS } from "./views";
import { errorBox, text, viewRoot } from "./ui";

export interface ViewEntry {
  tab: string;
  title: string;
  kind: string;
  prefix: string;
  zoomable: boolean; // has a `view` trait ([start, end] in us) the dashboard may set
  reason: string;
  error: string;
  traceback: string; // of the error, from Python
  pending?: boolean; // built when opened: the dashboard asks the kernel for it
}

/** A view of `model` whose keys are the dashboard's keys under `prefix`; its custom
 * messages carry the prefix (`view`) both ways, so each view hears only its own answers. */
export function prefixed(model: Model, prefix: string): Model {
  const wrapped = new Map<(...args: any[]) => void, (...args: any[]) => void>();
  const event = (ev: string) => ev.replace("change:", `change:${prefix}`);
  return {
    get: (k) => model.get(prefix + k),
    set: (k, v) => model.set(prefix + k, v),
    save_changes: () => model.save_changes(),
    on: (ev, cb) => {
      if (ev !== "msg:custom") return model.on(event(ev), cb);
      const own = (msg: any, buffers: unknown) => {
        if (msg && msg.view === prefix) cb(msg, buffers);
      };
      wrapped.set(cb, own);
      model.on(ev, own);
    },
    off: (ev, cb) => {
      if (ev !== "msg:custom") return model.off?.(event(ev), cb);
      const own = wrapped.get(cb);
      if (own) model.off?.(ev, own);
      wrapped.delete(cb);
    },
    send: model.send
      ? (content, callbacks, buffers) => model.send!({ ...(content as object), view: prefix }, callbacks, buffers)
      : undefined,
  };
}

/** What a tab's pane shows while the kernel builds the tab (or why it cannot). */
function pendingNote(entry: ViewEntry, kernel: boolean): HTMLElement {
  return text("div", "tp-reason db-pending", kernel ? `Loading ${entry.title}…` :
    `${entry.title} was not built before this page was saved: run the cell again.`);
}

/** The tab strip: WAI-ARIA tabs (roving focus, arrow keys, Home and End). */
function tabStrip(entries: ViewEntry[], choose: (tab: string) => void): HTMLElement {
  const tabs = document.createElement("div");
  tabs.className = "tp-tabs db-tabs";
  tabs.setAttribute("role", "tablist");
  for (const entry of entries) {
    const tab = text("button", `tp-tab db-tab${entry.reason ? " tp-tab-empty" : ""}`, entry.title);
    Object.assign(tab, { type: "button", id: `${entry.prefix}tab`, tabIndex: -1 });
    tab.dataset.tab = entry.tab;
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", "false");
    if (entry.reason) tab.title = entry.reason;
    tab.addEventListener("click", () => choose(entry.tab));
    tabs.append(tab);
  }
  tabs.addEventListener("keydown", (e) => {
    const all = Array.from(tabs.children) as HTMLElement[];
    const at = all.indexOf(document.activeElement as HTMLElement);
    if (at < 0) return;
    const next = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: all.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    const tab = all[(next + all.length) % all.length];
    tab.focus();
    choose(tab.dataset.tab!);
  });
  return tabs;
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-dashboard", model);
  const header = document.createElement("div");
  header.className = "tp-header";
  for (const [label, value] of (model.get("header") ?? []) as [string, string][]) {
    const item = document.createElement("div");
    item.append(text("span", "", `${label} `), text("b", "", value));
    header.append(item);
  }
  let entries = (model.get("views") ?? []) as ViewEntry[];
  const kernel = typeof model.send === "function";
  const panes = new Map<string, HTMLElement>();
  const cleanups = new Map<string, () => void>();
  const built = new Set<string>();
  const asked = new Set<string>();
  let shown = "";
  const trace = () => entries.find((e) => e.zoomable && !e.reason && !e.error);
  const ctx: ViewContext = {
    zoomTo(start: number, end: number) {
      const zoomable = trace();
      if (!zoomable) return;
      model.set(`${zoomable.prefix}view`, [start, end]);
      model.save_changes();
      show(zoomable.tab);
    },
    showInTrace(find: TraceFind) {
      const zoomable = trace();
      if (!zoomable) return;
      model.set(`${zoomable.prefix}find`, { ...find, nonce: `${Date.now()}:${Math.random()}` });
      show(zoomable.tab);
    },
  };

  function build(entry: ViewEntry, pane: HTMLElement): void {
    if (built.has(entry.tab)) return;
    if (entry.pending) {
      if (!pane.firstChild) pane.append(pendingNote(entry, kernel));
      if (kernel && !asked.has(entry.tab)) {
        asked.add(entry.tab);
        model.send!({ kind: "tab", tab: entry.tab });
      }
      return;
    }
    built.add(entry.tab);
    pane.replaceChildren();
    if (entry.error) {
      pane.append(errorBox(`The ${entry.title} view failed: ${entry.error}`, entry.traceback));
      return;
    }
    if (entry.reason) {
      pane.append(text("div", "tp-reason db-reason", entry.reason));
      return;
    }
    const view = VIEWS[entry.kind];
    if (!view) {
      pane.append(errorBox(`No view called ${entry.kind} in this bundle.`));
      return;
    }
    try {
      const cleanup = view({ model: prefixed(model, entry.prefix), el: pane, ctx });
      if (cleanup) cleanups.set(entry.tab, cleanup);
    } catch (err) {
      pane.append(errorBox(`The ${entry.title} view failed in the browser: ${String(err)}`,
        err instanceof Error ? err.stack ?? "" : ""));
      console.error(err);
    }
  }

  function show(tab: string): void {
    shown = tab;
    for (const [t, pane] of panes) pane.style.display = t === tab ? "block" : "none";
    for (const t of Array.from(tabs.children) as HTMLElement[]) {
      const on = t.dataset.tab === tab;
      t.classList.toggle("active", on);
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
    }
    const entry = entries.find((e) => e.tab === tab);
    if (entry) build(entry, panes.get(tab)!);
  }

  const tabs = tabStrip(entries, show);
  root.append(header, tabs);
  for (const entry of entries) {
    const pane = document.createElement("div");
    pane.className = "tp-pane db-pane";
    pane.dataset.pane = entry.tab;
    pane.setAttribute("role", "tabpanel");
    pane.setAttribute("aria-labelledby", `${entry.prefix}tab`);
    root.append(pane);
    panes.set(entry.tab, pane);
  }
  // a pending tab built by the kernel: its traits come in the same update as this entry, in
  // any order, so the view is drawn once the update is over (drawn at once, it would take the
  // change events of its own traits still to come as new data: a row's search or a zoom lost)
  const onViews = () => {
    entries = (model.get("views") ?? []) as ViewEntry[];
    queueMicrotask(() => {
      const entry = entries.find((e) => e.tab === shown);
      if (entry && !entry.pending) build(entry, panes.get(shown)!);
    });
  };
  model.on("change:views", onViews);
  if (entries.length) show(entries[0].tab);
  (root as any).__dashboard = { show };
  return () => {
    model.off?.("change:views", onViews);
    cleanups.forEach((f) => f());
  };
}

export default { render };
