"""Repositories written by `preflights` 1.1.4 are read by us, and ours by it.

`preflights` runs in its own virtualenv (`<repo>/.venv-preflights`, created on first use with
`pip install preflights==1.1.4`; if that install fails, the tests fail in CI and are skipped on a
developer machine) and is driven through its Python API: `create_app` with its real
clock and random UIDs, its `FilesystemAdapter` parser and its MCP `read_architecture` tool
implementation (its stdio server targets mcp 1.x).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from preflight_sdk.clarify import clarify, read_architecture
from preflight_sdk.clarify.artifacts.adr import parse_adr

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
VENV = ROOT / ".venv-preflights"

DRIVER = r"""
import json, sys
from preflights.adapters.filesystem import FilesystemAdapter
from preflights.adapters.random_uid import RandomUIDProvider
from preflights.adapters.system_clock import SystemClockProvider
from preflights.application import create_app
from preflights.mcp.tools import MCPTools

mode, repo = sys.argv[1], sys.argv[2]
app = create_app(uid_provider=RandomUIDProvider(), clock_provider=SystemClockProvider())


def decide(intention, answers):
    started = app.start_preflight(intention, repo)
    result = app.continue_preflight(started.session_id, answers)
    while result.status in ("needs_clarification", "needs_more_answers"):
        extra = {q.id: ("src/" if q.id == "allowlist_paths" else "It works") for q in result.questions}
        result = app.continue_preflight(started.session_id, extra)
    assert result.status == "completed", result.error
    return {"adr": result.artifacts.adr_path, "task": result.artifacts.task_path}


if mode == "write":
    out = [decide("Add authentication", {"auth_strategy": "OAuth", "auth_library": "next-auth"}),
           decide("Add a database", {"db_type": "PostgreSQL", "db_orm": "Prisma"})]
elif mode == "continue":
    out = decide("Add a React frontend", {"frontend_framework": "Svelte", "styling": "Tailwind"})
else:
    fs = FilesystemAdapter()
    state = fs.read_architecture_state(repo)
    task = fs.read_current_task(repo)
    out = {
        "state_uid": state.uid,
        "state": {c: dict(f) for c, f in state.categories},
        "task": {"uid": task.uid, "title": task.title, "related_adr": task.related_adr_uid},
        "mcp": MCPTools(app, repo).read_architecture(repo).to_dict(),
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def preflights_python(request: pytest.FixtureRequest) -> Path:
    python = VENV / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    probe = [str(python), "-c", "import importlib.metadata as m; print(m.version('preflights'))"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == "1.1.4":
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True, timeout=120)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "preflights==1.1.4"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if install.returncode != 0:
        message = f"cannot install preflights==1.1.4: {install.stderr.strip()[-300:]}"
        # In CI (CI=true sets --require-docker) the compatibility check must run: a failed install
        # is a broken build, never a silent skip. On a developer machine offline, skip.
        if os.environ.get("CI") == "true" or request.config.getoption("--require-docker"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return python


def _drive(python: Path, mode: str, repo: Path) -> Any:
    done = subprocess.run(
        [str(python), "-c", DRIVER, mode, str(repo)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.anyio
async def test_a_repository_written_by_preflights_is_read_and_continued_by_us(
    preflights_python: Path, repo: Path
) -> None:
    written = _drive(preflights_python, "write", repo)
    their_latest = Path(written[1]["adr"]).name
    their_task = (repo / "docs/CURRENT_TASK.md").read_bytes()

    arch = await read_architecture(repo)
    assert arch.uid == their_latest.split("_")[0]
    assert arch.categories == {
        "Authentication": {"Library": "next-auth", "Strategy": "OAuth"},
        "Database": {"ORM": "Prisma", "Type": "PostgreSQL"},
    }
    assert not arch.regenerated, "their projection is byte for byte what we render from their ADR"

    done = await clarify(repo, "Add a Redis cache", answers={})
    adr_path = repo / next(a.path for a in done.artifacts if a.type == "adr")
    ours = parse_adr(adr_path.read_text(), adr_path)
    assert ours.previous_uid == arch.uid
    assert ours.previous_file == their_latest and (adr_path.parent / their_latest).is_file()
    assert set(ours.snapshot) == {"Authentication", "Database", "Infra"}
    assert done.archived_task and (repo / done.archived_task).read_bytes() == their_task
    assert done.archived_task.endswith("_add_a_database.md")


@pytest.mark.anyio
async def test_a_repository_written_by_us_is_read_and_continued_by_preflights(
    preflights_python: Path, repo: Path
) -> None:
    await clarify(repo, "Add authentication", answers={"auth_strategy": "OAuth", "auth_library": "Auth0"})
    done = await clarify(repo, "Add a Postgres database", answers={"db_orm": "Prisma"})
    ours = await read_architecture(repo)
    our_task = (repo / "docs/CURRENT_TASK.md").read_bytes()
    task_uid = next(a.uid for a in done.artifacts if a.type == "task")

    seen = _drive(preflights_python, "read", repo)
    assert seen["state_uid"] == ours.uid
    assert {
        c: {k: v.split(" (ADR ")[0] for k, v in f.items()} for c, f in seen["state"].items()
    } == ours.categories
    assert seen["task"] == {"uid": task_uid, "title": "Add a Postgres database", "related_adr": ours.uid}
    assert seen["mcp"] == {
        "status": "success",
        "architecture": {"uid": ours.uid, "categories": ours.categories},
        "source_file": "docs/ARCHITECTURE_STATE.md",
    }

    theirs = _drive(preflights_python, "continue", repo)
    after = await read_architecture(repo)
    assert after.uid == Path(theirs["adr"]).name.split("_")[0]
    assert after.uid is not None and ours.uid is not None and after.uid > ours.uid
    assert after.categories == {**ours.categories, "Frontend": {"Framework": "Svelte", "Styling": "Tailwind"}}
    archived = list((repo / "docs/archive/task").glob(f"{task_uid}_*.md"))
    assert len(archived) == 1 and archived[0].read_bytes() == our_task
