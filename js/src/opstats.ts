// TensorFlow stats: self time by op and type (pies, idle time in or out), the name-scope
// icicle by time or memory, and the sortable table. The "include idle time" box rules both
// the pies and the table: IDLE rows only when it is checked (as XProf's tool).
import { type Model, type ViewContext } from "./model";
import { traceRows } from "./tracelinks";
import { renderFigure, type Figure } from "./figure";
import { renderIcicle, scopeRows } from "./charts";
import { decodeTable, renderTable, type TableOptions } from "./table";
import { statements, text, viewRoot } from "./ui";
import { graphAction, targetsOf } from "./graphaction";

export function render({ model, el, ctx }: { model: Model; el: HTMLElement; ctx?: ViewContext }): () => void {
  const root = viewRoot(el, "tfprof-opstats", model);
  statements(root, model);
  let cleanup = () => {};
  const pies = { with_idle: model.get("pie_with_idle") as Figure, without_idle: model.get("pie_without_idle") as Figure };
  const bar = document.createElement("div");
  bar.className = "tp-toolbar";
  const label = document.createElement("label");
  const idle = document.createElement("input");
  idle.type = "checkbox";
  idle.className = "db-idle";
  idle.checked = false; // idle time often dwarfs the ops; one click brings it in
  label.append(idle, document.createTextNode(" include idle time"));
  bar.append(label);
  const holder = document.createElement("div");
  // what the IDLE rows count (XProf's rule) beside the page's own idle measure: shown with them
  const note = text("p", "tp-text tp-muted db-idle-note", String(model.get("idle_note") ?? ""));
  root.append(bar, note, holder);
  let table: { refresh: () => void } | null = null;
  const draw = () => {
    cleanup();
    note.hidden = !idle.checked || !note.textContent;
    holder.replaceChildren();
    cleanup = renderFigure(holder, idle.checked ? pies.with_idle : pies.without_idle);
    table?.refresh();
  };
  idle.addEventListener("change", draw);
  draw();
  const scopes = scopeRows(decodeTable(model.get("scopes")));
  if (scopes.length) {
    root.append(text("h4", "tp-h", "Name scopes"));
    const metric = document.createElement("select");
    metric.className = "db-scope-metric tp-select";
    // (without memory events every scope allocates 0 bytes: an empty chart, so the choice is
    // offered with why it is not there)
    const memory = new Option("by allocated memory", "bytes");
    if (!scopes.some((r) => Number(r.extra.bytes) > 0)) {
      memory.text = "by allocated memory (no memory events in this profile)";
      memory.disabled = true;
    }
    metric.append(new Option("by self time", "time"), memory);
    const icicle = document.createElement("div");
    const drawIcicle = () => {
      const key = metric.value as "time" | "bytes";
      icicle.replaceChildren(renderIcicle(scopes.map((r) => ({ ...r, value: Number(r.extra[key]) }))));
    };
    metric.addEventListener("change", drawIcicle);
    drawIcicle();
    root.append(metric, icicle);
  }
  root.append(text("h4", "tp-h", "All operations"));
  // (a state packed before the table without idle existed has only the one)
  const rows = () => decodeTable(model.get(idle.checked ? "table" : "table_without_idle") ?? model.get("table"));
  const graph = opsGraph(model, traceRows(ctx, "ops"));
  table = renderTable(root, rows, graph.options);
  if (graph.el) root.append(graph.el);
  return () => {
    cleanup();
    graph.cleanup();
  };
}

/** The "graph" action of the table (graphaction.ts): a click on a row selects it (and still
 * shows its events in the trace viewer inside the dashboard); an op with HLO ops behind it
 * (Python's graph_targets: a framework op's HLO ops, or the HLO op a device row names)
 * offers them. None on a profile without HLO ops. */
function opsGraph(model: Model, trace: TableOptions): { el: HTMLElement | null; options: TableOptions; cleanup: () => void } {
  const targets = (model.get("graph_targets") ?? {}) as Record<string, unknown>;
  if (!Object.keys(targets).length) return { el: null, options: trace, cleanup: () => {} };
  const graph = graphAction(model, "ops-graph", "Select an op of the table, then: ");
  if (typeof model.send !== "function") return { el: graph.el, options: trace, cleanup: graph.cleanup };
  const options: TableOptions = {
    rowTitle: `${trace.rowTitle ? `${trace.rowTitle}; ` : "click: "}select it for "graph"`,
    onRow: (r) => {
      const op = String(r.operation ?? "");
      const found = targetsOf(targets[op]);
      graph.choose(found, found.length ? `Selected: ${op}: HLO op ` : `Selected: ${op}: no HLO op behind it `);
      trace.onRow?.(r);
    },
  };
  return { el: graph.el, options, cleanup: graph.cleanup };
}

export default { render };
