// The XLA tab's "graph" action: a click on a row of the HLO op stats table selects it (and
// still shows its events in the trace viewer inside the dashboard); the "graph" button asks the
// kernel for the HLO graph around the selected op (tfprof_nb.widgets.hlo_graph_view.GraphRequests)
// and draws it below the table. A page without a kernel says how to get it in a notebook.
import { type Cell } from "./columns";
import { type Model } from "./model";
import { type TableOptions } from "./table";
import { renderGraph, type GraphData } from "./hlograph";
import { text } from "./ui";

export function graphAction(model: Model, trace: TableOptions): { el: HTMLElement; options: TableOptions; cleanup: () => void } {
  const el = document.createElement("div");
  el.className = "xla-graph";
  const bar = document.createElement("div");
  bar.className = "tp-toolbar";
  const button = document.createElement("button");
  button.className = "tp-button xla-graph-button";
  button.textContent = "graph";
  button.disabled = true;
  const hops = document.createElement("select");
  hops.className = "xla-graph-hops";
  for (const h of [1, 2, 3, 4]) {
    const o = document.createElement("option");
    o.value = String(h);
    o.textContent = `${h} hop${h > 1 ? "s" : ""}`;
    hops.append(o);
  }
  hops.value = "2";
  const chosen = text("span", "tp-text xla-graph-selected", "Select a row of the table, then: ");
  bar.append(chosen, button, hops);
  const out = document.createElement("div");
  out.className = "xla-graph-out";
  el.append(bar, out);
  let row: Record<string, Cell> | null = null;
  let next = 0;
  const options: TableOptions = {
    rowTitle: trace.rowTitle ? `${trace.rowTitle}; selects it for "graph"` : 'click: select it for "graph"',
    onRow: (r) => {
      row = r;
      chosen.textContent = `Selected: ${String(r.hlo_op_name ?? "")} (program ${String(r.program_id ?? "")}) `;
      button.disabled = false;
      trace.onRow?.(r);
    },
  };
  const onMessage = (msg: any) => {
    if (!msg || msg.kind !== "hlo_graph" || msg.id !== next) return;
    out.replaceChildren();
    if (msg.error) out.append(text("p", "tp-text xla-graph-error", `No graph: ${msg.error}`));
    else renderGraph(out, msg.graph as GraphData);
  };
  model.on("msg:custom", onMessage);
  button.addEventListener("click", () => {
    if (!row) return;
    const op = String(row.hlo_op_name ?? "");
    const program = String(row.program_id ?? "");
    if (typeof model.send !== "function") {
      out.replaceChildren(text("p", "tp-text", `This page has no kernel: prof.hlo_graph(${JSON.stringify(op)}, ` +
        `program=${program}).show() in a notebook draws this graph.`));
      return;
    }
    out.replaceChildren(text("p", "tp-text", `Building the graph around ${op}…`));
    model.send({ kind: "hlo_graph", op, program, hops: Number(hops.value), id: ++next });
  });
  return { el, options, cleanup: () => model.off?.("msg:custom", onMessage) };
}
