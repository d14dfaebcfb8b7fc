"""Open an offline page (a report, an exported notebook) from file:// in headless Chromium
with every request that is not file:, blob: or data: blocked and recorded."""

from __future__ import annotations

from pathlib import Path

from ..widgets.harness import guard, new_context

LOCAL = ("file:", "blob:", "data:")


class OfflinePage:
    """Use as a context manager; ``blocked`` lists the network requests the page tried."""

    def __init__(self, path: Path, wait_for: str = ".tfprof-dashboard",
                 color_scheme: str = "light"):
        self.path = Path(path).resolve()
        self.color_scheme = color_scheme
        self.wait_for = wait_for
        self.blocked: list[str] = []
        self.console_errors: list[str] = []
        self.dialogs: list[str] = []

    def __enter__(self):
        self.context = new_context(viewport={"width": 1200, "height": 900},
                                   color_scheme=self.color_scheme)
        self.page = self.context.new_page()
        guard(self.page, LOCAL, self.blocked, self.console_errors, self.dialogs)
        self.page.goto(self.path.as_uri(), timeout=120000)
        if self.wait_for:
            self.page.wait_for_selector(self.wait_for, timeout=60000)
        return self

    def __exit__(self, *exc):
        self.context.close()

    def js(self, code: str, arg=None):
        return self.page.evaluate(code, arg)
