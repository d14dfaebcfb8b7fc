// The three numbers of an event's details a page writes itself: its start and duration
// (formatUs) and its event id (formatInt). Every other detail is text Python wrote
// (tfprof_nb.offline.details); these three are each event's own, so as text they would be a
// string per event: on a 1.16 M-event CPU capture that made the report 31.7 MB instead of
// 21.3 MB and its writing 9.1 s instead of 4.2 s (benchmarks/bench_report.py). They travel
// as typed columns and are written here, by the rule of Python's time_text and id_text (the
// live widget's texts), held to it by js/test/details_cases.json, which
// tests/widgets/test_event_details.py writes from Python and checks.

/**
 * A time in us with three decimals and its unit, as Python's `f"{x:.3f} us"` writes it:
 * correctly rounded, with an exact tie (e.g. 0.0625) going to the even neighbour where
 * `toFixed` goes up; all digits of large values; "-0.000", "nan", "inf" as Python has them.
 */
export function formatUs(x: number): string {
  return `${fixed3(x)} us`;
}

function fixed3(x: number): string {
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

/** An integer with every digit, as Python's `str(int(x))` writes it (past 2**53 too, where
 * `String(x)` rounds to 17 digits and writes e+21 from 1e21 on). */
/** "1 row", "2 rows": a count and its noun, plural where it is not one (`plural`: its
 * plural where not `noun` + "s"). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? noun : plural}`;
}

export function formatInt(x: number | bigint): string {
  return typeof x === "bigint" ? x.toString() : BigInt(Math.trunc(x)).toString();
}
