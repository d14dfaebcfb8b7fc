// The pod viewer: the step-time breakdown of every host side by side (the mean of all steps,
// or one step from the figure's menu).
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { viewRoot } from "./ui";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-pod", model);
  return renderFigure(root, model.get("figure") as Figure, {
    height: 400, menu: { label: "Show", className: "pod-step" },
  });
}

export default { render };
