// A monitored run (tp.Monitor.show()), updated in place as windows arrive: where the run is,
// when a window is flagged, the median step time per window over the breakdown per window (a
// plotly figure built in Python, redrawn in place so zoom and legend choices stay) and the
// windows' table. A click on a window (its point, its bars or its row) asks the kernel for
// that window's dashboard; the kernel names its widget (the `dashboard` trait: a model id) and
// the view draws it under itself, in its own element (no other widget output: a notebook
// reopened without its kernel has nothing beneath the view to say "model not found").
import { type Model } from "./model";
import { loadPlotly, pageColors, renderFigure, themed, type Figure } from "./figure";
import { decodeTable, renderTable } from "./table";
import { text, viewRoot } from "./ui";

/** The window a clicked point stands for: its customdata, or the first item of it. */
export function windowOf(custom: unknown): number {
  const value = Array.isArray(custom) ? custom[0] : custom;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : -1;
}

/** What the view says after the kernel answered a click (pure; unit-tested). */
export function answerText(msg: { window?: unknown; error?: unknown }): string {
  if (msg.error) return `Window ${msg.window}: ${String(msg.error)}`;
  return `Window ${msg.window}'s dashboard is shown below.`;
}

/** What the view asks of the notebook's widget manager (anywidget's `model.widget_manager`;
 * absent without a kernel: reports, saved notebooks). */
interface WidgetManager {
  get_model(id: string): Promise<unknown>;
  create_view(model: unknown, options?: unknown): Promise<{ el: HTMLElement; remove(): void }>;
}

/** Draws the widget the model's `dashboard` trait names (a model id) into `box`, in place of
 * the one drawn before; `failed` says why one could not be drawn. */
function boardShower(box: HTMLElement, model: Model, failed: (why: string) => void):
  { show: () => void; close: () => void } {
  const manager = (model as { widget_manager?: WidgetManager }).widget_manager;
  let wanted = "";
  let view: { remove(): void } | null = null;
  const drop = (): void => {
    view?.remove();
    view = null;
    box.replaceChildren();
  };
  const draw = async (id: string): Promise<void> => {
    try {
      const child = await manager!.get_model(id);
      const made = await manager!.create_view(child, {});
      if (wanted !== id) { // another window was asked for meanwhile, or the view went
        made.remove();
        return;
      }
      view = made;
      box.append(made.el);
    } catch (err) {
      if (wanted === id) failed(String(err));
    }
  };
  const show = (): void => {
    const id = String(model.get("dashboard") ?? "");
    if (id === wanted) return;
    wanted = id;
    drop();
    if (id && manager) void draw(id);
  };
  const close = (): void => {
    wanted = "";
    drop();
  };
  return { show, close };
}

/** Redraw the figure of `holder` in place with the model's latest one, once its first draw
 * is done (plotly keeps zoom and hidden traces: the figure's uirevision). */
function redrawer(holder: HTMLElement, el: HTMLElement, model: Model, alive: () => boolean): () => void {
  let tries = 0;
  const redraw = (): void => {
    if (!alive()) return;
    const box = holder.querySelector(".tfprof-figure") as any;
    if (!box || !box._fullLayout) {
      if (++tries < 200) setTimeout(redraw, 50); // the first draw is on its way
      return;
    }
    tries = 0;
    loadPlotly().then((Plotly) => {
      if (!alive()) return;
      const fig = model.get("figure") as Figure;
      const layout = themed({ ...fig.layout, autosize: true }, pageColors(el));
      delete layout.width;
      Plotly.react(box, fig.data, layout);
    });
  };
  return redraw;
}

export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = viewRoot(el, "tfprof-monitor", model);
  const status = text("p", "tp-text mon-status", "");
  const rule = text("p", "tp-text tp-muted mon-rule", "");
  const note = text("p", "tp-text mon-note", "");
  const holder = document.createElement("div");
  holder.className = "mon-figure";
  root.append(status, rule, holder, note);
  const open = (window: number): void => {
    if (window < 0) return;
    if (!model.send) {
      note.textContent = "A window's dashboard needs the notebook's kernel: " +
        "run the notebook, then click a window.";
      return;
    }
    note.textContent = `Asking the kernel for window ${window}'s dashboard ` +
      "(it answers once no cell is running)…";
    model.send({ kind: "open", window });
  };
  let alive = true;
  const cleanup = renderFigure(holder, model.get("figure") as Figure, { onClick: (c) => open(windowOf(c)) });
  const table = renderTable(root, () => decodeTable(model.get("windows")), {
    onRow: (row) => open(windowOf(row.window)), rowTitle: "Show this window's dashboard below",
  });
  const texts = (): void => {
    status.textContent = String(model.get("status") ?? "");
    rule.textContent = String(model.get("rule") ?? "");
  };
  const onMessage = (msg: any): void => {
    if (msg && msg.kind === "opened") note.textContent = answerText(msg);
  };
  const redraw = redrawer(holder, el, model, () => alive);
  const board = document.createElement("div"); // the shown window's dashboard, under the view
  board.className = "mon-dashboard";
  el.append(board);
  const boards = boardShower(board, model, (why) => {
    note.textContent = `Window ${model.get("shown")}'s dashboard could not be shown: ${why}`;
  });
  texts();
  boards.show();
  model.on("change:status", texts);
  model.on("change:rule", texts);
  model.on("change:figure", redraw);
  model.on("change:windows", table.refresh);
  model.on("msg:custom", onMessage);
  model.on("change:dashboard", boards.show);
  return () => {
    alive = false;
    model.off?.("change:status", texts);
    model.off?.("change:rule", texts);
    model.off?.("change:figure", redraw);
    model.off?.("change:windows", table.refresh);
    model.off?.("msg:custom", onMessage);
    model.off?.("change:dashboard", boards.show);
    boards.close();
    board.remove();
    cleanup();
  };
}

export default { render };
