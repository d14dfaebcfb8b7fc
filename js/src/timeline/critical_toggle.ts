// The trace viewer's critical-path toggle: the button, the step it asks Python for, and the
// sentence shown beside it (text only: names are user data). The path itself is drawn by
// ./critical.ts.
import { type Model } from "../model";
import { type Panel } from "./panel";
import { type TimelineState } from "./state";

/** The critical path's toggle and sentence (text only: names are user data). */
export function showCritical(panel: Panel, state: TimelineState): void {
  const on = state.criticalStep >= 0;
  panel.critical.setAttribute("aria-pressed", String(on));
  panel.critical.style.fontWeight = on ? "bold" : "";
  const c = state.critical;
  const more = c.more > 0 ? ` (the first ${c.nodes.length} of its events drawn, ${c.more} more)` : "";
  panel.criticalNote.textContent = on && c.step === state.criticalStep ? c.sentence + more : on ? "finding the critical path…" : "";
}

/** Ask Python for the critical path of the step menu's step (the first step when none is
 * chosen), or stop showing it (`on` false). */
export function askCritical(panel: Panel, state: TimelineState, model: Model, on: boolean): void {
  const chosen = Number(panel.steps.value === "" ? 0 : panel.steps.value);
  const step = on && state.data.steps.length ? chosen : -1;
  state.askCritical(step);
  model.set("critical_step", step);
  model.save_changes();
}

/** The toggle: off without a kernel (Python finds the path), else it asks or stops. */
export function wireCritical(panel: Panel, state: TimelineState, model: Model): void {
  panel.critical.disabled = !state.kernel;
  if (!state.kernel) panel.critical.title = "the critical path needs a running kernel";
  panel.critical.addEventListener("click", () => askCritical(panel, state, model, state.criticalStep < 0));
}
