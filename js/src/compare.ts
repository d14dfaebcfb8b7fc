// Comparison of two profiles: the median step time's change as a waterfall of the ops that
// add up to it, the mean step per category side by side (plotly figures), then the matched
// ops with their noise bands, the HLO diff and the kernel deltas as tables.
import { type ModelLike } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { text, viewRoot } from "./ui";

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-compare", model);
  const summary = text("pre", "tp-text cmp-summary", String(model.get("summary") ?? ""));
  summary.style.whiteSpace = "pre-wrap";
  root.append(summary);
  const cleanups: Array<() => void> = [];
  for (const key of ["waterfall", "figure"]) {
    const fig = model.get(key) as Figure | null;
    if (!fig) continue;
    const box = document.createElement("div");
    box.className = `cmp-${key}`;
    root.append(box);
    cleanups.push(renderFigure(box, fig));
  }
  for (const key of ["ops_delta", "hlo_diff", "kernels_delta"]) {
    const spec = decodeTable(model.get(key));
    if (!spec || !spec.columns.length) continue;
    const box = document.createElement("div");
    box.className = `cmp-${key.replace("_", "-")}`;
    root.append(box);
    renderTable(box, () => spec);
  }
  return () => cleanups.forEach((f) => f());
}

export default { render };
