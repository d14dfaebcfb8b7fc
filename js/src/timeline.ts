// Trace timeline: an anywidget view of every event of a profile, drawn on a canvas with
// level of detail. Names are user data: they only ever reach the page as canvas text or
// textContent, never as HTML.
import { type Model } from "./model";
import { colorOf, decode, matchingNames, type TimelineData } from "./data";
import { makeBlocks, lowerBound, visibleBlocks } from "./lod";

const ROW = 18; // px per depth row
const HEADER = 20; // px per section header
const LABEL_W = 190; // px of the track label column
const AXIS_H = 22; // px of the time axis

interface Row {
  kind: "section" | "track";
  section: string;
  track: number;
  y: number;
  h: number;
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text = ""): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = cls;
  if (text) e.textContent = text;
  return e;
}

function isDark(el: HTMLElement): boolean {
  const bg = getComputedStyle(el).getPropertyValue("--jp-layout-color0").trim();
  const m = bg.match(/#([0-9a-f]{6})/i);
  if (m) {
    const v = parseInt(m[1], 16);
    const lum = 0.2126 * ((v >> 16) & 255) + 0.7152 * ((v >> 8) & 255) + 0.0722 * (v & 255);
    return lum < 128;
  }
  const body = document.body?.dataset?.jpThemeLight;
  if (body === "false") return true;
  if (body === "true") return false;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

function fmtTime(us: number): string {
  const a = Math.abs(us);
  if (a >= 1e6) return `${(us / 1e6).toFixed(3)} s`;
  if (a >= 1e3) return `${(us / 1e3).toFixed(3)} ms`;
  if (a >= 1) return `${us.toFixed(3)} us`;
  return `${(us * 1e3).toFixed(1)} ns`;
}

const STYLE = `
.tfprof-timeline { font: 12px var(--jp-ui-font-family, sans-serif); color: var(--tl-fg); border: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-bar { display: flex; gap: 6px; align-items: center; padding: 4px; flex-wrap: wrap; }
.tfprof-timeline .tl-bar input { width: 180px; }
.tfprof-timeline canvas { display: block; outline: none; cursor: grab; }
.tfprof-timeline .tl-status { padding: 2px 6px; min-height: 16px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.tfprof-timeline .tl-details { padding: 4px 6px; max-height: 180px; overflow: auto; border-top: 1px solid var(--tl-grid); }
.tfprof-timeline .tl-details table { border-collapse: collapse; }
.tfprof-timeline .tl-details td { padding: 1px 8px 1px 0; vertical-align: top; word-break: break-all; }
.tfprof-timeline .tl-details td:first-child { font-weight: 600; white-space: nowrap; }
`;

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  let data: TimelineData = decode(model);
  const dark = isDark(el);
  const fg = dark ? "#ddd" : "#222";
  const grid = dark ? "#444" : "#ccc";
  const bg = dark ? "#1e1e1e" : "#fff";

  const root = h("div", "tfprof-timeline");
  root.style.setProperty("--tl-fg", fg);
  root.style.setProperty("--tl-grid", grid);
  root.style.background = bg;
  const style = document.createElement("style");
  style.textContent = STYLE;
  const bar = h("div", "tl-bar");
  const stepSel = h("select", "tl-steps");
  const search = h("input", "tl-search");
  search.placeholder = "search names";
  search.type = "search";
  const prev = h("button", "tl-prev", "◀");
  const next = h("button", "tl-next", "▶");
  const found = h("span", "tl-found");
  const fit = h("button", "tl-fit", "fit selection");
  const reset = h("button", "tl-reset", "reset");
  const help = h("span", "tl-help", "wheel/W S: zoom · drag/A D: pan · shift+wheel: scroll · alt+drag: measure · click: details");
  bar.append(stepSel, search, prev, next, found, fit, reset, help);
  const canvas = h("canvas", "tl-canvas");
  canvas.tabIndex = 0;
  const status = h("div", "tl-status");
  const details = h("div", "tl-details");
  root.append(style, bar, canvas, status, details);
  el.append(root);

  const ctx = canvas.getContext("2d")!;
  const blocks = makeBlocks(4096);
  let width = Math.max(400, el.clientWidth || 900);
  let height = Number(model.get("height")) || 520;
  let t0 = data.t0;
  let t1 = data.t1;
  let scrollY = 0;
  let rows: Row[] = [];
  let contentH = 0;
  const collapsed = new Set<string>();
  let selected = Number(model.get("selected_index") ?? -1);
  let matches = new Set<number>();
  let matchList: number[] = [];
  let matchPos = -1;
  let measure: [number, number] | null = null;
  let frameScheduled = false;
  let lastVisited = 0;
  let lastDrawn = 0;
  const segByTrack = new Map<number, { depth: number; lo: number; hi: number }[]>();

  function rebuild(): void {
    segByTrack.clear();
    for (const s of data.segments) {
      if (!segByTrack.has(s.track)) segByTrack.set(s.track, []);
      segByTrack.get(s.track)!.push(s);
    }
    stepSel.replaceChildren(new Option("zoom to step…", ""));
    data.steps.forEach((s, i) => stepSel.append(new Option(s.name, String(i))));
    layout();
  }

  function layout(): void {
    rows = [];
    let y = 0;
    let section = "";
    for (const t of data.tracks) {
      if (t.section !== section) {
        section = t.section;
        rows.push({ kind: "section", section, track: -1, y, h: HEADER });
        y += HEADER;
      }
      if (collapsed.has(section)) continue;
      const hgt = Math.max(1, t.depths) * ROW + 4;
      rows.push({ kind: "track", section, track: t.id, y, h: hgt });
      y += hgt;
    }
    contentH = y;
  }

  function resize(): void {
    width = Math.max(400, el.clientWidth || width);
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.width = `${width}px`;
    canvas.style.height = `${height}px`;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  }

  const plotW = () => width - LABEL_W;
  const pxPerUs = () => plotW() / Math.max(t1 - t0, 1e-9);
  const xOf = (t: number) => LABEL_W + (t - t0) * pxPerUs();
  const tOf = (x: number) => t0 + (x - LABEL_W) / pxPerUs();

  function schedule(): void {
    if (frameScheduled) return;
    frameScheduled = true;
    requestAnimationFrame(() => {
      frameScheduled = false;
      draw();
    });
  }

  function draw(): void {
    const t = performance.now();
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, width, height);
    let visited = 0;
    let drawn = 0;
    const ppu = pxPerUs();
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, width, height - AXIS_H);
    ctx.clip();
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    for (const r of rows) {
      const y = r.y - scrollY + AXIS_H;
      if (y > height || y + r.h < AXIS_H) continue;
      if (r.kind === "section") {
        ctx.fillStyle = dark ? "#2c2c2c" : "#eef1f5";
        ctx.fillRect(0, y, width, r.h);
        ctx.fillStyle = fg;
        ctx.fillText(`${collapsed.has(r.section) ? "▸" : "▾"} ${r.section}`, 4, y + r.h / 2);
        continue;
      }
      const track = data.tracks[r.track];
      ctx.fillStyle = fg;
      ctx.fillText(track.name.slice(0, 30), 14, y + ROW / 2);
      ctx.strokeStyle = grid;
      ctx.beginPath();
      ctx.moveTo(LABEL_W, y + r.h - 0.5);
      ctx.lineTo(width, y + r.h - 0.5);
      ctx.stroke();
      ctx.save();
      ctx.beginPath();
      ctx.rect(LABEL_W, y, plotW(), r.h);
      ctx.clip();
      for (const s of segByTrack.get(r.track) ?? []) {
        const yy = y + 2 + s.depth * ROW;
        visited += visibleBlocks(data.start, data.dur, s.lo, s.hi, t0, t1, ppu, blocks);
        for (let b = 0; b < blocks.n; b++) {
          const i = blocks.first[b];
          const name = data.names[data.name[i]] ?? "";
          const x = LABEL_W + blocks.x[b];
          const w = blocks.w[b];
          ctx.fillStyle = colorOf(name, dark);
          ctx.fillRect(x, yy, w, ROW - 2);
          drawn++;
          if (matches.size && matches.has(data.name[i])) {
            ctx.strokeStyle = dark ? "#ffeb3b" : "#d50000";
            ctx.lineWidth = 2;
            ctx.strokeRect(x + 1, yy + 1, Math.max(w - 2, 1), ROW - 4);
          }
          if (blocks.count[b] === 1 && i === selected) {
            ctx.strokeStyle = fg;
            ctx.lineWidth = 3;
            ctx.strokeRect(x, yy, Math.max(w, 2), ROW - 2);
          }
          if (w > 40 && blocks.count[b] === 1) {
            ctx.fillStyle = dark ? "#fff" : "#111";
            const left = Math.max(x, LABEL_W) + 3;
            const room = Math.min(x + w, width) - left - 3;
            if (room > 20) ctx.fillText(fit_(name, room), left, yy + (ROW - 2) / 2);
          }
        }
      }
      ctx.restore();
    }
    ctx.restore();
    drawAxis();
    if (measure) drawMeasure();
    lastVisited = visited;
    lastDrawn = drawn;
    lastFrameMs = performance.now() - t;
    frameCount++;
  }

  const textCache = new Map<string, string>();
  function fit_(text: string, room: number): string {
    const key = `${text}|${Math.floor(room / 8)}`;
    const hit = textCache.get(key);
    if (hit !== undefined) return hit;
    let out = text;
    if (ctx.measureText(out).width > room) {
      let lo = 0;
      let hi = text.length;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (ctx.measureText(text.slice(0, mid) + "…").width <= room) lo = mid;
        else hi = mid - 1;
      }
      out = lo > 0 ? text.slice(0, lo) + "…" : "";
    }
    if (textCache.size > 5000) textCache.clear();
    textCache.set(key, out);
    return out;
  }

  function drawAxis(): void {
    ctx.fillStyle = bg;
    ctx.fillRect(0, 0, width, AXIS_H);
    ctx.strokeStyle = grid;
    ctx.fillStyle = fg;
    ctx.font = "11px sans-serif";
    ctx.textBaseline = "middle";
    const span = t1 - t0;
    const raw = span / 8;
    const pow = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1e-9))));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? raw;
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      const x = xOf(t);
      ctx.beginPath();
      ctx.moveTo(x, AXIS_H - 6);
      ctx.lineTo(x, AXIS_H);
      ctx.stroke();
      ctx.fillText(fmtTime(t), x + 2, AXIS_H / 2);
    }
    ctx.fillText(`window ${fmtTime(span)}`, 4, AXIS_H / 2);
  }

  function drawMeasure(): void {
    if (!measure) return;
    const [a, b] = measure[0] <= measure[1] ? measure : [measure[1], measure[0]];
    const x0 = xOf(a);
    const x1 = xOf(b);
    ctx.fillStyle = dark ? "rgba(100,180,255,0.2)" : "rgba(30,100,220,0.15)";
    ctx.fillRect(x0, AXIS_H, x1 - x0, height - AXIS_H);
    ctx.fillStyle = fg;
    ctx.fillText(fmtTime(b - a), Math.min(x1 + 4, width - 80), AXIS_H + 10);
    status.textContent = `measured ${fmtTime(b - a)} (from ${fmtTime(a)} to ${fmtTime(b)})`;
  }

  // ---- view changes ---------------------------------------------------------------------
  let viewTimer: number | undefined;
  function setView(a: number, b: number, sync = true): void {
    const minSpan = 1e-3; // 1 ns
    if (b - a < minSpan) {
      const c = (a + b) / 2;
      a = c - minSpan / 2;
      b = c + minSpan / 2;
    }
    t0 = a;
    t1 = b;
    schedule();
    if (sync) {
      window.clearTimeout(viewTimer);
      viewTimer = window.setTimeout(() => {
        model.set("view", [t0, t1]);
        model.save_changes();
      }, 150);
    }
  }

  function zoom(factor: number, atX: number): void {
    const t = tOf(atX);
    setView(t - (t - t0) * factor, t + (t1 - t) * factor);
  }

  function pan(dxPx: number): void {
    const dt = dxPx / pxPerUs();
    setView(t0 + dt, t1 + dt);
  }

  function scrollBy(dy: number): void {
    scrollY = Math.max(0, Math.min(scrollY + dy, Math.max(0, contentH - (height - AXIS_H))));
    schedule();
  }

  function hit(x: number, y: number): number {
    if (x < LABEL_W) return -1;
    const yy = y - AXIS_H + scrollY;
    const r = rows.find((row) => row.kind === "track" && yy >= row.y && yy < row.y + row.h);
    if (!r) return -1;
    const depth = Math.floor((yy - r.y - 2) / ROW);
    const s = (segByTrack.get(r.track) ?? []).find((seg) => seg.depth === depth);
    if (!s) return -1;
    const t = tOf(x);
    const tol = 2 / pxPerUs();
    let i = lowerBound(data.start, s.lo, s.hi, t + tol) - 1;
    for (; i >= s.lo && i >= 0; i--) {
      if (data.start[i] + data.dur[i] + tol >= t) return i;
      break;
    }
    return -1;
  }

  function sectionAt(y: number): string | null {
    const yy = y - AXIS_H + scrollY;
    const r = rows.find((row) => row.kind === "section" && yy >= row.y && yy < row.y + row.h);
    return r ? r.section : null;
  }

  function select(i: number, sync = true): void {
    selected = i;
    if (i >= 0) {
      const name = data.names[data.name[i]] ?? "";
      status.textContent = `${name} · start ${fmtTime(data.start[i])} · duration ${fmtTime(data.dur[i])}`;
    }
    if (sync) {
      model.set("selected_index", i);
      model.save_changes();
    }
    schedule();
  }

  function showDetails(): void {
    const d = (model.get("details") ?? {}) as Record<string, unknown>;
    const table = document.createElement("table");
    for (const [k, v] of Object.entries(d)) {
      const tr = document.createElement("tr");
      const a = document.createElement("td");
      a.textContent = k;
      const b = document.createElement("td");
      b.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
      tr.append(a, b);
      table.append(tr);
    }
    details.replaceChildren(table);
  }

  function runSearch(): void {
    matches = matchingNames(data.names, search.value);
    matchList = [];
    if (matches.size) {
      for (let i = 0; i < data.name.length; i++) if (matches.has(data.name[i])) matchList.push(i);
      matchList.sort((a, b) => data.start[a] - data.start[b]);
    }
    matchPos = -1;
    found.textContent = search.value.trim() ? `${matchList.length} found` : "";
    schedule();
  }

  function gotoMatch(delta: number): void {
    if (!matchList.length) return;
    matchPos = (matchPos + delta + matchList.length) % matchList.length;
    const i = matchList[matchPos];
    const pad = Math.max(data.dur[i] * 2, (t1 - t0) * 0.02, 1);
    setView(data.start[i] - pad, data.start[i] + data.dur[i] + pad);
    found.textContent = `${matchPos + 1} / ${matchList.length}`;
    select(i);
  }

  // ---- input --------------------------------------------------------------------------
  let drag: { x: number; y: number; t0: number; t1: number; scroll: number; measure: boolean; moved: boolean } | null = null;
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    if (e.shiftKey) scrollBy(e.deltaY);
    else zoom(Math.exp(e.deltaY * 0.002), e.offsetX);
  }, { passive: false });
  canvas.addEventListener("mousedown", (e) => {
    canvas.focus();
    drag = { x: e.offsetX, y: e.offsetY, t0, t1, scroll: scrollY, measure: e.altKey, moved: false };
    if (e.altKey) measure = [tOf(e.offsetX), tOf(e.offsetX)];
  });
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  function onMove(e: MouseEvent): void {
    if (!drag) return;
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    if (Math.abs(x - drag.x) + Math.abs(y - drag.y) > 3) drag.moved = true;
    if (drag.measure && measure) {
      measure = [measure[0], tOf(x)];
      schedule();
      return;
    }
    const dt = (drag.x - x) / (plotW() / (drag.t1 - drag.t0));
    setView(drag.t0 + dt, drag.t1 + dt);
    scrollY = Math.max(0, Math.min(drag.scroll + drag.y - y, Math.max(0, contentH - (height - AXIS_H))));
  }
  function onUp(e: MouseEvent): void {
    if (!drag) return;
    const wasClick = !drag.moved && !drag.measure;
    drag = null;
    if (wasClick) {
      const rect = canvas.getBoundingClientRect();
      const x = e.clientX - rect.left;
      const y = e.clientY - rect.top;
      const sec = x < LABEL_W ? sectionAt(y) : null;
      if (sec !== null) {
        if (collapsed.has(sec)) collapsed.delete(sec);
        else collapsed.add(sec);
        layout();
        schedule();
        return;
      }
      if (!e.altKey) measure = null;
      select(hit(x, y));
    }
  }
  canvas.addEventListener("keydown", (e) => {
    const k = e.key.toLowerCase();
    if (k === "w") zoom(0.8, LABEL_W + plotW() / 2);
    else if (k === "s") zoom(1.25, LABEL_W + plotW() / 2);
    else if (k === "a") pan(-plotW() * 0.1);
    else if (k === "d") pan(plotW() * 0.1);
    else if (k === "f") fitSelection();
    else if (k === "0") setView(data.t0, data.t1);
    else if (k === "escape") {
      measure = null;
      select(-1);
    } else return;
    e.preventDefault();
  });
  function fitSelection(): void {
    if (measure) {
      const [a, b] = measure;
      setView(Math.min(a, b), Math.max(a, b));
      return;
    }
    if (selected >= 0) {
      const pad = Math.max(data.dur[selected] * 0.1, 0.5);
      setView(data.start[selected] - pad, data.start[selected] + data.dur[selected] + pad);
    }
  }
  stepSel.addEventListener("change", () => {
    const s = data.steps[Number(stepSel.value)];
    if (s) setView(s.start, s.end);
  });
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", (e) => {
    if (e.key === "Enter") gotoMatch(e.shiftKey ? -1 : 1);
  });
  prev.addEventListener("click", () => gotoMatch(-1));
  next.addEventListener("click", () => gotoMatch(1));
  fit.addEventListener("click", fitSelection);
  reset.addEventListener("click", () => setView(data.t0, data.t1));

  // ---- model -> view --------------------------------------------------------------------
  const onView = () => {
    const v = model.get("view") as number[] | null;
    if (v && v.length === 2 && (v[0] !== t0 || v[1] !== t1)) setView(v[0], v[1], false);
  };
  const onSelected = () => {
    const i = Number(model.get("selected_index"));
    if (i !== selected) select(i, false);
  };
  const onData = () => {
    data = decode(model);
    t0 = data.t0;
    t1 = data.t1;
    rebuild();
    schedule();
  };
  model.on("change:view", onView);
  model.on("change:selected_index", onSelected);
  model.on("change:details", showDetails);
  model.on("change:meta", onData);
  const ro = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => { resize(); schedule(); }) : null;
  ro?.observe(el);

  let lastFrameMs = 0;
  let frameCount = 0;
  // Introspection for tests and benchmarks (read-only numbers and view control).
  (root as any).__timeline = {
    view: () => [t0, t1],
    setView: (a: number, b: number) => setView(a, b),
    drawNow: () => { draw(); return { ms: lastFrameMs, visited: lastVisited, drawn: lastDrawn }; },
    frames: () => frameCount,
    hit: (x: number, y: number) => hit(x, y),
    rows: () => rows.map((r) => ({ ...r })),
  };

  rebuild();
  resize();
  const initial = model.get("view") as number[] | null;
  if (initial && initial.length === 2) setView(initial[0], initial[1], false);
  draw();
  showDetails();
  return () => {
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    ro?.disconnect();
    model.off?.("change:view", onView);
    model.off?.("change:selected_index", onSelected);
    model.off?.("change:details", showDetails);
    model.off?.("change:meta", onData);
  };
}

export default { render };
