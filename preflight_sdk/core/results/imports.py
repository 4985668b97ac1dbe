"""The result of importing a Postman collection, a `.http` file or a Hurl file as a YAML test file."""

from __future__ import annotations

from typing import Literal

import msgspec

from .base import Part, Result

__all__ = ["HostMatch", "ImportedTests", "NotConverted"]

ImportFormat = Literal["postman", "http", "hurl"]


class NotConverted(Part, frozen=True, kw_only=True):
    """A part of the source that the test file does not carry, where it was and why.

    Attributes:
        place: where it is in the source (`Auth / Login › test script line 4`, `orders.hurl:12`).
        source: the source text itself (cut at 200 characters).
        reason: why it was not converted, and what to do instead where there is a way.
    """

    place: str
    source: str
    reason: str


class HostMatch(Part, frozen=True, kw_only=True):
    """A host (or base-URL variable) the source's requests use, and what it became.

    Attributes:
        found: the host as written (`http://localhost:8080`, `{{baseUrl}}`).
        target: `service <name>` or `mock <name>`, or None when it was kept as written.
        how: `asked` (the `hosts` argument), `by name`, `by port 8080`, `the only service`, or why
            it was not matched.
        requests: how many requests use it.
    """

    found: str
    target: str | None = None
    how: str
    requests: int = 0


class ImportedTests(Result, frozen=True, kw_only=True):
    """A test file converted from another tool's format, and what could not be converted.

    Attributes:
        path: the YAML test file written (or that would be written, with `dryRun`).
        format: the source format: `postman`, `http` or `hurl`.
        source: the file converted.
        cases: how many cases the test file has.
        not_converted: every part of the source the file does not carry, with its place.
        hosts: the hosts found and what each became.
        variables_needed: variables the file reads from the environment (`{{env.X}}`) because the
            source gave them no value (or gave a secret one).
        notes: conversions that are close but not exact (an exact body match became a partial one).
        suite_entry: the e2e.yaml `tests.suites` entry that runs the file.
        suite_entry_yaml: the same entry as YAML, to paste.
        text: the test file's YAML (always given with `dryRun`; otherwise only when short).
        written: whether the file was written (false with `dryRun`).
    """

    path: str
    format: ImportFormat
    source: str
    cases: int
    not_converted: list[NotConverted] = msgspec.field(default_factory=list)
    hosts: list[HostMatch] = msgspec.field(default_factory=list)
    variables_needed: list[str] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    suite_entry: dict[str, str] = msgspec.field(default_factory=dict)
    suite_entry_yaml: str = ""
    text: str | None = None
    written: bool = True
