"""Playwright Test's JSON report, read into one entry per test (a spec in one project).

The report nests suites (files, then `describe` blocks) holding specs, each spec holding one test
per project, each test holding one result per attempt (retries). Only what a case needs is
decoded; fields Playwright adds later are ignored. Its `errors` are what failed outside any test
(a config that does not load, a file that does not compile).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from preflight_sdk.core import decoding

__all__ = [
    "PlaywrightAttachment",
    "PlaywrightReport",
    "PlaywrightResult",
    "PlaywrightTest",
    "read_report",
    "strip_ansi",
]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MAX_BYTES = 50 * 1024 * 1024


def strip_ansi(text: str) -> str:
    """`text` without the terminal colour codes Playwright writes into its messages."""
    return _ANSI.sub("", text)


class _Raw(msgspec.Struct, rename="camel"):
    """The report's own shapes: lenient (unknown fields skipped), camelCase."""


class _Location(_Raw, kw_only=True):
    file: str = ""
    line: int = 0
    column: int = 0


class _Error(_Raw, kw_only=True):
    message: str = ""
    stack: str = ""
    location: _Location | None = None


class _Text(_Raw, kw_only=True):
    text: str = ""


class PlaywrightAttachment(_Raw, kw_only=True):
    """A file (or an inline body, base64) a test result attached: screenshot, trace, video…"""

    name: str
    content_type: str = "application/octet-stream"
    path: str | None = None
    body: str | None = None


class PlaywrightResult(_Raw, kw_only=True):
    """One attempt of a test."""

    status: str = "passed"  # passed, failed, timedOut, skipped, interrupted
    duration: float = 0.0
    start_time: str | None = None
    retry: int = 0
    errors: list[_Error] = msgspec.field(default_factory=list)
    stdout: list[_Text | str] = msgspec.field(default_factory=list)
    stderr: list[_Text | str] = msgspec.field(default_factory=list)
    attachments: list[PlaywrightAttachment] = msgspec.field(default_factory=list)

    def messages(self) -> list[str]:
        """Each error's message, without colour codes."""
        return [strip_ansi(error.message or error.stack) for error in self.errors]

    def location(self) -> str | None:
        """`file:line` of the first error, when Playwright knew it."""
        for error in self.errors:
            if error.location is not None and error.location.file:
                return f"{error.location.file}:{error.location.line}"
        return None

    def output(self) -> str:
        """What the test printed (stdout, then stderr)."""
        out = "".join(item if isinstance(item, str) else item.text for item in self.stdout)
        err = "".join(item if isinstance(item, str) else item.text for item in self.stderr)
        return strip_ansi(out + (f"\n[stderr]\n{err}" if err else ""))


class _Annotation(_Raw, kw_only=True):
    type: str = ""
    description: str | None = None


class _Test(_Raw, kw_only=True):
    project_name: str = ""
    status: str = "expected"  # expected, unexpected, flaky, skipped
    annotations: list[_Annotation] = msgspec.field(default_factory=list)
    results: list[PlaywrightResult] = msgspec.field(default_factory=list)


class _Spec(_Raw, kw_only=True):
    title: str
    file: str = ""
    line: int = 0
    tests: list[_Test] = msgspec.field(default_factory=list)


class _Suite(_Raw, kw_only=True):
    title: str = ""
    file: str = ""
    specs: list[_Spec] = msgspec.field(default_factory=list)
    suites: list[_Suite] = msgspec.field(default_factory=list)


class _Config(_Raw, kw_only=True):
    root_dir: str = ""


class _Report(_Raw, kw_only=True):
    config: _Config = msgspec.field(default_factory=_Config)
    suites: list[_Suite] = msgspec.field(default_factory=list)
    errors: list[_Error] = msgspec.field(default_factory=list)


class PlaywrightTest(msgspec.Struct, frozen=True, kw_only=True):
    """One test of the report: a spec in one project, with its attempts in order."""

    titles: list[str]  # the file, the describe blocks, the test's title
    file: str  # relative to the report's rootDir (the config's testDir)
    line: int
    project: str
    status: str
    skip_reason: str | None
    results: list[PlaywrightResult]


class PlaywrightReport(msgspec.Struct, frozen=True, kw_only=True):
    """Every test of a run, and the errors outside any test."""

    root_dir: str
    tests: list[PlaywrightTest]
    errors: list[str]


def read_report(path: Path) -> PlaywrightReport | None:
    """The report at `path`; None when there is none, it is empty, or it is not Playwright's JSON."""
    try:
        if path.stat().st_size > _MAX_BYTES:
            return None
        raw = decoding.decode(path.read_bytes(), _Report)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    tests: list[PlaywrightTest] = []
    for suite in raw.suites:
        _collect(suite, [], tests)
    return PlaywrightReport(
        root_dir=raw.config.root_dir,
        tests=tests,
        errors=[strip_ansi(e.message or e.stack) for e in raw.errors],
    )


def _collect(suite: _Suite, titles: list[str], out: list[PlaywrightTest]) -> None:
    here = [*titles, suite.title] if suite.title else titles
    for spec in suite.specs:
        for test in spec.tests:
            skip = next(
                (a.description or "skipped" for a in test.annotations if a.type in ("skip", "fixme")), None
            )
            out.append(
                PlaywrightTest(
                    titles=[*here, spec.title],
                    file=spec.file or suite.file,
                    line=spec.line,
                    project=test.project_name,
                    status=test.status,
                    skip_reason=skip,
                    results=test.results,
                )
            )
    for child in suite.suites:
        _collect(child, here, out)
