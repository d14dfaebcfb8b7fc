"""One Playwright driver and one headless Chromium per test process, shared by the browser
tests: each page opens in a new browser context (its own storage, cookies and cache, as a
fresh browser had), which costs a tenth of starting a driver and a browser (about 3 s on a
loaded 2-core machine, against 0.3 s).  ``tests/conftest.py`` closes them at the session's
end."""

from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

_shared: dict = {}


def shared_browser():
    """This process's Chromium (started again if it has gone)."""
    browser = _shared.get("browser")
    if browser is None or not browser.is_connected():
        if "driver" not in _shared:
            from playwright.sync_api import sync_playwright

            _shared["driver"] = sync_playwright().start()
        browser = _shared["driver"].chromium.launch(executable_path=CHROMIUM,
                                                    args=CHROMIUM_ARGS)
        _shared["browser"] = browser
    return browser


def new_context(**options):
    """A new browser context of the shared Chromium; close it when done."""
    return shared_browser().new_context(**options)


def close_shared() -> None:
    browser, driver = _shared.pop("browser", None), _shared.pop("driver", None)
    if browser is not None and browser.is_connected():
        browser.close()
    if driver is not None:
        driver.stop()
