// Comparison of two profiles: mean step time per category side by side (a plotly figure),
// and the op and kernel deltas as tables.
import { type ModelLike } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { text, viewRoot } from "./ui";

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-compare", model);
  root.append(text("p", "tp-text cmp-summary", String(model.get("summary") ?? "")));
  const cleanup = renderFigure(root, model.get("figure") as Figure);
  for (const key of ["ops_delta", "kernels_delta"]) {
    const spec = decodeTable(model.get(key));
    if (spec && spec.columns.length) renderTable(root, () => spec);
  }
  return cleanup;
}

export default { render };
