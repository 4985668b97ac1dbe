"""A tool reply: the envelope as text and structured, and a whole image read by get_artifact as an image."""

from __future__ import annotations

import base64
import json

from preflight_sdk.core.results.envelope import success
from preflight_sdk.core.results.runs import ArtifactContent
from preflight_sdk.faces.mcp.replies import tool_reply

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n-pixels-").decode()


def _read(name: str, kind: str, content: str, **fields: object) -> ArtifactContent:
    encoding = fields.pop("encoding", "base64")
    return ArtifactContent(
        run_id="R", name=name, content_type=kind, sha256="0" * 64, size=16, encoding=encoding,  # type: ignore[arg-type]
        content=content, **fields,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_whole_screenshot_comes_as_an_image_block_after_the_envelope() -> None:
    reply = tool_reply(success(_read("cases/x/screenshot.png", "image/png", PNG)), is_error=False)
    text, image = reply.content
    assert json.loads(text.text) == reply.structured_content  # type: ignore[union-attr]
    assert (image.type, image.mime_type, image.data) == ("image", "image/png", PNG)  # type: ignore[union-attr]


def test_a_part_of_an_image_or_a_text_file_is_no_image() -> None:
    parts = [
        _read("cases/x/screenshot.png", "image/png", PNG[:8], next_offset=6),
        _read("cases/x/screenshot.png", "image/png", PNG, offset=6),
        _read("report.json", "application/json", "{}", encoding="utf-8"),
        _read("cases/x/trace.zip", "application/zip", "UEsDBA=="),
    ]
    for read in parts:
        assert [c.type for c in tool_reply(success(read), is_error=False).content] == ["text"]
