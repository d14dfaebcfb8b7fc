// Where an offline page finds a view's ES module. A notebook keeps each module's source once
// (tfprof_nb.offline.loader: the latest loader output of a module carries it, the others name
// it by its digest), so a view whose own output names its module without the source finds it
// elsewhere on the page: in another output carrying it, in whatever order the outputs are, or
// in the page's saved widget state (the kernel's shared model of the module, which the views'
// `_esm` loaders read live). Outputs render one by one in JupyterLab and Notebook 7, so there a
// module not on the page yet is waited for; one never found (its output cleared or deleted)
// is an error that says so.

const STATE_MIME = "application/vnd.jupyter.widget-state+json";
const WAIT_MS = 30000;
/** The shells of JupyterLab and Notebook 7, whose outputs render one by one. */
const LIVE_APP = ".jp-LabShell, .jp-NotebookShell";
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

function lookup(digest: string, doc: Document): string | undefined {
  if (known.has(digest)) return known.get(digest);
  const carrier = Array.from(doc.querySelectorAll("script.tfprof-esm")).find((s) =>
    s.getAttribute("data-digest") === digest && (s.textContent ?? "").trim() !== "");
  let code = carrier?.textContent ?? undefined;
  if (!code && doc.querySelector(`script[type="${STATE_MIME}"]`)) {
    const models = Object.values(savedState(doc));
    code = savedCode(models.find((m) => m.state?.digest === digest));
  }
  if (code) known.set(digest, code);
  return code;
}

/** The base64 deflated source of module `digest`: `own` when the output carries it, else
 * found on the page (waiting up to `waitMs` for outputs still to render). */
export function moduleText(digest: string | null, own: string, doc: Document = document,
  waitMs: number = WAIT_MS): Promise<string> {
  if (own.trim()) {
    if (digest) known.set(digest, own);
    return Promise.resolve(own);
  }
  if (!digest) return Promise.reject(new Error("this view's output names no module"));
  const now = lookup(digest, doc);
  if (now) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const done = (code?: string) => {
      observer.disconnect();
      clearTimeout(timer);
      if (code) resolve(code);
      else reject(new Error("this view's module was kept with another tfprof_nb output of " +
        "this notebook, which is no longer here (cleared or deleted): run the cell again"));
    };
    const observer = new MutationObserver(() => {
      const code = lookup(digest, doc);
      if (code) done(code);
    });
    observer.observe(doc.documentElement, { childList: true, subtree: true });
    // a static page (an HTML export) is whole once parsed: nothing more comes
    const settled = () => doc.readyState !== "loading" && !doc.querySelector(LIVE_APP);
    const timer = setTimeout(() => done(lookup(digest, doc)), settled() ? 0 : waitMs);
  });
}
