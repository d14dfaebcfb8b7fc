// The program memory section of the XLA view: a program selector (programs with a buffer
// assignment first, the largest peak first), the selected program's heap over its program
// order (a plotly figure built in Python), the buffers live at its peak, or why it has none.
// The first programs' memory comes with the view; a live view asks the kernel for the others
// (see tfprof_nb.widgets.xla_memory); a page without a kernel says where to find them.
import { type Model } from "./model";
import { renderFigure, type Figure } from "./figure";
import { decodeTable, renderTable, type TableWire } from "./table";
import { text } from "./ui";

export interface ProgramDetail {
  program_id: string;
  name: string;
  peak_heap_bytes: number | null;
  reasons: string[];
  figure: Figure | Record<string, never>;
  buffers: TableWire;
}

const UNITS: [number, string][] = [[2 ** 30, "GiB"], [2 ** 20, "MiB"], [2 ** 10, "KiB"]];

/** Bytes in the largest binary unit they reach (pure; unit-tested). */
export function humanBytes(bytes: number): string {
  // three significant digits, every digit from 100 on: as Python's human_bytes writes them
  for (const [size, unit] of UNITS) {
    if (bytes < size) continue;
    const v = bytes / size;
    return `${v >= 100 ? Math.round(v).toLocaleString("en-US") : String(Number(v.toPrecision(3)))} ${unit}`;
  }
  return `${bytes.toLocaleString("en-US")} B`;
}

/** A program's entry in the selector (pure; unit-tested). */
export function programLabel(program: string, peak: number | null, assigned: boolean): string {
  if (!assigned) return `${program}: no buffer assignment`;
  if (peak === null || Number.isNaN(peak)) return program;
  return `${program}: peak ${humanBytes(peak)}`;
}

/** Where a program's memory comes from: the view's state, the kernel, or nowhere. */
export class DetailSource {
  private next = 0;
  private waiting = new Map<number, (d: ProgramDetail | string) => void>();

  constructor(private model: Model, private known: Record<string, ProgramDetail>) {}

  get(pid: string, done: (d: ProgramDetail | string) => void): void {
    const have = this.known[pid];
    if (have) return done(have);
    if (typeof this.model.send !== "function") {
      return done(`This page holds the memory of the first ${Object.keys(this.known).length} programs ` +
        `only: prof.program_memory(${pid}) in a notebook gives this one.`);
    }
    const id = ++this.next;
    this.waiting.set(id, done);
    this.model.send({ kind: "program_memory", program: pid, id });
  }

  /** A kernel's answer (custom message) to one of our requests. */
  onMessage = (msg: any, buffers: unknown[]): void => {
    if (!msg || msg.kind !== "program_memory") return;
    const done = this.waiting.get(msg.id);
    if (!done) return;
    this.waiting.delete(msg.id);
    if (msg.error) return done(`tfprof_nb could not get this program's memory: ${msg.error}`);
    const detail = msg.detail as ProgramDetail;
    detail.buffers = { ...detail.buffers, buffers: buffers ?? [] };
    this.known[detail.program_id] = detail;
    done(detail);
  };
}

/** One program's memory into `box` (emptied first); returns the chart's cleanup. */
function showDetail(box: HTMLElement, detail: ProgramDetail | string): () => void {
  box.replaceChildren();
  if (typeof detail === "string") {
    box.append(text("p", "tp-text tp-muted xla-mem-missing", detail));
    return () => {};
  }
  for (const r of detail.reasons) box.append(text("p", "tp-text db-statement xla-mem-reason", `Note: ${r}`));
  const fig = detail.figure as Figure;
  const cleanup = fig && fig.data ? renderFigure(box, fig) : () => {}; // its own height
  const table = decodeTable(detail.buffers);
  if ((table.data.hlo_op_name?.length ?? 0) > 0) renderTable(box, () => table);
  return cleanup;
}

/** The select listing the programs (their ids as values). */
function programSelect(model: Model): HTMLSelectElement {
  const programs = decodeTable(model.get("memory_programs"));
  const d = programs.data;
  const select = document.createElement("select");
  select.className = "tp-select xla-program";
  for (let i = 0; i < (d.program_id?.length ?? 0); i++) {
    const peak = d.peak_heap_bytes[i] as number | null;
    select.append(new Option(programLabel(String(d.program[i]), peak, Boolean(d.has_buffer_assignment[i])),
      String(d.program_id[i])));
  }
  return select;
}

/** The section, appended to `root`; returns its cleanup. */
export function renderProgramMemory(parent: HTMLElement, model: Model): () => void {
  const root = document.createElement("div");
  root.className = "xla-mem-section";
  parent.append(root);
  root.append(text("h4", "tp-h", "Program memory: the compiler's buffer assignment (device memory, space 0)"));
  for (const n of (model.get("memory_notes") ?? []) as string[]) root.append(text("p", "tp-text tp-muted xla-mem-note", n));
  const select = programSelect(model);
  if (!select.options.length) return () => {};
  const bar = document.createElement("div");
  bar.className = "tp-toolbar";
  bar.append(text("span", "tp-muted", "Program"), select);
  const box = document.createElement("div");
  box.className = "xla-memory";
  root.append(bar, box);
  const source = new DetailSource(model, { ...((model.get("memory_details") ?? {}) as Record<string, ProgramDetail>) });
  model.on("msg:custom", source.onMessage);
  let cleanup = () => {};
  let shown = "";
  const show = (pid: string) => {
    shown = pid;
    cleanup();
    cleanup = () => {};
    box.replaceChildren(text("p", "tp-text tp-muted", "Loading…"));
    source.get(pid, (detail) => {
      if (shown === pid) cleanup = showDetail(box, detail);
    });
  };
  select.addEventListener("change", () => show(select.value));
  show(select.value);
  return () => {
    cleanup();
    model.off?.("msg:custom", source.onMessage);
  };
}
