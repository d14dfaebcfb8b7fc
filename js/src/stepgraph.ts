// Step-time graph: one stacked bar per step, one colour per step-time category, hover shows
// the breakdown, click reports the step (the dashboard zooms its timeline to it).
import { type ModelLike, SVG_NS, PALETTE } from "./model";

export interface StepSpec {
  steps: string[];
  categories: { name: string; label: string }[];
  values: Record<string, number[]>; // ms per category per step
  duration: number[]; // ms
}

/** Bar segments (pure; unit-tested): per step, stacked [y0, y1) in ms per category. */
export function stack(spec: StepSpec): { step: number; cat: number; y0: number; y1: number }[] {
  const out: { step: number; cat: number; y0: number; y1: number }[] = [];
  spec.steps.forEach((_, s) => {
    let y = 0;
    spec.categories.forEach((c, k) => {
      const v = spec.values[c.name]?.[s] ?? 0;
      if (v > 0) out.push({ step: s, cat: k, y0: y, y1: y + v });
      y += Math.max(v, 0);
    });
  });
  return out;
}

export function renderStepGraph(el: HTMLElement, model: ModelLike, key = "step_graph"): () => void {
  const root = document.createElement("div");
  root.className = "tfprof-stepgraph";
  root.style.position = "relative";
  root.style.font = "12px var(--jp-ui-font-family, sans-serif)";
  const tip = document.createElement("div");
  tip.className = "sg-tip";
  tip.style.cssText = "position:absolute;display:none;pointer-events:none;background:rgba(30,30,30,.9);color:#fff;padding:4px 6px;white-space:pre;border-radius:3px;";
  const legend = document.createElement("div");
  legend.className = "sg-legend";
  root.append(legend, tip);
  el.append(root);
  let svg: SVGSVGElement | null = null;

  function draw(): void {
    const spec = model.get(key) as StepSpec;
    svg?.remove();
    const W = 900;
    const H = 260;
    const L = 50;
    const B = 30;
    svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("width", String(W));
    svg.setAttribute("height", String(H));
    root.insertBefore(svg, tip);
    const max = Math.max(1e-9, ...spec.duration, ...spec.steps.map((_, s) =>
      spec.categories.reduce((a, c) => a + Math.max(spec.values[c.name]?.[s] ?? 0, 0), 0)));
    const n = Math.max(spec.steps.length, 1);
    const bw = Math.max(2, ((W - L - 10) / n) * 0.8);
    const xOf = (s: number) => L + ((W - L - 10) / n) * (s + 0.1);
    const yOf = (ms: number) => H - B - (ms / max) * (H - B - 10);
    for (const f of [0, 0.5, 1]) {
      const t = document.createElementNS(SVG_NS, "text");
      t.setAttribute("x", "2");
      t.setAttribute("y", String(yOf(max * f) + 4));
      t.setAttribute("fill", "currentColor");
      t.textContent = `${(max * f).toFixed(max * f < 10 ? 2 : 1)} ms`;
      svg.append(t);
    }
    for (const seg of stack(spec)) {
      const r = document.createElementNS(SVG_NS, "rect");
      r.setAttribute("x", String(xOf(seg.step)));
      r.setAttribute("width", String(bw));
      r.setAttribute("y", String(yOf(seg.y1)));
      r.setAttribute("height", String(Math.max(yOf(seg.y0) - yOf(seg.y1), 0.5)));
      r.setAttribute("fill", PALETTE[seg.cat % PALETTE.length]);
      r.setAttribute("class", "sg-bar");
      r.dataset.step = String(seg.step);
      r.addEventListener("mousemove", (e) => {
        const s = seg.step;
        const lines = [`${spec.steps[s]}: ${spec.duration[s].toFixed(3)} ms`];
        spec.categories.forEach((c) => {
          const v = spec.values[c.name]?.[s] ?? 0;
          if (v > 0) lines.push(`${c.label}: ${v.toFixed(3)} ms`);
        });
        tip.textContent = lines.join("\n");
        tip.style.display = "block";
        const rect = root.getBoundingClientRect();
        tip.style.left = `${e.clientX - rect.left + 12}px`;
        tip.style.top = `${e.clientY - rect.top + 12}px`;
      });
      r.addEventListener("mouseleave", () => { tip.style.display = "none"; });
      r.addEventListener("click", () => {
        model.set?.("clicked_step", seg.step);
        model.save_changes?.();
        root.dispatchEvent(new CustomEvent("tfprof-step", { detail: seg.step, bubbles: true }));
      });
      svg.append(r);
    }
    legend.replaceChildren(...spec.categories.map((c, k) => {
      const item = document.createElement("span");
      item.style.marginRight = "10px";
      const sw = document.createElement("span");
      sw.style.cssText = `display:inline-block;width:10px;height:10px;margin-right:3px;background:${PALETTE[k % PALETTE.length]}`;
      item.append(sw, document.createTextNode(c.label));
      return item;
    }));
  }
  draw();
  model.on?.(`change:${key}`, draw);
  return () => {};
}

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  return renderStepGraph(el, model);
}

export default { render };
