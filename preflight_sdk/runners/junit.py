"""JUnit XML: read the report pytest writes, and write one for a whole run (for CI systems)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import msgspec

from ..results.run import RunResult

__all__ = ["JUnitCase", "read_junit", "write_junit"]


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


def read_junit(path: Path) -> list[JUnitCase]:
    """Return every test case of a JUnit XML file (an unreadable file gives an empty list)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    cases: list[JUnitCase] = []
    for element in root.iter("testcase"):
        status, message, detail = "passed", "", ""
        for kind in ("failure", "error", "skipped"):
            child = element.find(kind)
            if child is not None:
                status = "failed" if kind == "failure" else kind
                message = child.get("message", "") or ""
                detail = (child.text or "").strip()
                break
        cases.append(
            JUnitCase(
                classname=element.get("classname", ""),
                name=element.get("name", ""),
                time=float(element.get("time", "0") or 0),
                status=status,
                message=message,
                detail=detail,
                stdout=(element.findtext("system-out") or "").strip(),
                stderr=(element.findtext("system-err") or "").strip(),
            )
        )
    return cases


def write_junit(result: RunResult, path: Path) -> None:
    """Write `result` as JUnit XML: one `<testsuite>` per suite, one `<testcase>` per case."""
    root = ET.Element(
        "testsuites",
        name=f"preflight run {result.run_id}",
        tests=str(result.totals.total),
        failures=str(result.totals.failed),
        skipped=str(result.totals.skipped),
        time=f"{result.duration / 1000:.3f}",
    )
    for suite in result.suites:
        node = ET.SubElement(
            root,
            "testsuite",
            name=suite.id,
            tests=str(len(suite.cases)),
            failures=str(suite.failed),
            skipped=str(suite.skipped),
            errors="1" if suite.error else "0",
            time=f"{suite.duration / 1000:.3f}",
        )
        if suite.error:
            ET.SubElement(node, "properties").append(ET.Element("property", name="error", value=suite.error))
        for case in suite.cases:
            element = ET.SubElement(
                node, "testcase", classname=suite.id, name=case.name, time=f"{case.duration / 1000:.3f}"
            )
            if case.status == "failed" and case.failure is not None:
                failure = ET.SubElement(element, "failure", message=case.failure.summary)
                failure.text = case.failure.error
            elif case.status == "skipped":
                ET.SubElement(element, "skipped", message=case.skip_reason or "skipped")
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
