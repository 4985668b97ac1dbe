"""Write a run as JUnit XML, for CI systems (reading the reports tools write is `junit_read`)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from preflight_sdk.core.results.run import RunResult, SuiteResult

__all__ = ["SUITE_ERROR_CASE", "write_junit"]

# The name of the `<testcase>` that carries a suite-level error (timeout, collection, setup).
SUITE_ERROR_CASE = "(suite error)"


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
