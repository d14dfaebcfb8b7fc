// A layered left-to-right layout of a directed acyclic graph (DOM-free; unit-tested): each node
// in the layer of its longest path from a source, layers ordered by the barycentre of their
// neighbours (sweeps forward and back), boxes stacked in each layer and centred.

export interface Size { w: number; h: number }
export interface Placed { x: number; y: number; w: number; h: number; layer: number }
export interface Layout { pos: Map<string, Placed>; width: number; height: number }

export const GAP_X = 56;
export const GAP_Y = 12;

/** Layer of every node: the length of the longest path reaching it (cycles broken). */
export function layers(ids: string[], edges: [string, string][]): Map<string, number> {
  const preds = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const [s, t] of edges) if (preds.has(s) && preds.has(t) && s !== t) preds.get(t)!.push(s);
  const layer = new Map<string, number>();
  const busy = new Set<string>();
  const visit = (id: string): number => {
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (busy.has(id)) return 0; // a cycle: HLO has none, but never loop
    busy.add(id);
    let l = 0;
    for (const p of preds.get(id)!) l = Math.max(l, visit(p) + 1);
    busy.delete(id);
    layer.set(id, l);
    return l;
  };
  for (const id of ids) visit(id);
  return layer;
}

function barycentre(id: string, nbrs: Map<string, string[]>, index: Map<string, number>): number {
  const at = (nbrs.get(id) ?? []).map((n) => index.get(n)).filter((i): i is number => i !== undefined);
  return at.length ? at.reduce((a, b) => a + b, 0) / at.length : Number.NaN;
}

/** Each layer's node order after barycentric sweeps (input order first). */
export function order(ids: string[], edges: [string, string][], layer: Map<string, number>,
  sweeps = 4): string[][] {
  const n = Math.max(-1, ...ids.map((id) => layer.get(id)!)) + 1;
  const rows: string[][] = Array.from({ length: n }, () => []);
  for (const id of ids) rows[layer.get(id)!].push(id);
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const [s, t] of edges) {
    if (!layer.has(s) || !layer.has(t)) continue;
    (preds.get(t) ?? preds.set(t, []).get(t)!).push(s);
    (succs.get(s) ?? succs.set(s, []).get(s)!).push(t);
  }
  const sortBy = (row: string[], nbrs: Map<string, string[]>) => {
    const index = new Map<string, number>();
    rows.forEach((r) => r.forEach((id, i) => index.set(id, i)));
    const keyed = row.map((id, i) => {
      const b = barycentre(id, nbrs, index);
      return { id, key: Number.isNaN(b) ? i : b, i };
    });
    keyed.sort((a, b) => a.key - b.key || a.i - b.i);
    return keyed.map((k) => k.id);
  };
  for (let s = 0; s < sweeps; s++) {
    for (let l = 1; l < n; l++) rows[l] = sortBy(rows[l], preds);
    for (let l = n - 2; l >= 0; l--) rows[l] = sortBy(rows[l], succs);
  }
  return rows;
}

/** Positions of boxes of the given sizes, layered left to right. */
export function layout(ids: string[], edges: [string, string][], size: (id: string) => Size): Layout {
  const layer = layers(ids, edges);
  const rows = order(ids, edges, layer);
  const pos = new Map<string, Placed>();
  const heights = rows.map((r) => r.reduce((h, id) => h + size(id).h, 0) + GAP_Y * Math.max(0, r.length - 1));
  const height = Math.max(0, ...heights);
  let x = 0;
  rows.forEach((row, l) => {
    const colW = Math.max(0, ...row.map((id) => size(id).w));
    let y = (height - heights[l]) / 2;
    for (const id of row) {
      const { w, h } = size(id);
      pos.set(id, { x, y, w, h, layer: l });
      y += h + GAP_Y;
    }
    x += colW + GAP_X;
  });
  return { pos, width: Math.max(0, x - GAP_X), height };
}
