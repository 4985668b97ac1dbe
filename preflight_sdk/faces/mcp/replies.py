"""A tool reply (`CallToolResult`) from an envelope: the JSON text and the same data structured.

A file of a run that is an image (a browser failure's screenshot), read whole by `get_artifact`,
also comes as an MCP image block, so a client shows it, or hands it to its model, as a picture.
It is never added to any other reply: a run's failure names its screenshot; the image itself is
one `get_artifact` call away, within that call's own `limit`.
"""

from __future__ import annotations

from typing import Any

import msgspec
from mcp import types

from preflight_sdk.core.results.runs import ArtifactContent

__all__ = ["tool_reply"]


def tool_reply(envelope: Any, *, is_error: bool) -> types.CallToolResult:
    """`content[0].text` is the envelope's JSON, `structuredContent` the same data, `isError` as given."""
    raw = msgspec.json.encode(envelope)
    content: list[types.TextContent | types.ImageContent] = [
        types.TextContent(type="text", text=raw.decode())
    ]
    image = _image(getattr(envelope, "data", None))
    if image is not None:
        content.append(image)
    return types.CallToolResult(
        content=content,  # type: ignore[arg-type]
        structured_content=msgspec.json.decode(raw),
        is_error=is_error,
    )


def _image(data: Any) -> types.ImageContent | None:
    """The image block of a whole image file read by `get_artifact`, else None."""
    if not isinstance(data, ArtifactContent) or not data.content_type.startswith("image/"):
        return None
    if data.encoding != "base64" or data.offset != 0 or data.next_offset is not None:
        return None  # a part of the file is not an image
    return types.ImageContent(type="image", data=data.content, mime_type=data.content_type)
