// The area selected on the trace viewer and its summary: summed in the browser when a tile
// holds every event of the range, else asked of the kernel, else said to need one. No DOM.
import { type Tile, type TimelineData } from "../data";
import { decodeArea, summarize, type Area, type AreaAnswer, type AreaRequest, type AreaRow } from "./area";
import { fmtTime } from "./layout";

export class AreaState {
  area: Area | null = null;
  /** Whether the area waits for its summary (set when a drag ends; asked once). */
  wanted = false;
  rows: AreaRow[] = [];
  events = 0;
  /** What the summary line says. */
  status = "";
  private asked = 0;
  private nextId = 1;

  /** Select `area`; `final` when the drag ended (then it is summed, once). */
  set(area: Area, final = true): void {
    this.area = area;
    this.wanted = final;
    this.rows = [];
    this.events = 0;
    this.status = "";
    this.asked = 0;
  }

  clear(): void {
    this.area = null;
    this.wanted = false;
    this.rows = [];
    this.events = 0;
    this.status = "";
    this.asked = 0;
  }

  /** The range, as the status line says it. */
  label(): string {
    const a = this.area;
    if (!a) return "";
    const tracks = `${a.tracks.length} track${a.tracks.length === 1 ? "" : "s"}`;
    return `selected ${fmtTime(a.t1 - a.t0)} (from ${fmtTime(a.t0)} to ${fmtTime(a.t1)}) on ${tracks}`;
  }

  /** Sum the area from an exact tile covering it; else the request for the kernel (null:
   * summed here, nothing selected, or no kernel: the status says so). */
  summarise(tiles: Tile[], data: TimelineData, kernel: boolean): AreaRequest | null {
    const a = this.area;
    if (!a || !this.wanted) return null;
    this.wanted = false;
    if (!a.tracks.length) {
      this.status = "No event track in the selected area.";
      return null;
    }
    const exact = tiles.find((t) => t.exact && t.t0 <= a.t0 && t.t1 >= a.t1);
    if (exact) {
      const out = summarize(exact, data.segments, data.names, a);
      this.take(out.rows, out.events, out.names);
      return null;
    }
    if (!kernel) {
      this.status = "The events of this range are not embedded in this page: select inside the " +
        "detailed range, or run the notebook for a live kernel.";
      return null;
    }
    this.asked = this.nextId++;
    this.status = "summing…";
    return { kind: "area", id: this.asked, t0: a.t0, t1: a.t1, tracks: a.tracks };
  }

  /** Take the kernel's summary; false when it answers an area left behind. */
  receive(msg: AreaAnswer, buffers: unknown[], names: string[]): boolean {
    if (!this.area || msg.id !== this.asked) return false;
    if (msg.error) {
      this.status = `The kernel could not sum this area: ${String(msg.error)}`;
      return true;
    }
    const rows = decodeArea(msg, buffers, names);
    this.take(rows, Number(msg.events ?? 0), Number(msg.names ?? rows.length));
    return true;
  }

  private take(rows: AreaRow[], events: number, names: number): void {
    this.rows = rows;
    this.events = events;
    const shown = names > rows.length ? ` (the longest ${rows.length} listed)` : "";
    this.status = `${events.toLocaleString("en-US")} event${events === 1 ? "" : "s"}, ` +
      `${names.toLocaleString("en-US")} name${names === 1 ? "" : "s"}${shown}`;
  }
}
