"""The run's Chromium: launched by the first browser step of a run, closed when the run ends.

One browser per run (its start-up, about a second, is paid once), one context per case (a fresh
profile: no cookie, storage or cache crosses from one case to the next). The browser is the
machine's own Chromium, driven through Playwright for Python by its executable path: preflight
never downloads a browser.

Which binary: `PREFLIGHT_CHROMIUM` (the process environment, else the project's `.env`), else the
first of /usr/bin/chromium, `chromium`, `chromium-browser`, `google-chrome`, `google-chrome-stable`
on PATH.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from preflight_sdk.core.errors import InfrastructureError

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

__all__ = ["CHROMIUM_ARGS", "BrowserHost", "find_chromium", "unavailable"]

# Flags for a headless Chromium in containers and CI machines: no sandbox (often no user
# namespaces), no GPU, and none of the background traffic (updates, sync, QUIC probes).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Headless, bounded, and deaf to the signals of this process: the run closes it (`aclose`).
_LAUNCH: dict[str, Any] = {
    "args": list(CHROMIUM_ARGS),
    "headless": True,
    "timeout": 60_000,
    **dict.fromkeys(("handle_sigint", "handle_sigterm", "handle_sighup"), False),
}
_EXTRA = "pip install 'preflight-sdk[browser]'"


def find_chromium(environ: Mapping[str, str]) -> str:
    """The Chromium a run drives (see the module docstring).

    Raises:
        InfrastructureError: BROWSER_UNAVAILABLE when `PREFLIGHT_CHROMIUM` names no executable file,
            or no Chromium is installed.
    """
    named = environ.get("PREFLIGHT_CHROMIUM") or os.environ.get("PREFLIGHT_CHROMIUM")
    if named:
        found = shutil.which(named) if "/" not in named else (named if os.access(named, os.X_OK) else None)
        if found is None:
            raise unavailable(
                f"PREFLIGHT_CHROMIUM is {named!r}, which is not an executable file",
                "point PREFLIGHT_CHROMIUM at a Chromium or Chrome binary, or unset it to use /usr/bin/chromium",
                PREFLIGHT_CHROMIUM=named,
            )
        return found
    for candidate in _CANDIDATES:
        found = candidate if candidate.startswith("/") and os.access(candidate, os.X_OK) else None
        found = found or (shutil.which(candidate) if not candidate.startswith("/") else None)
        if found:
            return found
    raise unavailable(
        "browser steps need Chromium, and none is installed (looked for " + ", ".join(_CANDIDATES) + ")",
        "install it (Debian: `apt-get install chromium`), or set PREFLIGHT_CHROMIUM to a Chromium or "
        "Chrome binary; preflight never downloads a browser",
        looked_for=list(_CANDIDATES),
    )


def unavailable(message: str, hint: str, **details: object) -> InfrastructureError:
    """The error of a browser step that cannot have a browser: BROWSER_UNAVAILABLE."""
    return InfrastructureError(message, code="BROWSER_UNAVAILABLE", hint=hint, details=details or None)


class BrowserHost:
    """The run's browser, started on first use (see the module docstring); `aclose` ends it."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.launches = 0  # how many browsers this run started: one, however many cases
        self._lock = anyio.Lock()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._broken: InfrastructureError | None = None

    @property
    def started(self) -> bool:
        """Whether a browser runs for this run."""
        return self._browser is not None

    async def browser(self) -> Browser:
        """The run's browser, launched the first time it is asked for.

        Raises:
            InfrastructureError: BROWSER_UNAVAILABLE when Playwright is not installed, no Chromium is
                found, or it does not start. The first failure is kept: later cases fail at once
                with it rather than trying again.
        """
        async with self._lock:
            if self._broken is not None:
                raise self._broken
            if self._browser is None:
                try:
                    self._browser = await self._launch()
                except InfrastructureError as exc:
                    self._broken = exc
                    raise
            return self._browser

    async def _launch(self) -> Browser:
        try:
            from playwright.async_api import Error, async_playwright
        except ImportError:
            raise unavailable(
                "browser steps need Playwright for Python, which is not installed",
                f"install the browser extra: `{_EXTRA}` (it drives the machine's Chromium; no browser "
                "is downloaded)",
            ) from None
        executable = find_chromium(self.environ)
        playwright = await async_playwright().start()
        try:
            browser = await playwright.chromium.launch(executable_path=executable, **_LAUNCH)
        except Error as exc:
            await playwright.stop()
            first = str(exc.message).strip().splitlines()[0] if exc.message else type(exc).__name__
            raise InfrastructureError(
                f"Chromium ({executable}) did not start: {first}",
                code="BROWSER_UNAVAILABLE",
                hint="run it by hand (`"
                + executable
                + " --headless --no-sandbox --dump-dom about:blank`) to "
                "see why, or set PREFLIGHT_CHROMIUM to another Chromium or Chrome binary",
                details={"executable": executable},
            ) from None
        except BaseException:
            with anyio.CancelScope(shield=True):
                await playwright.stop()
            raise
        self._playwright = playwright
        self.launches += 1
        return browser

    def context_options(self, viewport: Any) -> dict[str, Any]:
        """The options of a case's context: its viewport, nothing kept from another case."""
        size = {"width": viewport.width, "height": viewport.height} if viewport is not None else None
        return {"viewport": size or {"width": 1280, "height": 720}, "accept_downloads": False}

    async def aclose(self) -> None:
        """Close the browser and Playwright's driver (safe to call twice, and when none started)."""
        with anyio.CancelScope(shield=True):
            browser, playwright = self._browser, self._playwright
            self._browser = self._playwright = None
            if browser is not None:
                with anyio.move_on_after(10):
                    await browser.close()
            if playwright is not None:
                with anyio.move_on_after(10):
                    await playwright.stop()
