// XLA ops: notes on the device's peaks and what could not be resolved, the roofline (a plotly
// figure built in Python), the op profile as an icicle (program -> category -> op, by device
// time), the HLO op stats table (a click selects a row; "graph" draws the HLO graph around it
// below the table, hlograph.ts) and a program's memory (xlamemory.ts).
import { type Model, type ViewContext } from "./model";
import { traceRows } from "./tracelinks";
import { renderFigure, type Figure } from "./figure";
import { renderIcicle, scopeRows } from "./charts";
import { decodeTable, renderTable } from "./table";
import { statements, text, viewRoot } from "./ui";
import { renderProgramMemory } from "./xlamemory";
import { graphAction } from "./xlagraph";

export function render({ model, el, ctx }: { model: Model; el: HTMLElement; ctx?: ViewContext }): () => void {
  const root = viewRoot(el, "tfprof-xla", model);
  statements(root, model);
  const cleanup = renderFigure(root, model.get("figure") as Figure, { height: 460 });
  const rows = scopeRows(decodeTable(model.get("op_profile")));
  if (rows.length) {
    root.append(text("h4", "tp-h", "Op profile: device time by program, category and op"));
    const box = document.createElement("div");
    box.className = "xla-op-profile";
    box.append(renderIcicle(rows));
    root.append(box);
  }
  const graph = graphAction(model, traceRows(ctx, "hlo"));
  renderTable(root, () => decodeTable(model.get("table")), graph.options);
  root.append(graph.el);
  const memory = renderProgramMemory(root, model);
  return () => {
    cleanup();
    memory();
    graph.cleanup();
  };
}

export default { render };
