"""The YAML test-file format (the Preflight test grammar) as msgspec Structs.

A file has `name`, optional `variables`, `setup`, `cases`, `teardown`. Every step does exactly one
of `request`, `exec`, `file`, `process`, `port`, `browser` (setup may also `waitHealthy`, `waitForPort`, or
only `delay`), then checks its outcome with `expect` and keeps values with `save`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ._meta import Duration, Section
from .browser import BrowserStep, ElementExpect

__all__ = [
    "ExecStep",
    "Expect",
    "FileStep",
    "MockExpect",
    "OutputExpect",
    "PortStep",
    "ProcessStep",
    "RequestStep",
    "StepRetry",
    "TestFile",
    "TestStep",
    "WaitForPort",
    "WaitHealthy",
    "sent_variables",
]


class RequestStep(Section, frozen=True, kw_only=True):
    """An HTTP request, against a service's base URL (`path`) or an absolute `url`."""

    method: Annotated[str, Meta(description="HTTP method.")] = "GET"
    path: Annotated[str | None, Meta(description="Path appended to the service base URL.")] = None
    url: Annotated[str | None, Meta(description="Absolute URL (instead of `path`).")] = None
    service: Annotated[str | None, Meta(description="Which service's base URL (default: the first).")] = None
    headers: Annotated[dict[str, Any], Meta(description="Request headers.")] = field(default_factory=dict)
    query: Annotated[dict[str, Any], Meta(description="Query-string parameters.")] = field(
        default_factory=dict
    )
    json: Annotated[Any, Meta(description="A JSON body (sets Content-Type: application/json).")] = None
    body: Annotated[
        Any, Meta(description="A body: an object or list is sent as JSON, a string as it is (even on GET).")
    ] = None
    form: Annotated[
        dict[str, Any] | None, Meta(description="A form body (application/x-www-form-urlencoded).")
    ] = None
    timeout: Annotated[str | int, Duration("Request timeout (default 30s).")] = "30s"
    follow_redirects: Annotated[bool, Meta(description="Follow 3xx redirects.")] = False


class ExecStep(Section, frozen=True, kw_only=True):
    """A command run in a container (`docker exec`); `sh -c` is used for a string command."""

    command: Annotated[str | list[str], Meta(description="Command: a string (run by sh -c) or an argv list.")]
    container: Annotated[
        str | None, Meta(description="Service or container name (default: the first service).")
    ] = None
    timeout: Annotated[str | int, Duration("Deadline (default 15s).")] = "15s"


class FileStep(Section, frozen=True, kw_only=True):
    """Checks on a file inside a container."""

    path: Annotated[str, Meta(description="Absolute path in the container.")]
    container: Annotated[str | None, Meta(description="Service or container name.")] = None
    exists: Annotated[bool | None, Meta(description="Whether the file must exist.")] = None
    contains: Annotated[str | list[str] | None, Meta(description="Text the file must contain.")] = None
    not_contains: Annotated[str | list[str] | None, Meta(description="Text the file must not contain.")] = (
        None
    )
    matches: Annotated[str | None, Meta(description="Regular expression the content must match.")] = None
    json: Annotated[Any, Meta(description="Deep partial match on the file parsed as JSON.")] = None
    permissions: Annotated[str | None, Meta(description="Mode as `ls -l` shows it, e.g. `-rw-r--r--`.")] = (
        None
    )
    owner: Annotated[str | None, Meta(description="Owner user name.")] = None
    size: Annotated[str | int | None, Meta(description="Size in bytes, or `'> 0'` style.")] = None


class ProcessStep(Section, frozen=True, kw_only=True):
    """Checks on processes running inside a container."""

    name: Annotated[str, Meta(description="Text to find in the process command line.")]
    container: Annotated[str | None, Meta(description="Service or container name.")] = None
    running: Annotated[bool, Meta(description="Whether such a process must be running.")] = True
    count: Annotated[str | int | None, Meta(description="How many, e.g. `'>= 1'`.")] = None
    user: Annotated[str | None, Meta(description="User the process runs as.")] = None


class PortStep(Section, frozen=True, kw_only=True):
    """Checks that a TCP port listens (from the host, or inside a container)."""

    port: Annotated[int, Meta(ge=1, le=65535, description="Port number.")]
    host: Annotated[str, Meta(description="Host to connect to (host-side check).")] = "localhost"
    container: Annotated[str | None, Meta(description="Check inside this container instead.")] = None
    listening: Annotated[bool, Meta(description="Whether the port must accept connections.")] = True
    timeout: Annotated[str | int, Duration("How long to wait (default 5s).")] = "5s"


class WaitHealthy(Section, frozen=True, kw_only=True):
    """Wait until a service's configured health check passes."""

    timeout: Annotated[str | int, Duration("Deadline (default 60s).")] = "60s"
    service: Annotated[str | None, Meta(description="Service to wait for (default: all).")] = None


class WaitForPort(Section, frozen=True, kw_only=True):
    """Wait until a TCP port accepts connections."""

    port: Annotated[int, Meta(ge=1, le=65535, description="Port number.")]
    host: Annotated[str, Meta(description="Host.")] = "localhost"
    timeout: Annotated[str | int, Duration("Deadline (default 60s).")] = "60s"


class OutputExpect(Section, frozen=True, kw_only=True):
    """Expectations on a command's output (exec steps)."""

    contains: Annotated[str | list[str] | None, Meta(description="Text the output must contain.")] = None
    not_contains: Annotated[str | list[str] | None, Meta(description="Text the output must not contain.")] = (
        None
    )
    matches: Annotated[str | None, Meta(description="Regular expression the output must match.")] = None
    json: Annotated[Any, Meta(description="Deep partial match on the output parsed as JSON.")] = None
    length: Annotated[str | int | None, Meta(description="Line count, e.g. `'> 2'` or 3.")] = None


class MockExpect(Section, frozen=True, kw_only=True):
    """An assertion on the traffic a mock received during the case (or the whole run)."""

    name: Annotated[str, Meta(description="Mock name.")]
    method: Annotated[str | None, Meta(description="Only requests with this method.")] = None
    path: Annotated[
        str | None, Meta(description="Only requests to this path (`:param` and `*` allowed).")
    ] = None
    count: Annotated[str | int | None, Meta(description="How many matching requests: 2, or `'>= 1'`.")] = None
    body: Annotated[
        Any, Meta(description="Deep partial match that the last matching request's body must meet.")
    ] = None
    headers: Annotated[
        dict[str, Any], Meta(description="Header conditions on the last matching request.")
    ] = field(default_factory=dict)
    since: Annotated[
        Literal["case", "suite", "run"],
        Meta(description="Window of requests considered (default: this case)."),
    ] = "case"
    contract: Annotated[
        bool | None,
        Meta(description="`true`: every matching request must conform to the mock's contract."),
    ] = None


class Expect(Section, frozen=True, kw_only=True):
    """Expectations on a step's outcome. Every listed check must hold."""

    status: Annotated[int | list[int] | None, Meta(description="Status, or a list of allowed statuses.")] = (
        None
    )
    headers: Annotated[dict[str, Any], Meta(description="Header checks (names case-insensitive).")] = field(
        default_factory=dict
    )
    body: Annotated[Any, Meta(description="Deep partial match on the body, with assertion operators.")] = None
    expr: Annotated[
        str | list[str] | None, Meta(description="Expressions, e.g. `body.items.length > 0`.")
    ] = None
    all_of: Annotated[list[Any] | None, Meta(description="Body expectations that must all hold.")] = field(
        default=None, name="all"
    )
    any_of: Annotated[list[Any] | None, Meta(description="Body expectations of which one must hold.")] = (
        field(default=None, name="any")
    )
    response_time: Annotated[
        int | dict[str, int] | None, Meta(description="Max milliseconds, or `{lt, lte, gt, gte}`.")
    ] = None
    json_schema: Annotated[dict[str, Any] | None, Meta(description="JSON Schema the body must satisfy.")] = (
        None
    )
    exit_code: Annotated[int | None, Meta(description="Exit status (exec steps).")] = None
    output: Annotated[OutputExpect | None, Meta(description="Output checks (exec steps).")] = None
    mock: Annotated[MockExpect | list[MockExpect] | None, Meta(description="Checks on mock traffic.")] = None
    # What a browser step checks on its page (config/browser.py); each waits up to `expectTimeout`.
    text: Annotated[
        str | list[str] | None, Meta(description="Browser: text visible on the page (each of a list).")
    ] = None
    title: Annotated[Any, Meta(description="Browser: the page title (a string, or operators).")] = None
    url: Annotated[
        Any, Meta(description="Browser: the page URL; a string starting with `/` is its path (and query).")
    ] = None
    elements: Annotated[
        dict[str, ElementExpect], Meta(description="Browser: checks per selector (count, text, attributes…).")
    ] = field(default_factory=dict)
    console_errors: Annotated[
        int | str | None, Meta(description="Browser: how many console errors the page may log: 0, `'<= 2'`.")
    ] = None


class StepRetry(Section, frozen=True, kw_only=True):
    """Either a retry policy (`maxAttempts`, `delay`, `backoff`) or a poll (`until`, `failIf`, `deadline`).

    A poll repeats the step every `interval` until `until` holds, stops at once when `failIf`
    holds, and fails when `deadline` passes.
    """

    max_attempts: Annotated[int, Meta(ge=1, le=10, description="Total attempts (policy form).")] | None = None
    delay: Annotated[str | int, Duration("Wait before the second attempt.")] | None = None
    backoff: Annotated[
        Literal["fixed", "linear", "exponential"] | None, Meta(description="Backoff kind.")
    ] = None
    backoff_multiplier: Annotated[float, Meta(gt=0, description="Exponential factor.")] | None = None
    until: Annotated[Expect | None, Meta(description="Success condition (poll form).")] = None
    fail_if: Annotated[Expect | None, Meta(description="Terminal failure condition (poll form).")] = None
    interval: Annotated[str | int, Duration("Wait between polls (default 500ms).")] | None = None
    deadline: Annotated[str | int, Duration("Give up after (default 30s).")] | None = None


class TestStep(Section, frozen=True, kw_only=True):
    """A step: exactly one action, then `expect` and `save`.

    In `setup`, a step may instead be `waitHealthy`, `waitForPort` or a bare `delay`.
    """

    name: Annotated[str | None, Meta(description="Case name (required for cases).")] = None
    description: Annotated[str | None, Meta(description="Free text.")] = None
    request: Annotated[RequestStep | None, Meta(description="An HTTP request.")] = None
    exec: Annotated[ExecStep | None, Meta(description="A command in a container.")] = None
    file: Annotated[FileStep | None, Meta(description="Checks on a file in a container.")] = None
    process: Annotated[ProcessStep | None, Meta(description="Checks on processes in a container.")] = None
    port: Annotated[PortStep | None, Meta(description="Checks on a listening port.")] = None
    browser: Annotated[BrowserStep | None, Meta(description="A page opened in Chromium and acted on.")] = None
    wait_healthy: Annotated[WaitHealthy | bool | None, Meta(description="Setup: wait for health.")] = None
    wait_for_port: Annotated[WaitForPort | None, Meta(description="Setup: wait for a port.")] = None
    expect: Annotated[Expect | None, Meta(description="What must hold afterwards.")] = None
    save: Annotated[
        dict[str, str], Meta(description="Variables to keep: `body.path`, `headers.name`, `status`.")
    ] = field(default_factory=dict)
    delay: Annotated[str | int, Duration("Wait before the step.")] | None = None
    retry: Annotated[StepRetry | None, Meta(description="Retry policy or poll.")] = None
    ignore_error: Annotated[bool, Meta(description="A failure counts as a pass (logged).")] = False
    skip: Annotated[bool | str, Meta(description="Skip this case (a string gives the reason).")] = False
    contract: Annotated[
        bool,
        Meta(description="`false`: do not check this step's answer against its service's contract."),
    ] = True


class TestFile(Section, frozen=True, kw_only=True):
    """A YAML test file: variables, setup, cases and teardown."""

    name: Annotated[str, Meta(description="Suite display name.")]
    description: Annotated[str | None, Meta(description="Free text.")] = None
    sequential: Annotated[
        bool, Meta(description="Fail fast: after a failure, the remaining cases are skipped.")
    ] = False
    variables: Annotated[dict[str, Any], Meta(description="Variables for `{{name}}` (types kept).")] = field(
        default_factory=dict
    )
    setup: Annotated[
        list[TestStep], Meta(description="Steps before the cases; a failure skips them all.")
    ] = field(default_factory=list)
    cases: Annotated[list[TestStep], Meta(description="The test cases.")]
    teardown: Annotated[list[TestStep], Meta(description="Steps after the cases; always run.")] = field(
        default_factory=list
    )
    service: Annotated[str | None, Meta(description="Default service for requests and exec.")] = None


# -- the secret values the suites send ---------------------------------------------------------
# A suite that sends `Authorization: Bearer sk_…` or `{card: {token: tok_…}}` hands a service a
# credential, which the service may pass on under another name (`source: tok_…`) to a mock, into a
# log line, or to a recording. The loader makes those values part of the redaction policy, so they
# are masked by value wherever they appear (a recorded route file included).


def sent_variables(test_files: Iterable[TestFile]) -> list[Mapping[str, Any]]:
    """Name/value pairs the suites set or send (variables, request headers, query, form and JSON
    leaves at any depth), for `secret_values` to keep those with secret names. Templates are left
    out: they are filled in from elsewhere."""
    found: list[Mapping[str, Any]] = []
    for test in test_files:
        found.append(_plain(test.variables))
        for step in (*test.setup, *test.cases, *test.teardown):
            found += _step(step)
    return found


def _step(step: TestStep) -> list[Mapping[str, Any]]:
    request = step.request
    if request is None:
        return []
    leaves: list[Mapping[str, Any]] = []
    _leaves(request.json, leaves, 0)
    return [_plain(request.headers), _plain(request.query), _plain(request.form or {}), *leaves]


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if isinstance(v, str | int) and "{{" not in str(v)}


def _leaves(value: Any, out: list[Mapping[str, Any]], depth: int) -> None:
    if depth > 32:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str | int) and not isinstance(item, bool) and "{{" not in str(item):
                out.append({str(key): item})
            else:
                _leaves(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out, depth + 1)
