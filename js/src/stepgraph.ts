// The step-time graph: stacked step-time categories per step (a plotly figure built in
// Python); a click reports the step (`clicked_step`, the row of prof.steps).
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { viewRoot } from "./ui";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-stepgraph", model);
  return renderFigure(root, model.get("figure") as Figure, {
    onClick: (custom) => {
      const row = Number(custom);
      if (!Number.isFinite(row)) return;
      model.set("clicked_step", row);
      model.save_changes();
    },
  });
}

export default { render };
