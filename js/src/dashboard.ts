// The dashboard: every view of a profile in tabs. It walks its `views` list (tab, title, view
// kind, trait prefix, and why a tab is empty or what failed) and renders each view from the
// dashboard's own model through the view's prefix; nothing here knows a view's traits.
import { type Model } from "./model";
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

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-dashboard", model);
  const header = document.createElement("div");
  header.className = "tp-header";
  for (const [label, value] of (model.get("header") ?? []) as [string, string][]) {
    const item = document.createElement("div");
    item.append(text("span", "", `${label} `), text("b", "", value));
    header.append(item);
  }
  const tabs = document.createElement("div");
  tabs.className = "tp-tabs db-tabs";
  root.append(header, tabs);
  const entries = (model.get("views") ?? []) as ViewEntry[];
  const panes = new Map<string, HTMLElement>();
  const cleanups: (() => void)[] = [];
  const built = new Set<string>();
  const zoomable = entries.find((e) => e.zoomable && !e.reason && !e.error);
  const ctx = {
    zoomTo(start: number, end: number) {
      if (!zoomable) return;
      model.set(`${zoomable.prefix}view`, [start, end]);
      model.save_changes();
      show(zoomable.tab);
    },
  };

  function build(entry: ViewEntry, pane: HTMLElement): void {
    if (built.has(entry.tab)) return;
    built.add(entry.tab);
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
      if (cleanup) cleanups.push(cleanup);
    } catch (err) {
      pane.append(errorBox(`The ${entry.title} view failed in the browser: ${String(err)}`,
        err instanceof Error ? err.stack ?? "" : ""));
      console.error(err);
    }
  }

  function show(tab: string): void {
    for (const [t, pane] of panes) pane.style.display = t === tab ? "block" : "none";
    for (const t of Array.from(tabs.children)) t.classList.toggle("active", (t as HTMLElement).dataset.tab === tab);
    const entry = entries.find((e) => e.tab === tab);
    if (entry) build(entry, panes.get(tab)!);
  }

  for (const entry of entries) {
    const tab = text("div", `tp-tab db-tab${entry.reason ? " tp-tab-empty" : ""}`, entry.title);
    tab.dataset.tab = entry.tab;
    if (entry.reason) tab.title = entry.reason;
    tab.addEventListener("click", () => show(entry.tab));
    tabs.append(tab);
    const pane = document.createElement("div");
    pane.className = "tp-pane db-pane";
    pane.dataset.pane = entry.tab;
    root.append(pane);
    panes.set(entry.tab, pane);
  }
  if (entries.length) show(entries[0].tab);
  (root as any).__dashboard = { show };
  return () => cleanups.forEach((f) => f());
}

export default { render };
