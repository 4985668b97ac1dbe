"""Variables of a YAML suite: its `variables`, values saved by earlier steps, and the built-ins.

Names resolve in this order: values saved with `save` (also reachable as `runtime.X`), the suite's
`variables`, then `env.X`, `config.X` (service `vars`), `services.<name>.url|host|port`,
`mocks.<name>.url|port`, and the generators `uuid`, `timestamp` (epoch ms), `date`, `now`.
Values keep their JSON type when a template is a whole value; an unknown name is an error.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from preflight_sdk.core.templates import render

__all__ = ["Scope"]


class Scope:
    """The variables one suite's steps see."""

    def __init__(
        self, *, environ: dict[str, str], config_vars: dict[str, Any], environment: dict[str, Any]
    ) -> None:
        self.saved: dict[str, Any] = {}
        self.variables: dict[str, Any] = {}
        self.unsaved: dict[str, str] = {}
        self._builtins: dict[str, Any] = {
            "env": environ,
            "config": config_vars,
            **environment,
            "uuid": lambda: str(uuid.uuid4()),
            "timestamp": lambda: int(time.time() * 1000),
            "date": lambda: datetime.now(UTC).strftime("%Y-%m-%d"),
            "now": lambda: datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }

    def define(self, variables: dict[str, Any]) -> None:
        """Set the suite's `variables` (each may use the built-ins and the ones before it)."""
        for name, value in variables.items():
            self.variables[name] = self.render(value)

    def save(self, name: str, value: Any) -> None:
        """Keep a value for later steps (type kept)."""
        self.saved[name] = value
        self.unsaved.pop(name, None)

    def unsave(self, name: str, reason: str) -> None:
        """Record that `name` could not be saved (a later use fails with `reason`)."""
        self.saved.pop(name, None)
        self.unsaved[name] = reason

    def why_unknown(self, expression: str) -> str | None:
        """Return why a name in `expression` is undefined, when a `save` failed to provide it."""
        parts = expression.strip().split(".")
        name = parts[1] if parts[0] == "runtime" and len(parts) > 1 else parts[0]
        return self.unsaved.get(name)

    def mapping(self) -> dict[str, Any]:
        """Return the template scope."""
        runtime = {**self.variables, **self.saved}
        return {**self._builtins, **runtime, "runtime": runtime}

    def render(self, value: Any) -> Any:
        """Resolve every `{{…}}` in `value` (raises UnknownVariableError for an unknown name)."""
        return render(value, self.mapping())
