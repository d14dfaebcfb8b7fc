// Trace timeline: an anywidget view of every event of a profile, drawn on a canvas with
// level of detail. Small profiles arrive whole; larger ones arrive as an overview and the
// kernel answers each zoom or pan with the window's detail (custom messages with binary
// buffers); without a kernel (reports, saved notebooks) the view draws what is embedded and
// says where detail needs one. Names are user data: they only ever reach the page as canvas
// text or textContent, never as HTML.
import { type Model } from "./model";
import { bestTile, colorOf, decode, decodeTile, matchingNames, rowOf, single, type Tile, type TimelineData } from "./data";
import { decodeColumns, numeric } from "./columns";
import { makeBlocks, lowerBound, visibleBlocks } from "./lod";

const ROW = 18; // px per depth row
const HEADER = 20; // px per section header
const LABEL_W = 190; // px of the track label column
const AXIS_H = 22; // px of the time axis
const MAX_TILES = 8; // window answers kept
const MAX_STEP_OPTIONS = 500; // entries of the step menu
const REQUEST_DELAY = 60; // ms after the last view change before asking for detail
const ANSWER_TIMEOUT = 10000; // ms before saying the kernel does not answer

/** What the view knows of one event: enough for the status line and fit selection. */
interface EventInfo {
  row: number;
  start: number;
  dur: number;
  name: string;
}

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
  let selInfo: EventInfo | null = null;
  let matches = new Set<number>();
  let matchList: EventInfo[] = [];
  let matchPos = -1;
  let measure: [number, number] | null = null;
  let frameScheduled = false;
  let lastVisited = 0;
  let lastDrawn = 0;
  const segByTrack = new Map<number, { depth: number; s: number }[]>();
  let tiles: Tile[] = [data.base, ...data.extra];
  let current: Tile = data.base;
  const kernel = typeof model.send === "function";
  let pending: { id: number; key: string; at: number } | null = null;
  let nextId = 1;
  let notice = ""; // said on the canvas: where detail is missing, or what the kernel said
  const roundTrips: number[] = []; // ms from asking for a window to its answer

  function rebuild(): void {
    segByTrack.clear();
    data.segments.forEach((seg, s) => {
      if (!segByTrack.has(seg.track)) segByTrack.set(seg.track, []);
      segByTrack.get(seg.track)!.push({ depth: seg.depth, s });
    });
    tiles = [data.base, ...data.extra];
    // a menu of thousands of steps costs seconds to build and cannot be read: the first
    // MAX_STEP_OPTIONS, then every k-th, so the menu spans the whole profile
    const every = Math.max(1, Math.ceil(data.steps.length / MAX_STEP_OPTIONS));
    const options = [new Option("zoom to step…", "")];
    for (let i = 0; i < data.steps.length; i += every) options.push(new Option(data.steps[i].name, String(i)));
    stepSel.replaceChildren(...options);
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
    const tile = bestTile(tiles, t0, t1);
    current = tile;
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
      for (const seg of segByTrack.get(r.track) ?? []) {
        const yy = y + 2 + seg.depth * ROW;
        visited += visibleBlocks(tile.start, tile.dur, tile.off[seg.s], tile.off[seg.s + 1], t0, t1, ppu, blocks);
        for (let b = 0; b < blocks.n; b++) {
          const i = blocks.first[b];
          const one = blocks.count[b] === 1 && single(tile, i);
          const name = data.names[tile.name[i]] ?? "";
          const x = LABEL_W + blocks.x[b];
          const w = blocks.w[b];
          ctx.fillStyle = colorOf(name, dark);
          ctx.fillRect(x, yy, w, ROW - 2);
          drawn++;
          if (matches.size && matches.has(tile.name[i])) {
            ctx.strokeStyle = dark ? "#ffeb3b" : "#d50000";
            ctx.lineWidth = 2;
            ctx.strokeRect(x + 1, yy + 1, Math.max(w - 2, 1), ROW - 4);
          }
          if (one && rowOf(tile, i) === selected) {
            ctx.strokeStyle = fg;
            ctx.lineWidth = 3;
            ctx.strokeRect(x, yy, Math.max(w, 2), ROW - 2);
          }
          if (w > 40 && one) {
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
    drawNotice(tile, ppu);
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

  /** Whether `tile` draws the view at `ppu` as finely as the profile allows. */
  function sharpEnough(tile: Tile, ppu: number): boolean {
    return tile.exact || tile.ppu >= ppu * 0.9;
  }

  function drawNotice(tile: Tile, ppu: number): void {
    let text = notice;
    if (!text && !sharpEnough(tile, ppu)) {
      const embedded = data.extra.length
        ? ` (every event is embedded from ${fmtTime(data.extra[0].t0)} to ${fmtTime(data.extra[0].t1)})` : "";
      text = kernel ? "loading detail…" : `Merged blocks at this zoom: this window's detail needs a live kernel${embedded}; ` +
        "or open prof.to_perfetto() in Perfetto.";
    }
    if (!text) return;
    ctx.font = "11px sans-serif";
    const w = Math.min(ctx.measureText(text).width + 12, width - LABEL_W - 8);
    ctx.fillStyle = dark ? "rgba(60,60,20,0.92)" : "rgba(255,248,200,0.95)";
    ctx.fillRect(width - w - 4, AXIS_H + 2, w, 18);
    ctx.fillStyle = fg;
    ctx.fillText(text, width - w + 2, AXIS_H + 11, w - 8);
  }

  // ---- detail from the kernel -----------------------------------------------------------
  let requestTimer: number | undefined;
  function wantDetail(): void {
    if (data.lod.mode === "full") return;
    window.clearTimeout(requestTimer);
    requestTimer = window.setTimeout(requestDetail, REQUEST_DELAY);
  }

  function requestDetail(): void {
    const ppu = pxPerUs();
    if (sharpEnough(bestTile(tiles, t0, t1), ppu) || !kernel) {
      schedule();
      return;
    }
    const span = t1 - t0;
    const a = t0 - span / 2;
    const b = t1 + span / 2;
    const key = `${a.toPrecision(9)}:${b.toPrecision(9)}:${Math.round(plotW())}`;
    if (pending && pending.key === key && performance.now() - pending.at < ANSWER_TIMEOUT) return;
    pending = { id: nextId++, key, at: performance.now() };
    model.send!({ kind: "window", id: pending.id, t0: a, t1: b, width: Math.round(plotW() * 2) });
    const asked = pending.id;
    window.setTimeout(() => {
      if (pending && pending.id === asked) {
        notice = "No answer from the kernel (restarted or busy?): showing the overview.";
        pending = null;
        schedule();
      }
    }, ANSWER_TIMEOUT);
  }

  function onMessage(msg: any, buffers: unknown[]): void {
    if (!msg || typeof msg !== "object") return;
    if (msg.kind === "window") {
      if (!pending || msg.id !== pending.id) return; // an answer to a view left behind
      roundTrips.push(performance.now() - pending.at);
      pending = null;
      if (msg.error) {
        notice = `The kernel could not draw this window: ${String(msg.error)}`;
      } else if (msg.tile) {
        notice = "";
        tiles.push(decodeTile(msg.tile, buffers ?? []));
        if (tiles.length > MAX_TILES + 1) tiles.splice(1, 1); // the base stays
      }
      schedule();
      wantDetail(); // the view may have moved meanwhile
    } else if (msg.kind === "search" && msg.id === searchId) {
      if (msg.error) {
        found.textContent = String(msg.error);
        return;
      }
      const hits = decodeColumns(msg.hits, buffers ?? []);
      const start = numeric(hits, "start", Float64Array);
      const dur = numeric(hits, "dur", Float32Array);
      const row = numeric(hits, "row", Uint32Array);
      const code = numeric(hits, "name", Uint32Array);
      matchList = Array.from(row, (r, k) => ({ row: r, start: start[k], dur: dur[k], name: data.names[code[k]] ?? "" }));
      matchPos = -1;
      const more = msg.total > msg.shown ? ` (first ${Number(msg.shown).toLocaleString("en-US")})` : "";
      found.textContent = `${Number(msg.total).toLocaleString("en-US")} found${more}`;
      schedule();
    }
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
    wantDetail();
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
    const seg = (segByTrack.get(r.track) ?? []).find((g) => g.depth === depth);
    if (!seg) return -1;
    const tile = current;
    const lo = tile.off[seg.s];
    const t = tOf(x);
    const tol = 2 / pxPerUs();
    const i = lowerBound(tile.start, lo, tile.off[seg.s + 1], t + tol) - 1;
    if (i < lo || tile.start[i] + tile.dur[i] + tol < t) return -1;
    hitInfo = { row: rowOf(tile, i), start: tile.start[i], dur: tile.dur[i], name: data.names[tile.name[i]] ?? "" };
    return hitInfo.row;
  }
  let hitInfo: EventInfo | null = null;

  /** What the loaded tiles know of timeline row `row` (null when none holds it alone). */
  function infoOf(row: number): EventInfo | null {
    for (const tile of [current, ...tiles]) {
      if (!tile.row) {
        if (row >= 0 && row < tile.start.length) {
          return { row, start: tile.start[row], dur: tile.dur[row], name: data.names[tile.name[row]] ?? "" };
        }
        continue;
      }
      for (let i = 0; i < tile.row.length; i++) {
        if (tile.row[i] === row && single(tile, i)) {
          return { row, start: tile.start[i], dur: tile.dur[i], name: data.names[tile.name[i]] ?? "" };
        }
      }
    }
    return null;
  }

  function sectionAt(y: number): string | null {
    const yy = y - AXIS_H + scrollY;
    const r = rows.find((row) => row.kind === "section" && yy >= row.y && yy < row.y + row.h);
    return r ? r.section : null;
  }

  function select(i: number, sync = true, info: EventInfo | null = null): void {
    selected = i;
    selInfo = i < 0 ? null : info && info.row === i ? info : infoOf(i);
    if (selInfo) {
      status.textContent = `${selInfo.name} · start ${fmtTime(selInfo.start)} · duration ${fmtTime(selInfo.dur)}`;
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

  let searchId = 0;
  function runSearch(): void {
    matches = matchingNames(data.names, search.value);
    matchList = [];
    matchPos = -1;
    const query = search.value.trim();
    if (query && matches.size && data.lod.mode !== "full" && kernel) {
      // names are matched here (highlights); the kernel finds every matching event
      searchId = nextId++;
      found.textContent = "searching…";
      model.send!({ kind: "search", id: searchId, query });
      schedule();
      return;
    }
    if (matches.size) {
      // every event is here (or, without a kernel, what the loaded tiles hold alone)
      const seen = new Set<number>();
      for (const tile of tiles) {
        for (let i = 0; i < tile.name.length; i++) {
          if (!matches.has(tile.name[i]) || !single(tile, i)) continue;
          const row = rowOf(tile, i);
          if (seen.has(row)) continue;
          seen.add(row);
          matchList.push({ row, start: tile.start[i], dur: tile.dur[i], name: data.names[tile.name[i]] ?? "" });
        }
      }
      matchList.sort((a, b) => a.start - b.start);
    }
    const partial = data.lod.mode !== "full" && !kernel ? " in the embedded detail" : "";
    found.textContent = query ? `${matchList.length} found${partial}` : "";
    schedule();
  }

  function gotoMatch(delta: number): void {
    if (!matchList.length) return;
    matchPos = (matchPos + delta + matchList.length) % matchList.length;
    const m = matchList[matchPos];
    const pad = Math.max(m.dur * 2, (t1 - t0) * 0.02, 1);
    setView(m.start - pad, m.start + m.dur + pad);
    found.textContent = `${matchPos + 1} / ${matchList.length}`;
    select(m.row, true, m);
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
      hitInfo = null;
      const row = hit(x, y);
      select(row, true, hitInfo);
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
    if (selInfo) {
      const pad = Math.max(selInfo.dur * 0.1, 0.5);
      setView(selInfo.start - pad, selInfo.start + selInfo.dur + pad);
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
  model.on("msg:custom", onMessage);
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
    tiles: () => tiles.map((t) => ({ t0: t.t0, t1: t.t1, exact: t.exact, ppu: t.ppu, blocks: t.start.length })),
    current: () => ({ t0: current.t0, t1: current.t1, exact: current.exact, ppu: current.ppu }),
    pending: () => pending !== null,
    sharp: () => sharpEnough(current, pxPerUs()),
    roundTrips: () => roundTrips.slice(),
    notice: () => notice,
    lod: () => data.lod,
  };

  rebuild();
  resize();
  const initial = model.get("view") as number[] | null;
  if (initial && initial.length === 2) setView(initial[0], initial[1], false);
  draw();
  showDetails();
  wantDetail();
  return () => {
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
    ro?.disconnect();
    model.off?.("change:view", onView);
    model.off?.("change:selected_index", onSelected);
    model.off?.("change:details", showDetails);
    model.off?.("change:meta", onData);
    model.off?.("msg:custom", onMessage);
    window.clearTimeout(requestTimer);
  };
}

export default { render };
