// Where counter tracks go: a device's counters right after its plane's tracks (in a section
// of their own, foldable), the others between the devices and the host's threads.
import { describe, expect, it } from "vitest";
import { type CounterTrack, type Track } from "../src/data";
import { fmtValue } from "../src/timeline/counters";
import { emptyChoices, layoutRows } from "../src/timeline/layout";

const track = (id: number, plane: string, name: string): Track =>
  ({ id, section: `vm ${plane}`, host: "vm", plane, name, depths: 1, events: 1 }) as Track;
const counter = (section: string, name: string, after = ""): CounterTrack =>
  ({ section, name, unit: "MHz", after, t: new Float64Array(0), v: new Float64Array(0), max: 0 });

const TRACKS = [track(0, "/device:GPU:0", "Stream #14"), track(1, "/device:GPU:0", "Stream #15"),
  track(2, "/device:GPU:1", "Stream #14"), track(3, "/host:CPU", "python")];
const COUNTERS = [counter("vm Counters", "memory in use (GPU_0_bfc)"),
  counter("vm GPU:0 counters", "sm_clock_mhz", "vm /device:GPU:0"),
  counter("vm GPU:0 counters", "power_w", "vm /device:GPU:0"),
  counter("vm host counters", "cpu_util_pct"),
  counter("vm GPU:7 counters", "power_w", "vm /device:GPU:7")]; // a plane not shown

describe("counter sections", () => {
  it("put a device's counters after its plane, the rest before the host's threads", () => {
    const { rows } = layoutRows(TRACKS, COUNTERS, emptyChoices());
    const sections = rows.filter((r) => r.kind === "section").map((r) => r.section);
    expect(sections).toEqual(["vm /device:GPU:0", "vm GPU:0 counters", "vm /device:GPU:1", "vm Counters",
      "vm host counters", "vm GPU:7 counters", "vm /host:CPU"]);
    const gpu0 = rows.filter((r) => r.section === "vm GPU:0 counters" && r.kind === "counter");
    expect(gpu0.map((r) => COUNTERS[r.track].name)).toEqual(["sm_clock_mhz", "power_w"]);
  });

  it("fold as other sections do", () => {
    const choices = emptyChoices();
    choices.collapsed.add("vm GPU:0 counters");
    const { rows } = layoutRows(TRACKS, COUNTERS, choices);
    expect(rows.some((r) => r.kind === "section" && r.section === "vm GPU:0 counters")).toBe(true);
    expect(rows.filter((r) => r.section === "vm GPU:0 counters" && r.kind === "counter")).toEqual([]);
  });

  it("say rates in bytes per second", () => {
    expect(fmtValue(3 * 1024 * 1024, "bytes/s")).toBe("3.00 MiB/s");
  });
});
