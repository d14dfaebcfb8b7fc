// The shared bundle's render: every widget whose module draws charts lives in one bundle (one
// plotly.js for them all, see js/build.mjs), and a widget's model names its Python class
// (`_tfprof_view`), which picks the module that draws it.
import { type Render } from "./model";
import { errorBox, viewRoot } from "./ui";

export function dispatch(widgets: Record<string, Render>): Render {
  return (args) => {
    const name = String(args.model.get("_tfprof_view") ?? "");
    const render = widgets[name];
    if (render) return render(args);
    const root = viewRoot(args.el, "tfprof-unknown");
    root.append(errorBox(`No view called ${name || "(unnamed)"} in this bundle.`));
  };
}
