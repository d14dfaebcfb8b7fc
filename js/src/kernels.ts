// GPU kernel stats: the top kernels by total time (a chart) and the sortable table.
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { viewRoot } from "./ui";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-kernels", model);
  const cleanup = renderFigure(root, model.get("figure") as Figure);
  renderTable(root, () => decodeTable(model.get("table")));
  return cleanup;
}

export default { render };
