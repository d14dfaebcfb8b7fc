// Standalone widget: the pod viewer, steps of every host side by side (see pod.ts).
import { type Model } from "./model";
import { renderPod } from "./pod";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  return renderPod(el, model, "pod");
}

export default { render };
