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
  return `${fixed(x, 3)} us`;
}

/** `x` with `digits` decimals as Python's `f"{x:.{digits}f}"` writes it (digits 0 to 6). */
export function fixed(x: number, digits: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const a = Math.abs(x);
  if (a >= 1e21) return `${sign}${BigInt(a).toString()}${digits ? "." + "0".repeat(digits) : ""}`; // toFixed goes e+21
  // a tie is half a unit of the last decimal: a = odd / (2 * 10^d), exact in binary only when
  // that odd number is a multiple of 5^d, i.e. when j = a * 2^(d+1) (an exact product) is an
  // odd integer; then a = 5^d j / (2 * 10^d)
  const j = a * 2 ** (digits + 1);
  if (!Number.isInteger(j) || j % 2 !== 1) return sign + a.toFixed(digits);
  const low = (BigInt(j) * BigInt(5) ** BigInt(digits) - BigInt(1)) / BigInt(2); // units below the tie
  const even = low % BigInt(2) === BigInt(0) ? low : low + BigInt(1);
  if (!digits) return sign + even.toString();
  const text = even.toString().padStart(digits + 1, "0");
  return `${sign}${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/** `fixed(x, digits)` with its whole part's thousands separated: "1,234.5". */
export function groupedFixed(x: number, digits: number): string {
  const text = fixed(x, digits);
  return text.replace(/^(-?)(\d+)/, (_, sign: string, whole: string) =>
    sign + whole.replace(/\B(?=(\d{3})+$)/g, ","));
}

/** "1 row", "2 rows": a count and its noun, plural where it is not one (`plural`: its
 * plural where not `noun` + "s"). */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? noun : plural}`;
}

/** An integer with every digit, as Python's `str(int(x))` writes it (past 2**53 too, where
 * `String(x)` rounds to 17 digits and writes e+21 from 1e21 on). */
export function formatInt(x: number | bigint): string {
  return typeof x === "bigint" ? x.toString() : BigInt(Math.trunc(x)).toString();
}
