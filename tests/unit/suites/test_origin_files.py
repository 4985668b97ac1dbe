"""The original Preflight test files run unchanged against a stub of the API they call.

`tests/fixtures/config/origin/` holds the argusai-server suites (health, teams, sync, query) and
the demo project's basic suite, as the original project wrote them. Here they run in test-only
mode (BASE_URL points at a stub of the server), must pass, and must fail precisely when the stub
answers wrongly.
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from support.stub import case, e2e_yaml, run, serve_in_thread

from preflight_sdk.core.results.run import RunResult

pytestmark = pytest.mark.anyio

ORIGIN = Path(__file__).resolve().parents[2] / "fixtures" / "config" / "origin"
SERVER_TESTS = ORIGIN / "argusai-server" / "packages" / "server" / "tests"
DEMO_TESTS = ORIGIN / "demo-project" / "tests"


class Server:
    """The parts of the ArgusAI server (and of the demo service) the original suites call."""

    def __init__(self) -> None:
        self.broken = False
        self.teams: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.reads: dict[str, int] = {}

    def team_of(self, request: Request) -> dict[str, Any] | None:
        key = request.headers.get("x-api-key")
        return next((t for t in self.teams.values() if t["apiKey"] == key), None)

    def app(self) -> Starlette:
        async def health(request: Request) -> Response:
            database = "disconnected" if self.broken else "connected"
            return JSONResponse({"status": "ok", "service": "argusai-server", "database": database})

        async def create_team(request: Request) -> Response:
            body = await request.json()
            if any(t["slug"] == body["slug"] for t in self.teams.values()):
                return JSONResponse({"error": f"slug {body['slug']} is taken"}, status_code=409)
            team_id = uuid.uuid4().hex[:10]
            prefix = "key_" if self.broken else "ak_"
            team = {
                "id": team_id,
                "name": body["name"],
                "slug": body["slug"],
                "apiKey": prefix + uuid.uuid4().hex,
            }
            self.teams[team_id] = team
            return JSONResponse(team, status_code=201)

        async def list_teams(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            return JSONResponse(
                {"teams": [{k: v for k, v in t.items() if k != "apiKey"} for t in self.teams.values()]}
            )

        async def get_team(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            team = self.teams.get(request.path_params["id"])
            if team is None:
                return JSONResponse({"error": "no such team"}, status_code=404)
            return JSONResponse({"id": team["id"], "name": team["name"], "slug": team["slug"], "members": []})

        async def list_runs(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            limit = int(request.query_params.get("limit", "50"))
            runs = list(self.runs.values())[:limit]
            return JSONResponse({"runs": runs, "total": len(self.runs)})

        async def search_runs(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            query = await request.json()
            wanted = query["filter"]["status"]["in"]
            found = [{"id": "r1", "status": "failed"}, {"id": "r2", "status": "error"}]
            if self.broken:
                found.append({"id": "r3", "status": "passed"})
            return JSONResponse({"runs": [r for r in found if r["status"] in wanted or self.broken]})

        async def get_run(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            return JSONResponse({"error": f"run {request.path_params['id']} not found"}, status_code=404)

        async def push_run(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            body = await request.json()
            cases = [c for s in body["suites"] for c in s["cases"]]
            self.runs[body["runId"]] = {
                "id": body["runId"],
                "status": body["status"],
                "totals": {
                    "passed": sum(c["status"] == "passed" for c in cases),
                    "failed": sum(c["status"] == "failed" for c in cases),
                },
                "suites": [{"id": s["id"]} for s in body["suites"]],
            }
            return JSONResponse({"accepted": True, "runId": body["runId"]}, status_code=202)

        async def read_synced(request: Request) -> Response:
            if self.team_of(request) is None:
                return JSONResponse({"error": "missing API key"}, status_code=401)
            run_id = request.path_params["id"]
            record = self.runs.get(run_id)
            if record is None:
                return JSONResponse({"error": "no such run"}, status_code=404)
            self.reads[run_id] = self.reads.get(run_id, 0) + 1
            state = "processed" if self.reads[run_id] >= 2 else "queued"
            return JSONResponse({**record, "state": state})

        async def demo_health(request: Request) -> Response:
            return JSONResponse({"status": "ok"})

        async def demo_info(request: Request) -> Response:
            version = "v1" if self.broken else "1.4.2"
            return JSONResponse({"name": "demo-service", "version": version})

        return Starlette(
            routes=[
                Route("/api/health", health),
                Route("/api/teams", create_team, methods=["POST"]),
                Route("/api/teams", list_teams, methods=["GET"]),
                Route("/api/teams/{id}", get_team),
                Route("/api/runs", list_runs),
                Route("/api/runs/search", search_runs, methods=["POST"]),
                Route("/api/runs/{id}", get_run),
                Route("/api/sync/runs", push_run, methods=["POST"]),
                Route("/api/sync/runs/{id}", read_synced),
                Route("/health", demo_health),
                Route("/api/info", demo_info),
            ]
        )


@pytest.fixture
def server() -> Iterator[tuple[Server, str]]:
    state = Server()
    with serve_in_thread(state.app()) as url:
        yield state, url


def _project(tmp_path: Path, url: str) -> Path:
    """A test-only project whose suites are byte-for-byte copies of the original files."""
    root = tmp_path / "origin"
    (root / "tests").mkdir(parents=True)
    suites = []
    for source in (*sorted(SERVER_TESTS.glob("*.yaml")), DEMO_TESTS / "basic.yaml"):
        name = "basic" if source.parent == DEMO_TESTS else source.stem
        shutil.copyfile(source, root / "tests" / f"{name}.yaml")
        suites.append({"id": name, "file": f"tests/{name}.yaml"})
    (root / "e2e.yaml").write_text(e2e_yaml(suites, name="origin"))
    (root / ".env").write_text(f"BASE_URL={url}\n")
    return root


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_the_original_files_pass_against_a_correct_server(
    server: tuple[Server, str], tmp_path: Path
) -> None:
    state, url = server
    root = _project(tmp_path, url)
    for copy in (root / "tests").glob("*.yaml"):
        original = DEMO_TESTS / "basic.yaml" if copy.stem == "basic" else SERVER_TESTS / copy.name
        assert _digest(copy) == _digest(original)
    result = await run(root)
    assert [(c.id, c.failure.error if c.failure else None) for c in result.failures()] == []
    assert [s.id for s in result.suites] == ["health", "query", "sync", "teams", "basic"]
    assert {s.id: (s.passed, s.skipped) for s in result.suites} == {
        "health": (2, 0),
        "query": (4, 0),
        "sync": (2, 0),
        "teams": (4, 0),
        "basic": (2, 0),
    }
    assert result.ok and result.totals.total == 14
    # the sync suite saved the pushed run's id and polled it until it was processed
    [pushed] = state.runs
    assert pushed.startswith("run-") and state.reads[pushed] == 2
    # two suites created teams with timestamped slugs, and the duplicate was refused
    assert {t["slug"].split("-")[0] for t in state.teams.values()} == {"query", "sync", "e2e"}


async def test_a_wrong_server_fails_with_precise_assertions(
    server: tuple[Server, str], tmp_path: Path
) -> None:
    state, url = server
    state.broken = True
    result = await run(_project(tmp_path, url))

    def wrong(result: RunResult, name: str) -> list[tuple[str, str, Any, Any]]:
        failure = case(result, name).failure
        assert failure is not None, name
        return [(a.path, a.operator, a.expected, a.actual) for a in failure.assertions if not a.passed]

    assert wrong(result, "Health reports database connected") == [
        ("body.database", "equals", "connected", "disconnected")
    ]
    assert case(result, "Server is alive").status == "passed"

    [(path, operator, expected, actual)] = wrong(result, "Create a team")
    assert (path, operator, expected) == ("body.apiKey", "startsWith", "ak_")
    assert actual == "[redacted]"  # a secret field's value never reaches a report
    # teams is sequential: the cases after the failure are skipped, with the reason
    teams = next(s for s in result.suites if s.id == "teams")
    assert [c.status for c in teams.cases] == ["failed", "skipped", "skipped", "skipped"]

    search = wrong(result, "Search with a filter body")
    assert search == [("body.runs[2].status", "in", ["failed", "error"], "passed")]

    assert wrong(result, "系统信息") == [("body.version", "matches", "^\\d+\\.\\d+\\.\\d+", "v1")]
    info = case(result, "系统信息").failure
    assert info is not None
    assert (
        info.summary
        == 'GET /api/info returned 200, expected body.version matches "^\\d+\\.\\d+\\.\\d+", got "v1"'
    )
    assert result.status == "failed" and result.totals.failed == 4
