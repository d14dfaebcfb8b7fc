// Source: device time by the user's code. What the numbers cover, the Python stacks as an
// icicle, the hottest locations with their code and the device time beside each line (code
// read by the kernel from notebook cells or files, else the location alone), every location
// in a table (a click on a row shows its line's code). Code and names are profile strings:
// set as text only.
import { type Model } from "./model";
import { renderIcicle, scopeRows } from "./charts";
import { decodeTable, renderTable } from "./table";
import { statements, text, viewRoot } from "./ui";
import { graphAction, targetsOf } from "./graphaction";

/** A block of code around hot lines, as the kernel sends it. */
export interface CodeBlock {
  file: string;
  /** a notebook cell's name ("In[3]"), else the file */
  label?: string;
  origin: string;
  first_line: number;
  last_line: number;
  functions: string[];
  time_us: number;
  time_pct: number;
  note: string;
  /** the file changed since the capture: its lines stand alone, no code beside the time */
  moved?: boolean;
  /** [line number, text, device time (us) or null, share (%) or null, and, where the code
   * is not shown, the function the profile recorded at that line] */
  lines: [number, string, number | null, number | null, string?][];
}

const ms = (us: number) => `${(us / 1e3).toLocaleString("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 3 })} ms`;

/** The block's heading: where, which functions, how much of the device time. */
export function blockTitle(b: CodeBlock): string {
  const span = b.first_line === b.last_line ? `${b.first_line}` : `${b.first_line}-${b.last_line}`;
  const fns = b.functions.length ? ` · ${b.functions.join(", ")}` : "";
  return `${b.label || b.file}:${span}${fns} · ${ms(b.time_us)} (${b.time_pct.toFixed(1)}%)`;
}

function codeRow(line: CodeBlock["lines"][number], max: number): HTMLTableRowElement {
  const [n, code, us, pct] = line;
  const tr = document.createElement("tr");
  tr.className = us === null ? "src-line" : "src-line src-hot";
  tr.dataset.line = String(n);
  const time = document.createElement("td");
  time.className = "src-time";
  time.style.cssText = "text-align:right;white-space:nowrap;padding:0 8px;font-variant-numeric:tabular-nums;width:1%;min-width:150px";
  if (us !== null) {
    time.textContent = `${ms(us)} ${(pct ?? 0).toFixed(1)}%`;
    time.style.background = `linear-gradient(to left, rgba(225,87,89,.35) ${(100 * us) / max}%, transparent 0)`;
  }
  const num = text("td", "src-num tp-muted", String(n));
  num.style.cssText = "text-align:right;padding:0 8px;user-select:none;width:1%";
  const recorded = code === "" && line[4] ? `(no code shown) recorded in ${line[4]}` : "";
  const body = text("td", recorded ? "src-code src-recorded tp-muted" : "src-code", recorded || code);
  body.style.cssText = "white-space:pre;font-family:var(--jp-code-font-family, monospace);padding:0 8px" +
    (recorded ? ";font-style:italic" : "");
  if (us !== null) tr.style.background = "var(--tp-bg2)";
  tr.append(time, num, body);
  return tr;
}

/** One block: its heading, a note where the code is not shown, and its lines. */
export function renderBlock(b: CodeBlock, max: number): HTMLElement {
  const box = document.createElement("div");
  box.className = b.moved ? "src-block src-moved" : "src-block";
  box.dataset.file = b.file;
  box.style.cssText = "margin:8px 0 14px;border:1px solid var(--tp-border);border-radius:6px;overflow:auto;max-width:100%";
  const head = text("div", "src-head", blockTitle(b));
  head.style.cssText = "padding:4px 8px;background:var(--tp-bg3);font-weight:600;font-size:12px";
  box.append(head);
  const origin = b.note || (b.origin ? `Code: ${b.origin}.` : "");
  if (origin) box.append(text("div", b.note ? "src-note" : "src-origin tp-muted", origin));
  (box.lastChild as HTMLElement).style.padding = "2px 8px";
  if (b.moved) (box.lastChild as HTMLElement).style.cssText += ";font-weight:600;color:var(--tp-warn, #b45309)";
  const table = document.createElement("table");
  table.className = "src-lines";
  table.style.cssText = "border-collapse:collapse;font-size:12px;width:100%";
  for (const line of b.lines) table.append(codeRow(line, max));
  box.append(table);
  return box;
}

/** Show the code line of `file`:`line` under `root` (scrolled into view, marked); false
 * when no block holds it. */
export function showLine(root: HTMLElement, file: string, line: number): boolean {
  for (const old of Array.from(root.querySelectorAll(".src-target"))) {
    old.classList.remove("src-target");
    (old as HTMLElement).style.outline = "";
  }
  for (const block of Array.from(root.querySelectorAll<HTMLElement>(".src-block"))) {
    if (block.dataset.file !== file) continue;
    const tr = Array.from(block.querySelectorAll<HTMLElement>("tr.src-line")).find((r) => r.dataset.line === String(line));
    if (!tr) continue;
    tr.classList.add("src-target");
    tr.style.outline = "2px solid var(--tp-accent)";
    tr.scrollIntoView({ block: "center" });
    return true;
  }
  return false;
}

/** A warning the view puts first (the code changed since the capture): boxed, bold. */
export function renderWarning(message: string): HTMLElement {
  const box = text("div", "src-warning", `\u26a0 ${message}`);
  box.setAttribute("role", "alert");
  box.style.cssText = "margin:4px 0 10px;padding:8px 12px;border:1px solid #d97706;" +
    "border-left:5px solid #d97706;border-radius:4px;background:rgba(245,158,11,.14);" +
    "font-weight:600;font-size:13px;line-height:1.4";
  return box;
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-source", model);
  for (const w of (model.get("warnings") ?? []) as string[]) root.append(renderWarning(w));
  statements(root, model);
  const rows = scopeRows(decodeTable(model.get("flame")));
  if (rows.length) {
    root.append(text("h4", "tp-h", "Device time by Python stack (outermost frame on top)"));
    const pct = new Map(rows.map((r) => [r.scope, Number(r.extra.time_pct)]));
    const name = new Map(rows.map((r) => [r.scope, r.name]));
    const box = document.createElement("div");
    box.className = "src-flame";
    box.append(renderIcicle(rows, 900, 20, (s, v) => `${name.get(s)}: ${ms(v)} (${(pct.get(s) ?? 0).toFixed(1)}%)`));
    root.append(box);
  }
  const blocks = (model.get("code") ?? []) as CodeBlock[];
  if (blocks.length) {
    root.append(text("h4", "tp-h", "The hottest lines: device time beside the code"));
    const max = Math.max(...blocks.flatMap((b) => b.lines.map((l) => l[2] ?? 0)), 1e-9);
    for (const b of blocks) root.append(renderBlock(b, max));
  }
  const graph = lineGraph(model, root);
  renderTable(root, () => decodeTable(model.get("table")), {
    onRow: (row) => {
      showLine(root, String(row.file ?? ""), Number(row.line));
      graph.select(String(row.file ?? ""), Number(row.line));
    },
    rowTitle: "Show this line's code (the hottest lines have theirs above)" + (graph.live ? ' and select it for "graph"' : ""),
  });
  if (graph.el) root.append(graph.el);
  return graph.cleanup;
}

/** The "graph" action of a line (graphaction.ts): a row of the table, or a hot line of the
 * code above (a click), selects the line; its HLO ops (Python's graph_targets, by
 * `file:line`, hottest first) are offered. None on a page whose lines have no HLO ops. */
function lineGraph(model: Model, root: HTMLElement) {
  const targets = (model.get("graph_targets") ?? {}) as Record<string, unknown>;
  const live = typeof model.send === "function";
  if (!Object.keys(targets).length) return { el: null, live: false, select: () => {}, cleanup: () => {} };
  const graph = graphAction(model, "src-graph", "Select a line (a row of the table or a hot line of the code), then: ");
  const select = (file: string, line: number) => {
    const found = targetsOf(targets[`${file}:${line}`]);
    const where = `${file.split("/").pop()}:${line}`;
    graph.choose(found, found.length ? `Line ${where}: HLO op ` : `Line ${where}: no HLO op located there `);
  };
  const onClick = (e: Event) => {
    const tr = (e.target as HTMLElement).closest?.("tr.src-hot") as HTMLElement | null;
    const block = tr?.closest(".src-block") as HTMLElement | null;
    if (tr && block && live) select(block.dataset.file ?? "", Number(tr.dataset.line));
  };
  root.addEventListener("click", onClick);
  return { el: graph.el, live, select, cleanup: () => { graph.cleanup(); root.removeEventListener("click", onClick); } };
}

export default { render };
