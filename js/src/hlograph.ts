// The HLO graph around an op (prof.hlo_graph(op).show(), and the XLA tab's "graph" action):
// boxes with each op's name, opcode and self time, filled by self time, the centre op outlined,
// layered left to right along the data flow (graphlayout.ts); a fusion's box expands into its
// fused computation on a click. Hovering a box or an edge shows its shapes, FLOPs and bytes.
// Profile strings are only ever set as text.
import { type Model } from "./model";
import { SVG_NS } from "./model";
import { decodeRows, type Wire } from "./columns";
import { layout, type Layout, type Size } from "./graphlayout";
import { text, viewRoot } from "./ui";

export interface GraphNode {
  node: string; opcode: string; category: string; shape: string; parent: string;
  center: boolean; is_fusion: boolean; fused_instructions: number; hops: number | null;
  occurrences: number | null; total_time_us: number | null; self_time_us: number | null;
  flops: number | null; memory_accessed_bytes: number | null; attribution: string | null;
}
export interface GraphEdge { source: string; target: string; operand: number; shape: string; parent: string }
export interface GraphData { heading: string; center: string; statements: string[]; nodes: GraphNode[]; edges: GraphEdge[] }

const BOX: Size = { w: 200, h: 44 };
const PAD = 10;
const HEAD = 22;
const NAME_CHARS = 24;

const num = (v: number | null | undefined): number | null =>
  v === null || v === undefined || Number.isNaN(v) ? null : Number(v);

function short(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** A number with a metric prefix (FLOPs, bytes). */
export function metric(v: number | null, unit: string): string {
  if (v === null) return "–";
  const steps: [number, string][] = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  for (const [s, p] of steps) if (Math.abs(v) >= s) return `${(v / s).toFixed(2)} ${p}${unit}`;
  return `${v.toFixed(0)} ${unit}`;
}

export function timeText(us: number | null): string {
  if (us === null) return "no time";
  return us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} us`;
}

/** Fill of a box: white to orange-red by its share of the largest self time; grey: none. */
export function fill(self: number | null, max: number): string {
  if (self === null || !(max > 0)) return "#eef0f3";
  const t = Math.min(1, Math.max(0, self / max));
  const mix = (a: number, b: number) => Math.round(a + (b - a) * t);
  return `rgb(${mix(255, 222)},${mix(247, 84)},${mix(236, 45)})`;
}

/** The lines of a node's tooltip. */
export function tipLines(n: GraphNode): string[] {
  const lines = [n.node, `${n.opcode} (${n.category})`, `shape: ${n.shape}`,
    `self time: ${timeText(num(n.self_time_us))}`, `total time: ${timeText(num(n.total_time_us))}`,
    `occurrences: ${num(n.occurrences) ?? "–"}`, `FLOPs: ${metric(num(n.flops), "FLOP")}`,
    `bytes accessed: ${metric(num(n.memory_accessed_bytes), "B")}`];
  if (n.attribution) lines.push(`attributed by: ${n.attribution}`);
  if (n.is_fusion) lines.push(`fused computation: ${n.fused_instructions} instructions (click)`);
  return lines;
}

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

class GraphDrawing {
  private byParent = new Map<string, GraphNode[]>();
  private edgesIn = new Map<string, GraphEdge[]>();
  private expanded = new Set<string>();
  private max = 0;
  private drawn = false;

  constructor(private data: GraphData, private host: HTMLElement, private tip: HTMLElement) {
    for (const n of data.nodes) (this.byParent.get(n.parent) ?? this.byParent.set(n.parent, []).get(n.parent)!).push(n);
    for (const e of data.edges) (this.edgesIn.get(e.parent) ?? this.edgesIn.set(e.parent, []).get(e.parent)!).push(e);
    for (const n of this.byParent.get("") ?? []) this.max = Math.max(this.max, num(n.self_time_us) ?? 0);
  }

  /** The layout of the nodes inside `parent` ("" for the graph), expanded fusions as groups. */
  private place(parent: string): Layout {
    const nodes = this.byParent.get(parent) ?? [];
    const edges = (this.edgesIn.get(parent) ?? []).map((e) => [e.source, e.target] as [string, string]);
    const inner = new Map<string, Layout>();
    for (const n of nodes) if (n.is_fusion && this.expanded.has(n.node)) inner.set(n.node, this.place(n.node));
    return layout(nodes.map((n) => n.node), edges, (id) => {
      const sub = inner.get(id);
      return sub ? { w: Math.max(BOX.w, sub.width + 2 * PAD), h: sub.height + HEAD + 2 * PAD } : BOX;
    });
  }

  draw(): void {
    const lay = this.place("");
    const root = svg("svg", { width: lay.width + 24, height: lay.height + 24, class: "hg-svg" });
    const defs = svg("defs", {});
    const marker = svg("marker", { id: "hg-arrow", viewBox: "0 0 8 8", refX: 8, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto" });
    marker.append(svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "#8a93a3" }));
    defs.append(marker);
    root.append(defs);
    const g = svg("g", { transform: "translate(12,12)" });
    root.append(g);
    this.drawLevel(g, "", lay);
    this.host.replaceChildren(root);
    if (!this.drawn) this.centre(lay);
    this.drawn = true;
  }

  /** Scroll the first drawing so that the centre op is in the middle of the view. */
  private centre(lay: Layout): void {
    const at = lay.pos.get(this.data.center);
    if (!at) return;
    this.host.scrollLeft = Math.max(0, at.x + 12 + at.w / 2 - this.host.clientWidth / 2);
    this.host.scrollTop = Math.max(0, at.y + 12 + at.h / 2 - this.host.clientHeight / 2);
  }

  private drawLevel(g: SVGGElement, parent: string, lay: Layout): void {
    for (const e of this.edgesIn.get(parent) ?? []) {
      const a = lay.pos.get(e.source);
      const b = lay.pos.get(e.target);
      if (!a || !b) continue;
      const x1 = a.x + a.w, y1 = a.y + a.h / 2, x2 = b.x, y2 = b.y + b.h / 2;
      const mid = (x1 + x2) / 2;
      const path = svg("path", { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2 - 1},${y2}`, class: "hg-edge",
        fill: "none", stroke: "#8a93a3", "stroke-width": 1.3, "marker-end": "url(#hg-arrow)" });
      this.hover(path, [`${e.source} → ${e.target} (operand ${e.operand})`, `shape: ${e.shape}`]);
      g.append(path);
    }
    for (const n of this.byParent.get(parent) ?? []) {
      const p = lay.pos.get(n.node)!;
      const box = svg("g", { transform: `translate(${p.x},${p.y})`, class: "hg-node" });
      box.dataset.node = n.node;
      const open = n.is_fusion && this.expanded.has(n.node);
      const rect = svg("rect", { width: p.w, height: p.h, rx: 5,
        fill: open ? "#f7f9fc" : fill(num(n.self_time_us), this.max),
        stroke: n.center ? "#1f4fd1" : "#6b7484", "stroke-width": n.center ? 3 : 1,
        "stroke-dasharray": open ? "4 3" : "" });
      box.append(rect);
      if (n.center) box.classList.add("hg-center");
      if (n.is_fusion) box.classList.add("hg-fusion", open ? "hg-open" : "hg-closed");
      const mark = n.is_fusion ? (open ? "− " : "+ ") : "";
      box.append(this.label(8, 16, mark + short(n.node, NAME_CHARS), "600"));
      const second = n.parent ? n.shape : timeText(num(n.self_time_us)); // fused: no time of their own
      if (!open) box.append(this.label(8, 34, short(`${short(n.opcode, 12)} · ${second}`, NAME_CHARS), "400"));
      this.hover(rect, tipLines(n));
      if (n.is_fusion) {
        box.style.cursor = "pointer";
        box.addEventListener("click", (ev) => { ev.stopPropagation(); this.toggle(n.node); });
      }
      g.append(box);
      if (open) {
        const inner = svg("g", { transform: `translate(${PAD},${HEAD + PAD})` });
        box.append(inner);
        this.drawLevel(inner, n.node, this.place(n.node));
      }
    }
  }

  private label(x: number, y: number, value: string, weight: string): SVGTextElement {
    const t = svg("text", { x, y, "font-size": 12, "font-weight": weight, fill: "#1d2330" });
    t.textContent = value;
    t.style.pointerEvents = "none";
    return t;
  }

  private hover(el: SVGElement, lines: string[]): void {
    el.addEventListener("mouseenter", (ev) => {
      this.tip.replaceChildren(...lines.map((l) => text("div", "", l)));
      this.tip.style.display = "block";
      this.move(ev as MouseEvent);
    });
    el.addEventListener("mousemove", (ev) => this.move(ev as MouseEvent));
    el.addEventListener("mouseleave", () => { this.tip.style.display = "none"; });
  }

  private move(ev: MouseEvent): void {
    const box = this.tip.parentElement!.getBoundingClientRect();
    this.tip.style.left = `${ev.clientX - box.left + 14}px`;
    this.tip.style.top = `${ev.clientY - box.top + 14}px`;
  }

  toggle(id: string): void {
    if (this.expanded.has(id)) this.expanded.delete(id);
    else this.expanded.add(id);
    this.draw();
  }
}

/** Draw `data` into `el` (heading, notes, legend, the graph). */
export function renderGraph(el: HTMLElement, data: GraphData): void {
  const wrap = document.createElement("div");
  wrap.className = "tfprof-hlograph";
  wrap.style.position = "relative";
  wrap.append(text("h4", "tp-h", data.heading));
  for (const s of data.statements) wrap.append(text("p", "tp-text", s));
  wrap.append(text("p", "tp-text hg-legend", "Fill: self time (white: none, red: the most here; grey: " +
    "no HLO stats row). Blue outline: the centre op. + marks a fusion: click to show its fused " +
    "computation. Hover a box or an edge for shapes, FLOPs and bytes."));
  const scroll = document.createElement("div");
  scroll.className = "hg-scroll";
  scroll.style.cssText = "overflow:auto;max-height:680px;border:1px solid #dde1e7;border-radius:4px";
  const tip = document.createElement("div");
  tip.className = "hg-tip";
  tip.style.cssText = "position:absolute;display:none;pointer-events:none;background:#1d2330;" +
    "color:#fff;font-size:12px;padding:6px 8px;border-radius:4px;z-index:5;max-width:420px;" +
    "white-space:nowrap";
  wrap.append(scroll, tip);
  el.append(wrap);
  new GraphDrawing(data, scroll, tip).draw();
}

/** The graph a view's traits hold (tables as typed columns). */
export function graphOf(model: Model): GraphData {
  return {
    heading: String(model.get("heading") ?? ""), center: String(model.get("center") ?? ""),
    statements: (model.get("statements") ?? []) as string[],
    nodes: decodeRows<GraphNode>(model.get("nodes") as Wire).map((n) => ({ ...n, center: Boolean(n.center), is_fusion: Boolean(n.is_fusion) })),
    edges: decodeRows<GraphEdge>(model.get("edges") as Wire),
  };
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-hlograph-view", model);
  renderGraph(root, graphOf(model));
  return () => root.replaceChildren();
}

export default { render };
