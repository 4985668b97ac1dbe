"""What `verify` may start when a model asks for it over MCP.

`verify` starts a program. On the command line a person typed that program; over MCP a model chose
it, and a host may run the call without asking. So the MCP face lets `verify` start only servers the
project declares: the `mcp:` block of its e2e.yaml (itself inside the project), a manifest inside
the project, or preflight's own server (`self_check`). An arbitrary `command` needs the launcher
flag `--allow-verify-command`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from preflight_sdk.core.errors import InputError

__all__ = ["ALLOW_FLAG", "check_verify_source"]

ALLOW_FLAG = "--allow-verify-command"


def check_verify_source(
    kwargs: dict[str, Any], *, project: str, config_file: str | None, allow_command: bool
) -> None:
    """Refuse a `verify` call that would start a server the project does not declare.

    Raises:
        InputError: `INVALID_INPUT`, saying how to allow it.
    """
    if allow_command:
        return
    if kwargs.get("command") is not None:
        raise InputError(
            "over MCP, verify starts only the MCP servers the project declares, not a command "
            "given as an argument",
            hint=f"declare the server in the e2e.yaml `mcp:` block (or a manifest inside the project), "
            f"or start preflight-mcp with {ALLOW_FLAG} to let tools start any command",
            details={"field": "command"},
        )
    root = _directory(project)
    for field, value in (("manifest", kwargs.get("manifest")), ("configFile", config_file)):
        if value is None:
            continue
        target = (root / os.path.expanduser(str(value))).resolve()
        if not target.is_relative_to(root):
            raise InputError(
                f"{field} {str(value)!r} is outside the project directory {str(root)!r}: over MCP, "
                "verify starts only servers the project declares",
                hint=f"move the file inside the project, or start preflight-mcp with {ALLOW_FLAG}",
                details={"field": field},
            )


def _directory(project: str) -> Path:
    path = Path(project).resolve()
    return path if path.is_dir() or not path.exists() else path.parent
