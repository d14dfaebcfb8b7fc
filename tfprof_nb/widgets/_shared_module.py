"""A JS bundle stored once per kernel, whatever the number of views.

anywidget keeps a widget's ES module (``_esm``) in its model's state, so a notebook saved with
its widget state (``jupyter nbconvert --execute``, JupyterLab's "save widget state") held the
1.4 MB chart bundle once per view.  Here each bundle's source lives, deflated, in one plain
widget model per kernel (``SharedModule``: no view, only state), and each tfprof_nb widget's
``_esm`` is a loader of a few hundred bytes that imports the source from the model its
``_tfprof_code`` trait names (once per page: by the source's digest).  The saved state then
holds the bundle once, and a notebook reopened without its kernel renders from it (the widget
manager restores every model of the saved state)."""

from __future__ import annotations

import ipywidgets
import traitlets

from ..offline.bundles import deflated, digest

__all__ = ["SharedModule", "loader_esm", "shared_module"]


class SharedModule(ipywidgets.Widget):
    """One bundle's source, deflated (``code``), named by its ``digest`` (base WidgetModel on
    the page: nothing runs it but the views' loaders)."""

    digest = traitlets.Unicode("").tag(sync=True)
    code = traitlets.Bytes(b"").tag(sync=True)


_SHARED: dict[str, SharedModule] = {}


def shared_module(source: str) -> SharedModule:
    """This kernel's model holding ``source`` (made on first use, again once closed)."""
    name = digest(source)
    model = _SHARED.get(name)
    if model is None or model.comm is None:
        model = _SHARED[name] = SharedModule(digest=name, code=deflated(source))
    return model


_LOADER = """// tfprof_nb: imports the view's module from the model its _tfprof_code names
const DIGEST = "%s";
function load(model) {
  const cache = (globalThis.__tfprofModules ??= {});
  cache[DIGEST] ??= (async () => {
    const ref = String(model.get("_tfprof_code") ?? "").replace(/^IPY_MODEL_/, "");
    const shared = await model.widget_manager.get_model(ref);
    const bytes = shared.get("code");
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    const url = URL.createObjectURL(new Blob([await new Response(stream).text()],
      { type: "text/javascript" }));
    try { return (await import(url)).default; } finally { URL.revokeObjectURL(url); }
  })().catch((err) => { delete cache[DIGEST]; throw err; });
  return cache[DIGEST];
}
export default {
  async render({ model, el }) {
    try {
      return (await load(model)).render({ model, el });
    } catch (err) {
      const box = document.createElement("pre");
      box.style.color = "#b00";
      box.textContent = `tfprof_nb could not load this view's module: ${String(err)}`;
      el.append(box);
    }
  },
};
"""


def loader_esm(source: str) -> str:
    """The ``_esm`` of a widget drawn by ``source``: its loader from the shared model."""
    return _LOADER % digest(source)
