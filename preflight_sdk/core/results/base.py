"""The base of every result Struct: camelCase on the wire, frozen, and displayable in Jupyter."""

from __future__ import annotations

from typing import Any

import msgspec

from preflight_sdk.core import face_hooks

__all__ = ["Part", "Result"]


class Result(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A value a `Project` method returns.

    Renders inline in Jupyter (static HTML plus text, so saved notebooks show it without a kernel),
    and converts to the JSON that the CLI prints and the MCP tools return.
    """

    @property
    def ok(self) -> bool:
        """Whether the verdict is a pass (a run with failed tests, a verify with findings is not).

        The CLI exit code follows it (1 when false). The envelope's `success` does not: the
        operation did its job, and the verdict is in the result itself.
        """
        return True

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form (camelCase keys) as builtins."""
        data = msgspec.to_builtins(self)
        assert isinstance(data, dict)
        return data

    def to_json(self, *, indent: int = 0) -> str:
        """Return the JSON form as text."""
        raw = msgspec.json.encode(self)
        return msgspec.json.format(raw, indent=indent).decode() if indent else raw.decode()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # IPython's display protocol; the notebook face renders (see core/face_hooks.py).
        render = face_hooks.renderer()
        if render is None:
            return {"text/plain": f"{type(self).__name__} {self.to_json(indent=2)}"}
        return render(self)


class Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A piece of a result (a service, a case, a finding): camelCase on the wire, frozen."""
