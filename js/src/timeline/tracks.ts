// The trace viewer's tracks as the user arranges them: sections folded, tracks pinned to the
// top, hidden, filtered by name, folded thin (one by one, or every track with nothing in the
// window at once), and the rows that follow. No DOM.
import { type Segment, type Tile, type TimelineData } from "../data";
import { lowerBound } from "../lod";
import { AXIS_H, emptyChoices, layoutRows, rowTop, trackKey, type Frame, type Row, type TrackChoices } from "./layout";

export type Choice = "pinned" | "hidden" | "folded";

export class Tracks {
  readonly choices: TrackChoices = emptyChoices();
  rows: Row[] = [];
  height = 0; // the scrolled content
  pinnedH = 0;
  /** The tracks "fold empty" folded (unfolded together). */
  private emptyFolded = new Set<string>();

  layout(data: TimelineData): void {
    const { rows, height, pinnedH } = layoutRows(data.tracks, data.counters, this.choices);
    this.rows = rows;
    this.height = height;
    this.pinnedH = pinnedH;
  }

  toggleSection(section: string): void {
    const c = this.choices.collapsed;
    if (c.has(section)) c.delete(section);
    else c.add(section);
  }

  toggle(choice: Choice, key: string): void {
    const set = this.choices[choice];
    if (set.has(key)) set.delete(key);
    else set.add(key);
    if (choice === "folded") this.emptyFolded.delete(key);
  }

  setFilter(query: string): void {
    this.choices.filter = query;
  }

  hiddenCount(): number {
    return this.choices.hidden.size;
  }

  /** Show every track again: none hidden, no filter, none folded. */
  showAll(): void {
    this.choices.hidden.clear();
    this.choices.folded.clear();
    this.emptyFolded.clear();
    this.choices.filter = "";
  }

  /** Fold every event track with no event in [t0, t1] (as `tile` draws it), or unfold the
   * ones this folded when some are; returns how many are folded now. */
  foldEmpty(data: TimelineData, tile: Tile, t0: number, t1: number): number {
    if (this.emptyFolded.size) {
      for (const key of this.emptyFolded) this.choices.folded.delete(key);
      this.emptyFolded.clear();
      return 0;
    }
    const busy = busyTracks(data.segments, tile, t0, t1);
    for (const t of data.tracks) {
      const key = String(t.id);
      if (busy.has(t.id) || this.choices.folded.has(key)) continue;
      this.choices.folded.add(key);
      this.emptyFolded.add(key);
    }
    return this.emptyFolded.size;
  }

  /** The event tracks drawn between canvas y0 and y1, in sight (the pinned band's, and the
   * scrolled rows' parts under it that show), with a folded section's tracks when its header
   * is there (those shown when it opens: not hidden, matching the filter). */
  tracksBetween(frame: Frame, data: TimelineData, y0: number, y1: number, height = Infinity): number[] {
    const [a, b] = y0 <= y1 ? [y0, y1] : [y1, y0];
    const band = AXIS_H + frame.pinnedH;
    const out = new Set<number>();
    for (const r of this.rows) {
      const top = Math.max(rowTop(frame, r), r.pinned ? AXIS_H : band);
      const bottom = Math.min(rowTop(frame, r) + r.h, r.pinned ? band : height);
      if (bottom <= Math.max(a, top) || Math.min(b, bottom) <= top || bottom <= top) continue;
      if (r.kind === "track") out.add(r.track);
      else if (r.kind === "section" && this.choices.collapsed.has(r.section)) {
        for (const t of data.tracks) if (t.section === r.section && this.shows(t)) out.add(t.id);
      }
    }
    return Array.from(out).sort((x, y) => x - y);
  }

  /** Whether track `t` is laid out when its section is open: not hidden, matching the filter. */
  private shows(t: { id: number; section: string; name: string }): boolean {
    const q = this.choices.filter.trim().toLowerCase();
    return !this.choices.hidden.has(String(t.id)) && (!q || `${t.section} ${t.name}`.toLowerCase().includes(q));
  }

  /** Whether row `r` is pinned / hidden / folded by the user. */
  has(choice: Choice, r: Row): boolean {
    return this.choices[choice].has(trackKey(r));
  }
}

/** The tracks with some block of `tile` overlapping [t0, t1]. */
export function busyTracks(segments: Segment[], tile: Tile, t0: number, t1: number): Set<number> {
  const out = new Set<number>();
  segments.forEach((g, s) => {
    if (out.has(g.track)) return;
    const lo = tile.off[s];
    const hi = tile.off[s + 1];
    if (lo === hi) return;
    let i = lowerBound(tile.start, lo, hi, t0);
    if (i > lo && tile.start[i - 1] + tile.dur[i - 1] > t0) i -= 1;
    if (i < hi && tile.start[i] < t1) out.add(g.track);
  });
  return out;
}
