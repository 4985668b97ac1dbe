"""Open notebooks/quickstart.ipynb in a real JupyterLab, run every cell from the menu, look at the page.

Headless Debian Chromium driven by Python Playwright (no browser download: the system Chromium is
used, installed by scripts/ensure-chromium when missing). The check: the live widgets rendered
with green bars, the shop-broken run's page (`.pfr#pfr-run-<runId>`, its report.html inline) is in
the page with its two failures, their bars on the timeline and the expected failure line, and a
screenshot is saved to test-artifacts/quickstart.png.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from integration.notebook_env import REPO, clean_workspace, kernel_environment, make_workspace
from support.browser import CHROMIUM_ARGS, ensure_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENSHOT = REPO / "test-artifacts" / "quickstart.png"
LAB_CONFIG = """
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.ServerApp.open_browser = False
c.LanguageServerManager.autodetect = False
c.LabApp.extension_manager = "readonly"
"""
SETTINGS = {
    # Render every cell (no windowing), so cells below the fold are in the DOM too.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # No "get notified about news?" toast over the page, no update check.
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


@pytest.fixture(scope="module")
def chromium() -> Path:
    """The system Chromium, installed by scripts/ensure-chromium when missing (a failure, never a skip)."""
    return ensure_chromium()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _kernel_pids(runtime_dir: Path) -> list[int]:
    """Processes whose command line names a connection file in our private runtime directory."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(runtime_dir) in cmdline and "ipykernel" in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A JupyterLab on 127.0.0.1 serving a copy of the notebooks; yields (base URL with token, root)."""
    root = make_workspace(tmp_path / "root")
    base = tmp_path / "jupyter"
    env = kernel_environment(base)
    config = Path(env["JUPYTER_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "jupyter_lab_config.py").write_text(LAB_CONFIG)
    for plugin, values in SETTINGS.items():
        target = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    token, port = secrets.token_hex(16), _free_port()
    log = (tmp_path / "lab.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyter",
            "lab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            *(["--allow-root"] if os.geteuid() == 0 else []),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
            try:
                if httpx.get(f"{url}/api/status", params={"token": token}, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "JupyterLab did not answer within 60 s"
            time.sleep(0.2)  # polling a starting server: there is no event to wait on
        yield f"{url}|{token}", root
    finally:
        try:
            httpx.post(f"{url}/api/shutdown", params={"token": token}, timeout=10)
            process.wait(timeout=20)
        except (httpx.HTTPError, subprocess.TimeoutExpired):
            pass
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        for pid in _kernel_pids(Path(env["JUPYTER_RUNTIME_DIR"])):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log.close()
        clean_workspace(root)


def test_quickstart_runs_in_jupyterlab_and_shows_the_run_pages(
    chromium: Path, lab: tuple[str, Path]
) -> None:
    from playwright.sync_api import sync_playwright

    server, root = lab
    url, token = server.split("|")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/lab/tree/notebooks/quickstart.ipynb?token={token}")
            try:
                # The kernel is up (not just the page): the status bar says so (slow on a loaded machine).
                page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=120_000)
                page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
                page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
                # Every code cell got its execution count: the whole notebook ran.
                page.wait_for_function(
                    """() => {
                        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                        return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
                    }""",
                    timeout=150_000,
                )
                page.get_by_text("Python 3 (ipykernel) | Idle").wait_for(timeout=60_000)
            except Exception:
                SCREENSHOT.parent.mkdir(exist_ok=True)
                page.screenshot(path=str(SCREENSHOT.with_name("quickstart-failure.png")))
                raise
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
            tracebacks = [t for t in errors.all_text_contents() if "Traceback" in t]
            assert tracebacks == []
            # Each run shows its page inline (report.html): the shop's passed, the broken shop's failed.
            reports = page.locator(".pfr[id^='pfr-run-']")
            passed = page.locator(".pfr:has(.pfr-head.pfr-s-passed)")
            failed = page.locator(".pfr:has(.pfr-head.pfr-s-failed)")
            assert passed.count() == 1 and failed.count() >= 1, reports.count()
            broken = failed.first
            assert broken.locator(".pfr-failure").count() == 2
            assert broken.locator(".pfr-tl .pfr-k-failed").count() == 2
            assert "POST /orders returned 500, expected 400" in broken.inner_text()
            # The live views rendered as widgets, their bars full: green for the shop, red for the broken one.
            assert page.locator(".widget-hprogress .progress-bar-success").count() >= 9
            assert page.locator(".widget-hprogress .progress-bar-danger").count() >= 2
            # The interactive view of the failed run: tabs with the evidence.
            assert page.locator(".lm-TabBar-tabLabel", has_text="Request / response").count() >= 2
            # The picture: the cell that ran the broken shop (its live views, then its run table).
            broken.evaluate("report => report.closest('.jp-Cell').scrollIntoView({block: 'start'})")
            SCREENSHOT.parent.mkdir(exist_ok=True)
            page.screenshot(path=str(SCREENSHOT))
        finally:
            browser.close()
    assert SCREENSHOT.stat().st_size > 10_000
    assert (root / "notebooks" / "quickstart.ipynb").exists()
