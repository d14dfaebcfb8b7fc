// The trace viewer's search: one search, whatever starts it. With a kernel, the kernel finds
// the events (tfprof_nb.widgets.timeline_search): those whose name, op type, framework op,
// name scope, HLO op or HLO category contains the query, or, for a table row's query (what a
// click on the row writes in the box: queryOf), exactly that row's events; so typing what a
// click wrote finds what the click found. Without one, names in the loaded tiles. The
// matches are highlighted, in start order, with the one shown last. No DOM.
import { decodeColumns, numeric, type Wire } from "../columns";
import { matchingNames, rowOf, single, type Tile } from "../data";

/** What the view knows of one event: enough for the status line and fit selection. */
export interface EventInfo {
  row: number;
  start: number;
  dur: number;
  name: string;
  count?: number; // events merged into the block (1 or missing: one event)
}

export interface SearchRequest {
  kind: "search";
  id: number;
  query: string;
}

/** A search answer as the kernel sends it: typed columns start, dur, row, name. */
export interface SearchAnswer {
  kind: "search";
  id: number;
  total?: number;
  shown?: number;
  hits?: Wire;
  error?: string;
}

/** A table's row to show in the trace (tfprof_nb.widgets.timeline_find's tables). */
export interface RowFind {
  table: string;
  key: Record<string, unknown>;
}

const ROW_QUERY = /^(kernel|hlo op|device op|host op):\s*([\s\S]*?)\s*$/;

/** The query of a table's row: what a click on it writes in the search box, as
 * tfprof_nb.widgets.timeline_search.query_of writes it. */
export function queryOf(find: RowFind): string {
  const k = find.key;
  const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));
  if (find.table === "kernels") return `kernel: ${text(k.kernel_name)}`;
  if (find.table === "hlo") {
    const program = text(k.program_id);
    return `hlo op: ${text(k.hlo_op_name)}${program ? ` in program ${program}` : ""}`;
  }
  return `${text(k.host_or_device) === "Device" ? "device" : "host"} op: ${text(k.operation)}`;
}

/** The value of a table row's query (the row's name), null for any other query. */
export function rowQueryValue(query: string): string | null {
  const m = ROW_QUERY.exec(query.trim());
  if (!m || !m[2]) return null;
  return m[1] === "hlo op" ? m[2].replace(/ in program \S+$/, "") : m[2];
}

export class Search {
  query = "";
  /** Codes of the names matching the query (drawn highlighted). */
  names = new Set<number>();
  /** The rows found for a table's row (drawn highlighted instead of names; null: none). */
  rows: Set<number> | null = null;
  /** Whether the next answer shows its first match (a table's row was clicked, or Enter
   * pressed before the answer came). */
  jump = false;
  /** Whether the kernel's answer to the last search is awaited. */
  pending = false;
  /** The matching events by start, and the index of the one shown last (-1: none). */
  hits: EventInfo[] = [];
  pos = -1;
  /** What the search line says. */
  status = "";
  private asked = 0;
  private nextId = 1;

  /**
   * Search for `query`. With `ask` (a kernel at hand), the kernel finds the events: the
   * request to send is returned (the names matching a plain query are highlighted
   * meanwhile). Else the events named so come from `tiles` (every event, or without a kernel
   * what the tiles hold alone: `partial`); a table row's query searches the row's name.
   */
  set(query: string, names: string[], tiles: Tile[], ask: boolean, partial: boolean,
    long: Record<string, string> = {}): SearchRequest | null {
    this.query = query.trim();
    const row = rowQueryValue(this.query);
    this.rows = null;
    this.names = row !== null && ask ? new Set() : matchingNames(names, row ?? query, long);
    this.hits = [];
    this.pos = -1;
    this.pending = false;
    this.jump = false;
    this.asked = this.nextId++; // (an answer to an earlier search is left behind)
    if (this.query && ask) {
      this.pending = true;
      if (row !== null) this.rows = new Set();
      this.status = row !== null ? "finding its events…" : "searching…";
      return { kind: "search", id: this.asked, query: this.query };
    }
    if (this.names.size) this.hits = this.fromTiles(names, tiles);
    this.status = this.query ? `${this.hits.length} found${partial ? " in the embedded detail" : ""}` : "";
    return null;
  }

  private fromTiles(names: string[], tiles: Tile[]): EventInfo[] {
    const seen = new Set<number>();
    const out: EventInfo[] = [];
    for (const tile of tiles) {
      for (let i = 0; i < tile.name.length; i++) {
        if (!this.names.has(tile.name[i]) || !single(tile, i)) continue;
        const row = rowOf(tile, i);
        if (seen.has(row)) continue;
        seen.add(row);
        out.push({ row, start: tile.start[i], dur: tile.dur[i], name: names[tile.name[i]] ?? "" });
      }
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /** Whether block `row` with name `code` is drawn highlighted: an event found, or (a plain
   * query) named so. */
  marks(row: number, code: number): boolean {
    return (this.rows?.has(row) ?? false) || this.names.has(code);
  }

  /** Take the kernel's answer; false when it answers a search left behind. */
  receive(msg: SearchAnswer, buffers: unknown[], names: string[]): boolean {
    if (msg.id !== this.asked) return false;
    this.pending = false;
    if (msg.error || !msg.hits) {
      this.status = String(msg.error ?? "no answer");
      return true;
    }
    const c = decodeColumns(msg.hits, buffers);
    const start = numeric(c, "start", Float64Array);
    const dur = numeric(c, "dur", Float32Array);
    const code = numeric(c, "name", Uint32Array);
    this.hits = Array.from(numeric(c, "row", Uint32Array), (row, k) =>
      ({ row, start: start[k], dur: dur[k], name: names[code[k]] ?? "" }));
    this.pos = -1;
    const total = Number(msg.total ?? this.hits.length);
    const shown = Number(msg.shown ?? this.hits.length);
    const more = total > shown ? ` (first ${shown.toLocaleString("en-US")})` : "";
    const row = rowQueryValue(this.query) !== null;
    this.rows = new Set(this.hits.map((h) => h.row));
    this.status = `${total.toLocaleString("en-US")} ${row ? `event${total === 1 ? "" : "s"} of this row` : "found"}${more}`;
    return true;
  }

  /** The next (`delta` 1) or previous (-1) match, cycling; null when there is none. */
  step(delta: number): EventInfo | null {
    if (!this.hits.length) return null;
    this.pos = (this.pos + delta + this.hits.length) % this.hits.length;
    this.status = `${this.pos + 1} / ${this.hits.length}`;
    return this.hits[this.pos];
  }
}
