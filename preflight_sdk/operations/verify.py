"""The operation of the tool group `verify`: an MCP server checked against what it promises."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio

from preflight_sdk.config import McpConfig
from preflight_sdk.core import face_hooks
from preflight_sdk.core.errors import ConfigError, InputError
from preflight_sdk.core.operations import operation
from preflight_sdk.verify.result import VerifyResult

from .base import Operations

__all__ = ["VerifyOperations"]


def _directory_of(path: str) -> Path:
    base = Path(path).expanduser().resolve()
    return base if base.is_dir() else base.parent


def _self_check_target(root: str) -> tuple[list[str], list[Any]]:
    """The server and tools of a self-check, from the MCP face that generates them (see face_hooks)."""
    hook = face_hooks.self_check()
    if hook is None:
        raise InputError(
            "self_check needs preflight's MCP face, which is not installed",
            hint="reinstall preflight-sdk (pip install -e .): its entry points name the faces",
        )
    return hook(root)


class VerifyOperations(Operations):
    """Verifying MCP servers (tool group `verify`)."""

    @operation(title="Verify an MCP server", open_world=True, group="verify")
    async def verify(
        self,
        command: str | None = None,
        manifest: str | None = None,
        timeout: str = "10s",
        call_readonly: bool = False,
        strict: bool = False,
        mcp_only: bool = False,
        self_check: bool = False,
        call_timeout: str = "30s",
        call_open_world: bool = False,
    ) -> VerifyResult:
        """Check an MCP server against what it promises: start it over stdio, list its tools, compare.

        Starts the server (e2e.yaml's `mcp:` block unless `command` or `manifest` is given), lists
        every page of tools with the official MCP client, and reports each declared tool as found
        or missing and each undeclared one as extra. Each tool definition is checked too. The
        server and its children are always stopped.

        Args:
            command: start this server instead, split like a shell would but never run by one
                (e.g. "python -m books.mcp --db test.db"); its tools are not compared. Over MCP
                only when the server was started with --allow-verify-command.
            manifest: a pai-deps manifest, relative to the project, declaring the start command
                and the tools.
            timeout: one limit for start, handshake and listing, e.g. "10s"; raise it for slow
                starters (npx, a JVM).
            call_readonly: also call each read-only, closed-world tool (readOnlyHint true,
                openWorldHint false) with minimal arguments and each declared tool with its
                `exampleArguments`; the result lists every tool called or skipped.
            strict: undeclared tools and a missing start command fail (default: a warning, skipped).
            mcp_only: skip the command-line contracts a manifest declares under `provides.cli`.
            self_check: verify preflight's own MCP server against its operations.
            call_timeout: the limit of each call made by call_readonly, e.g. "30s"; it starts
                again at each progress notification the server sends.
            call_open_world: with call_readonly, also call read-only tools whose openWorldHint is
                true or unset (they may reach the internet or other outside systems).

        Returns:
            status passed | failed | error | skipped; the server (name, version, protocol
            version); tools [{name, status found|missing|extra, findings}]; server-level findings;
            summary counts; calls [{tool, outcome, arguments, duration, reason}] with
            call_readonly; stderrTail when it did not pass.

        Example:
            `await project.verify(call_readonly=True, timeout="30s")`

        Tips:
            status `error`: the server could not be verified (start, timeout, exit, protocol): read
            findings and stderrTail. `command`, `manifest` and `self_check` exclude each other.
        """
        from preflight_sdk.verify import verify as _verify
        from preflight_sdk.verify.spec import check_sources

        # Before anything is loaded: a bad combination must fail fast and start nothing.
        check_sources(command=command, manifest=manifest, self_check=self_check)
        root, mcp = await self._verify_source()
        verify = partial(
            _verify,
            root=root,
            timeout=timeout,
            call_timeout=call_timeout,
            call_readonly=call_readonly,
            call_open_world=call_open_world,
        )
        if self_check:
            argv, expected = _self_check_target(str(root))
            return await verify(command=argv, expected_tools=expected, strict=True)
        return await verify(mcp=mcp, command=command, manifest=manifest, strict=strict, mcp_only=mcp_only)

    async def _verify_source(self) -> tuple[Path, McpConfig | None]:
        """Return the directory verify works in and the e2e.yaml `mcp:` block (when there is one)."""
        try:
            loaded = await self._env.ensure_loaded(persist=False)
        except ConfigError as exc:
            if exc.code != "CONFIG_NOT_FOUND":
                raise
            return await anyio.to_thread.run_sync(_directory_of, self.path), None
        return Path(loaded.root), loaded.config.mcp
