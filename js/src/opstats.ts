// TensorFlow stats: self time by op and type (pies, idle time in or out), the name-scope
// icicle by time or memory, and the sortable table.
import { type Model, type ViewContext } from "./model";
import { traceRows } from "./tracelinks";
import { renderFigure, type Figure } from "./figure";
import { renderIcicle, scopeRows } from "./charts";
import { decodeTable, renderTable } from "./table";
import { text, viewRoot } from "./ui";

export function render({ model, el, ctx }: { model: Model; el: HTMLElement; ctx?: ViewContext }): () => void {
  const root = viewRoot(el, "tfprof-opstats", model);
  let cleanup = () => {};
  const pies = { with_idle: model.get("pie_with_idle") as Figure, without_idle: model.get("pie_without_idle") as Figure };
  const bar = document.createElement("div");
  bar.className = "tp-toolbar";
  const label = document.createElement("label");
  const idle = document.createElement("input");
  idle.type = "checkbox";
  idle.className = "db-idle";
  idle.checked = false; // idle time often dwarfs the ops; one click brings it in
  label.append(idle, document.createTextNode(" include idle time"));
  bar.append(label);
  const holder = document.createElement("div");
  root.append(bar, holder);
  const draw = () => {
    cleanup();
    holder.replaceChildren();
    cleanup = renderFigure(holder, idle.checked ? pies.with_idle : pies.without_idle);
  };
  idle.addEventListener("change", draw);
  draw();
  const scopes = scopeRows(decodeTable(model.get("scopes")));
  if (scopes.length) {
    root.append(text("h4", "tp-h", "Name scopes"));
    const metric = document.createElement("select");
    metric.className = "db-scope-metric tp-select";
    metric.append(new Option("by self time", "time"), new Option("by allocated memory", "bytes"));
    const icicle = document.createElement("div");
    const drawIcicle = () => {
      const key = metric.value as "time" | "bytes";
      icicle.replaceChildren(renderIcicle(scopes.map((r) => ({ ...r, value: Number(r.extra[key]) }))));
    };
    metric.addEventListener("change", drawIcicle);
    drawIcicle();
    root.append(metric, icicle);
  }
  root.append(text("h4", "tp-h", "All operations"));
  renderTable(root, () => decodeTable(model.get("table")), traceRows(ctx, "ops"));
  return () => cleanup();
}

export default { render };
