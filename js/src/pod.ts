// Pod view: for one step (slider), a stacked column per host/worker with the step-time
// categories, the slowest host marked in the title.
import { type ModelLike } from "./model";
import { renderStepGraph, type StepSpec } from "./stepgraph";

export interface PodSpec {
  steps: number[];
  hosts: string[];
  categories: { name: string; label: string }[];
  // values[category][stepIndex][hostIndex] in ms
  values: Record<string, number[][]>;
  duration: number[][];
}

/** The stacked-column spec of one step (pure; unit-tested). */
export function podStep(spec: PodSpec, s: number): StepSpec {
  return {
    steps: spec.hosts,
    categories: spec.categories,
    values: Object.fromEntries(spec.categories.map((c) => [c.name, spec.values[c.name][s]])),
    duration: spec.duration[s],
  };
}

export function renderPod(el: HTMLElement, model: ModelLike, key = "pod"): () => void {
  const spec = model.get(key) as PodSpec;
  const root = document.createElement("div");
  root.className = "tfprof-pod";
  const bar = document.createElement("div");
  const slider = document.createElement("input");
  slider.type = "range";
  slider.className = "pod-step";
  slider.min = "0";
  slider.max = String(Math.max(spec.steps.length - 1, 0));
  slider.value = "0";
  const label = document.createElement("span");
  label.className = "pod-label";
  label.style.marginLeft = "8px";
  bar.append(slider, label);
  const graph = document.createElement("div");
  root.append(bar, graph);
  el.append(root);
  let current: StepSpec = podStep(spec, 0);
  const inner = { get: (k: string) => (k === "graph" ? current : undefined), on: (_e: string, cb: () => void) => { redraw = cb; } };
  let redraw: () => void = () => {};
  function update(): void {
    const s = Number(slider.value);
    current = podStep(spec, s);
    const d = spec.duration[s];
    const slowest = d.indexOf(Math.max(...d));
    label.textContent = `step ${spec.steps[s]} · slowest: ${spec.hosts[slowest]} (${d[slowest].toFixed(3)} ms)`;
    redraw();
  }
  renderStepGraph(graph, inner, "graph");
  slider.addEventListener("input", update);
  update();
  return () => {};
}
