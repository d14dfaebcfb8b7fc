// The kernel's stand-in on a page without one: a widget model over a plain state object, and
// the one answer the views ask Python for (a trace event's details and links, selected) given
// from the detail rows Python embedded next to the state (details.ts).
import { eventDetails, eventLinks, type DetailsBlock } from "./details";
import { type Model } from "./model";
import { unpackDetails } from "./payload";
import { pieceText } from "./shared_module";

/** Where a view finds its event details: in its own box, else in the loader output of its
 * model. Read lazily (on the first click) and once. */
export type DetailsSource = () => Promise<DetailsBlock | undefined>;

/** The `script.<cls>` inside `box`, else the one a loader output carries for `modelId`. */
function scriptOf(cls: string, box: Element | null, modelId?: string | null): Element | undefined {
  const own = box?.querySelector(`script.${cls}`);
  return own ?? (modelId ? Array.from(document.querySelectorAll(`script.${cls}`))
    .find((s) => s.getAttribute("data-model-id") === modelId) : undefined);
}

/** The text of the `script.<cls>` inside `box`, else of the one a loader output carries for
 * `modelId`. */
export function dataOf(cls: string, box: Element | null, modelId?: string | null): string | undefined {
  return scriptOf(cls, box, modelId)?.textContent ?? undefined;
}

/** Details read from `text()` on the first request, and once (none where they cannot be
 * found: the view then shows an event's name and place only). */
export function lazyDetails(
  text: () => string | undefined | Promise<string | undefined>): DetailsSource {
  let pending: Promise<DetailsBlock | undefined> | undefined;
  return () => {
    pending ??= Promise.resolve(text()).then((t) => (t ? unpackDetails(t) : undefined))
      .catch((err) => {
        console.error(err);
        return undefined;
      });
    return pending;
  };
}

/** The details a `script.tfprof-details` holds, or names by its digest (carried by another
 * output of the page). */
export function detailsOf(tag: Element | null | undefined): DetailsSource {
  return lazyDetails(() => {
    const text = tag?.textContent ?? "";
    const name = tag?.getAttribute("data-digest") ?? null;
    return text.trim() || !name ? text || undefined : pieceText("tfprof-details", name, "");
  });
}

/** The details of the view in `box`, or of the loader output of `modelId`. */
export function detailsFrom(box: Element | null, modelId?: string | null): DetailsSource {
  return detailsOf(scriptOf("tfprof-details", box, modelId));
}

/** A widget model over a plain state object: local listeners hear every change, as in a
 * Backbone model, and `respond` may answer a change the way the Python side would. */
export function standInModel(state: Record<string, unknown>,
  respond?: (key: string, model: Model) => void): Model {
  const listeners: Record<string, (() => void)[]> = {};
  const fire = (key: string) => (listeners[`change:${key}`] ?? []).slice().forEach((f) => f());
  const model: Model = {
    get: (k) => state[k],
    set: (k, v) => {
      state[k] = v;
      fire(k);
      respond?.(k, model);
    },
    save_changes: () => {},
    on: (ev, cb) => { (listeners[ev] ??= []).push(cb); },
    off: (ev, cb) => { listeners[ev] = (listeners[ev] ?? []).filter((f) => f !== cb); },
  };
  return model;
}

/** The trait prefixes of the trace viewers inside a state (the widget says which). */
export function timelinePrefixes(state: Record<string, unknown>): string[] {
  return ((state._tfprof_timelines ?? []) as string[]).filter((p) => typeof p === "string");
}

/** Answer a timeline's selection with the event's details and links, as the Python widget
 * does (the embedded rows are read on the first click; without them, the name and place the
 * page holds). */
export function detailsResponder(state: Record<string, unknown>, source?: DetailsSource) {
  const prefixes = timelinePrefixes(state);
  return (key: string, model: Model) => {
    for (const p of prefixes) {
      if (key !== `${p}selected_index`) continue;
      const i = Number(state[key]);
      const answer = (block?: DetailsBlock) => {
        if (Number(state[key]) !== i) return;
        model.set(`${p}details`, eventDetails(state, p, i, block));
        model.set(`${p}links`, eventLinks(state, p, i, block));
      };
      if (!source) answer();
      else source().then(answer, (err) => { console.error(err); answer(); });
    }
  };
}
