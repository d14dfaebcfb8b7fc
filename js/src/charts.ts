// The name-scope icicle of the TensorFlow stats tab (time or memory). Labels are SVG text
// nodes (never HTML).
import { type Cell } from "./columns";
import { SVG_NS, PALETTE } from "./model";
import { type TableSpec } from "./table";

export interface ScopeRow {
  scope: string;
  parent: string | null;
  name: string;
  value: number;
}

/** The rows of a scope table (columns scope, parent, name and maybe value), with every
 * other column of the row in `extra`. */
export function scopeRows(spec: TableSpec): (ScopeRow & { extra: Record<string, Cell> })[] {
  const d = spec.data;
  const n = d.scope?.length ?? 0;
  const others = spec.columns.map((c) => c.name).filter((c) => !["scope", "parent", "name", "value"].includes(c));
  return Array.from({ length: n }, (_, i) => ({
    scope: String(d.scope[i]),
    parent: d.parent?.[i] === null || d.parent?.[i] === undefined ? null : String(d.parent[i]),
    name: String(d.name?.[i] ?? ""),
    value: Number(d.value?.[i] ?? 0),
    extra: Object.fromEntries(others.map((c) => [c, d[c][i]])),
  }));
}

/** Icicle rectangles (pure; unit-tested): x0/x1 in [0, 1] of the total, depth by nesting. */
export function icicle(rows: ScopeRow[]): { scope: string; name: string; depth: number; x0: number; x1: number; value: number }[] {
  const children = new Map<string | null, ScopeRow[]>();
  const scopes = new Set(rows.map((r) => r.scope));
  for (const r of rows) {
    const p = r.parent !== null && scopes.has(r.parent) ? r.parent : null;
    if (!children.has(p)) children.set(p, []);
    children.get(p)!.push(r);
  }
  const out: { scope: string; name: string; depth: number; x0: number; x1: number; value: number }[] = [];
  const roots = (children.get(null) ?? []).sort((a, b) => b.value - a.value);
  const total = roots.reduce((a, r) => a + Math.max(r.value, 0), 0) || 1;
  const place = (r: ScopeRow, x0: number, width: number, depth: number) => {
    out.push({ scope: r.scope, name: r.name, depth, x0, x1: x0 + width, value: r.value });
    let x = x0;
    const kids = (children.get(r.scope) ?? []).sort((a, b) => b.value - a.value);
    const sum = Math.max(r.value, kids.reduce((a, k) => a + Math.max(k.value, 0), 0)) || 1;
    for (const k of kids) {
      const w = (width * Math.max(k.value, 0)) / sum;
      place(k, x, w, depth + 1);
      x += w;
    }
  };
  let x = 0;
  for (const r of roots) {
    const w = Math.max(r.value, 0) / total;
    place(r, x, w, 0);
    x += w;
  }
  return out;
}

/** `name` cut to about `px` pixels of 12 px text (an ellipsis ends a cut name), so a label
 * stays inside its rectangle (pure; unit-tested). */
export function fitLabel(name: string, px: number): string {
  const fits = Math.floor(px / 7);
  if (name.length <= fits) return name;
  return fits > 1 ? `${name.slice(0, fits - 1)}…` : "";
}

/** An icicle of `rows` as SVG; `tip` words each rectangle's tooltip (default: its scope and
 * value). */
export function renderIcicle(rows: ScopeRow[], width = 900, rowH = 20,
  tip: (scope: string, value: number) => string = (s, v) => `${s}: ${v.toLocaleString("en-US")}`): SVGSVGElement {
  const rects = icicle(rows);
  const depth = Math.max(0, ...rects.map((r) => r.depth));
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String((depth + 1) * rowH + 2));
  // narrower than `width` (a notebook's output), it scales down rather than overflow
  svg.setAttribute("viewBox", `0 0 ${width} ${(depth + 1) * rowH + 2}`);
  svg.style.maxWidth = "100%";
  svg.style.height = "auto";
  svg.setAttribute("class", "tfprof-icicle");
  rects.forEach((r, k) => {
    const g = document.createElementNS(SVG_NS, "g");
    g.setAttribute("class", "icicle-node");
    const rect = document.createElementNS(SVG_NS, "rect");
    rect.setAttribute("x", String(r.x0 * width));
    rect.setAttribute("y", String(r.depth * rowH));
    rect.setAttribute("width", String(Math.max((r.x1 - r.x0) * width - 1, 0)));
    rect.setAttribute("height", String(rowH - 1));
    rect.setAttribute("fill", PALETTE[(r.depth + k) % PALETTE.length]);
    const t = document.createElementNS(SVG_NS, "title");
    t.textContent = tip(r.scope, r.value);
    g.append(rect, t);
    if ((r.x1 - r.x0) * width > 60) {
      const label = document.createElementNS(SVG_NS, "text");
      label.setAttribute("x", String(r.x0 * width + 3));
      label.setAttribute("y", String(r.depth * rowH + 14));
      label.setAttribute("fill", "#111");
      label.textContent = fitLabel(r.name, (r.x1 - r.x0) * width - 6);
      g.append(label);
    }
    svg.append(g);
  });
  return svg;
}
