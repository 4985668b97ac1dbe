"""An operation's example, read once from its docstring and shown by each face in its own terms.

The `Example:` section of a `Project` method is one Python call of that method, e.g.
`await project.logs("api", lines=50, since="5m")` (or `Project.open("path").init()`, which also
names the project). That is what a notebook user types; an agent over MCP can only pass tool
arguments, so the MCP face shows `{"container": "api", "lines": 50, "since": "5m"}`, and the CLI
a command line. Arguments must be literals; `lint` reports an example that does not parse.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from preflight_sdk.core.errors import InputError

from .registry import Operation

__all__ = ["example_arguments", "mcp_example", "shown_arguments"]

PROJECT_PATH = "project_path"


def example_arguments(op: Operation) -> dict[str, Any] | None:
    """The example's arguments by Python name, in call order (`project_path` first when named).

    None when the docstring has no example.

    Raises:
        InputError: the example is not one literal call of this operation.
    """
    text = op.doc.example.strip().strip("`").strip()
    if not text:
        return None
    call = _call_of(text, op.name)
    names = [p.name for p in op.parameters]
    found: dict[str, Any] = {}
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(receiver, ast.Call) and receiver.args:  # Project.open("path").init()
        found[PROJECT_PATH] = _literal(receiver.args[0], op.name)
    if len(call.args) > len(names):
        raise _bad(op.name, "more positional arguments than the operation has parameters")
    for name, node in zip(names, call.args, strict=False):
        found[name] = _literal(node, op.name)
    for keyword in call.keywords:
        if keyword.arg is None or keyword.arg not in names:
            raise _bad(op.name, f"`{keyword.arg}` is not a parameter")
        found[keyword.arg] = _literal(keyword.value, op.name)
    return found


def shown_arguments(op: Operation) -> dict[str, Any] | None:
    """`example_arguments`, or None when the example does not parse (`lint` reports it)."""
    try:
        return example_arguments(op)
    except InputError:
        return None


def mcp_example(op: Operation) -> str | None:
    """The example as MCP tool arguments (camelCase JSON), or None when there is none."""
    arguments = shown_arguments(op)
    if not arguments:  # `{}` teaches nothing
        return None
    wire = {PROJECT_PATH: "projectPath"} | {p.name: p.wire_name for p in op.parameters}
    return json.dumps({wire[name]: value for name, value in arguments.items()}, ensure_ascii=False)


def _call_of(text: str, name: str) -> ast.Call:
    try:
        tree = ast.parse(text.removeprefix("await ").strip(), mode="eval")
    except SyntaxError as exc:
        raise _bad(name, f"not Python ({exc.msg})") from exc
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == name):
        raise _bad(name, f"not a call of `.{name}(...)`")
    return call


def _literal(node: ast.expr, name: str) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError as exc:
        raise _bad(name, f"`{ast.unparse(node)}` is not a literal") from exc


def _bad(name: str, why: str) -> InputError:
    return InputError(
        f"the Example of `{name}` cannot be shown as arguments: {why}",
        hint='write it as one call of the method with literal arguments, e.g. `await project.run(filter="x")`',
    )
