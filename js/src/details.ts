// The details of one trace event computed in the browser, for views without a kernel.
// With the embedded details block: the fields, order and values of the Python widget's
// TimelineSource.describe (times written as Python's "{:.3f}" writes them). Without it (an
// nbconvert export of saved widget state): name, times, place and step only, the duration
// from the float32 wire column.
import { decodeColumns, numeric, type Wire } from "./columns";
import { decode, rowOf, segmentOf, single, type Tile, type TimelineData } from "./data";
import { type LinksAnswer, type Partner } from "./timeline/links";

const MAX_PARTNERS = 64; // as the kernel sends (tfprof_nb.widgets.timeline_links)

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

/**
 * `x` with three decimals, as Python's `format(x, ".3f")` writes it: correctly rounded, with an
 * exact tie (e.g. 0.0625) going to the even neighbour where `toFixed` goes up; all digits of
 * large values; "-0.000", "nan", "inf" as Python has them.
 */
export function fixed3(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const a = Math.abs(x);
  if (a >= 1e21) return `${sign}${BigInt(a).toString()}.000`; // an integer; toFixed goes e+21
  // a tie is a thousandth and a half: a = odd / 2000, exact in binary only when a * 16 (an
  // exact product) is an odd integer j, so that a = 125 j / 2000
  const j = a * 16;
  if (!Number.isInteger(j) || j % 2 !== 1) return sign + a.toFixed(3);
  const low = (BigInt(j) * BigInt(125) - BigInt(1)) / BigInt(2); // thousandths below the tie
  const even = low % BigInt(2) === BigInt(0) ? low : low + BigInt(1);
  const digits = even.toString().padStart(4, "0");
  return `${sign}${digits.slice(0, -3)}.${digits.slice(-3)}`;
}

/** Event stats embedded next to an offline timeline (see tfprof_nb.offline.details). */
export interface DetailsBlock {
  keys: string[]; // stat names
  values: unknown[]; // distinct stat values (JSON)
  off: Uint32Array; // n + 1: stat rows of timeline row i are off[i]..off[i+1]
  key: Uint32Array; // per stat row: index into keys
  val: Uint32Array; // per stat row: index into values
  id: Uint32Array; // per timeline row: event id (row of prof.events)
  dur: Float64Array; // per timeline row: exact duration in us
  // present when the block covers some rows only (a large profile's offline copy): the
  // timeline rows it covers (ascending), and their start (us) and name code
  rows: Uint32Array | null;
  start: Float64Array | null;
  name: Uint32Array | null;
  // links whose two ends are covered (timeline rows): a host launch and its device event, a
  // producer and its consumer; the kind indexes `linkLabels` ([end's label, start's label])
  linkSrc: Uint32Array | null;
  linkDst: Uint32Array | null;
  linkKind: Uint8Array | null;
  linkLabels: [string, string][];
}

/** A details block from what tfprof_nb.offline.details writes: two tables and typed columns. */
export function detailsBlock(raw: { keys: string[]; values: unknown[]; columns: Wire;
  link_labels?: [string, string][] }): DetailsBlock {
  const c = decodeColumns(raw.columns);
  return {
    keys: raw.keys, values: raw.values,
    off: numeric(c, "off", Uint32Array), key: numeric(c, "key", Uint32Array), val: numeric(c, "val", Uint32Array),
    id: numeric(c, "id", Uint32Array), dur: numeric(c, "dur", Float64Array),
    rows: numeric(c, "rows", Uint32Array, true), start: numeric(c, "start", Float64Array, true),
    name: numeric(c, "name", Uint32Array, true),
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

/** Name code, start and duration of timeline row `i`, and the block's entry for it (-1:
 * none), from what the page holds: the block's own columns when it covers some rows only,
 * else the timeline's first tile (every event, or an overview's blocks). */
function rowFacts(tile: Tile, i: number, block?: DetailsBlock):
  { name: number; start: number; dur: number; k: number } | null {
  if (block?.rows) {
    const k = find(block.rows, i);
    if (k >= 0) return { name: block.name![k], start: block.start![k], dur: block.dur[k], k };
  }
  if (!tile.row) {
    if (!(i >= 0 && i < tile.start.length)) return null;
    const whole = block && !block.rows;
    return { name: tile.name[i], start: tile.start[i], dur: whole ? block.dur[i] : tile.dur[i], k: whole ? i : -1 };
  }
  for (let b = 0; b < tile.start.length; b++) {
    if (rowOf(tile, b) === i && single(tile, b)) return { name: tile.name[b], start: tile.start[b], dur: tile.dur[b], k: -1 };
  }
  return null;
}

/** Details of timeline row `i` of the timeline whose traits start with `prefix`. */
export function eventDetails(state: Record<string, unknown>, prefix: string, i: number,
  block?: DetailsBlock): Record<string, unknown> {
  const data = timelineOf(state, prefix);
  if (!data || !(i >= 0)) return {};
  const facts = rowFacts(data.base, i, block);
  if (!facts) return {};
  const seg = segmentOf(data.segments, i);
  const track = seg ? data.tracks[seg.track] : undefined;
  // entries, not assignments: a stat may be called "__proto__" (fromEntries keeps the first
  // position of a repeated key and the last value, like a Python dict)
  const out: [string, unknown][] = [
    ["name", data.names[facts.name] ?? ""],
    ["start", `${fixed3(facts.start)} us`],
    ["duration", `${fixed3(facts.dur)} us`],
    ["host", track?.host ?? ""],
    ["plane", track?.plane ?? ""],
    ["track", track?.name ?? ""],
  ];
  if (block && facts.k >= 0) {
    const k = facts.k;
    out.push(["event id", block.id[k]]);
    for (let r = block.off[k]; r < block.off[k + 1]; r++) out.push([block.keys[block.key[r]], block.values[block.val[r]]]);
  }
  const t = facts.start;
  const step = data.steps.find((s) => s.host === track?.host && s.start <= t && t < s.end);
  if (step && typeof step.step_name === "string") out.push(["step", step.step_name]);
  return Object.fromEntries(out);
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
    const f = rowFacts(data.base, row, block);
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
