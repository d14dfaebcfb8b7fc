// The details of one trace event on a page without a kernel: what Python built when it wrote
// the page (tfprof_nb.offline.details, the one place details are built and formatted; the
// live widget gets the same from TimelineSource.describe), looked up: the event's fields,
// then its arguments under ARGUMENTS (its own stats, then its metadata's: "metadata.flops"),
// labels, order, step and texts as Python wrote them. Except the event's start, duration and
// id, which the page carries as numbers (the start in the tile drawing the event) and writes
// here with format.ts, by Python's rule (see there why). An event the page embeds no rows of
// gets the text the page holds: its name and place. And the events linked to it, from the
// pairs embedded with the rows and the tiles' events.
import { decodeColumns, numeric, type Column, type NumericArray, type Wire } from "./columns";
import { decode, segmentOf, single, type TimelineData } from "./data";
// text codes of tfprof_nb.offline.details: the event's own start, duration, id; no such row
import { ARGUMENTS, NO_ROW, OWN_DURATION, OWN_ID, OWN_START } from "./details_codes.generated";
import { formatInt, formatUs } from "./format";
import { type LinksAnswer, type Partner } from "./timeline/links";

const MAX_PARTNERS = 64; // as the kernel sends (tfprof_nb.widgets.timeline_links)
export { ARGUMENTS };

/** An event's details: its fields, label to text, in order; then ARGUMENTS, its stats. */
export type EventDetails = Record<string, string | [string, string][]>;

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

/** The text code saying "no such field" in a field's source: NO_ROW, or a column's all-ones
 * value (Python writes the narrowest column, 0xff or 0xffff saying none). */
function noneOf(from: number | NumericArray): number {
  if (from instanceof Uint8Array) return 0xff;
  return from instanceof Uint16Array ? 0xffff : NO_ROW;
}

/** A field of the covered events: a label code and a text code, the same for all or the k-th
 * of a column (NO_ROW: that event has no such field). */
export type RowSource = [number, number | NumericArray];

/** Detail rows embedded next to an offline timeline (see tfprof_nb.offline.details). */
export interface DetailsBlock {
  labels: string[]; // row labels
  texts: string[]; // distinct row texts
  fields: RowSource[]; // name, category, start, duration, host, plane, track, step, event id
  off: Uint32Array; // n + 1: the stat rows of the k-th covered event are off[k]..off[k+1]
  key: Uint32Array; // per stat row: index into labels
  val: Uint32Array; // per stat row: index into texts
  dur: Float64Array; // per covered event: its duration, us
  id: Uint32Array | Float64Array; // per covered event: its event id
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

type RawSource = [number, number | string]; // a text code, or the name of a column of them

/** A details block from what tfprof_nb.offline.details writes: its texts and typed columns. */
export function detailsBlock(raw: { labels: string[]; texts: string[]; fields?: RawSource[];
  columns: Wire; link_labels?: [string, string][] }): DetailsBlock {
  const c = decodeColumns(raw.columns);
  const source = ([label, from]: RawSource): RowSource => {
    if (typeof from === "number") return [label, from];
    const col: Column | undefined = c[from];
    if (!ArrayBuffer.isView(col)) throw new Error(`column ${from}: expected text codes`);
    return [label, col];
  };
  const id = c.id instanceof Float64Array ? c.id : numeric(c, "id", Uint32Array);
  return {
    labels: raw.labels, texts: raw.texts, fields: (raw.fields ?? []).map(source),
    off: numeric(c, "off", Uint32Array), key: numeric(c, "key", Uint32Array), val: numeric(c, "val", Uint32Array),
    dur: numeric(c, "dur", Float64Array), id, rows: numeric(c, "rows", Uint32Array, true),
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

/** The details of the block's k-th covered event (`start`: where the page draws it): its
 * fields, then its stats under ARGUMENTS, as Python's TimelineSource.describe. */
function rowsOf(block: DetailsBlock, k: number, start: () => number | undefined): EventDetails {
  const text = (v: number): string => {
    if (v === OWN_START) {
      const t = start();
      return t === undefined ? "" : formatUs(t);
    }
    if (v === OWN_DURATION) return formatUs(block.dur[k]);
    if (v === OWN_ID) return formatInt(block.id[k]);
    return block.texts[v] ?? "";
  };
  // entries, not assignments (the fields are Python's few labels; stats stay pairs: one may
  // be called "__proto__", or "0", which an object would move first)
  const fields: [string, string][] = [];
  for (const [label, from] of block.fields) {
    const v = typeof from === "number" ? from : from[k];
    if (v !== NO_ROW && v !== noneOf(from)) fields.push([block.labels[label], text(v)]);
  }
  const args: [string, string][] = [];
  for (let r = block.off[k]; r < block.off[k + 1]; r++) args.push([block.labels[block.key[r]], text(block.val[r])]);
  return { ...Object.fromEntries(fields), [ARGUMENTS]: args };
}

/** Details of timeline row `i` of the timeline whose traits start with `prefix`, as Python
 * wrote them; without them, the name and place the page holds (no arguments). */
export function eventDetails(state: Record<string, unknown>, prefix: string, i: number,
  block?: DetailsBlock): EventDetails {
  const k = block ? entryOf(block, i) : -1;
  const data = timelineOf(state, prefix);
  if (block && k >= 0) return rowsOf(block, k, () => (data ? rowFacts(data, i)?.start : undefined));
  const facts = data && i >= 0 ? rowFacts(data, i) : null;
  if (!data || !facts) return {};
  const seg = segmentOf(data.segments, i);
  const track = seg ? data.tracks[seg.track] : undefined;
  const name = data.longNames[facts.name] ?? data.names[facts.name] ?? ""; // (its own name)
  return Object.fromEntries([["name", name], ["host", track?.host ?? ""],
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
