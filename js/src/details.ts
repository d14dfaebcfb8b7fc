// The details of one trace event on a page without a kernel: the rows Python formatted when it
// wrote the page (tfprof_nb.offline.details, the one place details are built and formatted;
// the live widget gets the same rows from TimelineSource.describe), looked up, never formatted
// here. An event the page embeds no rows of gets the text the page holds: its name and place.
// And the events linked to it, from the pairs embedded with the rows and the tiles' events.
import { decodeColumns, numeric, type Wire } from "./columns";
import { decode, segmentOf, single, type TimelineData } from "./data";
import { type LinksAnswer, type Partner } from "./timeline/links";

const MAX_PARTNERS = 64; // as the kernel sends (tfprof_nb.widgets.timeline_links)
const OWN = 0xffffffff; // a row's text is the event's own (tfprof_nb.offline.details.OWN)

/** Index of `x` in the ascending `a`, -1 when absent. */
function find(a: Uint32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo < a.length && a[lo] === x ? lo : -1;
}

/** Detail rows embedded next to an offline timeline (see tfprof_nb.offline.details). */
export interface DetailsBlock {
  labels: string[]; // row labels
  texts: string[]; // distinct row texts
  own: Record<string, string[]>; // per label, each covered event's own text (start, ...)
  off: Uint32Array; // n + 1: the detail rows of the k-th covered event are off[k]..off[k+1]
  key: Uint32Array; // per detail row: index into labels
  val: Uint32Array; // per detail row: index into texts, or OWN: own[label][k]
  // present when the block covers some rows only (a large profile's offline copy): the
  // timeline rows it covers (ascending)
  rows: Uint32Array | null;
  // links whose two ends are covered (timeline rows): a host launch and its device event, a
  // producer and its consumer; the kind indexes `linkLabels` ([end's label, start's label])
  linkSrc: Uint32Array | null;
  linkDst: Uint32Array | null;
  linkKind: Uint8Array | null;
  linkLabels: [string, string][];
}

/** A details block from what tfprof_nb.offline.details writes: its texts and typed columns. */
export function detailsBlock(raw: { labels: string[]; texts: string[]; own?: Record<string, string>;
  columns: Wire; link_labels?: [string, string][] }): DetailsBlock {
  const c = decodeColumns(raw.columns);
  const own = Object.entries(raw.own ?? {}).map(([label, joined]) => [label, joined.split("\n")]);
  return {
    labels: raw.labels, texts: raw.texts, own: Object.fromEntries(own),
    off: numeric(c, "off", Uint32Array), key: numeric(c, "key", Uint32Array), val: numeric(c, "val", Uint32Array),
    rows: numeric(c, "rows", Uint32Array, true),
    linkSrc: numeric(c, "link_src", Uint32Array, true), linkDst: numeric(c, "link_dst", Uint32Array, true),
    linkKind: numeric(c, "link_kind", Uint8Array, true), linkLabels: raw.link_labels ?? [],
  };
}

const timelines = new WeakMap<object, TimelineData>();

/** The timeline whose traits start with `prefix` in `state`, decoded once per `meta`. */
function timelineOf(state: Record<string, unknown>, prefix: string): TimelineData | null {
  const meta = state[`${prefix}meta`];
  if (!meta || typeof meta !== "object") return null;
  let data = timelines.get(meta);
  if (!data) {
    data = decode({ get: (key) => state[prefix + key] });
    timelines.set(meta, data);
  }
  return data;
}

/** The block's entry of timeline row `i`, -1 when it covers none. */
function entryOf(block: DetailsBlock, i: number): number {
  if (block.rows) return find(block.rows, i);
  return i >= 0 && i < block.off.length - 1 ? i : -1;
}

/** Name code, start and duration of timeline row `i`, from the tile that holds it alone: the
 * first (every event, or an overview's blocks) or the embedded detail (rows ascend in a tile). */
function rowFacts(data: TimelineData, i: number): { name: number; start: number; dur: number } | null {
  for (const tile of [data.base, ...data.extra]) {
    const b = tile.row ? find(tile.row, i) : i >= 0 && i < tile.start.length ? i : -1;
    if (b >= 0 && single(tile, b)) return { name: tile.name[b], start: tile.start[b], dur: tile.dur[b] };
  }
  return null;
}

/** Details of timeline row `i` of the timeline whose traits start with `prefix`: label to
 * text, in Python's order. */
export function eventDetails(state: Record<string, unknown>, prefix: string, i: number,
  block?: DetailsBlock): Record<string, string> {
  const k = block ? entryOf(block, i) : -1;
  if (block && k >= 0) {
    // entries, not assignments: a stat may be called "__proto__"
    const rows: [string, string][] = [];
    for (let r = block.off[k]; r < block.off[k + 1]; r++) {
      const label = block.labels[block.key[r]];
      const v = block.val[r];
      rows.push([label, v === OWN ? block.own[label]?.[k] ?? "" : block.texts[v]]);
    }
    return Object.fromEntries(rows);
  }
  const data = timelineOf(state, prefix);
  const facts = data && i >= 0 ? rowFacts(data, i) : null;
  if (!data || !facts) return {};
  const seg = segmentOf(data.segments, i);
  const track = seg ? data.tracks[seg.track] : undefined;
  return Object.fromEntries([["name", data.names[facts.name] ?? ""], ["host", track?.host ?? ""],
    ["plane", track?.plane ?? ""], ["track", track?.name ?? ""]]);
}

/** The events linked to timeline row `i` (a launch and its kernels, a producer and its
 * consumers), as the Python widget's TimelineSource.links_of answers, from the pairs the
 * details block embeds: arrows' ends first, then their starts. */
export function eventLinks(state: Record<string, unknown>, prefix: string, i: number,
  block?: DetailsBlock): LinksAnswer {
  const out: LinksAnswer = { row: i, partners: [], more: 0 };
  const data = timelineOf(state, prefix);
  if (!data || !(i >= 0) || !block?.linkSrc || !block.linkDst || !block.linkKind) return out;
  const info = (row: number) => {
    const f = rowFacts(data, row);
    return f ? { row, start: f.start, dur: f.dur, name: data.names[f.name] ?? "" } : null;
  };
  const found: Partner[] = [];
  const { linkSrc: src, linkDst: dst, linkKind: kind, linkLabels: labels } = block;
  for (const role of ["to", "from"] as const) {
    const [mine, other] = role === "to" ? [src, dst] : [dst, src];
    for (let k = 0; k < mine.length; k++) {
      if (mine[k] !== i) continue;
      const p = info(other[k]);
      if (p) found.push({ ...p, role, label: labels[kind[k]]?.[role === "to" ? 0 : 1] ?? "" });
    }
  }
  const event = info(i);
  if (event) out.event = event;
  out.partners = found.slice(0, MAX_PARTNERS);
  out.more = found.length - out.partners.length;
  return out;
}
