"""A real Jupyter server (JupyterLab or Notebook 7) for browser tests and benchmarks: start it
on a free port, write a one-cell notebook, open it in Chromium and run its cell."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from .browser import new_context
from .harness import guard

# what a page on the local server may load; everything else is blocked and recorded
LOCAL = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyter_server(root: Path, app: str = "lab"):
    """A ``jupyter lab`` (or ``notebook``) server serving ``root``, with its own data dir (trust
    signatures and the secret stay out of the user's); yields its URL once it has rendered its
    first page (a fresh server's slow one)."""
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", app, "--no-browser", "--ip=127.0.0.1",
         f"--port={port}", "--IdentityProvider.token=", "--ServerApp.password=",
         "--allow-root", f"--ServerApp.root_dir={root}", "--LabApp.news_url=",
         "--ServerApp.disable_check_xsrf=True"],
        env={**os.environ, "JUPYTER_DATA_DIR": str(Path(root) / ".jupyter-data")},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{url}/api", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError(f"jupyter {app} did not start")
        urllib.request.urlopen(f"{url}/lab" if app == "lab" else f"{url}/tree",
                               timeout=120).read()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def _call(url: str, method: str = "GET"):
    with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=60) as r:
        body = r.read()
    return json.loads(body) if body else None


def reset_server(url: str, app: str) -> None:
    """Leave a shared server as a fresh one is: every session's kernel shut down (and gone
    from ``/api/kernels``), and JupyterLab's saved layouts deleted (a page opened next does
    not restore the last test's tabs)."""
    for session in _call(f"{url}/api/sessions"):
        _call(f"{url}/api/sessions/{session['id']}", "DELETE")
    for kernel in _call(f"{url}/api/kernels"):
        _call(f"{url}/api/kernels/{kernel['id']}", "DELETE")
    for _ in range(120):
        if not _call(f"{url}/api/kernels"):
            break
        time.sleep(0.5)
    else:
        raise RuntimeError(f"jupyter {app}: kernels still running after their shutdown")
    spaces = _call(f"{url}/lab/api/workspaces")["workspaces"]["ids"]
    for space in spaces:
        _call(f"{url}/lab/api/workspaces/{space}", "DELETE")


def write_notebook(root: Path, source: str, name: str = "x.ipynb") -> Path:
    """A notebook of one code cell (``source``) for a Python 3 kernel, at ``root / name``."""
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                     "outputs": [], "source": source}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                      "language": "python"}},
          "nbformat": 4, "nbformat_minor": 5}
    path = Path(root) / name
    path.write_text(json.dumps(nb))
    return path


@contextlib.contextmanager
def open_notebook(url: str, app: str, external: list, name: str = "x.ipynb",
                  viewport: tuple[int, int] = (1400, 1000)):
    """A page on notebook ``name`` in JupyterLab or Notebook 7, in a new context of the
    shared Chromium (closed on leaving); requests leaving the machine are blocked and recorded
    in ``external``."""
    context = new_context(viewport={"width": viewport[0], "height": viewport[1]})
    try:
        page = context.new_page()
        guard(page, LOCAL, external, [], [])
        page.goto(f"{url}/lab/tree/{name}" if app == "lab" else f"{url}/notebooks/{name}",
                  wait_until="domcontentloaded", timeout=120000)
        yield page
    finally:
        context.close()


# the notebook's kernel started and idle: its toolbar names it (it says "No Kernel", and its
# execution indicator "idle", before the session starts, then "initializing", "connecting")
KERNEL_IDLE = """() => {
  const name = document.querySelector('.jp-Toolbar-kernelName')?.textContent.trim();
  const status = document.querySelector('.jp-Notebook-ExecutionIndicator')?.dataset.status;
  return !!name && name !== 'No Kernel' && status === 'idle';
}"""


def wait_for_kernel(page, timeout: float = 120000) -> None:
    """Wait until the open notebook's kernel has started and is idle (JupyterLab or
    Notebook 7)."""
    page.wait_for_function(KERNEL_IDLE, timeout=timeout)


def run_first_cell(page) -> None:
    """Run the notebook's first cell once the kernel takes it: retry until its prompt shows
    a number (or a star)."""
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=120000)
    wait_for_kernel(page)
    for attempt in range(8):
        try:
            # a busy machine can keep the editor "unstable" past a click's wait (Lab lays out
            # cells lazily): after the first try, click without waiting for stability
            page.locator(".jp-Notebook .jp-Cell .cm-content").first.click(
                timeout=15000, force=attempt > 0)
            page.keyboard.press("Shift+Enter")
            page.wait_for_function(
                "/\\[[0-9*]+\\]/.test(document.querySelector('.jp-InputPrompt').innerText)",
                timeout=10000)
            return
        except PlaywrightTimeout:
            continue
