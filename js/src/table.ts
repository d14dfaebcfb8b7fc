// A sortable, filterable, paged table with CSV export. Cells are text only (textContent).
// Tables arrive as typed columns (see columns.ts) with a title, a filter column and a page size.
import { decodeColumns, missing, type Cell, type Field, type Wire } from "./columns";
import { type ModelLike } from "./model";
import { counted, groupedFixed } from "./format";
import { ensureStyle } from "./ui";

export interface Column {
  name: string;
  label: string;
  type: "number" | "string" | "boolean";
  missingTitle?: string; // what an empty cell of the column means (its tooltip)
}

export interface TableSpec {
  title?: string;
  columns: Column[];
  data: Record<string, ArrayLike<Cell>>;
  filter_column?: string | null; // the column the filter box searches (default: first string column)
  page_size?: number;
}

/** A table as a view's trait holds it (tfprof_nb.widgets.traits.TableData.wire). */
export interface TableWire extends Wire {
  title?: string;
  filter_column?: string | null;
  page_size?: number;
  rows?: number;
}

const decoded = new WeakMap<object, TableSpec>();

function columnType(field: Field): Column["type"] {
  return field.dtype === "string" ? "string" : field.dtype === "bool" ? "boolean" : "number";
}

/** The table a trait holds, decoded once per value (an empty table when there is none). */
export function decodeTable(wire: TableWire | null | undefined): TableSpec {
  if (!wire || !wire.schema) return { columns: [], data: {} };
  let spec = decoded.get(wire);
  if (!spec) {
    spec = {
      title: wire.title,
      columns: wire.schema.map((f) => ({ name: f.name, label: f.label ?? f.name, type: columnType(f),
        ...(f.missing_title ? { missingTitle: f.missing_title } : {}) })),
      data: decodeColumns(wire),
      filter_column: wire.filter_column,
      page_size: wire.page_size,
    };
    decoded.set(wire, spec);
  }
  return spec;
}

export interface TableState {
  sortBy: string | null;
  descending: boolean;
  filter: string;
  page: number;
}

/** Row order after filtering and sorting (pure; unit-tested). */
export function rowOrder(spec: TableSpec, state: TableState): number[] {
  const n = spec.columns.length ? (spec.data[spec.columns[0].name] ?? []).length : 0;
  let rows = Array.from({ length: n }, (_, i) => i);
  const q = state.filter.trim().toLowerCase();
  if (q) {
    const col = spec.filter_column ?? spec.columns.find((c) => c.type === "string")?.name;
    const values = col ? spec.data[col] : undefined;
    if (values) rows = rows.filter((i) => !missing(values[i]) && String(values[i]).toLowerCase().includes(q));
  }
  if (state.sortBy) {
    const values = spec.data[state.sortBy] ?? [];
    const sign = state.descending ? -1 : 1;
    rows.sort((a, b) => {
      const x = values[a];
      const y = values[b];
      const mx = missing(x);
      const my = missing(y);
      if (mx || my) return mx && my ? a - b : mx ? 1 : -1;
      if (x === y) return a - b;
      return ((x as number | string | boolean) < (y as number | string | boolean) ? -1 : 1) * sign;
    });
  }
  return rows;
}

// What a spreadsheet reads as a formula at a text cell's start (as FORMULA_START in
// tfprof_nb/cli/formats.py, for `tfprof table`): such cells get a ' in front (OWASP's advice
// against CSV injection); numbers are written as they are.
const FORMULA_START = /^[=+\-@\t\r]/;

function csvCell(v: unknown): string {
  let s = missing(v) ? "" : String(v);
  if (typeof v === "string" && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The rows (in the given order) as CSV text with a header line. */
export function toCsv(spec: TableSpec, rows: number[]): string {
  const lines = [spec.columns.map((c) => csvCell(c.name)).join(",")];
  for (const i of rows) lines.push(spec.columns.map((c) => csvCell(spec.data[c.name]?.[i])).join(","));
  return lines.join("\n") + "\n";
}

/** A cell as the table shows it: integers and numbers of 100 or more with thousands separators;
 * a share (a column named `*_pct`) with one decimal, as every sentence writes a percentage (a
 * table's 63.25 beside a sentence's 63.2% reads as two figures). */
export function fmt(v: unknown, type: string, name = ""): string {
  if (missing(v)) return "";
  if (type === "number" && typeof v === "number") {
    if (name.endsWith("_pct") && Number.isFinite(v)) return groupedFixed(v, 1);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    // (thousands separated as the integers of the same column are)
    return Math.abs(v) >= 100 ? v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })
      : v.toPrecision(4);
  }
  return String(v);
}

/** What a table does with a row: `onRow` hears a click (or Enter) on it, with its values;
 * `rowTitle` says so on hover. */
export interface TableOptions {
  onRow?: (row: Record<string, Cell>) => void;
  rowTitle?: string;
}

/** Row `i` of `spec` as {column: value}. */
export function rowOf(spec: TableSpec, i: number): Record<string, Cell> {
  return Object.fromEntries(spec.columns.map((c) => [c.name, (spec.data[c.name]?.[i] ?? null) as Cell]));
}

/** Make `tr` (row `i`) answer clicks and Enter with `opts.onRow`. */
function clickable(tr: HTMLTableRowElement, spec: TableSpec, i: number, opts: TableOptions): void {
  if (!opts.onRow) return;
  const act = () => opts.onRow!(rowOf(spec, i));
  tr.classList.add("tp-row-link");
  tr.tabIndex = 0;
  tr.title = opts.rowTitle ?? "";
  tr.addEventListener("click", act);
  tr.addEventListener("keydown", (e) => { if (e.key === "Enter") act(); });
}

export function renderTable(el: HTMLElement, getSpec: () => TableSpec, opts: TableOptions = {}): { refresh: () => void } {
  ensureStyle(el);
  const root = document.createElement("div");
  root.className = "tfprof tfprof-table";
  const bar = document.createElement("div");
  bar.className = "tt-bar tp-toolbar";
  const title = document.createElement("b");
  const filter = document.createElement("input");
  filter.type = "search";
  filter.className = "tt-filter tp-filter";
  filter.placeholder = "filter by name";
  const prev = document.createElement("button");
  prev.textContent = "◀";
  prev.className = "tt-prev tp-button";
  const next = document.createElement("button");
  next.textContent = "▶";
  next.className = "tt-next tp-button";
  const info = document.createElement("span");
  info.className = "tt-info tp-muted";
  const csv = document.createElement("button");
  csv.textContent = "Export as CSV";
  csv.className = "tt-csv tp-button";
  bar.append(title, filter, prev, next, info, csv);
  const wrap = document.createElement("div");
  wrap.className = "tp-table-wrap";
  const table = document.createElement("table");
  table.className = "tt-table tp-table";
  wrap.append(table);
  root.append(bar, wrap);
  el.append(root);
  const state: TableState = { sortBy: null, descending: true, filter: "", page: 0 };
  let order: number[] = [];

  function refresh(): void {
    const spec = getSpec();
    title.textContent = spec.title ?? "";
    order = rowOrder(spec, state);
    const size = spec.page_size ?? 100;
    const pages = Math.max(1, Math.ceil(order.length / size));
    state.page = Math.min(state.page, pages - 1);
    info.textContent = `${counted(order.length, "row")} · page ${state.page + 1}/${pages}`;
    const head = document.createElement("tr");
    for (const c of spec.columns) {
      const th = document.createElement("th");
      th.textContent = c.label + (state.sortBy === c.name ? (state.descending ? " ▼" : " ▲") : "");
      th.dataset.column = c.name;
      if (c.type === "number") th.classList.add("tp-num");
      th.addEventListener("click", () => {
        if (state.sortBy === c.name) state.descending = !state.descending;
        else {
          state.sortBy = c.name;
          state.descending = c.type === "number";
        }
        state.page = 0;
        refresh();
      });
      head.append(th);
    }
    const body: HTMLTableRowElement[] = [];
    for (const i of order.slice(state.page * size, (state.page + 1) * size)) {
      const tr = document.createElement("tr");
      for (const c of spec.columns) {
        const td = document.createElement("td");
        const v = spec.data[c.name]?.[i];
        td.textContent = fmt(v, c.type, c.name);
        if (!opts.onRow) td.title = td.textContent;
        if (c.missingTitle && missing(v)) td.title = c.missingTitle;
        if (c.type === "number") td.className = "tp-num";
        tr.append(td);
      }
      clickable(tr, spec, i, opts);
      body.push(tr);
    }
    table.replaceChildren(head, ...body);
    hint();
  }

  // more columns than the notebook shows: say so (the sideways scrollbar sits at the
  // bottom of the table, out of sight)
  const more = document.createElement("span");
  more.className = "tt-more tp-muted";
  info.after(more);
  const observer = typeof ResizeObserver !== "undefined" ? new ResizeObserver(() => hint()) : null;
  function hint(): void {
    if (!root.isConnected && observer && order.length) observer.disconnect(); // (the view went)
    const cut = wrap.scrollWidth > wrap.clientWidth + 2;
    more.textContent = cut ? "· scroll sideways for more columns →" : "";
  }
  observer?.observe(wrap);

  filter.addEventListener("input", () => {
    state.filter = filter.value;
    state.page = 0;
    refresh();
  });
  prev.addEventListener("click", () => {
    state.page = Math.max(0, state.page - 1);
    refresh();
  });
  next.addEventListener("click", () => {
    state.page += 1;
    refresh();
  });
  csv.addEventListener("click", () => {
    const text = toCsv(getSpec(), order);
    (root as any).__lastCsv = text;
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "text/csv" }));
    a.download = `${(getSpec().title ?? "table").replace(/[^\w.-]+/g, "_")}.csv`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  });
  (root as any).__table = { order: () => order.slice(), csv: () => toCsv(getSpec(), order) };
  refresh();
  return { refresh };
}

export function render({ model, el }: { model: ModelLike; el: HTMLElement }): () => void {
  const view = renderTable(el, () => decodeTable(model.get("table")));
  model.on?.("change:table", view.refresh);
  return () => {};
}

export default { render };
