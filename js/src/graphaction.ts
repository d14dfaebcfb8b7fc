// The "graph" action every view shares (the XLA tab, op stats, the Source view, a trace
// event's details): a chosen HLO op (of a table's row, a source line, a kernel), a button
// that asks the kernel for the graph around it (tfprof_nb.widgets.hlo_graph_view.GraphRequests:
// {kind: "hlo_graph", op, program, event, hops, id}) and draws the answer below it
// (hlograph.ts). A page without a kernel (a report, a saved notebook) shows no button: a
// sentence says why and what draws the graph in a notebook. Names are set as text only.
import { type Model } from "./model";
import { renderGraph, type GraphData } from "./hlograph";
import { text } from "./ui";

/** What the graph is drawn around: an HLO op of a program (its id as text), or a trace
 * event (its id: the kernel finds the op it ran for, inside a command buffer its own). */
export interface GraphTarget {
  op: string;
  program?: string;
  event?: number;
  us?: number; // its self time (a menu's order and label)
}

/** What a page without a kernel says in place of the button. */
export const NO_KERNEL = "The HLO graph is built by a running Python (Jupyter) kernel, and this page has " +
  "none (a report or a saved notebook): prof.hlo_graph(op).show() in a notebook draws it.";

/** The message asking the kernel for the graph around `target`. */
export function graphRequest(target: GraphTarget, hops: number, id: number): Record<string, unknown> {
  const out: Record<string, unknown> = { kind: "hlo_graph", op: target.op, program: target.program ?? "", hops, id };
  if (target.event !== undefined) out.event = target.event;
  return out;
}

/** The targets of a row from a view's `graph_targets` entry ([op, program, self us][]). */
export function targetsOf(entry: unknown): GraphTarget[] {
  if (!Array.isArray(entry)) return [];
  return entry.filter((t) => Array.isArray(t) && typeof t[0] === "string" && t[0] !== "")
    .map((t) => ({ op: String(t[0]), program: String(t[1] ?? ""), us: Number(t[2] ?? 0) }));
}

/** A trace event's target from its details (label to text, its stats as (key, text) pairs
 * under "Arguments"): the op its `hlo_op` stat names (the last `::` part; inside a command
 * buffer the buffer, which the kernel resolves to the kernel's own op by the event id),
 * null when it has none. */
export function detailsTarget(details: Record<string, unknown>): GraphTarget | null {
  const args = Array.isArray(details.Arguments) ? details.Arguments as unknown[] : [];
  const stat = (key: string) => {
    const pair = args.find((p) => Array.isArray(p) && p[0] === key) as [string, unknown] | undefined;
    return pair ? String(pair[1] ?? "") : "";
  };
  const op = stat("hlo_op").split("::").pop() ?? "";
  if (!op) return null;
  const id = String(details["event id"] ?? "").replace(/[^0-9]/g, "");
  const target: GraphTarget = { op, program: stat("program_id") };
  if (id) target.event = Number(id);
  return target;
}

const us = (v: number | undefined) => v ? ` · ${(v / 1e3).toLocaleString("en-US", { maximumFractionDigits: 3 })} ms` : "";

export interface GraphAction {
  el: HTMLElement;
  /** What the button graphs: `targets` (a menu when several; none: the button is off and
   * `label` says why), after the words `label`. */
  choose(targets: GraphTarget[], label: string): void;
  cleanup(): void;
}

/** The action's toolbar and output in `el` (classes `${cls}`, `${cls}-button`,
 * `${cls}-ops`, `${cls}-hops`, `${cls}-selected`, `${cls}-out`). */
export function graphAction(model: Model, cls: string, prompt: string): GraphAction {
  const el = document.createElement("div");
  el.className = `hg-action ${cls}`;
  if (typeof model.send !== "function") {
    el.append(text("p", `tp-text tp-muted ${cls}-offline`, NO_KERNEL));
    return { el, choose: () => {}, cleanup: () => {} };
  }
  const bar = document.createElement("div");
  bar.className = "tp-toolbar";
  const chosen = text("span", `tp-text ${cls}-selected`, prompt);
  const ops = document.createElement("select");
  ops.className = `tp-select ${cls}-ops`;
  ops.style.display = "none";
  const button = document.createElement("button");
  button.className = `tp-button ${cls}-button`;
  button.textContent = "graph";
  button.disabled = true;
  const hops = document.createElement("select");
  hops.className = `${cls}-hops`;
  for (const h of [1, 2, 3, 4]) hops.append(new Option(`${h} hop${h > 1 ? "s" : ""}`, String(h)));
  hops.value = "2";
  bar.append(chosen, ops, button, hops);
  const out = document.createElement("div");
  out.className = `${cls}-out`;
  el.append(bar, out);
  let targets: GraphTarget[] = [];
  let next = 0;
  const onMessage = (msg: any) => {
    if (!msg || msg.kind !== "hlo_graph" || msg.id !== next) return;
    out.replaceChildren();
    if (msg.error) out.append(text("p", `tp-text ${cls}-error`, `No graph: ${msg.error}`));
    else renderGraph(out, msg.graph as GraphData);
  };
  model.on("msg:custom", onMessage);
  button.addEventListener("click", () => {
    const target = targets[Number(ops.value) || 0];
    if (!target) return;
    out.replaceChildren(text("p", "tp-text", `Building the graph around ${target.op}…`));
    model.send!(graphRequest(target, Number(hops.value), ++next));
  });
  const choose = (found: GraphTarget[], label: string) => {
    targets = found;
    chosen.textContent = label;
    ops.replaceChildren(...found.map((t, i) => new Option(`${t.op}${t.program ? ` (program ${t.program})` : ""}${us(t.us)}`, String(i))));
    ops.style.display = found.length > 1 ? "" : "none";
    button.disabled = !found.length;
  };
  return { el, choose, cleanup: () => model.off?.("msg:custom", onMessage) };
}
