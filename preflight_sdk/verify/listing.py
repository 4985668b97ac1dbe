"""Follow `tools/list` through every cursor, keeping the raw tool definitions.

The official client parses each page against the negotiated protocol version and raises
`pydantic.ValidationError` when it does not conform. That is recorded as `PROTOCOL_ERROR` (a
conforming host would reject the page), and the raw page the transport kept is used instead, so
each tool definition can still be checked on its own.
"""

from __future__ import annotations

from typing import Any

from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from .result import Finding
from .transport import Recorder

__all__ = ["MAX_PAGES", "list_all_tools", "validation_summary"]

MAX_PAGES = 100
"""More `tools/list` pages than this is treated as a pagination loop."""


async def list_all_tools(
    client: Client, recorder: Recorder, findings: list[Finding]
) -> list[dict[str, Any]] | None:
    """Follow `tools/list` through every cursor; return the raw tool dicts, or None if it failed."""
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        recorder.phase = "tools/list" if page == 1 else f"tools/list (page {page}, cursor {cursor!r})"
        try:
            listed = await client.list_tools(cursor=cursor)
            next_cursor = listed.next_cursor
        except ValidationError as exc:
            raw = recorder.last_result("tools/list")
            findings.append(_invalid_listing(exc, raw, page, client.protocol_version))
            if raw is None:
                return None
            value = raw.get("nextCursor")
            next_cursor = value if isinstance(value, str) else None
        except MCPError as exc:
            if recorder.server_gone or exc.code == CONNECTION_CLOSED:
                raise  # the server went away: the caller reports it
            findings.append(
                Finding(
                    severity="error",
                    code="PROTOCOL_ERROR",
                    message=f"tools/list (page {page}) failed with JSON-RPC error {exc.code}: {exc.message}",
                )
            )
            return None
        raw = recorder.last_result("tools/list") or {}
        page_tools = raw.get("tools")
        if isinstance(page_tools, list):
            tools.extend(t for t in page_tools if isinstance(t, dict))
        if next_cursor is None:
            return tools
        if next_cursor in seen:
            findings.append(
                Finding(
                    severity="error",
                    code="PAGINATION_LOOP",
                    message=f"tools/list returned cursor {next_cursor!r} twice (page {page}); "
                    "stopped following it",
                )
            )
            return tools
        seen.add(next_cursor)
        cursor = next_cursor
    findings.append(
        Finding(
            severity="error",
            code="PAGINATION_LOOP",
            message=f"tools/list still returned a nextCursor after {MAX_PAGES} pages; stopped following it",
        )
    )
    return tools


def _invalid_listing(
    exc: ValidationError, raw: dict[str, Any] | None, page: int, protocol: str | None
) -> Finding:
    names: list[Any] = [
        t.get("name") if isinstance(t, dict) else None for t in (raw or {}).get("tools") or []
    ]
    return Finding(
        severity="error",
        code="PROTOCOL_ERROR",
        message=f"tools/list page {page} does not conform to MCP {protocol or '?'}, so a conforming client "
        f"rejects the whole page: {validation_summary(exc, names, limit=5)}",
    )


def validation_summary(exc: ValidationError, names: list[Any] | None = None, *, limit: int = 3) -> str:
    """Return the first `limit` problems of `exc` as `loc: message`, tool indexes named from `names`."""
    problems = []
    for error in exc.errors()[:limit]:
        loc: list[Any] = list(error["loc"])
        if names and len(loc) >= 2 and loc[0] == "tools" and isinstance(loc[1], int) and loc[1] < len(names):
            loc[1] = f"{loc[1]} ({names[loc[1]]})"
        problems.append(f"{'.'.join(str(p) for p in loc)}: {error['msg']}")
    more = f" (+{exc.error_count() - limit} more)" if exc.error_count() > limit else ""
    return "; ".join(problems) + more
