// Input pipeline: the verdict, input wait per step, the host-side breakdown, the input ops.
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { statements, text, viewRoot } from "./ui";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-input", model);
  statements(root, model);
  const cleanup = renderFigure(root, model.get("figure") as Figure, { height: 360 });
  root.append(text("h4", "tp-h", "Host side: where input time goes"));
  renderTable(root, () => decodeTable(model.get("host_table")));
  renderTable(root, () => decodeTable(model.get("ops_table")));
  return cleanup;
}

export default { render };
