// Offline host: renders tfprof_nb's widget modules without a kernel or a network.
//
// A report, an exported notebook or a notebook's loader output carries a widget's state (JSON
// traits plus binary buffers) and the widget's own ES module. This host stands in for the
// notebook's widget manager: it gives the module a model over that state and answers the one
// request the views send to Python (the details of a clicked trace event) from detail rows
// Python embedded next to the state (standin.ts; unpacking: payload.ts). In a notebook it
// renders a view wherever no live widget shows it: its placeholder in an HTML export, saved
// widget state in an executed export, and the widget's place in a notebook reopened without
// the kernel that made it. It is bundled as a classic script exposing `tfprofOffline` so it
// can be inlined anywhere.
import { fromBase64, moduleSource, putBuffers, unpack, unpackDetails } from "./payload";
import { moduleText, savedCode, withParts } from "./shared_module";
import {
  dataOf, detailsFrom, detailsOf, detailsResponder, standInModel, type DetailsSource,
} from "./standin";

async function importModule(source: string): Promise<any> {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return await import(/* @vite-ignore */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

function showError(el: HTMLElement, err: unknown): void {
  const box = document.createElement("pre");
  box.className = "tfprof-offline-error";
  box.style.color = "#b00";
  box.textContent = `tfprof_nb could not render this view offline: ${String(err)}`;
  el.append(box);
  console.error(err);
}

/** Render a widget module into `el` from its state, without a kernel. */
export async function renderState(el: HTMLElement, source: string, state: Record<string, unknown>,
  details?: DetailsSource): Promise<void> {
  const mod = await importModule(source);
  const model = standInModel(state, detailsResponder(state, details));
  const render = mod.default?.render ?? mod.render;
  render({ model, el });
}

/** A view's ES module as an output carries it: its source (base64, deflated; "" where another
 * output of the page carries it) and its digest. */
interface ModuleRef {
  esm: string;
  digest: string | null;
}

function moduleRef(tag: Element | null | undefined): ModuleRef | null {
  return tag ? { esm: tag.textContent ?? "", digest: tag.getAttribute("data-digest") } : null;
}

/** Render a view from its packed state and module into `target` (an error shows there). */
async function renderPacked(target: HTMLElement, payload: string, module: ModuleRef,
  details: DetailsSource): Promise<void> {
  try {
    const state = await withParts(await unpack(payload));
    const source = await moduleSource(await moduleText(module.digest, module.esm));
    target.replaceChildren();
    await renderState(target, source, state, details);
  } catch (err) {
    showError(target, err);
  }
}

/** Render a self-contained offline box: a `.tfprof-offline` element with the
 * `.tfprof-offline-view` to render into, the packed state, the module and maybe the packed
 * event details (once per box). */
export async function renderFallback(box: Element | null): Promise<void> {
  if (!box?.classList.contains("tfprof-offline") || box.hasAttribute("data-tfprof-rendered")) return;
  const payload = box.querySelector("script.tfprof-payload")?.textContent;
  const module = moduleRef(box.querySelector("script.tfprof-esm"));
  const target = box.querySelector(".tfprof-offline-view") as HTMLElement | null;
  if (!payload || !module || !target) return;
  box.setAttribute("data-tfprof-rendered", "");
  await renderPacked(target, payload, module, detailsFrom(box));
}

/** What a loader output carries for one view: its model id, packed state, module and
 * details (the data scripts right before the loader's host script). */
interface LoaderData {
  modelId: string;
  payload: string;
  module: ModuleRef;
  details: DetailsSource;
}

function loaderData(script: Element): LoaderData | null {
  const tags: Record<string, Element> = {};
  let modelId: string | null = null;
  for (let el = script.previousElementSibling; el?.matches("script[class^='tfprof-']");
    el = el.previousElementSibling) {
    tags[el.className] = el;
    modelId ??= el.getAttribute("data-model-id");
  }
  const payload = tags["tfprof-payload"]?.textContent;
  const module = moduleRef(tags["tfprof-esm"]);
  if (!modelId || !payload || !module) return null;
  return { modelId, payload, module, details: detailsOf(tags["tfprof-details"]) };
}

/** In an HTML export, the placeholder of this loader's view: the nearest one of its model
 * before it not rendered yet (a view shown twice has two pairs, each with its own state). */
function renderPlaceholder(script: Element, data: LoaderData): void {
  const boxes = Array.from(document.querySelectorAll(".tfprof-offline")).filter((box) =>
    box.getAttribute("data-model-id") === data.modelId && !box.hasAttribute("data-tfprof-rendered") &&
    !box.querySelector("script.tfprof-payload") &&
    (box.compareDocumentPosition(script) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0);
  const box = boxes[boxes.length - 1];
  const target = box?.querySelector(".tfprof-offline-view") as HTMLElement | null | undefined;
  if (!box || !target) return;
  box.setAttribute("data-tfprof-rendered", "");
  void renderPacked(target, data.payload, data.module, data.details);
}

const NOT_FOUND = /model not found/i;

/**
 * In JupyterLab or Notebook 7, a notebook reopened without the kernel that made its widgets
 * shows "Error displaying widget: model not found" in their place (the output right before
 * the loader's). Render the loader's view there once that message shows, unless a live view
 * comes first.
 */
function reviveWidgetOutput(script: Element, data: LoaderData): void {
  const output = script.closest(".jp-OutputArea-child")?.previousElementSibling
    ?.querySelector(".jp-OutputArea-output") as HTMLElement | null | undefined;
  if (!output) return;
  const failed = () => output.classList.contains("jupyter-widgets") &&  // the manager's message
    NOT_FOUND.test(output.textContent ?? "") && !output.querySelector("[class*='tfprof-']");
  const settled = () => !output.isConnected || !script.isConnected ||
    output.querySelector("[class*='tfprof-']") !== null;
  const check = () => {
    if (failed()) {
      const caption = document.createElement("p");
      caption.className = "tfprof-offline-caption";
      caption.textContent = "tfprof_nb: the view as saved (its kernel is gone); run the cell " +
        "again for the live widget.";
      caption.style.cssText = "margin:0 0 4px;font-size:12px;opacity:0.7";
      const view = document.createElement("div");
      view.className = "tfprof-offline-view";
      output.replaceChildren(caption, view);
      void renderPacked(view, data.payload, data.module, data.details);
    }
    if (settled()) observer.disconnect();  // revived, live, or the outputs were replaced
  };
  const observer = new MutationObserver(check);
  observer.observe(output, { childList: true, subtree: true, characterData: true });
  check();
}

/**
 * Run a loader output (`script` is its host script): render saved widget state in an export
 * page, and the loader's own view, from its own data, wherever no live widget shows it (its
 * placeholder in an export, its widget output in a reopened notebook).
 */
export function bootLoader(script: Element | null): void {
  bootNotebookExport();
  const data = script ? loaderData(script) : null;
  if (!script || !data) return;
  const go = () => {
    renderPlaceholder(script, data);
    reviveWidgetOutput(script, data);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", go);
  else go();
}

const VIEW_MIME = "application/vnd.jupyter.widget-view+json";
const STATE_MIME = "application/vnd.jupyter.widget-state+json";

interface SavedModel {
  state: Record<string, unknown>;
  buffers?: { path: (string | number)[]; data: string; encoding: string }[];
}

/** A saved widget's module source: from the shared model its `_tfprof_code` names (its `_esm`
 * only loads that), or its own `_esm` (notebooks saved before the shared models). */
async function savedSource(entry: SavedModel, saved: Record<string, SavedModel>): Promise<string> {
  const ref = entry.state._tfprof_code;
  if (typeof ref !== "string" || !ref.startsWith("IPY_MODEL_")) return String(entry.state._esm);
  const shared = saved[ref.slice("IPY_MODEL_".length)];
  const digest = shared?.state?.digest;
  return await moduleSource(await moduleText(typeof digest === "string" ? digest : null,
    savedCode(shared) ?? ""));
}

/**
 * In a notebook exported with its widget state (nbconvert --execute), render every tfprof_nb
 * widget from that state, in place of the widget manager the page would load from a CDN.
 */
export async function renderNotebookExport(doc: Document = document): Promise<number> {
  const stateTag = doc.querySelector(`script[type="${STATE_MIME}"]`);
  if (!stateTag?.textContent) return 0;
  let saved: Record<string, SavedModel>;
  try {
    saved = JSON.parse(stateTag.textContent).state ?? {};
  } catch (err) {
    console.error("tfprof_nb: the page's saved widget state is not valid JSON", err);
    return 0;
  }
  // claim every tfprof_nb view first, so that a widget manager loading meanwhile (online)
  // does not render any of them a second time
  const ours: [Element, SavedModel][] = [];
  for (const tag of Array.from(doc.querySelectorAll(`script[type="${VIEW_MIME}"]`))) {
    let modelId: string;
    try {
      modelId = JSON.parse(tag.textContent ?? "{}").model_id;
    } catch {
      continue;
    }
    const entry = saved[modelId];
    if (!entry || typeof entry.state?._esm !== "string" || !entry.state._tfprof_view) continue;
    tag.setAttribute("type", "application/vnd.tfprof.rendered+json");
    ours.push([tag, entry]);
  }
  let rendered = 0;
  for (const [tag, entry] of ours) {
    const el = doc.createElement("div");
    el.className = "tfprof-offline-view";
    tag.parentElement?.append(el);
    try {
      const modelId = JSON.parse(tag.textContent ?? "{}").model_id as string;
      await renderState(el, await savedSource(entry, saved), await exportState(entry, modelId),
        detailsFrom(null, modelId));
      rendered++;
    } catch (err) {
      showError(el, err);
    }
  }
  return rendered;
}

/** The state to render a saved widget from: its loader's offline copy when the page has one
 * whole (made for pages without a kernel: every tab built, a trace viewer's copy), else the
 * saved widget state (the live widget's, which may lack what its page would have asked for):
 * so a copy naming a part whose carrier was cleared still draws, from the saved state. */
async function exportState(entry: SavedModel, modelId: string): Promise<Record<string, unknown>> {
  const packed = dataOf("tfprof-payload", null, modelId);
  const copy = packed ? await withParts(await unpack(packed)).catch(() => null) : null;
  if (copy) return copy;
  const state: Record<string, unknown> = structuredClone(entry.state);
  const buffers = entry.buffers ?? [];
  putBuffers(state, buffers.map((b) => b.path), buffers.map((b) => {
    const bytes = fromBase64(b.data);
    return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }));
  return state;
}

/** Run `renderNotebookExport` once the whole page is parsed (once per page). */
export function bootNotebookExport(): void {
  const w = window as unknown as { __tfprofBooted?: boolean };
  if (w.__tfprofBooted) return;
  w.__tfprofBooted = true;
  const go = () => void renderNotebookExport();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", go);
  else go();
}

(globalThis as unknown as { tfprofOffline: unknown }).tfprofOffline = {
  renderFallback, renderNotebookExport, bootNotebookExport, bootLoader, unpack, unpackDetails, putBuffers,
};
