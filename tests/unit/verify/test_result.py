"""VerifyResult: status and `ok`, the wire form, and the text and HTML renderings."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec

from preflight_sdk.faces.notebook.static import render_html, render_text
from preflight_sdk.verify.result import (
    CallReport,
    CliReport,
    Finding,
    ServerInfo,
    ToolReport,
    VerifyResult,
    decide_status,
    summarise,
)


def result(tools: list[ToolReport], findings: list[Finding] | None = None) -> VerifyResult:
    findings = findings or []
    summary = summarise(tools, findings)
    return VerifyResult(
        status=decide_status(summary, findings, skipped=False),
        server=ServerInfo(
            command=["python", "server.py"], name="books", version="1.0", protocol_version="2025-11-25"
        ),
        tools=tools,
        findings=findings,
        summary=summary,
        duration=812,
        stderr_tail=["boom <b>"],
    )


FOUND = ToolReport(name="search_books", status="found", declared=True, in_server=True)
MISSING = ToolReport(
    name="delete_book",
    status="missing",
    declared=True,
    in_server=False,
    findings=[
        Finding(severity="error", code="TOOL_MISSING", message="declared but not served", tool="delete_book")
    ],
)
EXTRA = ToolReport(
    name="admin_reset",
    status="extra",
    declared=False,
    in_server=True,
    findings=[
        Finding(severity="warning", code="TOOL_EXTRA", message="served but not declared", tool="admin_reset")
    ],
)


def test_extra_tools_alone_pass_and_a_missing_tool_fails() -> None:
    assert result([FOUND, EXTRA]).ok and result([FOUND, EXTRA]).status == "passed"
    failing = result([FOUND, MISSING, EXTRA])
    assert not failing.ok and failing.status == "failed"


def test_an_info_or_warning_never_fails_but_any_error_does() -> None:
    info = Finding(severity="info", code="TITLE_MISSING", message="no title", tool="search_books")
    error = Finding(severity="error", code="STDOUT_POLLUTION", message="stray line")
    assert result([FOUND], [info]).ok
    assert not result([FOUND], [error]).ok


def test_a_timeout_or_protocol_error_makes_the_status_error() -> None:
    timeout = Finding(severity="error", code="SERVER_TIMEOUT", message="no answer")
    assert result([], [timeout]).status == "error"


def test_the_wire_form_is_camel_case_and_keeps_zero_counts() -> None:
    data = json.loads(result([FOUND, MISSING]).to_json())

    assert data["tools"][1] == {
        "name": "delete_book",
        "status": "missing",
        "declared": True,
        "inServer": False,
        "findings": [
            {
                "severity": "error",
                "code": "TOOL_MISSING",
                "message": "declared but not served",
                "tool": "delete_book",
            }
        ],
    }
    assert data["summary"] == {"found": 1, "missing": 1, "extra": 0, "errors": 1, "warnings": 0, "infos": 0}
    assert data["server"]["protocolVersion"] == "2025-11-25"
    assert data["stderrTail"] == ["boom <b>"]


def test_text_lists_tools_then_findings_by_severity_then_the_summary() -> None:
    text = render_text(result([FOUND, MISSING, EXTRA]))
    lines = text.splitlines()

    assert lines[0] == "verify books 1.0 (protocol 2025-11-25): failed"
    assert "  ✓ search_books  Found in server" in lines
    assert "  ✗ delete_book   Not found in server" in lines
    assert "  + admin_reset   Extra (not declared)" in lines
    assert lines.index("Errors (1):") < lines.index("Warnings (1):")
    assert "  ✗ delete_book: TOOL_MISSING  declared but not served" in lines
    assert lines[-1] == "Results: 1 found, 1 missing, 1 extra; 1 error, 1 warning, 0 infos; 812 ms"


def test_html_is_escaped_and_grouped_by_severity() -> None:
    page = render_html(result([FOUND, MISSING, EXTRA]))

    assert "boom &lt;b&gt;" in page and "boom <b>" not in page
    assert page.index("Errors (1)") < page.index("Warnings (1)")
    assert "<code>delete_book</code>" in page


def test_html_has_a_row_per_tool_command_and_call() -> None:
    cli = CliReport(command="books --version", status="failed", duration=5, exit_code=2)
    calls = [
        CallReport(tool="search_books", outcome="answered", arguments={"q": "<dune>"}, duration=12),
        CallReport(tool="admin_reset", outcome="skipped", reason="destructive"),
    ]
    page = render_html(msgspec.structs.replace(result([FOUND, MISSING]), cli=[cli], calls=calls))
    tables = page.split("<table")[1:]

    assert len(tables) == 3
    assert tables[0].count("<tr") == 3 and "Not found in server" in tables[0]
    assert "<code>books --version</code>" in tables[1] and ">2</td>" in tables[1]
    assert tables[2].count("<tr") == 3 and "&lt;dune&gt;" in tables[2] and "destructive" in tables[2]


def test_the_notebook_bundle_uses_these_renderers() -> None:
    bundle = result([FOUND])._repr_mimebundle_()

    assert bundle["text/plain"].startswith("verify books 1.0")
    assert "pf-verify" in bundle["text/html"]


def test_importing_verify_loads_neither_the_mcp_client_nor_jsonschema() -> None:
    code = "import sys, preflight_sdk.verify; print([m for m in ('mcp', 'jsonschema') if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
