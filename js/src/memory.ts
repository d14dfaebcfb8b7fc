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

/** The peak sentence of the allocator the menu shows (`name`; null: no menu, one allocator):
 * `peaks` maps each menu name to its sentence (pure; unit-tested). */
export function peakWords(peaks: Record<string, string>, name: string | null): string {
  if (name !== null) return peaks[name] ?? "";
  const all = Object.values(peaks);
  return all.length === 1 ? all[0] : "";
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-memory", model);
  const fig = model.get("figure") as Figure | undefined;
  const peaks = (model.get("peaks") ?? {}) as Record<string, string>;
  let current: string | null = menuButtons(fig)[0]?.label ?? null;
  let table: { refresh: () => void } | null = null;
  const peak = text("p", "tp-text db-statement mem-peak", peakWords(peaks, current));
  root.append(peak);
  const cleanup = renderFigure(root, fig, {
    height: 420,
    menu: {
      label: "Allocator", className: "mem-allocator",
      onChange: (label) => {
        current = label;
        peak.textContent = peakWords(peaks, current);
        table?.refresh();
      },
    },
  });
  table = renderTable(root, () => allocatorRows(decodeTable(model.get("breakdown")), current));
  return cleanup;
}

export default { render };
