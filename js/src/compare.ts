// Comparison of two profiles: mean step time per category side by side, and the op and kernel
// deltas as tables.
import { type ModelLike } from "./model";
import { renderStepGraph } from "./stepgraph";
import { renderTable, type TableSpec } from "./table";

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  const root = document.createElement("div");
  root.className = "tfprof-compare";
  root.style.font = "13px var(--jp-ui-font-family, sans-serif)";
  const head = document.createElement("p");
  head.className = "cmp-summary";
  head.textContent = String(model.get("summary") ?? "");
  root.append(head);
  el.append(root);
  renderStepGraph(root, model, "steps_graph");
  for (const key of ["ops_delta", "kernels_delta"]) {
    const spec = model.get(key) as TableSpec | undefined;
    if (spec && spec.columns.length) renderTable(root, () => spec);
  }
  return () => {};
}

export default { render };
