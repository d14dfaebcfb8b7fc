// The trace viewer's colours: the page's theme (JupyterLab's, a report's, else the browser's
// colour scheme), read once from the element the viewer is drawn in.

/** Text, grid lines and background, and whether the page is dark. */
export interface Theme {
  dark: boolean;
  fg: string;
  grid: string;
  bg: string;
}

/** The theme of the page around `el`: JupyterLab's variables, the report's, else the
 * browser's colour scheme. */
export function themeOf(el: HTMLElement): Theme {
  const bg = getComputedStyle(el).getPropertyValue("--jp-layout-color0").trim();
  const m = bg.match(/#([0-9a-f]{6})/i);
  let dark: boolean;
  if (m) {
    const v = parseInt(m[1], 16);
    dark = 0.2126 * ((v >> 16) & 255) + 0.7152 * ((v >> 8) & 255) + 0.0722 * (v & 255) < 128;
  } else {
    const body = document.body?.dataset?.jpThemeLight;
    dark = body === "false" ? true : body === "true" ? false
      : window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
  }
  return dark ? { dark, fg: "#ddd", grid: "#444", bg: "#1e1e1e" } : { dark, fg: "#222", grid: "#ccc", bg: "#fff" };
}
