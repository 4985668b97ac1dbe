"""Results built by hand for the view tests: one of each type, with and without failures.

`EVIL` is markup that must come out escaped wherever a name, a message or a body holds it.
"""

from __future__ import annotations

from preflight_sdk.core.assertions import AssertionResult
from preflight_sdk.core.results.lifecycle import (
    BuildResult,
    CleanAction,
    CleanResult,
    InitMock,
    InitResult,
    InitService,
    InitSuite,
    LogLine,
    LogsResult,
    MockSetup,
    MockStatus,
    NetworkSetup,
    NetworkStatus,
    PortMapping,
    PortStatus,
    Readiness,
    ServiceBuild,
    ServiceSetup,
    ServiceStatus,
    SetupResult,
    StatusResult,
)
from preflight_sdk.core.results.mocks import MockRequestsMock, MockRequestsResult, RecordedRequest
from preflight_sdk.core.results.run import (
    Artifact,
    CaseResult,
    ContainerHealthInfo,
    ContainerLogInfo,
    DiagnosticReport,
    Failure,
    MockRequestInfo,
    MockTraffic,
    RequestInfo,
    ResponseInfo,
    RunResult,
    SuiteResult,
    Totals,
)
from preflight_sdk.verify.result import Finding, ServerInfo, ToolReport, VerifyResult, VerifySummary

EVIL = "<script>alert('x')</script>"
RUN_ID = "20261122T142236Z-785e"
SUMMARY = "POST /orders returned 500, expected 400; orders logged \"KeyError: 'price'\""


def _case(
    name: str, status: str = "passed", failure: Failure | None = None, suite: str = "orders"
) -> CaseResult:
    slug = name.replace(" ", "-")
    return CaseResult(
        id=f"{suite}.{slug}",
        name=name,
        suite=suite,
        status=status,  # type: ignore[arg-type]
        duration=26,
        timestamp=1795357356521,
        failure=failure,
    )


def price_failure() -> Failure:
    """The shop-broken failure: a 500 instead of a 400, with everything collected around it."""
    return Failure(
        error="status: expected to equal 400, got 500",
        summary=SUMMARY,
        assertions=[
            AssertionResult(
                path="status",
                operator="equals",
                expected=400,
                actual=500,
                passed=False,
                message="status: expected to equal 400, got 500",
            ),
            AssertionResult(
                path="body.error",
                operator="contains",
                expected="price",
                actual=EVIL,
                passed=False,
                message="body.error: expected to contain price",
            ),
            AssertionResult(
                path="headers.content-type",
                operator="contains",
                expected="json",
                actual="application/json",
                passed=True,
                message="ok",
            ),
        ],
        request=RequestInfo(
            method="POST", url="http://127.0.0.1:32895/orders", body={"sku": "book", "qty": 1}
        ),
        response=ResponseInfo(status=500, body={"error": EVIL}, duration=26),
        suggested_fix="`orders` failed while handling the request (KeyError: 'price'): fix that code path",
        diagnostics=DiagnosticReport(
            collected_at=1795357356521,
            container_logs=[
                ContainerLogInfo(
                    container_name="orders",
                    lines=["stderr: KeyError: 'price'", "POST /orders -> 500"],
                    line_count=2,
                )
            ],
            container_health=[
                ContainerHealthInfo(container_name="orders", status="running"),
                ContainerHealthInfo(container_name="seed", status="exited", exit_code=0),
            ],
            mock_requests=[
                MockTraffic(
                    mock_name="payments",
                    requests=[
                        MockRequestInfo(
                            method="POST",
                            path="/refunds",
                            status=404,
                            timestamp="2026-11-22T14:22:36.524Z",
                            body={"charge": "ch_1"},
                        ),
                        MockRequestInfo(
                            method="POST",
                            path="/charges",
                            status=0,
                            fault="reset",
                            timestamp="2026-11-22T14:22:36.530Z",
                        ),
                    ],
                )
            ],
        ),
        artifact="cases/orders.an-order-without-a-price.json",
    )


def failed_run() -> RunResult:
    """One suite with a failed case, a passed one and a skipped one; a second suite that passed."""
    orders = SuiteResult(
        id="orders",
        name=f"Orders API {EVIL}",
        runner="yaml",
        status="failed",
        duration=340,
        passed=1,
        failed=1,
        skipped=1,
        cases=[
            _case("an order without a price", "failed", price_failure()),
            _case("the order still exists"),
            _case("a skipped case", "skipped"),
        ],
        warnings=["a warning about the suite"],
    )
    smoke = SuiteResult(
        id="smoke",
        name="Smoke (shell)",
        runner="shell",
        status="passed",
        duration=120,
        passed=1,
        failed=0,
        skipped=0,
        cases=[_case("smoke", suite="smoke")],
    )
    return RunResult(
        run_id=RUN_ID,
        status="failed",
        summary="failed: 2 suite(s), 4 case(s): 2 passed, 1 failed",
        totals=Totals(passed=2, failed=1, skipped=1, total=4),
        duration=2344,
        suites=[orders, smoke],
        started_at="2026-11-22T14:22:36.246Z",
        artifacts=[
            Artifact(
                name="report.json",
                path=f"/p/.preflight/runs/{RUN_ID}/report.json",
                sha256="ab" * 32,
                size=10528,
            ),
            Artifact(
                name="cases/orders.an-order-without-a-price.json",
                path=f"/p/.preflight/runs/{RUN_ID}/cases/orders.an-order-without-a-price.json",
                sha256="cd" * 32,
                size=2324,
            ),
        ],
    )


def passed_run() -> RunResult:
    """A run where everything passed."""
    suite = SuiteResult(
        id="orders",
        name="Orders API",
        runner="yaml",
        status="passed",
        duration=254,
        passed=2,
        failed=0,
        skipped=0,
        cases=[_case("the API is healthy"), _case("an order is charged")],
    )
    return RunResult(
        run_id="run-ok",
        status="passed",
        summary="passed",
        totals=Totals(passed=2, failed=0, skipped=0, total=2),
        duration=300,
        suites=[suite],
        started_at="2026-11-22T14:22:30.000Z",
    )


def build(failed: bool = False) -> BuildResult:
    services = [
        ServiceBuild(name="inventory", image="shop/inventory:latest", status="success", duration=1370),
        ServiceBuild(
            name="seed", image="shop/inventory:latest", status="success", duration=23, source="local"
        ),
    ]
    if failed:
        services.append(
            ServiceBuild(
                name="orders",
                image="shop/orders:latest",
                status="failed",
                duration=685,
                error=f"RUN pip install failed {EVIL}",
                log_tail=["Step 3/5 : RUN pip install", "ERROR: no matching distribution"],
            )
        )
    return BuildResult(services=services, total_duration=1400)


def setup() -> SetupResult:
    return SetupResult(
        network=NetworkSetup(name="pf-shop-7adee9", created=True),
        services=[
            ServiceSetup(
                name="orders",
                container_id="11eb",
                container_name="pf-shop-7adee9-orders",
                status="healthy",
                ports=[PortMapping(host=32893, container=8000)],
                readiness=Readiness(
                    probe="http",
                    target="http://127.0.0.1:32893/health",
                    attempts=5,
                    ready=True,
                    time_to_ready=52,
                ),
                url="http://127.0.0.1:32893",
            ),
            ServiceSetup(
                name="seed",
                container_id="d711",
                container_name="pf-shop-7adee9-seed",
                status="completed",
                ports=[],
                readiness=Readiness(
                    probe="exit", target="exit status 0", attempts=1, ready=True, time_to_ready=159
                ),
            ),
        ],
        mocks=[
            MockSetup(
                name="payments", port=32845, status="running", route_count=3, url="http://127.0.0.1:32845"
            )
        ],
        total_duration=2596,
    )


def status(broken: bool = False) -> StatusResult:
    return StatusResult(
        state="running",
        session_id="7adee9",
        network=NetworkStatus(name="pf-shop-7adee9", exists=True),
        services=[
            ServiceStatus(
                name="orders",
                status="exited" if broken else "running",
                health="unhealthy" if broken else "healthy",
                ports=[PortStatus(host=32893, container=8000, accessible=not broken)],
                uptime=None if broken else 1232,
                exit_code=1 if broken else None,
                url="http://127.0.0.1:32893/?a=1&b=<2>",
            )
        ],
        mocks=[
            MockStatus(
                name="payments", port=32845, status="running", request_count=4, url="http://127.0.0.1:32845"
            )
        ],
    )


def logs() -> LogsResult:
    entries = [
        LogLine(timestamp="2026-11-22T14:22:30.1Z", stream="stdout", text="orders listening on 8000"),
        LogLine(timestamp="2026-11-22T14:22:30.2Z", stream="stdout", text="INFO GET /health -> 200"),
        LogLine(timestamp="2026-11-22T14:22:30.3Z", stream="stderr", text="WARNING slow inventory"),
        LogLine(timestamp="2026-11-22T14:22:30.4Z", stream="stderr", text=f"KeyError: 'price' {EVIL}"),
    ]
    return LogsResult(
        container="orders",
        lines=entries,
        line_count=len(entries),
        container_status="running",
    )


def clean(nothing: bool = False) -> CleanResult:
    if nothing:
        return CleanResult(containers=[], mocks=[], network=None, networks=[], session_removed=False)
    return CleanResult(
        containers=[
            CleanAction(name="pf-shop-orders", action="force_removed"),
            CleanAction(name="pf-shop-seed", action="failed", error=f"conflict {EVIL}"),
        ],
        mocks=[CleanAction(name="payments", action="stopped")],
        network=CleanAction(name="pf-shop", action="removed"),
        networks=[CleanAction(name="pf-shop", action="removed")],
        session_removed=True,
    )


def init() -> InitResult:
    return InitResult(
        project_name="shop",
        config_path="/p/e2e.yaml",
        services=[
            InitService(name="inventory", image="shop/inventory", ports=["0:8000"], has_healthcheck=True),
            InitService(
                name="seed",
                image="shop/inventory",
                ports=[],
                has_healthcheck=False,
                kind="job",
                depends_on=["inventory"],
            ),
        ],
        mocks=[InitMock(name="payments", port=0, route_count=3)],
        suites=[InitSuite(id="orders", name=f"Orders {EVIL}", runner="yaml", file="tests/orders.yaml")],
        schema_version="1",
        session_id="7adee9",
        state="initialized",
    )


def _recorded(status: int | None, body: object, route: str | None = "charge") -> RecordedRequest:
    return RecordedRequest(
        method="POST",
        url="http://payments:32845/charges",
        path="/charges",
        query={},
        headers={"content-type": "application/json"},
        body=body,
        status=status,
        timestamp="2026-11-22T14:22:30.574Z",
        epoch_ms=1795357350574,
        matched_route=route,
    )


def mock_requests() -> MockRequestsResult:
    return MockRequestsResult(
        mocks=[
            MockRequestsMock(
                name="payments",
                port=32845,
                total_requests=3,
                dropped=2,
                requests=[
                    _recorded(503, {"amount": 25.0}),
                    _recorded(201, {"amount": 25.0}),
                    _recorded(404, {"note": EVIL}, route=None),
                ],
            )
        ]
    )


def verify(errors: bool = True) -> VerifyResult:
    findings = (
        [Finding(severity="error", code="STDOUT_POLLUTION", message=f"stray line {EVIL}")] if errors else []
    )
    tools = [
        ToolReport(name="search", status="found", declared=True, in_server=True),
        ToolReport(
            name="stats",
            status="missing" if errors else "found",
            declared=True,
            in_server=not errors,
            findings=[
                Finding(severity="warning", code="DESCRIPTION_SHORT", message="too short", tool="stats")
            ],
        ),
    ]
    return VerifyResult(
        status="failed" if errors else "passed",
        summary=VerifySummary(
            found=1 if errors else 2,
            missing=1 if errors else 0,
            extra=0,
            errors=len(findings),
            warnings=1,
            infos=0,
        ),
        duration=54,
        server=ServerInfo(
            command=["python", "server.py"], name="books", version="0.1.0", protocol_version="2025-11-25"
        ),
        tools=tools,
        findings=findings,
        stderr_tail=["Traceback (most recent call last):"] if errors else [],
    )
