"""JUnit XML: read the report pytest writes, and write one for a whole run (for CI systems)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from preflight_sdk.core.results.run import RunResult, SuiteResult

__all__ = ["SUITE_ERROR_CASE", "JUnitCase", "JUnitReport", "read_junit", "write_junit"]

# The name of the `<testcase>` that carries a suite-level error (timeout, collection, setup).
SUITE_ERROR_CASE = "(suite error)"


class JUnitCase(msgspec.Struct, frozen=True, kw_only=True):
    """One `<testcase>` of a JUnit report."""

    classname: str
    name: str
    time: float
    status: str  # passed, failed, error, skipped
    message: str = ""
    detail: str = ""
    stdout: str = ""
    stderr: str = ""


class JUnitReport(msgspec.Struct, frozen=True, kw_only=True):
    """A JUnit file: when its first suite started (if it says) and its test cases in order."""

    started: datetime | None = None
    cases: list[JUnitCase] = msgspec.field(default_factory=list)


def read_junit(path: Path) -> JUnitReport:
    """Return the test cases of a JUnit XML file (an unreadable file gives an empty report)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return JUnitReport()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    started = _timestamp(suite.get("timestamp", "") if suite is not None else "")
    return JUnitReport(started=started, cases=[_case(element) for element in root.iter("testcase")])


def _case(element: ET.Element) -> JUnitCase:
    status, message, detail = "passed", "", ""
    for kind in ("failure", "error", "skipped"):
        child = element.find(kind)
        if child is not None:
            status = "failed" if kind == "failure" else kind
            message = child.get("message", "") or ""
            detail = (child.text or "").strip()
            break
    return JUnitCase(
        classname=element.get("classname", ""),
        name=element.get("name", ""),
        time=float(element.get("time", "0") or 0),
        status=status,
        message=message,
        detail=detail,
        stdout=(element.findtext("system-out") or "").strip(),
        stderr=(element.findtext("system-err") or "").strip(),
    )


def _timestamp(text: str) -> datetime | None:
    """Parse a testsuite `timestamp`: pytest writes local time, with its offset or (older) without."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    # A naive stamp is the writer's local time, which is this machine's: astimezone() reads it so.
    return moment.astimezone(UTC)


def write_junit(result: RunResult, path: Path) -> None:
    """Write `result` as JUnit XML: one `<testsuite>` per suite, one `<testcase>` per case.

    A suite error (a timeout, a pytest collection error, a setup failure) is also a `<testcase>`
    named `(suite error)` holding an `<error>`: CI systems show test cases, and a suite property
    alone would leave the reason invisible there.
    """
    errors = sum(1 for suite in result.suites if suite.error)
    root = ET.Element(
        "testsuites",
        name=f"preflight run {result.run_id}",
        tests=str(result.totals.total + errors),
        failures=str(result.totals.failed),
        errors=str(errors),
        skipped=str(result.totals.skipped),
        time=f"{result.duration / 1000:.3f}",
    )
    for suite in result.suites:
        _write_suite(root, suite)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _write_suite(root: ET.Element, suite: SuiteResult) -> None:
    node = ET.SubElement(
        root,
        "testsuite",
        name=suite.id,
        tests=str(len(suite.cases) + (1 if suite.error else 0)),
        failures=str(suite.failed),
        skipped=str(suite.skipped),
        errors="1" if suite.error else "0",
        time=f"{suite.duration / 1000:.3f}",
    )
    if suite.engine:
        node.set("hostname", suite.engine)  # JUnit's own place for where a suite ran
    if suite.error:
        ET.SubElement(node, "properties").append(ET.Element("property", name="error", value=suite.error))
        element = ET.SubElement(node, "testcase", classname=suite.id, name=SUITE_ERROR_CASE, time="0.000")
        error = ET.SubElement(element, "error", message=suite.error, type="SuiteError")
        error.text = suite.error
    for case in suite.cases:
        element = ET.SubElement(
            node, "testcase", classname=suite.id, name=case.name, time=f"{case.duration / 1000:.3f}"
        )
        if case.status == "failed" and case.failure is not None:
            failure = ET.SubElement(element, "failure", message=case.failure.summary)
            failure.text = case.failure.error
        elif case.status == "skipped":
            ET.SubElement(element, "skipped", message=case.skip_reason or "skipped")
        elif case.carried is not None:  # a pass (or skip) not run here: where its verdict comes from
            carried = case.carried
            ET.SubElement(element, "properties").append(
                ET.Element("property", name="preflight.carriedFrom", value=carried.run_id)
            )
            if carried.status == "skipped":
                ET.SubElement(element, "skipped", message=f"carried from run {carried.run_id}")
            out = ET.SubElement(element, "system-out")
            out.text = f"not run: {carried.status} in run {carried.run_id} ({carried.started_at}), carried"
