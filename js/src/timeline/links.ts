// The events linked to the selected one: a host launch and the GPU kernels (or copies) it
// started, paired by correlation id in Python (tfprof_nb/analysis/launch_links.py). The kernel
// answers them with the selection's details; an offline page answers from the pairs embedded
// with its event details. Where each end is drawn, for the arrow between them. No DOM.
import { segmentOf, type TimelineData } from "../data";
import { HEADER, ROW, type Row } from "./layout";
import { type EventInfo } from "./search";

/** An event linked to the selection: a kernel it launched, or the launch that started it. */
export interface Partner extends EventInfo {
  role: "kernel" | "launch";
}

/** The answer for a selection (TimelineSource.links_of): its row and event, the linked events
 * and how many more there are than those sent. */
export interface LinksAnswer {
  row: number;
  event?: EventInfo; // the selected event itself
  partners?: Partner[];
  more?: number;
}

const ROLES = new Set(["kernel", "launch"]);

function valid(p: Partner): boolean {
  return !!p && Number.isFinite(p.row) && Number.isFinite(p.start) && Number.isFinite(p.dur) && ROLES.has(p.role);
}

export class Links {
  /** The selected row these links belong to (-1: none). */
  row = -1;
  partners: Partner[] = [];
  more = 0;
  /** The partners' rows (drawn highlighted). */
  rows = new Set<number>();

  /** Take `answer` when it is for `selected`; false when it answers another selection. */
  take(answer: LinksAnswer | null | undefined, selected: number): boolean {
    if (!answer || typeof answer !== "object" || answer.row !== selected) return false;
    this.row = selected;
    this.partners = (Array.isArray(answer.partners) ? answer.partners : []).filter(valid);
    this.more = Number(answer.more ?? 0) || 0;
    this.rows = new Set(this.partners.map((p) => p.row));
    return true;
  }

  clear(): void {
    this.row = -1;
    this.partners = [];
    this.more = 0;
    this.rows = new Set();
  }

  /** The launch and kernel ends of the link to `p` from the selection `sel`. */
  ends(sel: EventInfo, p: Partner): [EventInfo, EventInfo] {
    return p.role === "kernel" ? [sel, p] : [p, sel];
  }
}

/** y px (from the top of the content) of the middle of timeline row `row`'s event: its depth
 * row in its track, or its section's header when the section is folded; null when none. */
export function rowY(data: TimelineData, rows: Row[], row: number): number | null {
  const seg = segmentOf(data.segments, row);
  if (!seg) return null;
  const track = rows.find((r) => r.kind === "track" && r.track === seg.track);
  if (track) return track.y + 2 + seg.depth * ROW + (ROW - 2) / 2;
  const section = data.tracks[seg.track]?.section;
  const header = rows.find((r) => r.kind === "section" && r.section === section);
  return header ? header.y + HEADER / 2 : null;
}

/** The window showing both `a` and `b`, with a margin. */
export function spanning(a: EventInfo, b: EventInfo): [number, number] {
  const lo = Math.min(a.start, b.start);
  const hi = Math.max(a.start + a.dur, b.start + b.dur);
  const pad = Math.max((hi - lo) * 0.15, 0.5);
  return [lo - pad, hi + pad];
}

/** The scroll that shows content y `y` in a plot `viewH` px tall scrolled at `scrollY`:
 * unchanged when `y` is in view, else `y` in the middle. */
export function scrollShowing(y: number, scrollY: number, viewH: number): number {
  return y >= scrollY + ROW && y <= scrollY + viewH - ROW ? scrollY : y - viewH / 2;
}
