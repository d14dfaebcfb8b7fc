// GPU utilisation: the devices' duty cycle, busy and idle by cause per device (a table), the
// findings about device time, busy and idle per device and step (a stacked chart), collectives
// hidden under compute, kernel launch latency and the launch queue (plotly figures built in
// Python), and what the trace lacks: the hardware samples in the steps (clocks and why they
// were lowered, power, bus traffic, errors, host CPU), where the profile has them. A chart
// without data says why instead.
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { statements, text, viewRoot } from "./ui";

interface Finding {
  severity: string;
  what: string;
  evidence: string;
  fix: string;
}

const CHARTS: [string, string, number][] = [
  ["utilization", "Busy and idle by cause, per device and step", 420],
  ["overlap", "Collectives and compute", 340],
  ["latency", "Kernel launch latency", 340],
  ["queue", "Launch queue", 320],
];

/** The findings as a list (text only). */
export function findingList(findings: Finding[]): HTMLElement {
  const list = document.createElement("ul");
  list.className = "tp-list gpu-findings";
  for (const f of findings) {
    const item = document.createElement("li");
    item.className = `gpu-finding gpu-${f.severity}`;
    item.append(text("b", "", `[${f.severity}] ${f.what}`),
      text("span", "tp-muted", f.evidence ? ` (${f.evidence}).` : "."),
      text("span", "", ` Fix: ${f.fix}`));
    list.append(item);
  }
  if (!findings.length) list.append(text("li", "gpu-finding tp-muted", "Nothing stands out."));
  return list;
}

/** What the trace lacks (the hardware samples in the steps): its notes, table and figure,
 * only where the profile has samples. */
function hardware(root: HTMLElement, model: Model): () => void {
  const table = decodeTable(model.get("hardware"));
  if (!table.columns.length || !((table.data[table.columns[0].name]?.length ?? 0) > 0)) return () => {};
  const box = document.createElement("div");
  box.className = "gpu-hardware";
  root.append(box);
  for (const s of (model.get("hardware_notes") ?? []) as string[]) box.append(text("p", "tp-text gpu-hardware-note", s));
  renderTable(box, () => table);
  const fig = model.get("hardware_figure") as Figure | undefined;
  if (!(fig && fig.data)) return () => {};
  const chart = document.createElement("div");
  chart.className = "gpu-chart gpu-hardware-figure";
  box.append(chart);
  return renderFigure(chart, fig, { height: (fig.layout?.height as number | undefined) ?? 480 });
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-gpu", model);
  const cleanups: (() => void)[] = [];
  statements(root, model);
  renderTable(root, () => decodeTable(model.get("devices")));
  root.append(text("h4", "tp-h", "Findings"));
  root.append(findingList((model.get("findings") ?? []) as Finding[]));
  cleanups.push(hardware(root, model));
  const notes = (model.get("notes") ?? {}) as Record<string, string>;
  for (const [key, title, height] of CHARTS) {
    const fig = model.get(key) as Figure | undefined;
    if (!(fig && fig.data) && notes[key] === "") continue; // no place on this profile (TPU launches)
    const box = document.createElement("div");
    box.className = `gpu-chart gpu-${key}`;
    root.append(box);
    if (fig && fig.data) cleanups.push(renderFigure(box, fig, { height }));
    else box.append(text("h4", "tp-h", title), text("p", "tp-text tp-muted gpu-note", `No chart: ${notes[key] ?? "no data"}.`));
  }
  const kernels = decodeTable(model.get("kernels"));
  if (kernels.columns.length && (kernels.data[kernels.columns[0].name]?.length ?? 0) > 0) {
    renderTable(root, () => kernels);
  }
  return () => cleanups.forEach((f) => f());
}

export default { render };
