// tf.data pipeline graph: the iterators of one call of a pipeline laid out with dagre (a
// layered graph layout, so interleave, zip and parallel pipelines stay readable), the
// critical (blocking) path in bold, the bottleneck in red; hover (SVG title) shows start,
// total and self time and calls; the suggestion for the bottleneck is shown beside.
import dagre from "@dagrejs/dagre";
import { counted } from "./format";
import { type ModelLike, SVG_NS } from "./model";
import { decodeTable, type TableSpec } from "./table";
import { viewRoot } from "./ui";

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

export interface Execution {
  host: string;
  pipeline: string;
  rank: number;
  nodes: TfDataNode[];
}

/** The pipeline calls of a nodes table (rows grouped by host, pipeline and rank, as Python
 * sends them), each with its iterators (pure; unit-tested). */
export function executions(table: TableSpec): Execution[] {
  const d = table.data;
  const out: Execution[] = [];
  const n = d.id?.length ?? 0;
  for (let i = 0; i < n; i++) {
    const host = String(d.host[i]);
    const pipeline = String(d.pipeline[i]);
    const rank = Number(d.rank[i]);
    let ex = out[out.length - 1];
    if (!ex || ex.host !== host || ex.pipeline !== pipeline || ex.rank !== rank) {
      ex = { host, pipeline, rank, nodes: [] };
      out.push(ex);
    }
    ex.nodes.push({
      id: String(d.id[i]), parent: String(d.parent[i]), name: String(d.name[i]),
      long_name: String(d.long_name[i]), start_us: Number(d.start_us[i]), total_us: Number(d.total_us[i]),
      self_us: Number(d.self_us[i]), calls: Number(d.calls[i]), critical: !!d.critical[i],
      bottleneck: !!d.bottleneck[i],
    });
  }
  return out;
}

const NODE_W = 230;
const NODE_H = 62;

/** Node boxes and edge paths laid out by dagre (a layered graph layout): the pipeline's
 * root at the top, every iterator below the one that calls it (pure; unit-tested). */
export function layout(nodes: TfDataNode[]): {
  boxes: Map<string, { x: number; y: number }>;
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
  width: number;
  height: number;
} {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 24, ranksep: 36, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(nodes.map((n) => n.id));
  for (const n of nodes) g.setNode(n.id, { width: NODE_W, height: NODE_H });
  for (const n of nodes) if (ids.has(n.parent) && n.parent !== n.id) g.setEdge(n.parent, n.id);
  dagre.layout(g);
  const boxes = new Map<string, { x: number; y: number }>();
  for (const id of g.nodes()) {
    const v = g.node(id) as any;
    boxes.set(id, { x: v.x - NODE_W / 2, y: v.y - NODE_H / 2 });
  }
  const edges = g.edges().map((e: any) => ({ from: e.v, to: e.w, points: (g.edge(e) as any).points ?? [] }));
  const graph = g.graph() as any;
  return { boxes, edges, width: graph.width ?? 0, height: graph.height ?? 0 };
}

export function renderTfData(el: HTMLElement, model: ModelLike): () => void {
  const calls = executions(decodeTable(model.get("nodes")));
  const suggestions = (model.get("suggestions") ?? {}) as Record<string, string>; // "host|pipeline"
  const root = viewRoot(el, "tfprof-tfdata");
  const summary = document.createElement("p");
  summary.className = "tp-text";
  summary.textContent = String(model.get("summary") ?? "");
  const select = document.createElement("select");
  select.className = "tfd-exec tp-select";
  calls.forEach((e, i) =>
    select.append(new Option(`${e.host} · ${e.pipeline} · call #${e.rank + 1} by latency`, String(i))));
  const suggestion = document.createElement("p");
  suggestion.className = "tfd-suggestion tp-text";
  const host = document.createElement("div");
  root.append(summary, select, suggestion, host);

  function draw(): void {
    host.replaceChildren();
    const ex = calls[Number(select.value)];
    if (!ex) return;
    suggestion.textContent = suggestions[`${ex.host}|${ex.pipeline}`] ?? "";
    const { boxes, edges, width, height } = layout(ex.nodes);
    const byId = new Map(ex.nodes.map((n) => [n.id, n]));
    const svg = document.createElementNS(SVG_NS, "svg");
    svg.setAttribute("width", String(Math.ceil(width)));
    svg.setAttribute("height", String(Math.ceil(height)));
    svg.setAttribute("class", "tfd-graph");
    for (const e of edges) {
      const child = byId.get(e.to);
      const path = document.createElementNS(SVG_NS, "polyline");
      path.setAttribute("points", e.points.map((p) => `${p.x},${p.y}`).join(" "));
      path.setAttribute("fill", "none");
      path.setAttribute("stroke", child?.critical ? "var(--tp-fg, #333)" : "var(--tp-fg2, #999)");
      path.setAttribute("stroke-width", child?.critical ? "3" : "1");
      svg.append(path);
    }
    for (const n of ex.nodes) {
      const box = boxes.get(n.id);
      if (!box) continue;
      const g = document.createElementNS(SVG_NS, "g");
      g.setAttribute("class", `tfd-node${n.critical ? " critical" : ""}${n.bottleneck ? " bottleneck" : ""}`);
      g.dataset.id = n.id;
      const title = document.createElementNS(SVG_NS, "title");
      title.textContent = `${n.long_name}\nstart: ${n.start_us.toFixed(3)} us\ntotal: ${n.total_us.toFixed(3)} us\n` +
        `self: ${n.self_us.toFixed(3)} us\ncalls: ${n.calls}`;
      const rect = document.createElementNS(SVG_NS, "rect");
      rect.setAttribute("x", String(box.x));
      rect.setAttribute("y", String(box.y));
      rect.setAttribute("width", String(NODE_W));
      rect.setAttribute("height", String(NODE_H));
      rect.setAttribute("rx", "6");
      rect.setAttribute("fill", n.bottleneck ? "rgba(225,87,89,0.18)" : "var(--tp-bg2, #f4f6f9)");
      rect.setAttribute("stroke", n.bottleneck ? "#d50000" : n.critical ? "var(--tp-fg, #333)" : "var(--tp-border, #aaa)");
      rect.setAttribute("stroke-width", n.critical || n.bottleneck ? "3" : "1");
      const line = (dy: number, value: string, bold = false) => {
        const t = document.createElementNS(SVG_NS, "text");
        t.setAttribute("x", String(box.x + 8));
        t.setAttribute("y", String(box.y + dy));
        t.setAttribute("fill", "var(--tp-fg, #222)");
        if (bold) t.setAttribute("font-weight", "bold");
        t.textContent = value;
        return t;
      };
      g.append(title, rect, line(18, n.name, n.critical),
        line(36, `self ${n.self_us.toFixed(1)} us / total ${n.total_us.toFixed(1)} us`),
        line(53, counted(n.calls, "call")));
      svg.append(g);
    }
    const scroll = document.createElement("div");
    scroll.style.overflow = "auto";
    scroll.append(svg);
    host.append(scroll);
  }
  select.addEventListener("change", draw);
  draw();
  return () => {};
}
