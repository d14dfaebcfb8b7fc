// GPU kernel stats: what a column's rule cannot tell, the top kernels by total time (a chart)
// and the sortable table.
import { type Model, type ViewContext } from "./model";
import { traceRows } from "./tracelinks";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { statements, viewRoot } from "./ui";

export function render({ model, el, ctx }: { model: Model; el: HTMLElement; ctx?: ViewContext }): () => void {
  const root = viewRoot(el, "tfprof-kernels", model);
  statements(root, model);
  const cleanup = renderFigure(root, model.get("figure") as Figure);
  renderTable(root, () => decodeTable(model.get("table")), traceRows(ctx, "kernels"));
  return cleanup;
}

export default { render };
