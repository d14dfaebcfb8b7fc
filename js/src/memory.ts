// Memory timeline: stack and heap stacked over time (free on top when known), fragmentation
// on a second axis, the peak marked, hover shows the allocation or deallocation under the
// cursor; the breakdown at the peak sits below as a table. Strings reach the page as text.
import { type ModelLike } from "./model";
import { column } from "./data";
import { renderTable, type TableSpec } from "./table";
import { lowerBound } from "./lod";

interface Allocator {
  name: string;
  lo: number;
  hi: number;
  peak: number; // row of the peak
  capacity: number;
}

const NUM = 8; // time_us, stack, heap, free, frag_pct, requested, allocated, step
const TXT = 5; // kind, tf_op, region, dtype, shape (codes into strings)

/** Index of the row nearest to time t in rows [lo, hi) sorted by time (pure; unit-tested). */
export function nearest(times: Float64Array, lo: number, hi: number, t: number): number {
  if (hi <= lo) return -1;
  const i = lowerBound(times, lo, hi, t);
  if (i >= hi) return hi - 1;
  if (i === lo) return lo;
  return t - times[i - 1] <= times[i] - t ? i - 1 : i;
}

function fmtBytes(b: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let u = 0;
  while (Math.abs(b) >= 1024 && u < units.length - 1) {
    b /= 1024;
    u++;
  }
  return `${b.toFixed(u ? 2 : 0)} ${units[u]}`;
}

export function renderMemory(el: HTMLElement, model: ModelLike, prefix = ""): () => void {
  const meta = (model.get(`${prefix}mem_meta`) ?? {}) as { allocators: Allocator[]; strings: string[] };
  const num = column(model.get(`${prefix}mem_num`), Float64Array);
  const txt = column(model.get(`${prefix}mem_txt`), Uint32Array);
  const n = Math.floor(num.length / NUM);
  const col = (k: number) => num.subarray(k * n, (k + 1) * n);
  const time = col(0);
  const stack = col(1);
  const heap = col(2);
  const free = col(3);
  const frag = col(4);
  const strings = meta.strings ?? [];
  const root = document.createElement("div");
  root.className = "tfprof-memory";
  root.style.cssText = "position:relative;font:12px var(--jp-ui-font-family,sans-serif)";
  const bar = document.createElement("div");
  const select = document.createElement("select");
  select.className = "mem-allocator";
  (meta.allocators ?? []).forEach((a, i) => select.append(new Option(a.name, String(i))));
  const info = document.createElement("span");
  info.className = "mem-info";
  info.style.marginLeft = "8px";
  bar.append(select, info);
  const canvas = document.createElement("canvas");
  canvas.className = "mem-canvas";
  const tip = document.createElement("div");
  tip.className = "mem-tip";
  tip.style.cssText = "position:absolute;display:none;pointer-events:none;background:rgba(30,30,30,.92);color:#fff;padding:4px 6px;white-space:pre;border-radius:3px;";
  const tableHost = document.createElement("div");
  root.append(bar, canvas, tip, tableHost);
  el.append(root);
  const W = 900;
  const H = 300;
  const L = 70;
  const R = 50;
  const T = 10;
  const B = 24;
  const dpr = window.devicePixelRatio || 1;
  canvas.width = W * dpr;
  canvas.height = H * dpr;
  canvas.style.width = `${W}px`;
  canvas.style.height = `${H}px`;
  const ctx = canvas.getContext("2d")!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  let current = 0;
  const breakdown = model.get(`${prefix}memory_table`) as TableSpec | undefined;

  function alloc(): Allocator | undefined {
    return meta.allocators?.[current];
  }

  function draw(): void {
    const a = alloc();
    ctx.clearRect(0, 0, W, H);
    if (!a || a.hi <= a.lo) return;
    const t0 = time[a.lo];
    const t1 = Math.max(time[a.hi - 1], t0 + 1e-6);
    let ymax = 1;
    for (let i = a.lo; i < a.hi; i++) ymax = Math.max(ymax, stack[i] + heap[i] + free[i]);
    const xOf = (t: number) => L + ((t - t0) / (t1 - t0)) * (W - L - R);
    const yOf = (b: number) => H - B - (b / ymax) * (H - B - T);
    const layers: [string, (i: number) => number, (i: number) => number][] = [
      ["rgba(242,142,43,0.85)", () => 0, (i) => stack[i]],
      ["rgba(78,121,167,0.85)", (i) => stack[i], (i) => stack[i] + heap[i]],
      ["rgba(160,160,160,0.35)", (i) => stack[i] + heap[i], (i) => stack[i] + heap[i] + free[i]],
    ];
    // one vertex per pixel column at most: keep the max of each column
    for (const [color, lo, hi] of layers) {
      ctx.beginPath();
      let lastX = -1;
      const xs: number[] = [];
      const tops: number[] = [];
      const bottoms: number[] = [];
      for (let i = a.lo; i < a.hi; i++) {
        const x = Math.round(xOf(time[i]));
        if (x === lastX) {
          tops[tops.length - 1] = Math.min(tops[tops.length - 1], yOf(hi(i)));
          bottoms[bottoms.length - 1] = Math.max(bottoms[bottoms.length - 1], yOf(lo(i)));
          continue;
        }
        lastX = x;
        xs.push(x);
        tops.push(yOf(hi(i)));
        bottoms.push(yOf(lo(i)));
      }
      xs.forEach((x, k) => (k ? ctx.lineTo(x, tops[k]) : ctx.moveTo(x, tops[k])));
      for (let k = xs.length - 1; k >= 0; k--) ctx.lineTo(xs[k], bottoms[k]);
      ctx.closePath();
      ctx.fillStyle = color;
      ctx.fill();
    }
    // fragmentation (right axis, percent)
    ctx.beginPath();
    for (let i = a.lo; i < a.hi; i++) {
      const x = xOf(time[i]);
      const y = H - B - (frag[i] / 100) * (H - B - T);
      if (i === a.lo) ctx.moveTo(x, y);
      else ctx.lineTo(x, y);
    }
    ctx.strokeStyle = "#e15759";
    ctx.lineWidth = 1;
    ctx.stroke();
    // peak marker
    const px = xOf(time[a.peak]);
    ctx.strokeStyle = "#111";
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(px, T);
    ctx.lineTo(px, H - B);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.fillStyle = "#111";
    ctx.font = "11px sans-serif";
    ctx.fillText("peak", px + 3, T + 10);
    ctx.fillText(fmtBytes(ymax), 2, T + 8);
    ctx.fillText("0", 2, H - B);
    ctx.fillText("100%", W - R + 4, T + 8);
    ctx.fillText(`${(t0 / 1e3).toFixed(1)} ms`, L, H - 6);
    ctx.fillText(`${(t1 / 1e3).toFixed(1)} ms`, W - R - 50, H - 6);
    info.textContent = `${a.hi - a.lo} events · peak ${fmtBytes(stack[a.peak] + heap[a.peak])} at ` +
      `${(time[a.peak] / 1e3).toFixed(3)} ms · capacity ${fmtBytes(a.capacity)}`;
    (canvas as any).__geometry = { t0, t1, L, R, W };
  }

  function describe(i: number): string {
    const s = (k: number) => strings[txt[k * n + i]] ?? "";
    return [
      `${s(0)} at ${(time[i] / 1e3).toFixed(3)} ms`,
      `requested: ${fmtBytes(num[5 * n + i])}`,
      `allocated: ${fmtBytes(num[6 * n + i])}`,
      `tf_op: ${s(1)}`,
      `step: ${num[7 * n + i]}`,
      `region: ${s(2)}`,
      `data type: ${s(3)}`,
      `shape: ${s(4)}`,
      `memory in use: ${fmtBytes(stack[i] + heap[i])}`,
      `stack: ${fmtBytes(stack[i])} · heap: ${fmtBytes(heap[i])} · free: ${fmtBytes(free[i])}`,
      `fragmentation: ${frag[i].toFixed(2)}%`,
    ].join("\n");
  }

  canvas.addEventListener("mousemove", (e) => {
    const a = alloc();
    const g = (canvas as any).__geometry;
    if (!a || !g) return;
    const t = g.t0 + ((e.offsetX - g.L) / (g.W - g.L - g.R)) * (g.t1 - g.t0);
    const i = nearest(time, a.lo, a.hi, t);
    if (i < 0) return;
    tip.textContent = describe(i);
    tip.style.display = "block";
    tip.style.left = `${Math.min(e.offsetX + 14, W - 260)}px`;
    tip.style.top = `${e.offsetY + 40}px`;
    (root as any).__hovered = i;
  });
  canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });

  let table: { refresh: () => void } | null = null;
  function tableSpec(): TableSpec {
    const a = alloc();
    if (!breakdown || !a) return { columns: [], data: {} };
    const rows = (breakdown.data.allocator ?? []).map((v, i) => (v === a.name ? i : -1)).filter((i) => i >= 0);
    const data: TableSpec["data"] = {};
    for (const c of breakdown.columns) data[c.name] = rows.map((i) => breakdown.data[c.name][i]);
    return { ...breakdown, title: `Memory breakdown at the peak of ${a.name}`, data };
  }
  select.addEventListener("change", () => {
    current = Number(select.value);
    draw();
    table?.refresh();
  });
  draw();
  if (breakdown) table = renderTable(tableHost, tableSpec);
  (root as any).__memory = { describe, nearest: (t: number) => { const a = alloc()!; return nearest(time, a.lo, a.hi, t); } };
  return () => {};
}

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  return renderMemory(el, model);
}

export default { render };
