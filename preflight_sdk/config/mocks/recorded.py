"""Recorded routes: the files beside e2e.yaml that `run --record` writes and every run loads.

A mock's recorded routes live in `<stem>.recorded/<mock>.yaml` beside the configuration file
(`e2e.recorded/payments.yaml` for `e2e.yaml`), written in e2e.yaml's own route grammar, each route
with a `recorded:` note (when, one request it answered). Bodies too large to read inline are
files in `<stem>.recorded/<mock>/`, named by the route's `bodyFile`.

Loading appends a mock's recorded routes after its hand-written ones: routes are tried in order,
so a route written in e2e.yaml always wins over a recorded one for the same request. Every
`bodyFile` (in e2e.yaml or in a route file) is resolved here to an absolute path, relative to the
file that declares it, and checked to exist; the route files and body files are sources of the
configuration, so editing one (or recording again) reloads it like an edit of e2e.yaml.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
from msgspec import Meta

from preflight_sdk.core import decoding
from preflight_sdk.core.errors import ConfigError, ConfigProblem
from preflight_sdk.core.yaml_source import PathKey, parse_yaml

from ..model import MockConfig, MockResponse, MockRoute, ProjectConfig, _Config
from ..validate import Validator

__all__ = [
    "MAX_BODY_FILE_BYTES",
    "RouteFile",
    "attach_recorded",
    "check_no_route_file_problems",
    "read_route_file",
    "recorded_folder",
    "route_file_path",
]

MAX_BODY_FILE_BYTES = 32 * 1024 * 1024
"""The largest `bodyFile` a route may name (a larger one is a configuration problem)."""
_MAX_ROUTE_FILE_BYTES = 64 * 1024 * 1024


class RouteFile(_Config, frozen=True, kw_only=True):
    """A mock's recorded routes, as `run --record` writes them."""

    mock: Annotated[str, Meta(description="The mock these routes belong to.")]
    upstream: Annotated[str | None, Meta(description="The real service the routes were recorded from.")] = (
        None
    )
    routes: Annotated[list[MockRoute], Meta(description="The recorded routes, tried after e2e.yaml's.")] = (
        msgspec.field(default_factory=list)
    )


def recorded_folder(config_path: str | Path) -> Path:
    """The folder of recorded routes beside a configuration file: `e2e.yaml` → `e2e.recorded/`."""
    path = Path(config_path)
    return path.parent / f"{path.stem}.recorded"


def route_file_path(config_path: str | Path, mock: str) -> Path:
    """The route file of `mock` beside the configuration file `config_path`."""
    return recorded_folder(config_path) / f"{mock}.yaml"


def read_route_file(path: str | Path) -> tuple[RouteFile | None, list[ConfigProblem]]:
    """Read and validate one route file: (None, []) when there is none; problems carry its lines."""
    target = Path(path)
    file = str(target)
    try:
        if not target.is_file():
            return None, []
        if target.stat().st_size > _MAX_ROUTE_FILE_BYTES:
            limit = f"the file is over {_MAX_ROUTE_FILE_BYTES // (1024 * 1024)} MiB"
            return None, [ConfigProblem(path="$", message=limit, file=file)]
        text = target.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        return None, [ConfigProblem(path="$", message=f"cannot read the route file: {reason}", file=file)]
    source = parse_yaml(text, file=file)
    if source.problems:
        return None, list(source.problems)
    if source.data is None:
        return None, []  # an emptied file: no recorded routes
    validator = Validator(source, file=file)
    validator.check(source.data, RouteFile)
    if validator.problems:
        return None, validator.problems
    try:
        routes = decoding.convert(source.data, RouteFile)
    except msgspec.ValidationError as exc:
        return None, [ConfigProblem(path="$", message=str(exc), file=file)]
    problems = _body_files(routes.routes, target.parent, validator, ("routes",))
    return (None, problems) if problems else (_resolved(routes, target.parent), [])


def attach_recorded(
    config: ProjectConfig, config_path: str | Path, out: Validator
) -> tuple[ProjectConfig, list[str]]:
    """Resolve the `bodyFile`s of e2e.yaml's routes and append each mock's recorded routes.

    Problems (a missing body file, an invalid route file) are added to `out` (those of a route
    file carry its path and lines). Returns the configuration and the files read besides it.
    """
    if not config.mocks:
        return config, []
    root = Path(config_path).parent
    sources: list[str] = []
    mocks: dict[str, MockConfig] = {}
    for name, mock in config.mocks.items():
        out.problems.extend(_body_files(mock.routes, root, out, ("mocks", name, "routes")))
        routes = [_with_files(route, root) for route in mock.routes]
        path = route_file_path(config_path, name)
        recorded, problems = read_route_file(path)
        out.problems.extend(problems)
        sources.append(str(path))  # also when missing: the first recording must reload the config
        if recorded is not None:
            if recorded.mock != name:
                out.problems.append(
                    ConfigProblem(
                        path="$.mock",
                        message=f"this file holds routes of mock `{recorded.mock}`, not `{name}`",
                        file=str(path),
                    )
                )
            routes += recorded.routes
            sources += sorted({a.body_file for r in recorded.routes for a in _answers(r) if a.body_file})
        sources += sorted(
            {a.body_file for r in routes[: len(mock.routes)] for a in _answers(r) if a.body_file}
        )
        mocks[name] = msgspec.structs.replace(mock, routes=routes)
    return msgspec.structs.replace(config, mocks=mocks), sources


def _answers(route: MockRoute) -> list[MockResponse]:
    return list(route.sequence or ([route.response] if route.response is not None else []))


def _body_files(routes: list[MockRoute], root: Path, out: Validator, where: PathKey) -> list[ConfigProblem]:
    """A problem for every `bodyFile` that is missing, a folder, too large, or beside a `body`."""
    problems: list[ConfigProblem] = []
    for index, route in enumerate(routes):
        steps: list[tuple[PathKey, MockResponse]] = (
            [((*where, index, "sequence", i), a) for i, a in enumerate(route.sequence)]
            if route.sequence
            else [((*where, index, "response"), route.response)]
            if route.response is not None
            else []
        )
        for at, answer in steps:
            if answer.body_file is None:
                continue
            key: PathKey = (*at, "bodyFile")
            target = _resolve(root, answer.body_file)
            problem: str | None = None
            if answer.body is not None:
                problem = "give either `body` or `bodyFile`, not both"
            elif target.is_dir():
                problem = f"`{answer.body_file}` is a folder, not a file"
            elif not target.is_file():
                problem = f"body file `{answer.body_file}` does not exist (looked for {target})"
            elif target.stat().st_size > MAX_BODY_FILE_BYTES:
                problem = f"body file `{answer.body_file}` is over {MAX_BODY_FILE_BYTES // (1024 * 1024)} MiB"
            if problem is not None:
                problems.append(out.source.problem(key, problem, file=out.file))
    return problems


def _resolve(root: Path, relative: str) -> Path:
    candidate = Path(relative).expanduser()
    return candidate if candidate.is_absolute() else root / candidate


def _with_files(route: MockRoute, root: Path) -> MockRoute:
    """`route` with each `bodyFile` as an absolute path."""
    answers = _answers(route)
    if not any(a.body_file for a in answers):
        return route

    def absolute(answer: MockResponse) -> MockResponse:
        if answer.body_file is None:
            return answer
        return msgspec.structs.replace(answer, body_file=str(_resolve(root, answer.body_file)))

    if route.sequence:
        return msgspec.structs.replace(route, sequence=[absolute(a) for a in route.sequence])
    assert route.response is not None
    return msgspec.structs.replace(route, response=absolute(route.response))


def _resolved(routes: RouteFile, root: Path) -> RouteFile:
    return msgspec.structs.replace(routes, routes=[_with_files(r, root) for r in routes.routes])


def check_no_route_file_problems(problems: list[ConfigProblem], file: str) -> None:
    """Raise `CONFIG_INVALID` for `problems` of the route file `file` (used by the recorder)."""
    if problems:
        first = problems[0].render()
        raise ConfigError(
            f"route file {file} is invalid: {len(problems)} problem(s); first: {first}",
            hint="fix the file or delete it, then record again",
            problems=problems,
        )
