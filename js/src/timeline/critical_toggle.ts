// The trace viewer's critical-path toggle: the button, the step it asks Python for, and the
// sentence shown beside it (text only: names are user data). The path itself is drawn by
// ./critical.ts. A page without a kernel carries the first steps' paths (the trait
// `critical_paths`, tfprof_nb.widgets.timeline_critical.offline_paths) and answers from them.
import { type Model } from "../model";
import { type CriticalAnswer } from "./critical";
import { type Panel } from "./panel";
import { type TimelineState } from "./state";

/** The paths an offline page carries: {step index (text): answer}, how many steps, and why
 * it carries none where a large profile's were left out. */
export interface ShippedPaths {
  paths: Record<string, CriticalAnswer>;
  steps: number;
  reason?: string;
}

function shippedOf(model: Model): ShippedPaths | null {
  const s = model.get("critical_paths");
  return s && typeof s === "object" && s.paths && typeof s.paths === "object" ? s as ShippedPaths : null;
}

/** The answer for `step` from the paths a page carries; a step it holds none of gets a
 * sentence saying which steps it holds. */
export function shippedCritical(shipped: ShippedPaths, step: number): CriticalAnswer {
  const own = shipped.paths[String(step)];
  if (own) return own;
  const n = Object.keys(shipped.paths).length;
  if (!n && shipped.reason) return { step, nodes: [], more: 0, sentence: shipped.reason };
  return { step, nodes: [], more: 0, sentence: `This page holds the critical paths of the first ${n} of ` +
    `the step menu's ${shipped.steps} steps (a running kernel finds any step's).` };
}

/** The critical path's toggle and sentence (text only: names are user data). */
export function showCritical(panel: Panel, state: TimelineState): void {
  const on = state.criticalStep >= 0;
  panel.critical.setAttribute("aria-pressed", String(on));
  panel.critical.style.fontWeight = on ? "bold" : "";
  const c = state.critical;
  const more = c.more > 0 ? ` (the first ${c.nodes.length} of its path's segments drawn, ${c.more} more)` : "";
  panel.criticalNote.textContent = on && c.step === state.criticalStep ? c.sentence + more : on ? "finding the critical path…" : "";
}

/** Ask Python for the critical path of the step menu's step (the first step when none is
 * chosen), or stop showing it (`on` false); without a kernel, answer from the page. */
export function askCritical(panel: Panel, state: TimelineState, model: Model, on: boolean): void {
  const chosen = Number(panel.steps.value === "" ? 0 : panel.steps.value);
  const step = on && state.data.steps.length ? chosen : -1;
  state.askCritical(step);
  model.set("critical_step", step);
  model.save_changes();
  const shipped = state.kernel ? null : shippedOf(model);
  if (shipped && step >= 0) model.set("critical", shippedCritical(shipped, step));
}

/** The toggle: it asks the kernel, or answers from the paths the page carries; off on a page
 * with neither. */
export function wireCritical(panel: Panel, state: TimelineState, model: Model): void {
  const shipped = state.kernel ? null : shippedOf(model);
  panel.critical.disabled = !state.kernel && !shipped;
  if (!state.kernel && !shipped) panel.critical.title = "the critical path needs a running kernel";
  panel.critical.addEventListener("click", () => askCritical(panel, state, model, state.criticalStep < 0));
}
