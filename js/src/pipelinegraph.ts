// Standalone widget: the tf.data pipeline graph of a profile (see tfdata.ts).
import { type Model } from "./model";
import { renderTfData } from "./tfdata";

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  return renderTfData(el, model);
}

export default { render };
