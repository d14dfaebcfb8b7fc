// The overview: summary cards (device figures among them when the profile has them), the
// step-time graph (a click zooms the trace viewer to the step; above it, where inferred steps
// come from), verdicts, top ops, the run environment and the recommendations.
import { type Model, type ViewContext } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { cards, statements, text, viewRoot } from "./ui";

export function render({ model, el, ctx }: { model: Model; el: HTMLElement; ctx?: ViewContext }): () => void {
  const root = viewRoot(el, "tfprof-overview", model);
  const cleanups: (() => void)[] = [];
  root.append(cards((model.get("cards") ?? []) as [string, string, string][]));
  statements(root, model);
  const fig = model.get("step_figure") as Figure | undefined;
  const note = String(model.get("step_note") ?? "");
  if (note) root.append(text("p", "tp-text tp-muted ov-step-note", note));
  if (fig && fig.data) {
    cleanups.push(renderFigure(root, fig, {
      height: 340,
      onClick: (custom) => {
        const row = Number(custom);
        if (!Number.isFinite(row)) return;
        model.set("clicked_step", row);
        model.save_changes();
        const meta = fig.layout?.meta ?? {};
        const start = meta.start_us?.[row], end = meta.end_us?.[row];
        if (ctx?.zoomTo && start !== undefined && end !== undefined) ctx.zoomTo(start, end, meta.hosts?.[row]);
      },
    }));
  } else {
    root.append(text("div", "tp-reason", String(model.get("no_steps") || "No steps in this profile.")));
  }
  for (const [key, title] of [["top_ops", "Top operations"], ["environment", "Run environment"]]) {
    const spec = decodeTable(model.get(key));
    if (spec && spec.columns?.length) {
      root.append(text("h4", "tp-h", title));
      renderTable(root, () => spec);
    }
  }
  root.append(text("h4", "tp-h", "Recommendations"));
  const list = document.createElement("ul");
  list.className = "tp-list";
  const recs = (model.get("recommendations") ?? []) as string[];
  for (const r of recs) list.append(text("li", "db-rec", r));
  if (!recs.length) list.append(text("li", "db-rec tp-muted", "Nothing stands out."));
  root.append(list);
  return () => cleanups.forEach((f) => f());
}

export default { render };
