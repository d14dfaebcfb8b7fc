// Where an offline page finds the pieces a notebook stores once: a view's ES module, each
// large trait of a view's state (a part: the trace viewer's tile, a chart's figure) and a
// trace viewer's event details. tfprof_nb.offline.loader names each piece by its digest; the
// latest loader output using a piece carries it, the others name it only. So a view whose own
// output names a piece without its text finds it elsewhere on the page: in another output
// carrying it, in whatever order the outputs are, or (a module) in the page's saved widget
// state (the kernel's shared model of the module, which the views' `_esm` loaders read live).
// Outputs render one by one in JupyterLab and Notebook 7, so there a piece not on the page yet
// is waited for; one never found (its output cleared or deleted) is an error that says so.
import { unpackBlob } from "./payload";

const STATE_MIME = "application/vnd.jupyter.widget-state+json";
const WAIT_MS = 30000;
/** The shells of JupyterLab and Notebook 7, whose outputs render one by one. */
const LIVE_APP = ".jp-LabShell, .jp-NotebookShell";
/** A trait the state names by the digest of its part (tfprof_nb.offline.payload.PART_KEY). */
const PART_KEY = "$tfprof_part";
const known = new Map<string, string>();

interface SavedModel {
  state?: Record<string, unknown>;
  buffers?: { path: (string | number)[]; data: string; encoding: string }[];
}

/** The base64 deflated source a shared model holds, if `model` is one (its `code` buffer). */
export function savedCode(model: SavedModel | undefined): string | undefined {
  const buffer = model?.buffers?.find((b) => b.path.length === 1 && b.path[0] === "code");
  return buffer && buffer.encoding === "base64" ? buffer.data : undefined;
}

function savedState(doc: Document): Record<string, SavedModel> {
  const tag = doc.querySelector(`script[type="${STATE_MIME}"]`);
  try {
    return tag?.textContent ? JSON.parse(tag.textContent).state ?? {} : {};
  } catch {
    return {};
  }
}

function lookup(cls: string, digest: string, doc: Document): string | undefined {
  const key = `${cls}:${digest}`;
  if (known.has(key)) return known.get(key);
  const carrier = Array.from(doc.querySelectorAll(`script.${cls}`)).find((s) =>
    s.getAttribute("data-digest") === digest && (s.textContent ?? "").trim() !== "");
  let code = carrier?.textContent ?? undefined;
  if (!code && cls === "tfprof-esm" && doc.querySelector(`script[type="${STATE_MIME}"]`)) {
    const models = Object.values(savedState(doc));
    code = savedCode(models.find((m) => m.state?.digest === digest));
  }
  if (code) known.set(key, code);
  return code;
}

const GONE: Record<string, string> = {
  "tfprof-esm": "this view's module",
  "tfprof-part": "this view's data",
  "tfprof-details": "this view's event details",
};

/** The base64 text of the piece `digest` kept in `script.<cls>` elements: `own` when the
 * output carries it, else found on the page (waiting up to `waitMs` for outputs still to
 * render). */
export function pieceText(cls: string, digest: string | null, own: string,
  doc: Document = document, waitMs: number = WAIT_MS): Promise<string> {
  if (own.trim()) {
    if (digest) known.set(`${cls}:${digest}`, own);
    return Promise.resolve(own);
  }
  if (!digest) return Promise.reject(new Error(`${GONE[cls] ?? cls} has no name`));
  const now = lookup(cls, digest, doc);
  if (now) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const done = (code?: string) => {
      observer.disconnect();
      clearTimeout(timer);
      if (code) resolve(code);
      else reject(new Error(`${GONE[cls] ?? cls} was kept with another tfprof_nb output of ` +
        "this notebook, which is no longer here (cleared or deleted): run the cell again"));
    };
    const observer = new MutationObserver(() => {
      const code = lookup(cls, digest, doc);
      if (code) done(code);
    });
    observer.observe(doc.documentElement, { childList: true, subtree: true });
    // a static page (an HTML export) is whole once parsed: nothing more comes
    const settled = () => doc.readyState !== "loading" && !doc.querySelector(LIVE_APP);
    const timer = setTimeout(() => done(lookup(cls, digest, doc)), settled() ? 0 : waitMs);
  });
}

/** The base64 deflated source of module `digest` (see `pieceText`). */
export function moduleText(digest: string | null, own: string, doc: Document = document,
  waitMs: number = WAIT_MS): Promise<string> {
  return pieceText("tfprof-esm", digest, own, doc, waitMs);
}

/** `state` with each trait its payload names by a part (`{"$tfprof_part": digest}`) put back,
 * from the part found on the page. */
export async function withParts(state: Record<string, unknown>, doc: Document = document,
  waitMs: number = WAIT_MS): Promise<Record<string, unknown>> {
  await Promise.all(Object.entries(state).map(async ([key, value]) => {
    const name = (value as Record<string, unknown> | null)?.[PART_KEY];
    if (typeof name !== "string" || Object.keys(value as object).length !== 1) return;
    state[key] = (await unpackBlob(await pieceText("tfprof-part", name, "", doc, waitMs))).value;
  }));
  return state;
}
