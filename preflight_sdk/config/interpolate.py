"""Load-time `{{…}}` templates of e2e.yaml: `env.X`, `config.X`, `uuid`, `timestamp`, `date`.

`{{mocks.<name>.url|port|host}}` in a service's container `environment` or `command` is checked
here but rendered by setup, once the mock listens (its port may be chosen then: `port: 0`).

They are rendered once, when the file is loaded, everywhere but in mock responses. A mock response
is a per-request template (`{{uuid}}` must differ per request, `{{request.params.id}}` only exists
then), so there only `{{env.X}}` and `{{config.X}}`, which cannot change between requests, are
rendered now; everything else is left for the mock server. An unknown name is a problem at the
template's line, never a literal left in place.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from preflight_sdk.core.errors import ConfigProblem
from preflight_sdk.core.templates import TEMPLATE, UnknownVariableError, lookup
from preflight_sdk.core.yaml_source import ParsedYaml, PathKey

from .validate import did_you_mean

__all__ = ["LOAD_TIME_ROOTS", "interpolate", "is_container_setting", "is_mock_response"]

LOAD_TIME_ROOTS = ("env.", "config.")
"""Template roots that a mock response resolves at load time too (they never vary per request)."""


def is_mock_response(path: PathKey) -> bool:
    """Tell whether `path` lies in a mock route's `response` or `sequence`."""
    return (
        len(path) >= 5 and path[0] == "mocks" and path[2] == "routes" and path[4] in ("response", "sequence")
    )


def interpolate(
    source: ParsedYaml, environ: Mapping[str, str], file: str
) -> tuple[dict[str, Any], list[ConfigProblem], set[PathKey]]:
    """Render the load-time templates of a parsed e2e.yaml.

    Returns:
        The rendered data, the problems (unknown names, each at its line), and the paths whose
        value came out of a template (the validator lets such text stand for a number there).
    """
    data = source.data
    assert isinstance(data, dict)
    problems: list[ConfigProblem] = []
    templated: set[PathKey] = set()
    config_vars = _config_vars(data, environ)
    now = time.time()
    scope: dict[str, Any] = {
        "env": dict(environ),
        "config": config_vars,
        "timestamp": str(int(now * 1000)),
        "uuid": lambda: str(uuid.uuid4()),
        "date": datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d"),
    }

    def substitute(match: Any, path: PathKey, static_only: bool) -> str:
        expression = str(match.group(1))
        if static_only and not expression.startswith(LOAD_TIME_ROOTS):
            return str(match.group(0))
        if expression.startswith("mocks.") and is_container_setting(path):
            problem = _mock_reference(expression, data)
            if problem is None:
                return str(match.group(0))  # rendered by setup, once the mock's port is known
            problems.append(source.problem(path, problem, file=file))
            return str(match.group(0))
        try:
            return _text(lookup(scope, expression))
        except UnknownVariableError as exc:
            problems.append(
                source.problem(
                    path,
                    _unknown_message(exc.name),
                    file=file,
                    suggestion=_suggest_variable(exc.name, config_vars),
                )
            )
            return str(match.group(0))

    def render(value: Any, path: PathKey, static_only: bool) -> Any:
        static_only = static_only or is_mock_response(path)
        if isinstance(value, dict):
            return {k: render(v, (*path, k), static_only) for k, v in value.items()}
        if isinstance(value, list):
            return [render(v, (*path, i), static_only) for i, v in enumerate(value)]
        if not isinstance(value, str) or "{{" not in value:
            return value
        before = len(problems)
        rendered = TEMPLATE.sub(lambda m: substitute(m, path, static_only), value)
        if len(problems) > before:
            return value
        if rendered != value:
            # Rendered text stays text; the validator lets it stand for a number or a boolean where
            # the field wants one (`port: "{{env.PORT}}"`), and only there (a tag "123" stays text).
            templated.add(path)
        return rendered

    return render(data, (), False), problems, templated


def is_container_setting(path: PathKey) -> bool:
    """Tell whether `path` is a service's container environment or command (setup-time templates)."""
    try:
        index = path.index("container")
    except ValueError:
        return False
    return (
        path[0] in ("service", "services")
        and len(path) > index + 1
        and path[index + 1] in ("environment", "command")
    )


def _mock_reference(expression: str, data: dict[str, Any]) -> str | None:
    parts = expression.split(".")
    mocks = data.get("mocks") if isinstance(data.get("mocks"), dict) else {}
    assert isinstance(mocks, dict)
    if len(parts) != 3 or parts[1] not in mocks or parts[2] not in ("url", "port", "host"):
        known = ", ".join(f"mocks.{name}.url" for name in mocks) or "(no mocks are declared)"
        return f"`{{{{{expression}}}}}` is not a mock address; use mocks.<name>.url, .port or .host ({known})"
    return None


def _config_vars(data: dict[str, Any], environ: Mapping[str, str]) -> dict[str, Any]:
    """Return the `vars` of every service, merged in file order, with their `{{env.X}}` rendered."""
    merged: dict[str, Any] = {}
    service = data.get("service")
    if isinstance(service, dict) and isinstance(service.get("vars"), dict):
        merged.update(service["vars"])
    services = data.get("services")
    bodies = (
        services.values() if isinstance(services, dict) else services if isinstance(services, list) else []
    )
    for body in bodies:
        if isinstance(body, dict) and isinstance(body.get("vars"), dict):
            merged.update(body["vars"])
    env_scope = {"env": dict(environ)}
    for key, raw in list(merged.items()):
        if isinstance(raw, str) and "{{" in raw:
            try:
                merged[key] = TEMPLATE.sub(lambda m: _text(lookup(env_scope, m.group(1))), raw)
            except UnknownVariableError:
                pass  # reported where the `vars` entry itself is rendered
    return merged


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _suggest_variable(name: str, config_vars: Mapping[str, Any]) -> str | None:
    # Only `vars` names are suggested: environment names are too many, and not the file's to fix.
    if not name.startswith("config."):
        return None
    guess = did_you_mean(name.removeprefix("config."), [str(key) for key in config_vars])
    return f"config.{guess}" if guess else None


def _unknown_message(name: str) -> str:
    if name.startswith("env."):
        return f"`{{{{{name}}}}}`: environment variable {name[4:]} is not set (nor in .env beside the file)"
    if name.startswith("config."):
        return f"`{{{{{name}}}}}`: no `vars` entry named {name[7:]}"
    return f"unknown variable `{{{{{name}}}}}` (known at load: env.*, config.*, uuid, timestamp, date)"
