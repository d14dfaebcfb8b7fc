// tf.data pipeline graph: the iterators of one call of a pipeline laid out by depth, the
// critical (blocking) path in bold, the bottleneck in red; hover (SVG title) shows start,
// total and self time and calls; the suggestion for the bottleneck is shown beside.
import { type ModelLike, SVG_NS } from "./model";

export interface TfDataNode {
  id: string;
  parent: string;
  name: string;
  long_name: string;
  start_us: number;
  total_us: number;
  self_us: number;
  calls: number;
  critical: boolean;
  bottleneck: boolean;
}

export interface TfDataSpec {
  // one entry per (host, pipeline, rank): label and nodes
  executions: { host: string; pipeline: string; rank: number; nodes: TfDataNode[] }[];
  suggestions: Record<string, string>; // "host|pipeline" -> text
  summary: string;
}

/** Layered layout (pure; unit-tested): depth from the root along parent links, order within
 * a depth by first appearance. */
export function layout(nodes: TfDataNode[]): Map<string, { depth: number; order: number }> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depthOf = new Map<string, number>();
  const depth = (n: TfDataNode, guard = 0): number => {
    if (depthOf.has(n.id)) return depthOf.get(n.id)!;
    const p = byId.get(n.parent);
    const d = p && p.id !== n.id && guard < 100 ? depth(p, guard + 1) + 1 : 0;
    depthOf.set(n.id, d);
    return d;
  };
  const counts = new Map<number, number>();
  const out = new Map<string, { depth: number; order: number }>();
  for (const n of nodes) {
    const d = depth(n);
    const k = counts.get(d) ?? 0;
    counts.set(d, k + 1);
    out.set(n.id, { depth: d, order: k });
  }
  return out;
}

export function renderTfData(el: HTMLElement, model: ModelLike, key = "tf_data"): () => void {
  const spec = model.get(key) as TfDataSpec;
  const root = document.createElement("div");
  root.className = "tfprof-tfdata";
  root.style.font = "12px var(--jp-ui-font-family, sans-serif)";
  const summary = document.createElement("p");
  summary.textContent = spec.summary;
  const select = document.createElement("select");
  select.className = "tfd-exec";
  spec.executions.forEach((e, i) =>
    select.append(new Option(`${e.host} · ${e.pipeline} · call #${e.rank + 1} by latency`, String(i))));
  const suggestion = document.createElement("p");
  suggestion.className = "tfd-suggestion";
  const host = document.createElement("div");
  root.append(summary, select, suggestion, host);
  el.append(root);

  function draw(): void {
    host.replaceChildren();
    const ex = spec.executions[Number(select.value)];
    if (!ex) return;
    suggestion.textContent = spec.suggestions[`${ex.host}|${ex.pipeline}`] ?? "";
    const pos = layout(ex.nodes);
    const W = 220;
    const H = 64;
    const maxDepth = Math.max(0, ...[...pos.values()].map((p) => p.depth));
    const maxOrder = Math.max(0, ...[...pos.values()].map((p) => p.order));
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("width", String((maxOrder + 1) * (W + 20) + 20));
    svg.setAttribute("height", String((maxDepth + 1) * (H + 30) + 20));
    const center = (id: string) => {
      const p = pos.get(id)!;
      return [20 + p.order * (W + 20) + W / 2, 10 + p.depth * (H + 30)];
    };
    for (const n of ex.nodes) {
      if (!pos.has(n.parent) || n.parent === n.id) continue;
      const [x1, y1] = center(n.parent);
      const [x2, y2] = center(n.id);
      const line = document.createElementNS(SVG_NS, "line");
      line.setAttribute("x1", String(x1));
      line.setAttribute("y1", String(y1 + H));
      line.setAttribute("x2", String(x2));
      line.setAttribute("y2", String(y2));
      line.setAttribute("stroke", n.critical ? "#333" : "#aaa");
      line.setAttribute("stroke-width", n.critical ? "3" : "1");
      svg.append(line);
    }
    for (const n of ex.nodes) {
      const [cx, y] = center(n.id);
      const g = document.createElementNS(SVG_NS, "g");
      g.setAttribute("class", `tfd-node${n.critical ? " critical" : ""}${n.bottleneck ? " bottleneck" : ""}`);
      g.dataset.id = n.id;
      const title = document.createElementNS(SVG_NS, "title");
      title.textContent = `${n.long_name}\nstart: ${n.start_us.toFixed(3)} us\ntotal: ${n.total_us.toFixed(3)} us\n` +
        `self: ${n.self_us.toFixed(3)} us\ncalls: ${n.calls}`;
      const rect = document.createElementNS(SVG_NS, "rect");
      rect.setAttribute("x", String(cx - W / 2));
      rect.setAttribute("y", String(y));
      rect.setAttribute("width", String(W));
      rect.setAttribute("height", String(H));
      rect.setAttribute("rx", "6");
      rect.setAttribute("fill", n.bottleneck ? "#ffd6d6" : "#f4f6f9");
      rect.setAttribute("stroke", n.bottleneck ? "#d50000" : n.critical ? "#333" : "#aaa");
      rect.setAttribute("stroke-width", n.critical || n.bottleneck ? "3" : "1");
      const t1 = document.createElementNS(SVG_NS, "text");
      t1.setAttribute("x", String(cx - W / 2 + 8));
      t1.setAttribute("y", String(y + 18));
      t1.setAttribute("font-weight", n.critical ? "bold" : "normal");
      t1.textContent = n.name;
      const t2 = document.createElementNS(SVG_NS, "text");
      t2.setAttribute("x", String(cx - W / 2 + 8));
      t2.setAttribute("y", String(y + 36));
      t2.textContent = `self ${n.self_us.toFixed(1)} us / total ${n.total_us.toFixed(1)} us`;
      const t3 = document.createElementNS(SVG_NS, "text");
      t3.setAttribute("x", String(cx - W / 2 + 8));
      t3.setAttribute("y", String(y + 54));
      t3.textContent = `${n.calls} call(s)`;
      g.append(title, rect, t1, t2, t3);
      svg.append(g);
    }
    host.append(svg);
  }
  select.addEventListener("change", draw);
  draw();
  return () => {};
}
