// The XLA tab's "graph" action: a click on a row of the HLO op stats table selects it (and
// still shows its events in the trace viewer inside the dashboard); the shared action
// (graphaction.ts) asks the kernel for the HLO graph around the selected op and draws it below
// the table. A page without a kernel says why there is no button.
import { type Model } from "./model";
import { type TableOptions } from "./table";
import { graphAction as action } from "./graphaction";

export function graphAction(model: Model, trace: TableOptions): { el: HTMLElement; options: TableOptions; cleanup: () => void } {
  const graph = action(model, "xla-graph", "Select a row of the table, then: ");
  if (typeof model.send !== "function") return { el: graph.el, options: trace, cleanup: graph.cleanup };
  const options: TableOptions = {
    rowTitle: trace.rowTitle ? `${trace.rowTitle}; selects it for "graph"` : 'click: select it for "graph"',
    onRow: (r) => {
      const op = String(r.hlo_op_name ?? "");
      const program = String(r.program_id ?? "");
      graph.choose(op ? [{ op, program }] : [], `Selected: ${op} (program ${program}) `);
      trace.onRow?.(r);
    },
  };
  return { el: graph.el, options, cleanup: graph.cleanup };
}
