import { describe, expect, it } from "vitest";
import { detailsTarget, graphRequest, targetsOf } from "../src/graphaction";
import { shippedCritical } from "../src/timeline/critical_toggle";

describe("the graph action's targets", () => {
  it("reads a view's graph_targets entry, bad entries left out", () => {
    expect(targetsOf([["fusion.2", "11964", 53.7], ["", "1", 2], "x", [7]])).toEqual([
      { op: "fusion.2", program: "11964", us: 53.7 }]);
    expect(targetsOf(undefined)).toEqual([]);
  });

  it("asks by the op and program, or by a trace event's id", () => {
    expect(graphRequest({ op: "dot.1", program: "5" }, 2, 7)).toEqual(
      { kind: "hlo_graph", op: "dot.1", program: "5", hops: 2, id: 7 });
    expect(graphRequest({ op: "command_buffer_1", event: 42 }, 1, 8)).toEqual(
      { kind: "hlo_graph", op: "command_buffer_1", program: "", hops: 1, id: 8, event: 42 });
  });

  it("finds a kernel's op in its details: the hlo_op stat's last part, the event id", () => {
    const details = { name: "wrapped_convert", "event id": "1,234",
      Arguments: [["hlo_module", "jit_step"], ["hlo_op", "cluster::command_buffer_1"], ["program_id", "11964"]] };
    expect(detailsTarget(details)).toEqual({ op: "command_buffer_1", program: "11964", event: 1234 });
    expect(detailsTarget({ name: "ThreadpoolListener", Arguments: [["name", "x"]] })).toBeNull();
    expect(detailsTarget({})).toBeNull();
  });
});

describe("the critical paths an offline page carries", () => {
  const shipped = { steps: 5, paths: { "0": { step: 0, nodes: [{ row: 1, start: 0, dur: 2, name: "a", category: "input" }], more: 0, sentence: "Step 3 is bound by input" } } };

  it("answer a step they hold with its path", () => {
    expect(shippedCritical(shipped, 0)).toBe(shipped.paths["0"]);
  });

  it("say which steps they hold for another", () => {
    const answer = shippedCritical(shipped, 4);
    expect([answer.step, answer.nodes]).toEqual([4, []]);
    expect(answer.sentence).toBe("This page holds the critical paths of the first 1 of the step menu's 5 steps (a running kernel finds any step's).");
  });

  it("give the reason a large profile's page carries none", () => {
    const none = { steps: 5, paths: {}, reason: "This page holds no critical path: why" };
    expect(shippedCritical(none, 2)).toEqual({ step: 2, nodes: [], more: 0, sentence: none.reason });
  });
});
