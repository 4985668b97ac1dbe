"""A mock's routes compiled from `MockConfig`, and the per-route state that scenarios need.

Route state is a list of hit counts, one per route. `counter`, `times` and the position in a
`sequence` all derive from it, so a reset is a single swap of that list (atomic for readers on
other threads), and the hot path takes no lock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from preflight_sdk.config.model import MockConfig, MockResponse, MockRoute
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import ConfigError, ConfigProblem, PreflightError

from .matching import ANY_METHODS, Conditions, PathPattern, method_matches
from .request import RequestView
from .responses import CompiledResponse

__all__ = ["CompiledMock", "CompiledRoute", "compile_all", "compile_mock", "recording_config"]


class CompiledRoute:
    """One route, ready to match: method, path pattern, conditions, answers and limits."""

    __slots__ = (
        "conditions",
        "index",
        "label",
        "loop",
        "method",
        "name",
        "pattern",
        "recorded_at",
        "responses",
        "times",
    )

    def __init__(self, index: int, route: MockRoute) -> None:
        self.index = index
        self.name = route.name
        method = route.method.strip().upper()
        self.method: str | None = None if method in ANY_METHODS else method
        self.pattern = PathPattern(route.path)
        when = route.when
        self.conditions: Conditions | None = None
        if when is not None and (when.query or when.headers or when.body is not None):
            self.conditions = Conditions(when.query, when.headers, when.body)
        answers = route.sequence if route.sequence else [route.response or MockResponse()]
        self.responses = tuple(CompiledResponse(answer) for answer in answers)
        self.loop = route.loop
        self.times = route.times
        self.label = route.name or f"{self.method or 'ANY'} {route.path}"
        self.recorded_at = route.recorded.at if route.recorded is not None else None

    def answer(self, hit: int) -> CompiledResponse:
        """Return the answer for the `hit`-th match (1-based): the sequence position, or the only one."""
        responses = self.responses
        if len(responses) == 1:
            return responses[0]
        position = hit - 1
        return (
            responses[position % len(responses)]
            if self.loop
            else responses[min(position, len(responses) - 1)]
        )

    def step(self, hit: int) -> int | None:
        """The 0-based position in `sequence` that answers the `hit`-th match (None without one)."""
        count = len(self.responses)
        if count == 1:
            return None
        position = hit - 1
        return position % count if self.loop else min(position, count - 1)

    def describe(self, hits: int) -> dict[str, Any]:
        """Return the route as `GET /_mock/routes` shows it."""
        info: dict[str, Any] = {
            "index": self.index,
            "method": self.method or "ANY",
            "path": self.pattern.text,
        }
        if self.name:
            info["name"] = self.name
        if self.conditions is not None:
            when: dict[str, Any] = {}
            if self.conditions.query:
                when["query"] = {key: value for key, value, _ in self.conditions.query}
            if self.conditions.headers:
                when["headers"] = {key: value for key, value, _ in self.conditions.headers}
            if self.conditions.has_body:
                when["body"] = self.conditions.body
            info["when"] = when
        if len(self.responses) > 1:
            info["sequence"] = [r.status for r in self.responses]
            info["loop"] = self.loop
        else:
            info["status"] = self.responses[0].status
        if self.times is not None:
            info["times"] = self.times
        if self.recorded_at is not None:
            info["recorded"] = self.recorded_at
        info["hits"] = hits
        return info


class CompiledMock:
    """All routes of one mock, in file order, with its mock-level proxy and journal size."""

    __slots__ = ("header_timeout", "journal_limit", "max_body", "name", "port", "proxy", "routes")

    def __init__(self, name: str, config: MockConfig, routes: list[CompiledRoute]) -> None:
        self.name = name
        self.port = config.port
        self.proxy = config.proxy.rstrip("/") if config.proxy else None
        self.journal_limit = config.journal_limit
        self.max_body = config.max_body_bytes
        self.header_timeout = parse_duration(config.header_timeout, field=f"mocks.{name}.headerTimeout")
        self.routes = tuple(routes)

    def match(self, request: RequestView, hits: list[int]) -> tuple[CompiledRoute, dict[str, str]] | None:
        """Return the first route (in file order) that answers `request`, with its path parameters."""
        method = request.method
        segments = request.segments
        for route in self.routes:
            if not method_matches(route.method, method):
                continue
            params = route.pattern.match(segments)
            if params is None:
                continue
            if route.times is not None and hits[route.index] >= route.times:
                continue
            if route.conditions is not None and not route.conditions.passes(request):
                continue
            return route, params
        return None


def compile_mock(name: str, config: MockConfig) -> CompiledMock:
    """Compile a mock's routes, reporting every bad route at once.

    Raises:
        ConfigError: `CONFIG_INVALID` with one problem per bad route (path `$.mocks.<name>.routes[i]`).
    """
    problems: list[ConfigProblem] = []
    routes: list[CompiledRoute] = []
    for index, route in enumerate(config.routes):
        where = f"$.mocks.{name}.routes[{index}]"
        if route.response is not None and route.sequence:
            problems.append(
                ConfigProblem(path=where, message="give either `response` or `sequence`, not both")
            )
            continue
        if not route.path.startswith("/"):
            problems.append(
                ConfigProblem(path=f"{where}.path", message=f"`{route.path}` must start with `/`")
            )
            continue
        try:
            routes.append(CompiledRoute(index, route))
        except PreflightError as exc:
            problems.append(ConfigProblem(path=where, message=exc.message))
    if problems:
        raise ConfigError(
            f"mock `{name}` has {len(problems)} invalid route(s)",
            hint="fix the routes listed in details.problems",
            problems=problems,
        )
    return CompiledMock(name, config, routes)


def compile_all(mocks: Mapping[str, MockConfig]) -> dict[str, CompiledMock]:
    """Compile every mock (see `compile_mock`)."""
    return {name: compile_mock(name, config) for name, config in mocks.items()}


def recording_config(config: MockConfig, upstream: str) -> MockConfig:
    """What a mock serves while it records: its hand-written routes, everything else sent to `upstream`."""
    hand_written = [route for route in config.routes if route.recorded is None]
    return msgspec.structs.replace(config, routes=hand_written, proxy=upstream)
