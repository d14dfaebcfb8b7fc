// The details of one trace event computed in the browser, for views without a kernel.
// With the embedded details block: the fields, order and values of the Python widget's
// TimelineSource.describe (times written as Python's "{:.3f}" writes them). Without it (an
// nbconvert export of saved widget state): name, times, place and step only, the duration
// from the float32 wire column.
import { column } from "./data";

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

/** Event stats embedded next to an offline timeline (see tfprof_nb.widgets._details). */
export interface DetailsBlock {
  keys: string[]; // stat names
  values: unknown[]; // distinct stat values (JSON)
  off: DataView; // uint32, n + 1: stat rows of timeline row i are off[i]..off[i+1]
  key: DataView; // uint32 per stat row: index into keys
  val: DataView; // uint32 per stat row: index into values
  id: DataView; // uint32 per timeline row: event id (row of prof.events)
  dur: DataView; // float64 per timeline row: exact duration in us
  // present when the block covers some rows only (a large profile's offline copy): the
  // timeline rows it covers (ascending), and their start (float64 us) and name code (uint32)
  rows?: DataView;
  start?: DataView;
  name?: DataView;
}

interface TrackInfo {
  section: string;
  name: string;
  host?: string;
  plane?: string;
}

interface StepInfo {
  start: number;
  end: number;
  host?: string;
  step_name?: string;
}

/** The segment [track, depth, lo, hi] holding timeline row i (segments are sorted by lo). */
function segmentOf(segments: number[][], i: number): number[] | undefined {
  let lo = 0;
  let hi = segments.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const s = segments[mid];
    if (i < s[2]) hi = mid - 1;
    else if (i >= s[3]) lo = mid + 1;
    else return s;
  }
  return undefined;
}

/** Name code, start and duration of timeline row `i`, and the block's entry for it (-1:
 * none), from what the page holds: the block's own columns when it covers some rows only,
 * else the state's columns (every event), else the state's overview blocks. */
function rowFacts(state: Record<string, unknown>, prefix: string, i: number, block?: DetailsBlock):
  { name: number; start: number; dur: number; k: number } | null {
  if (block?.rows) {
    const k = find(column(block.rows, Uint32Array), i);
    if (k >= 0) {
      return { name: column(block.name, Uint32Array)[k], start: column(block.start, Float64Array)[k],
        dur: column(block.dur, Float64Array)[k], k };
    }
  }
  const start = column(state[`${prefix}ev_start`], Float64Array);
  const names = column(state[`${prefix}ev_name`], Uint32Array);
  const dur = column(state[`${prefix}ev_dur`], Float32Array);
  const row = column(state[`${prefix}ev_row`], Uint32Array);
  if (!row.length) {
    if (!(i >= 0 && i < start.length)) return null;
    return { name: names[i], start: start[i], dur: block && !block.rows ? column(block.dur, Float64Array)[i] : dur[i],
      k: block && !block.rows ? i : -1 };
  }
  const count = column(state[`${prefix}ev_count`], Uint32Array);
  for (let b = 0; b < row.length; b++) {
    if (row[b] === i && count[b] === 1) return { name: names[b], start: start[b], dur: dur[b], k: -1 };
  }
  return null;
}

/** Details of timeline row `i` of the timeline whose traits start with `prefix`. */
export function eventDetails(state: Record<string, unknown>, prefix: string, i: number,
  block?: DetailsBlock): Record<string, unknown> {
  const meta = state[`${prefix}meta`] as { names: string[]; tracks: TrackInfo[];
    segments: number[][]; steps: StepInfo[] };
  if (!meta || !(i >= 0)) return {};
  const facts = rowFacts(state, prefix, i, block);
  if (!facts) return {};
  const seg = segmentOf(meta.segments, i);
  const track = seg ? meta.tracks[seg[0]] : undefined;
  // entries, not assignments: a stat may be called "__proto__" (fromEntries keeps the first
  // position of a repeated key and the last value, like a Python dict)
  const out: [string, unknown][] = [
    ["name", meta.names[facts.name] ?? ""],
    ["start", `${fixed3(facts.start)} us`],
    ["duration", `${fixed3(facts.dur)} us`],
    ["host", track?.host ?? ""],
    ["plane", track?.plane ?? ""],
    ["track", track?.name ?? ""],
  ];
  if (block && facts.k >= 0) {
    const k = facts.k;
    out.push(["event id", column(block.id, Uint32Array)[k]]);
    const off = column(block.off, Uint32Array);
    const key = column(block.key, Uint32Array);
    const val = column(block.val, Uint32Array);
    for (let r = off[k]; r < off[k + 1]; r++) out.push([block.keys[key[r]], block.values[val[r]]]);
  }
  const t = facts.start;
  const step = (meta.steps ?? []).find((s) => s.host === track?.host && s.start <= t && t < s.end);
  if (step?.step_name !== undefined) out.push(["step", step.step_name]);
  return Object.fromEntries(out);
}
