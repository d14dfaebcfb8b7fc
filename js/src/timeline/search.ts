// The trace viewer's search: names matching the query (highlighted), the matching events in
// start order (the kernel finds them all for a large profile; else the loaded tiles), and
// the one shown last; or the events of a table's row, found by the kernel. No DOM.
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

/** A table's row to show (its events found by the kernel: see TimelineSource.on_message). */
export interface OccurrencesRequest {
  kind: "occurrences";
  id: number;
  table: string;
  key: Record<string, unknown>;
}

export class Search {
  query = "";
  /** Codes of the names matching the query (drawn highlighted). */
  names = new Set<number>();
  /** The rows found for a table's row (drawn highlighted instead of names; null: none). */
  rows: Set<number> | null = null;
  /** Whether the next answer shows its first match (a table's row was clicked). */
  jump = false;
  /** The matching events by start, and the index of the one shown last (-1: none). */
  hits: EventInfo[] = [];
  pos = -1;
  /** What the search line says. */
  status = "";
  private asked = 0;
  private nextId = 1;

  /**
   * Search for `query` among `names`. With `ask` (an overview with a kernel at hand), the
   * kernel finds the matching events: the request to send is returned. Else the events come
   * from `tiles` (every event, or without a kernel what the tiles hold alone: `partial`).
   */
  set(query: string, names: string[], tiles: Tile[], ask: boolean, partial: boolean): SearchRequest | null {
    this.query = query.trim();
    this.rows = null;
    this.names = matchingNames(names, query);
    this.hits = [];
    this.pos = -1;
    if (this.query && this.names.size && ask) {
      this.asked = this.nextId++;
      this.status = "searching…";
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

  /** Ask the kernel for the events of a table's row (`label` names it in the status). */
  occurrences(table: string, key: Record<string, unknown>, label: string): OccurrencesRequest {
    this.query = label;
    this.names = new Set();
    this.rows = new Set();
    this.hits = [];
    this.pos = -1;
    this.jump = true;
    this.asked = this.nextId++;
    this.status = "finding its events…";
    return { kind: "occurrences", id: this.asked, table, key };
  }

  /** Whether block `row` with name `code` is drawn highlighted. */
  marks(row: number, code: number): boolean {
    return this.rows ? this.rows.has(row) : this.names.has(code);
  }

  /** Take the kernel's answer; false when it answers a search left behind. */
  receive(msg: SearchAnswer, buffers: unknown[], names: string[]): boolean {
    if (msg.id !== this.asked) return false;
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
    if (this.rows) this.rows = new Set(this.hits.map((h) => h.row));
    this.status = `${total.toLocaleString("en-US")} ${this.rows ? `event${total === 1 ? "" : "s"} of this row` : "found"}${more}`;
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
