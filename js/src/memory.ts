// Memory: memory in use over time per allocator (a plotly figure: stack, heap, free,
// fragmentation, every allocation hoverable, the peak marked) and what is live at the peak.
// One menu picks the allocator for both the chart and the table.
import { type Model } from "./model";
import { menuButtons, renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable, type TableSpec } from "./table";
import { text, viewRoot } from "./ui";

/** The rows of `spec` whose allocator is `name` (pure; unit-tested). */
export function allocatorRows(spec: TableSpec, name: string | null): TableSpec {
  const allocators = spec.data?.allocator;
  if (!name || !allocators) return spec;
  const keep: number[] = [];
  for (let i = 0; i < allocators.length; i++) if (allocators[i] === name) keep.push(i);
  const data: TableSpec["data"] = {};
  for (const [k, values] of Object.entries(spec.data)) data[k] = keep.map((i) => values[i]);
  return { ...spec, data, title: `Live at the peak of ${name}` };
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-memory", model);
  const fig = model.get("figure") as Figure | undefined;
  let current: string | null = menuButtons(fig)[0]?.label ?? null;
  let table: { refresh: () => void } | null = null;
  const cleanup = renderFigure(root, fig, {
    height: 420,
    menu: {
      label: "Allocator", className: "mem-allocator",
      onChange: (label) => { current = label; table?.refresh(); },
    },
  });
  table = renderTable(root, () => allocatorRows(decodeTable(model.get("breakdown")), current));
  return cleanup;
}

export default { render };
