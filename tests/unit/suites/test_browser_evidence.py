"""A browser failure's words and files without a browser: the summary and fix, the redacted trace."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.redaction import Redactor
from preflight_sdk.core.results.browser import BrowserEvidence, ConsoleMessage, FailedRequest
from preflight_sdk.core.results.run import ContainerLogInfo, DiagnosticReport
from preflight_sdk.suites.browser import explain_browser
from preflight_sdk.suites.browser.evidence import redact_trace
from preflight_sdk.suites.outcome import StepOutcome

SECRET = "tok-31f7c0de99aa"


def _outcome(evidence: BrowserEvidence, error: str | None = None) -> StepOutcome:
    return StepOutcome(kind="browser", status=200, error=error, browser=evidence)


def _text_failed() -> list[AssertionResult]:
    return [
        AssertionResult(
            path="text", operator="visible", expected="Saved", actual="Welcome", passed=False,
            message="text: the page does not show 'Saved'",
        )
    ]  # fmt: skip


def test_the_summary_puts_the_check_the_page_error_the_request_and_the_log_line_in_one_sentence() -> None:
    evidence = BrowserEvidence(
        url="http://127.0.0.1:5000/form.html?step=2",
        console=[
            ConsoleMessage(
                type="error", text="Failed to load resource: the server responded with a status of 502"
            ),
            ConsoleMessage(type="pageerror", text="TypeError: reply.json is not a function"),
        ],
        failed_requests=[
            FailedRequest(method="GET", url="http://127.0.0.1:5000/favicon.ico", status=404),
            FailedRequest(method="GET", url="http://127.0.0.1:5000/api/a", status=404),
            FailedRequest(method="POST", url="http://127.0.0.1:5000/api/save", status=502),
        ],
    )
    logs = DiagnosticReport(
        collected_at=1,
        container_logs=[
            ContainerLogInfo(
                container_name="web", lines=["POST /api/save -> 502", "upstream error"], line_count=2
            ),
            ContainerLogInfo(container_name="api", lines=["stderr: ValueError: bad sku"], line_count=1),
        ],
    )
    summary, fix = explain_browser(
        outcome=_outcome(evidence), assertions=_text_failed(), diagnostics=logs, target="web"
    )
    assert summary == (
        '/form.html?step=2: expected the page to show "Saved"; the page logged "TypeError: reply.json is not a '
        'function"; POST /api/save answered 502; api logged "ValueError: bad sku"'
    )
    assert fix is not None and fix.startswith(
        "`api` failed while handling POST /api/save (ValueError: bad sku)"
    )


def test_an_action_on_nothing_points_at_the_selector_and_the_dom() -> None:
    evidence = BrowserEvidence(url="http://h/index.html", selector="#buy")
    error = "click #buy: timed out after 10s: no element matches `#buy`"
    summary, fix = explain_browser(
        outcome=_outcome(evidence, error), assertions=[], diagnostics=None, target=None
    )
    assert summary == f"/index.html: {error}"
    assert fix == (
        "nothing on /index.html matches `#buy`: compare it with the page (failure.browser.dom, the "
        "screenshot) and fix the selector or the page"
    )


def test_a_missing_browser_says_what_to_install() -> None:
    error = "[BROWSER_UNAVAILABLE] browser steps need Chromium, and none is installed (…)"
    summary, fix = explain_browser(
        outcome=_outcome(BrowserEvidence(), error), assertions=[], diagnostics=None, target=None
    )
    assert summary == error
    assert (
        fix is not None
        and "pip install 'preflight-sdk[browser]'" in fix
        and "apt-get install chromium" in fix
    )


def test_a_trace_is_rewritten_without_secret_headers_typed_secrets_or_known_values(tmp_path: Path) -> None:
    trace = tmp_path / "trace.zip"
    events = [
        {"type": "before", "method": "fill", "params": {"selector": "#password", "value": "hunter2"}},
        {"type": "before", "method": "fill", "params": {"selector": "#sku", "value": "book"}},
        {"type": "log", "message": f"navigated with {SECRET}"},
    ]
    network = {
        "type": "resource-snapshot",
        "snapshot": {
            "request": {
                "headers": [
                    {"name": "Authorization", "value": "Bearer abc"},
                    {"name": "Accept", "value": "*/*"},
                ]
            },
            "response": {"cookies": [{"name": "session_id", "value": "s1"}]},
        },
    }
    png = b"\x89PNG\r\n\x1a\n" + SECRET.encode()  # pixels are left as they are
    with zipfile.ZipFile(trace, "w") as out:
        out.writestr("trace.trace", "\n".join(json.dumps(e) for e in events) + "\nnot json " + SECRET + "\n")
        out.writestr("trace.network", json.dumps(network) + "\n")
        out.writestr("resources/page.html", f'<p>{{"apiToken": "x1"}} and {SECRET}</p>')
        out.writestr("resources/shot.png", png)
    redact_trace(trace, Redactor(values=[SECRET]))
    with zipfile.ZipFile(trace) as done:
        lines = done.read("trace.trace").decode().splitlines()
        written = [json.loads(line) for line in lines[:3]]
        snapshot = json.loads(done.read("trace.network"))["snapshot"]
        page = done.read("resources/page.html").decode()
        assert done.read("resources/shot.png") == png
    assert [e.get("params", {}).get("value") for e in written[:2]] == ["[redacted]", "book"]
    assert written[2]["message"] == "navigated with [redacted]" and lines[3] == "not json [redacted]"
    assert snapshot["request"]["headers"] == [
        {"name": "Authorization", "value": "[redacted]"},
        {"name": "Accept", "value": "*/*"},
    ]
    assert snapshot["response"]["cookies"] == [{"name": "session_id", "value": "[redacted]"}]
    assert SECRET not in page and '"apiToken": "[redacted]"' in page
