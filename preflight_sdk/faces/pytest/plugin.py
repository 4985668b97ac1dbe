"""The pytest plugin: a session-scoped `preflight_env` fixture over a project's real environment.

Off unless asked: `pytest --preflight [PATH]` (PATH defaults to `.`; write `--preflight=PATH`
before test paths: a test path right after a bare `--preflight` is refused, with the two ways to
write it) or `preflight_project = PATH` in the ini file. Installing preflight therefore
changes no other pytest run. When on:

- `preflight_env` builds and sets up the project once per session (an environment that is up
  and unchanged is reused) and cleans it at the end, unless `--preflight-keep`;
- a failing test that used it gets two report sections: the container log lines written while
  it ran, and the requests the mocks received meanwhile;
- under pytest-xdist the workers share one environment: the first to take the file lock in
  `.preflight/` sets it up and serves the mocks, and it cleans up after the last worker leaves;
- `preflight_contract(service, response)` checks a response a test holds (httpx or requests)
  against the service's OpenAPI contract (`contract:` in e2e.yaml) and fails the test with
  every violation (JSON path, rule, the document's file and line);
- a failed setup fails the session once, with preflight's error (code, hint, log tail);
- the project's own pytest suites (e2e.yaml suites with `runner: pytest`) are not collected:
  preflight's runner runs them (`preflight run`), with the `PREFLIGHT_<NAME>_URL` variables they
  read at import, which a plain pytest session does not have. The header of the session says
  which files were left out and how to run them (`preflight run --filter <suite ids>`).
"""

from __future__ import annotations

import datetime
import itertools
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .session import SetupFailed, SharedSession

if TYPE_CHECKING:
    from preflight_sdk.core.results.contracts import ContractCheck
    from preflight_sdk.core.results.lifecycle import LogsResult, StatusResult
    from preflight_sdk.core.results.mocks import RecordedRequest
    from preflight_sdk.sync import SyncProject

__all__ = ["ContractChecker", "PreflightEnv", "PreflightMock", "preflight_contract", "preflight_env"]

_ACTIVE = "preflight-active"
_WINDOW_LINES = 200


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("preflight", "preflight: a project's real test environment")
    group.addoption(
        "--preflight",
        nargs="?",
        const=".",
        default=None,
        metavar="PATH",
        dest="preflight_project",
        help="Turn the preflight plugin on for the project at PATH (default: the current directory).",
    )
    group.addoption(
        "--preflight-keep",
        action="store_true",
        default=False,
        help="Leave the environment running after the session (the next session reuses it).",
    )
    parser.addini(
        "preflight_project", "Project directory (with e2e.yaml) that turns the preflight plugin on."
    )


def pytest_configure(config: pytest.Config) -> None:
    given = config.getoption("preflight_project")
    ini = str(config.getini("preflight_project") or "").strip()
    if given:
        path = Path(given).expanduser()
        if _separate(config, given) and not _names_a_project(path):
            raise pytest.UsageError(
                f"`--preflight {given}` took `{given}` as the project, but it holds no e2e.yaml or "
                f"compose file. To name the project, write `--preflight=PATH {given}`; to run "
                f"`{given}` against the project in the current directory, put it first: "
                f"`pytest {given} --preflight`."
            )
    elif ini:
        path = Path(ini).expanduser()
        path = path if path.is_absolute() else config.rootpath / path
    else:
        return
    config.pluginmanager.register(_Active(config, path.resolve()), _ACTIVE)


def _separate(config: pytest.Config, given: str) -> bool:
    """Whether `given` followed `--preflight` as an argument of its own (not `--preflight=...`)."""
    pairs = itertools.pairwise(config.invocation_params.args)
    return any(a == "--preflight" and b == given for a, b in pairs)


def _names_a_project(path: Path) -> bool:
    """Whether `path` is a project directory (a configuration found in it) or a YAML file."""
    from preflight_sdk.config.loader import find_config
    from preflight_sdk.core.errors import PreflightError

    if path.is_file():
        return path.suffix in (".yaml", ".yml")
    try:
        find_config(path)
    except PreflightError:
        return False
    return True


class PreflightMock:
    """One HTTP mock of the environment."""

    def __init__(self, project: SyncProject, name: str, url: str | None) -> None:
        self._project = project
        self.name = name
        self.url = url

    def requests(self, since: str | None = None) -> list[RecordedRequest]:
        """Return the requests this mock received (since an ISO time or a duration like "30s")."""
        result = self._project.mock_requests(self.name, since=since)
        return [request for mock in result.mocks for request in mock.requests]


class PreflightEnv:
    """The running environment of the session: URLs, mocks, logs, and the project itself."""

    def __init__(self, project: SyncProject, status: StatusResult) -> None:
        self.project = project
        self.status = status
        self._urls = {s.name: s.url for s in status.services} | {m.name: m.url for m in status.mocks}

    def url(self, name: str) -> str:
        """Return the base URL of a service (at its engine's address) or a mock (`http://127.0.0.1:<port>`)."""
        url = self._urls.get(name)
        if url is None:
            known = ", ".join(sorted(k for k, v in self._urls.items() if v)) or "none"
            raise KeyError(f"no published URL for `{name}` (services and mocks with one: {known})")
        return url

    def mock(self, name: str) -> PreflightMock:
        """Return the mock called `name` in e2e.yaml."""
        names = [m.name for m in self.status.mocks]
        if name not in names:
            raise KeyError(f"no mock named `{name}` (mocks: {', '.join(names) or 'none'})")
        return PreflightMock(self.project, name, self._urls.get(name))

    def logs(self, service: str, lines: int = 100, since: str | None = None) -> LogsResult:
        """Return a service's recent output (see `Project.logs`)."""
        result: LogsResult = self.project.logs(service, lines=lines, since=since)
        return result


class ContractChecker:
    """Checks a response a test holds against a service's contract (the `preflight_contract` fixture)."""

    def __init__(self, project: SyncProject) -> None:
        self.project = project

    def __call__(self, service: str, response: Any) -> ContractCheck:
        """Check `response` (an httpx or requests response) against `service`'s contract.

        Raises:
            AssertionError: the response breaks the contract; the message lists each violation.
        """
        request = response.request
        url = getattr(request, "url", "")
        path = url.raw_path.decode() if hasattr(url, "raw_path") else getattr(request, "path_url", str(url))
        headers = [f"{name}: {value}" for name, value in response.headers.items()]
        result: ContractCheck = self.project.check_response(
            service,
            str(request.method),
            path,
            int(response.status_code),
            body=response.text or None,
            headers=headers,
        )
        if result.violations:
            lines = [result.summary, *(f"  {v.message} ({v.place or 'no place'})" for v in result.violations)]
            raise AssertionError("\n".join(lines))
        return result


@pytest.fixture
def preflight_contract(preflight_env: PreflightEnv) -> ContractChecker:
    """`preflight_contract("orders", response)`: fail the test when `response` breaks the contract."""
    return ContractChecker(preflight_env.project)


@pytest.fixture(scope="session")
def preflight_env(request: pytest.FixtureRequest) -> Iterator[PreflightEnv]:
    """The project's environment, built and set up once for the session (see the module docs)."""
    active = request.config.pluginmanager.get_plugin(_ACTIVE)
    if not isinstance(active, _Active):
        pytest.fail(
            "the preflight plugin is off: run `pytest --preflight=PATH` or set `preflight_project` "
            "in the ini file",
            pytrace=False,
        )
    yield active.acquire(request.session)
    active.release()


class _Active:
    """The plugin when it is on: the shared session and the failure report sections."""

    def __init__(self, config: pytest.Config, root: Path) -> None:
        self.config = config
        self.root = root
        worker = getattr(config, "workerinput", None)
        run = worker.get("testrunuid") if isinstance(worker, dict) else None
        self.shared = SharedSession(
            root, run or uuid.uuid4().hex, keep=bool(config.getoption("preflight_keep"))
        )
        self.env: PreflightEnv | None = None
        self.failure: str | None = None
        self.started: dict[str, str] = {}
        self._suites: dict[Path, str] | None = None
        self.left_out: dict[str, str] = {}

    def suite_files(self) -> dict[Path, str]:
        """The files and folders of the project's pytest suites, with their suite ids (read once).

        A configuration that does not load leaves out nothing: setup reports what is wrong with it.
        """
        if self._suites is None:
            from preflight_sdk.config.loader import load_config
            from preflight_sdk.core.errors import PreflightError

            try:
                loaded = load_config(self.root)
            except PreflightError:
                self._suites = {}
            else:
                suites = loaded.config.tests.suites if loaded.config.tests is not None else []
                self._suites = {
                    (Path(loaded.root) / suite.file).resolve(): suite.id
                    for suite in suites
                    if suite.runner == "pytest" and suite.file
                }
        return self._suites

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        suite = self.suite_files().get(collection_path.resolve())
        if suite is None:
            return None
        try:
            shown = str(collection_path.relative_to(config.rootpath))
        except ValueError:
            shown = str(collection_path)
        self.left_out[shown] = suite
        return True

    def pytest_report_collectionfinish(self, config: pytest.Config) -> list[str]:
        if not self.left_out:
            return []
        names = ", ".join(f"{path} (suite `{suite}`)" for path, suite in sorted(self.left_out.items()))
        suites = ",".join(sorted(set(self.left_out.values())))
        return [
            f"preflight: not collected: {names}: the project's own pytest suites, which read the "
            f"PREFLIGHT_<NAME>_URL variables preflight's runner sets; run them with "
            f"`preflight run --filter {suites}`"
        ]

    def acquire(self, session: pytest.Session) -> PreflightEnv:
        if self.env is not None:
            return self.env
        if self.failure is not None:
            pytest.skip("preflight setup failed (reported once, above)")
        try:
            project, status = self.shared.join()
        except SetupFailed as failed:
            self.failure = failed.report
            session.shouldstop = "preflight setup failed"
            if failed.here:
                pytest.fail(failed.report, pytrace=False)
            pytest.skip(f"preflight setup failed in another worker: {failed.headline}")
        self.env = PreflightEnv(project, status)
        return self.env

    def release(self) -> None:
        if self.env is not None:
            self.env = None
            self.shared.leave()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.started[item.nodeid] = datetime.datetime.now(datetime.UTC).isoformat()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        env = self.env
        if env is None or not report.failed or "preflight_env" not in getattr(item, "fixturenames", ()):
            return report
        since = self.started.get(item.nodeid)
        for title, text in _window(env, since):
            report.sections.append((f"preflight: {title} ({call.when})", text))
        return report


def _window(env: PreflightEnv, since: str | None) -> list[tuple[str, str]]:
    """The container log lines and mock requests since the test started, as report sections."""
    from preflight_sdk.core.errors import PreflightError

    sections: list[tuple[str, str]] = []
    lines: list[str] = []
    for service in env.status.services:
        try:
            logs = env.project.logs(service.name, lines=_WINDOW_LINES, since=since)
        except PreflightError as exc:
            details = exc.details if isinstance(exc.details, dict) else {}
            lines += [f"{service.name} | {line}" for line in details.get("lines", [])[-20:]]
            lines.append(f"{service.name} | ({exc.code}: {exc.message})")
            continue
        lines += [f"{service.name} | {entry.timestamp} {entry.text}" for entry in logs.lines]
    sections.append(("container logs", "\n".join(lines) or "(no output while the test ran)"))
    if env.status.mocks:
        try:
            result = env.project.mock_requests(since=since)
        except PreflightError as exc:
            sections.append(("mock requests", f"({exc.code}: {exc.message})"))
        else:
            requests = [
                f"{mock.name} | {r.timestamp} {r.method} {_target(r.url)} -> {r.fault or r.status}"
                + (f"  {_short(r.body)}" if r.body is not None else "")
                for mock in result.mocks
                for r in mock.requests
            ]
            sections.append(("mock requests", "\n".join(requests) or "(no requests while the test ran)"))
    return sections


def _target(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _short(value: object) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 300 else text[:297] + "..."
