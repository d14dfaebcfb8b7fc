// A plotly figure built in Python (its JSON) drawn with the plotly.js bundled here: plotly's
// zoom, hover and PNG download, recoloured to the page's light or dark theme.

import { styleHost } from "./ui";

export interface Figure {
  data: any[];
  layout: Record<string, any>;
}

export interface FigureOptions {
  /** Called with the clicked point's customdata and trace index. */
  onClick?: (customdata: unknown, trace: number) => void;
  height?: number;
  /** The figure's first menu (plotly's updatemenus) is drawn as a select above the chart
   * with this label and class; `onChange` hears the chosen entry. */
  menu?: { label: string; className: string; onChange?: (label: string, index: number) => void };
}

interface MenuButton {
  label: string;
  method: string;
  args: [Record<string, unknown>, Record<string, unknown>?];
}

/** The buttons of a figure's first menu (pure; unit-tested). */
export function menuButtons(fig: Figure | null | undefined): MenuButton[] {
  return (fig?.layout?.updatemenus?.[0]?.buttons ?? []) as MenuButton[];
}

/** plotly.js, evaluated on first use and once per page: every widget instance evaluates
 * its own copy of the shared bundle (anywidget imports each model's module apart), and the
 * first one to draw a chart lends its plotly to the others. */
export function loadPlotly(): Promise<any> {
  const page = globalThis as unknown as { __tfprofPlotly?: Promise<any> };
  page.__tfprofPlotly ??= import("plotly.js-basic-dist-min").then((m: any) => m.default ?? m);
  return page.__tfprofPlotly;
}

/** The page's colours: JupyterLab's theme variables, else the report's, else light. */
export function pageColors(el: Element): { font: string; grid: string; line: string; bg: string } {
  const css = getComputedStyle(el);
  const v = (name: string) => css.getPropertyValue(name).trim();
  const dark = (document.body?.dataset?.jpThemeLight === "false") ||
    (!v("--jp-ui-font-color1") && globalThis.matchMedia?.("(prefers-color-scheme: dark)").matches);
  return {
    font: v("--jp-ui-font-color1") || (dark ? "#dddddd" : "#222222"),
    grid: dark ? "rgba(160,160,160,0.25)" : "rgba(128,128,128,0.25)",
    line: v("--jp-border-color1") || (dark ? "#999999" : "#888888"),
    bg: v("--jp-layout-color1") || (dark ? "#222222" : "#ffffff"),
  };
}

/** The figure's layout recoloured to the page (pure; unit-tested). */
export function themed(layout: Record<string, any>, colors: ReturnType<typeof pageColors>): Record<string, any> {
  const out: Record<string, any> = { ...layout };
  out.font = { ...(layout.font ?? {}), color: colors.font };
  out.paper_bgcolor = "rgba(0,0,0,0)";
  out.plot_bgcolor = "rgba(0,0,0,0)";
  out.hoverlabel = { ...(layout.hoverlabel ?? {}), bgcolor: colors.bg, font: { color: colors.font } };
  for (const key of Object.keys(layout)) {
    if (/^[xy]axis\d*$/.test(key)) {
      out[key] = { ...layout[key], gridcolor: colors.grid, zerolinecolor: colors.grid, linecolor: colors.line };
    }
  }
  if (Array.isArray(layout.annotations)) {
    out.annotations = layout.annotations.map((a: any) => ({ ...a, font: { ...(a.font ?? {}), color: colors.font } }));
  }
  if (Array.isArray(layout.updatemenus)) {
    out.updatemenus = layout.updatemenus.map((m: any) => ({ ...m, bgcolor: colors.bg, font: { color: colors.font } }));
  }
  return out;
}

const CONFIG = {
  responsive: true,
  displaylogo: false,
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
  toImageButtonOptions: { format: "png", filename: "tfprof_chart", scale: 2 },
};

/** plotly.js keeps its rules (modebar, hover labels) in a stylesheet of the document's head,
 * which a shadow root does not see: copy them into the shadow root holding `box`. */
function copyPlotlyStyle(box: HTMLElement): void {
  const { root, parent } = styleHost(box);
  if (root === document || root.querySelector("#tfprof-plotly-style")) return;
  const sheet = (document.getElementById("plotly.js-style-global") as HTMLStyleElement | null)?.sheet;
  if (!sheet) return;
  const style = document.createElement("style");
  style.id = "tfprof-plotly-style";
  style.textContent = Array.from(sheet.cssRules).map((r) => r.cssText).join("\n");
  parent.appendChild(style);
}

/** Draw `fig` into `el`; returns a cleanup function. */
export function renderFigure(el: HTMLElement, fig: Figure | null | undefined, opts: FigureOptions = {}): () => void {
  // a menu with many entries (one per step, per allocator) reads better as a select
  const buttons = opts.menu ? menuButtons(fig) : [];
  let apply: ((b: MenuButton) => void) | null = null;
  let bar: HTMLElement | null = null;
  if (buttons.length && fig) {
    bar = document.createElement("div");
    bar.className = "tp-toolbar";
    const label = document.createElement("span");
    label.className = "tp-muted";
    label.textContent = opts.menu!.label;
    const select = document.createElement("select");
    select.className = `tp-select ${opts.menu!.className}`;
    buttons.forEach((b, i) => select.append(new Option(b.label, String(i))));
    select.addEventListener("change", () => {
      const i = Number(select.value);
      apply?.(buttons[i]);
      opts.menu!.onChange?.(buttons[i].label, i);
    });
    bar.append(label, select);
    el.append(bar);
    fig = { ...fig, layout: { ...fig.layout, updatemenus: [] } };
  }
  const box = document.createElement("div");
  box.className = "tfprof-figure";
  box.style.width = "100%";
  box.style.height = `${opts.height ?? fig?.layout?.height ?? 380}px`;
  el.append(box);
  if (!fig || !fig.data) {
    box.textContent = "No chart.";
    return () => box.remove();
  }
  let alive = true;
  let api: any = null;
  loadPlotly().then((Plotly) => {
    if (!alive) return;
    api = Plotly;
    const layout = themed({ ...fig!.layout, autosize: true }, pageColors(el));
    delete layout.width;
    Plotly.newPlot(box, fig!.data, layout, CONFIG).then(() => {
      copyPlotlyStyle(box);
      apply = (b) => {
        if (b.method === "restyle") Plotly.restyle(box, b.args[0]);
        else if (b.method === "relayout") Plotly.relayout(box, b.args[0]);
        else Plotly.update(box, b.args[0], b.args[1] ?? {});
      };
      if (opts.onClick) {
        (box as any).on("plotly_click", (ev: any) => {
          const p = ev?.points?.[0];
          if (p) opts.onClick!(p.customdata, p.curveNumber);
        });
      }
    });
  }).catch((err) => {
    box.textContent = `tfprof_nb could not draw this chart: ${String(err)}`;
  });
  return () => {
    alive = false;
    if (api) api.purge(box);
    box.remove();
    bar?.remove();
  };
}
