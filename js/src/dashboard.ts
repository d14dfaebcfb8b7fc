// The dashboard: one tabbed view of a profile. Each tab is one of the standalone views,
// rendered from the dashboard's own model through a key prefix; a tab without data says why.
import { type Model } from "./model";
import { render as renderTimeline } from "./timeline";
import { renderTable, type TableSpec } from "./table";
import { renderStepGraph } from "./stepgraph";
import { renderMemory } from "./memory";
import { renderPod } from "./pod";
import { renderTfData } from "./tfdata";
import { pie, renderIcicle, type ScopeRow, type Slice } from "./charts";

function prefixed(model: Model, prefix: string): Model {
  return {
    get: (k) => model.get(prefix + k),
    set: (k, v) => model.set(prefix + k, v),
    save_changes: () => model.save_changes(),
    on: (ev, cb) => model.on(ev.replace("change:", `change:${prefix}`), cb),
    off: (ev, cb) => model.off?.(ev.replace("change:", `change:${prefix}`), cb),
  };
}

function text(tag: string, cls: string, value: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = cls;
  e.textContent = value;
  return e;
}

const STYLE = `
.tfprof-dashboard { font: 13px var(--jp-ui-font-family, sans-serif); color: var(--jp-ui-font-color1, #222); }
.tfprof-dashboard .db-tabs { display: flex; gap: 2px; border-bottom: 1px solid var(--jp-border-color1, #ccc); }
.tfprof-dashboard .db-tab { padding: 4px 10px; cursor: pointer; border: 1px solid transparent; }
.tfprof-dashboard .db-tab.active { border-color: var(--jp-border-color1, #ccc); border-bottom-color: transparent; font-weight: 600; }
.tfprof-dashboard .db-pane { padding: 6px 0; }
.tfprof-dashboard .db-cards { display: flex; gap: 12px; flex-wrap: wrap; }
.tfprof-dashboard .db-card { border: 1px solid var(--jp-border-color2, #ddd); padding: 6px 10px; min-width: 160px; }
.tfprof-dashboard .db-card b { display: block; font-size: 16px; }
.tfprof-dashboard .db-reason { padding: 20px; color: var(--jp-ui-font-color2, #666); }
`;

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = document.createElement("div");
  root.className = "tfprof-dashboard";
  const style = document.createElement("style");
  style.textContent = STYLE;
  const tabs = document.createElement("div");
  tabs.className = "db-tabs";
  root.append(style, tabs);
  el.append(root);
  const reasons = (model.get("reasons") ?? {}) as Record<string, string>;
  const panes = new Map<string, HTMLElement>();
  const cleanups: (() => void)[] = [];
  const built = new Set<string>();
  const order: [string, string][] = [["overview", "Overview"], ["timeline", "Trace viewer"],
    ["ops", "TensorFlow stats"], ["kernels", "GPU kernel stats"], ["memory", "Memory"],
    ["input", "Input pipeline"], ["tfdata", "tf.data"], ["pod", "Pod viewer"]];

  function build(name: string, pane: HTMLElement): void {
    if (built.has(name)) return;
    built.add(name);
    if (reasons[name]) {
      pane.append(text("div", "db-reason", reasons[name]));
      return;
    }
    if (name === "overview") buildOverview(pane);
    else if (name === "timeline") cleanups.push(renderTimeline({ model: prefixed(model, "tl_"), el: pane }));
    else if (name === "memory") cleanups.push(renderMemory(pane, model));
    else if (name === "input") buildInput(pane);
    else if (name === "tfdata") cleanups.push(renderTfData(pane, model, "tf_data"));
    else if (name === "pod") cleanups.push(renderPod(pane, model, "pod"));
    else if (name === "ops") {
      buildOpCharts(pane);
      renderTable(pane, () => model.get("ops_table") as TableSpec);
    }
    else {
      const key = { kernels: "kernels_table" }[name]!;
      renderTable(pane, () => model.get(key) as TableSpec);
    }
  }

  function buildOverview(pane: HTMLElement): void {
    const ov = (model.get("overview") ?? {}) as {
      cards?: [string, string][];
      statements?: string[];
      recommendations?: string[];
    };
    const cards = document.createElement("div");
    cards.className = "db-cards";
    for (const [label, value] of ov.cards ?? []) {
      const c = document.createElement("div");
      c.className = "db-card";
      c.append(text("span", "db-card-label", label), text("b", "db-card-value", value));
      cards.append(c);
    }
    pane.append(cards);
    for (const s of ov.statements ?? []) pane.append(text("p", "db-statement", s));
    if ((model.get("step_graph")?.steps ?? []).length) {
      pane.append(text("h4", "db-h", "Step-time graph"));
      renderStepGraph(pane, model, "step_graph");
    } else {
      pane.append(text("div", "db-reason", reasons.steps ?? "No steps in this profile."));
    }
    const env = model.get("environment") as TableSpec | undefined;
    if (env && env.columns.length) {
      pane.append(text("h4", "db-h", "Run environment"));
      renderTable(pane, () => env);
    }
    if (model.get("top_ops")) {
      pane.append(text("h4", "db-h", "Top operations"));
      renderTable(pane, () => model.get("top_ops") as TableSpec);
    }
    pane.append(text("h4", "db-h", "Recommendations"));
    const list = document.createElement("ul");
    for (const r of ov.recommendations ?? []) list.append(text("li", "db-rec", r));
    if (!(ov.recommendations ?? []).length) list.append(text("li", "db-rec", "Nothing stands out."));
    pane.append(list);
  }

  function buildOpCharts(pane: HTMLElement): void {
    const pies = model.get("ops_pies") as Record<string, Record<string, Slice[]>> | undefined;
    if (pies) {
      const idle = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.className = "db-idle";
      box.checked = true;
      idle.append(box, document.createTextNode(" include idle time"));
      const row = document.createElement("div");
      row.className = "db-pies";
      row.style.display = "flex";
      row.style.flexWrap = "wrap";
      const draw = () => {
        const data = pies[box.checked ? "with_idle" : "without_idle"] ?? {};
        row.replaceChildren(...[["host_op", "Host: by op"], ["host_type", "Host: by op type"],
          ["device_op", "Device: by op"], ["device_type", "Device: by op type"]]
          .filter(([k]) => (data[k] ?? []).length)
          .map(([k, title]) => pie(title, data[k])));
      };
      box.addEventListener("change", draw);
      draw();
      pane.append(idle, row);
    }
    const scopes = model.get("scopes") as (ScopeRow & { time: number; bytes: number })[] | undefined;
    if (scopes && scopes.length) {
      const metric = document.createElement("select");
      metric.className = "db-scope-metric";
      metric.append(new Option("name scopes by self time", "time"), new Option("name scopes by allocated memory", "bytes"));
      const holder = document.createElement("div");
      const draw = () => {
        const key = metric.value as "time" | "bytes";
        holder.replaceChildren(renderIcicle(scopes.map((r) => ({ ...r, value: r[key] }))));
      };
      metric.addEventListener("change", draw);
      draw();
      pane.append(metric, holder);
    }
  }

  function buildInput(pane: HTMLElement): void {
    const summary = (model.get("input_summary") ?? {}) as { statement?: string; next_step?: string };
    pane.append(text("p", "db-statement", summary.statement ?? ""));
    pane.append(text("p", "db-statement", summary.next_step ?? ""));
    pane.append(text("h4", "db-h", "Device side: step time and time waiting for input"));
    renderStepGraph(pane, model, "input_graph");
    pane.append(text("h4", "db-h", "Host side: where input time goes"));
    renderTable(pane, () => model.get("input_host") as TableSpec);
    pane.append(text("h4", "db-h", "Input ops"));
    renderTable(pane, () => model.get("input_ops") as TableSpec);
  }

  function show(name: string): void {
    for (const [n, pane] of panes) pane.style.display = n === name ? "block" : "none";
    for (const t of Array.from(tabs.children)) t.classList.toggle("active", (t as HTMLElement).dataset.tab === name);
    build(name, panes.get(name)!);
  }

  for (const [name, label] of order) {
    const tab = text("div", "db-tab", label);
    tab.dataset.tab = name;
    tab.addEventListener("click", () => show(name));
    tabs.append(tab);
    const pane = document.createElement("div");
    pane.className = "db-pane";
    pane.dataset.pane = name;
    root.append(pane);
    panes.set(name, pane);
  }
  // a click on a step zooms the trace viewer to it
  root.addEventListener("tfprof-step", (e) => {
    const i = (e as CustomEvent).detail as number;
    const step = (model.get("tl_meta")?.steps ?? [])[i];
    if (!step) return;
    model.set("tl_view", [step.start, step.end]);
    model.save_changes();
    show("timeline");
  });
  show("overview");
  (root as any).__dashboard = { show };
  return () => cleanups.forEach((f) => f());
}

export default { render };
