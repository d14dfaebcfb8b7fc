// The trace viewer's tiles: what it draws from (the first state's tile, the embedded detail
// of an offline copy, the kernel's answers) and what it asks the kernel for. No DOM.
import { bestTile, decodeTile, type Tile, type TileWire } from "../data";
import { fmtTime } from "./layout";

export const MAX_TILES = 8; // window answers kept besides the first tile
export const ANSWER_TIMEOUT = 10000; // ms before saying the kernel does not answer

export interface WindowRequest {
  kind: "window";
  id: number;
  t0: number;
  t1: number;
  width: number;
}

/** A window answer as the kernel sends it (see TimelineSource.on_message). */
export interface WindowAnswer {
  kind: "window";
  id: number;
  tile?: TileWire;
  error?: string;
}

/** Whether `tile` draws a view at `ppu` px per us as finely as the profile allows. */
export function sharpEnough(tile: Tile, ppu: number): boolean {
  return tile.exact || tile.ppu >= ppu * 0.9;
}

/** What to say where the tiles draw a view merged: detail is coming from the kernel, or
 * needs one (and where an offline copy embeds every event, `extra`). */
export function missingDetail(kernel: boolean, extra?: Tile): string {
  if (kernel) return "loading detail…";
  const embedded = extra ? ` (every event is embedded from ${fmtTime(extra.t0)} to ${fmtTime(extra.t1)})` : "";
  return `Merged blocks at this zoom: this window's detail needs a live kernel${embedded}; ` +
    "or open prof.to_perfetto() in Perfetto.";
}

// request ids for every store of the page: an answer to a store replaced by new data (a
// change of `meta`) can never be taken for the new store's request
let nextRequestId = 1;

export class TileStore {
  /** The tiles, the first state's first (it stays). */
  list: Tile[];
  /** The window asked for and not answered yet. */
  pending: { id: number; key: string; at: number } | null = null;
  /** What the kernel said, or that it did not answer ("" when all is well). */
  notice = "";
  /** ms from asking for a window to its answer, per answer. */
  readonly roundTrips: number[] = [];

  constructor(base: Tile, extra: Tile[] = []) {
    this.list = [base, ...extra];
  }

  /** The best tile to draw [t0, t1]: see bestTile. */
  best(t0: number, t1: number): Tile {
    return bestTile(this.list, t0, t1);
  }

  /**
   * The window to ask the kernel for so that [t0, t1] drawn `plotW` px wide is sharp: the
   * view and half a view on each side, at twice the resolution. Null when the tiles already
   * draw it sharp, or the same window is asked for and not timed out.
   */
  request(t0: number, t1: number, plotW: number, now: number): WindowRequest | null {
    if (sharpEnough(this.best(t0, t1), plotW / Math.max(t1 - t0, 1e-9))) return null;
    const span = t1 - t0;
    const a = t0 - span / 2;
    const b = t1 + span / 2;
    const key = `${a.toPrecision(9)}:${b.toPrecision(9)}:${Math.round(plotW)}`;
    if (this.pending && this.pending.key === key && now - this.pending.at < ANSWER_TIMEOUT) return null;
    this.pending = { id: nextRequestId++, key, at: now };
    return { kind: "window", id: this.pending.id, t0: a, t1: b, width: Math.round(plotW * 2) };
  }

  /** Request `id` timed out: forget it and say so (false when it was answered). */
  expire(id: number): boolean {
    if (!this.pending || this.pending.id !== id) return false;
    this.notice = "No answer from the kernel (restarted or busy?): showing the overview.";
    this.pending = null;
    return true;
  }

  /** Take a window answer; false when it answers a request left behind. */
  receive(msg: WindowAnswer, buffers: unknown[], now: number): boolean {
    if (!this.pending || msg.id !== this.pending.id) return false;
    this.roundTrips.push(now - this.pending.at);
    this.pending = null;
    if (msg.error) {
      this.notice = `The kernel could not draw this window: ${String(msg.error)}`;
    } else if (msg.tile) {
      this.notice = "";
      this.list.push(decodeTile(msg.tile, buffers));
      if (this.list.length > MAX_TILES + 1) this.list.splice(1, 1); // the first tile stays
    }
    return true;
  }
}
