// The trace viewer's "graph" action: under the selected event's details, when the event ran
// for an HLO op (a GPU kernel, an XLA op: its `hlo_op` stat), the shared action
// (../graphaction.ts) asks the kernel for the HLO graph around that op by the event's id
// (inside a command buffer the kernel's own instruction, not the buffer its stat names) and
// draws it there. Hidden for other events; without a kernel, a sentence says why.
import { type Model } from "../model";
import { detailsTarget, graphAction } from "../graphaction";
import { ensureStyle } from "../ui";
import { showDetails, type Panel } from "./panel";

/** The action's box (append it after the details) and what to call on new details. */
export function detailsGraph(model: Model, anchor: HTMLElement): { el: HTMLElement; show: (details: Record<string, unknown>) => void; cleanup: () => void } {
  ensureStyle(anchor);
  const box = document.createElement("div");
  box.className = "tfprof tl-graph-box";
  box.style.cssText = "padding:0 6px;display:none";
  const graph = graphAction(model, "tl-graph", "");
  box.append(graph.el);
  const show = (details: Record<string, unknown>) => {
    const target = detailsTarget(details ?? {});
    box.style.display = target ? "" : "none";
    if (!target) return;
    const buffer = target.op.startsWith("command_buffer");
    graph.choose([target], `${String(details.name ?? "")}: ${buffer ? `a kernel of ${target.op}, its own` : "HLO op"} ` +
      `${buffer ? "instruction" : target.op} `);
  };
  return { el: box, show, cleanup: graph.cleanup };
}

/** The details pane with its graph action under it: `details()` shows the model's details. */
export function detailsPane(model: Model, panel: Panel, copy: () => void): { details: () => void; cleanup: () => void } {
  const graph = detailsGraph(model, panel.root);
  panel.details.after(graph.el);
  const details = () => {
    showDetails(panel.details, model.get("details") ?? {}, copy);
    graph.show(model.get("details") ?? {});
  };
  return { details, cleanup: graph.cleanup };
}
