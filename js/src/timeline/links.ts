// The events linked to the selected one: a host launch and the GPU kernels (or copies) it
// started (paired by correlation id), and flows: TensorFlow's producer -> consumer contexts
// and tf.data elements produced -> consumed (tfprof_nb/widgets/timeline_links.py). The kernel
// answers them with the selection's details; an offline page answers from the pairs embedded
// with its event details. Where each end is drawn, for the arrow between them. No DOM.
import { segmentOf, type TimelineData } from "../data";
import { HEADER, ROW, rowTop, type Frame } from "./layout";
import { type EventInfo } from "./search";

/** An event linked to the selection: the end of an arrow from it (`to`: a kernel it launched,
 * the consumer of what it produced) or the start of one to it (`from`: its launch, its
 * producer); `label` says which. */
export interface Partner extends EventInfo {
  role: "to" | "from";
  label: string;
}

/** The answer for a selection (TimelineSource.links_of): its row and event, the linked events
 * and how many more there are than those sent. */
export interface LinksAnswer {
  row: number;
  event?: EventInfo; // the selected event itself
  partners?: Partner[];
  more?: number;
}

const ROLES = new Set(["to", "from"]);

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
    this.partners = (Array.isArray(answer.partners) ? answer.partners : []).filter(valid)
      .map((p) => ({ ...p, label: String(p.label ?? "") }));
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

  /** The start and end of the arrow between the selection `sel` and `p`. */
  ends(sel: EventInfo, p: Partner): [EventInfo, EventInfo] {
    return p.role === "to" ? [sel, p] : [p, sel];
  }
}

/** Canvas y of the middle of timeline row `row`'s event: its depth row in its track (a
 * folded track's middle), or its section's header when the section is folded; null when
 * its track is hidden or filtered out. */
export function rowY(data: TimelineData, frame: Frame, row: number): number | null {
  const seg = segmentOf(data.segments, row);
  if (!seg) return null;
  const track = frame.rows.find((r) => r.kind === "track" && r.track === seg.track);
  if (track) {
    const top = rowTop(frame, track);
    return track.folded ? top + track.h / 2 : top + 2 + seg.depth * ROW + (ROW - 2) / 2;
  }
  const section = data.tracks.find((t) => t.id === seg.track)?.section;
  const header = frame.rows.find((r) => r.kind === "section" && r.section === section);
  return header ? rowTop(frame, header) + HEADER / 2 : null;
}

/** The window showing both `a` and `b`, with a margin. */
export function spanning(a: EventInfo, b: EventInfo): [number, number] {
  const lo = Math.min(a.start, b.start);
  const hi = Math.max(a.start + a.dur, b.start + b.dur);
  const pad = Math.max((hi - lo) * 0.15, 0.5);
  return [lo - pad, hi + pad];
}
