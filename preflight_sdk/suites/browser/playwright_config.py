"""Run a project's Playwright Test config with the machine's Chromium and a report preflight reads.

Playwright takes no browser path from its command line or environment, so the run uses a small
config of its own, written beside the project's config for the run and removed after it: it
imports the project's config unchanged and sets only what preflight needs, so every relative
path of the project's config (testDir, globalSetup, webServer's cwd…) means what it always means:

- the Chromium projects launch the machine's Chromium (`launchOptions.executablePath`, its flags
  added to the project's own); a project of another browser is left out and named in a warning
  (preflight never downloads a browser);
- `screenshot: only-on-failure` and `trace: retain-on-failure` unless the project sets its own;
- the JSON reporter into the run's scratch folder (the `line` reporter for the output), and the
  test artifacts (`outputDir`) there too, so nothing is left in the project.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = [
    "CONFIG_NAMES",
    "WrapperFiles",
    "chromium_environment",
    "find_cli",
    "find_config",
    "wrapper_environment",
    "write_wrapper",
]

CONFIG_NAMES = tuple(f"playwright.config.{ext}" for ext in ("ts", "js", "mjs", "cjs", "mts", "cts"))
_OPTIONS = "PREFLIGHT_PLAYWRIGHT"

# TypeScript: Playwright compiles it, and the project's config whatever its language.
_WRAPPER = """// Written by preflight for one run of {config}; removed when the run ends.
import {{ writeFileSync }} from 'fs';
import base from './{module}';

const options = JSON.parse(process.env.{options} ?? '{{}}');
const evidence = {{ screenshot: 'only-on-failure', trace: 'retain-on-failure' }};
const browserOf = (use: any): string => use?.browserName ?? use?.defaultBrowserType ?? 'chromium';
const local = (use: any, inherited: any): any => {{
  const launch = use?.launchOptions ?? inherited ?? {{}};
  return {{
    ...use,
    channel: undefined,
    launchOptions: {{ ...launch, executablePath: options.executablePath, args: [...(launch.args ?? []), ...options.args] }},
  }};
}};
const use = {{ ...evidence, ...(base.use ?? {{}}) }};
const config: any = {{
  ...base,
  outputDir: options.outputDir,
  reporter: [['json', {{ outputFile: options.report }}], ['line']],
  use: browserOf(use) === 'chromium' ? local(use, undefined) : use,
}};
if (Array.isArray(base.projects)) {{
  const left = base.projects.filter((p: any) => browserOf({{ ...base.use, ...p.use }}) !== 'chromium');
  writeFileSync(options.skipped, JSON.stringify(left.map((p: any) => p.name ?? browserOf(p.use))));
  config.projects = base.projects
    .filter((p: any) => !left.includes(p))
    .map((p: any) => ({{ ...p, use: local(p.use ?? {{}}, base.use?.launchOptions) }}));
}}
export default config;
"""


def find_config(target: Path) -> Path | None:
    """The Playwright config of a suite's `file`: the file itself, or the first config in the directory."""
    if target.is_file():
        return target if target.name in CONFIG_NAMES else None
    return next((target / name for name in CONFIG_NAMES if (target / name).is_file()), None)


def find_cli(start: Path) -> Path | None:
    """The project's `playwright` command (`node_modules/.bin/playwright`), from `start` upwards.

    What `npx playwright` runs, found without npx: npx would download a package it cannot find.
    """
    for folder in (start, *start.parents):
        candidate = folder / "node_modules" / ".bin" / "playwright"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


class WrapperFiles:
    """Where one run's wrapper config, report, artifacts and left-out projects go."""

    def __init__(self, config: Path, scratch: Path, run_id: str) -> None:
        self.wrapper = config.parent / f".preflight-{run_id}.playwright.config.ts"
        self.report = scratch / "report.json"
        self.output = scratch / "results"
        self.skipped = scratch / "skipped.json"

    def left_out(self) -> list[str]:
        """The projects the wrapper left out (another browser than Chromium)."""
        try:
            names = json.loads(self.skipped.read_text())
        except (OSError, ValueError):
            return []
        return [str(name) for name in names] if isinstance(names, list) else []


def write_wrapper(config: Path, files: WrapperFiles) -> None:
    """Write the run's config beside `config` (see the module docstring)."""
    module = config.name.removesuffix(".ts") if config.suffix == ".ts" else config.name
    files.wrapper.write_text(
        _WRAPPER.format(config=config.name, module=module, options=_OPTIONS), encoding="utf-8"
    )


def wrapper_environment(files: WrapperFiles, executable: str, args: tuple[str, ...]) -> dict[str, str]:
    """The variables the wrapper reads (one, JSON), and no browser download ever."""
    places = {"outputDir": str(files.output), "report": str(files.report), "skipped": str(files.skipped)}
    return chromium_environment(executable, args, **places)


def chromium_environment(executable: str, args: tuple[str, ...], **more: str) -> dict[str, str]:
    """`PREFLIGHT_PLAYWRIGHT`: the Chromium to launch and its flags (and `more`), as JSON."""
    options = {"executablePath": executable, "args": list(args), **more}
    return {_OPTIONS: json.dumps(options), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}
