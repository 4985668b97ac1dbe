"""Imported files run as written against a real service and pass.

The service is a container serving Hurl's own test routes (tests/fixtures/imports/server, with
Hurl's assert_json.py unchanged) and two of ours. Hurl's assert_json.hurl, our shop.http and our
Postman collection are imported through `Project.import_file` (their `localhost:8000` matched to
the service by its port), added to e2e.yaml as suites, and run: every case passes. The CLI's
`preflight import` does the same for the Hurl file, and refuses to replace it.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import yaml
from support.cli import preflight_json
from support.docker import force_clean

from preflight_sdk import Project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "imports"

CONFIG = """
project: {{name: imported}}
services:
  api:
    build: {{image: "{image}", dockerfile: server/Dockerfile, context: server}}
    container:
      ports: ["0:8000"]
      healthcheck: {{path: /assert-json}}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("imported")
    image = f"preflight-test/imported:{uuid.uuid4().hex[:10]}"
    shutil.copytree(FIXTURES / "server", root / "server")
    for source in ("hurl/assert_json.hurl", "http/shop.http", "postman/shop.postman_collection.json"):
        shutil.copy(FIXTURES / source, root / Path(source).name)
    (root / "e2e.yaml").write_text(textwrap.dedent(CONFIG.format(image=image)))
    yield root
    force_clean(root)
    subprocess.run(["docker", "rmi", "-f", image], capture_output=True)


def test_imported_hurl_http_and_postman_files_run_against_the_service_and_pass(project: Path) -> None:
    async def go() -> tuple[list[object], object]:
        async with Project.open(project) as p:
            imported = [
                await p.import_file("assert_json.hurl"),
                await p.import_file("shop.http"),
                await p.import_file("shop.postman_collection.json", output="tests/shop-postman.yaml"),
            ]
            config = yaml.safe_load((project / "e2e.yaml").read_text())
            config["tests"] = {"suites": [i.suite_entry for i in imported]}
            (project / "e2e.yaml").write_text(yaml.safe_dump(config))
            return imported, await p.run()

    imported, result = anyio.run(go)
    for each in imported:
        assert [(h.found, h.target) for h in each.hosts] in (  # type: ignore[attr-defined]
            [("http://localhost:8000", "service api")],
            [("{{base}}", "service api")],
            [("{{baseUrl}}", "service api")],
        )
    failures = {c.name: c.failure.summary for s in result.suites for c in s.cases if c.failure}  # type: ignore[attr-defined]
    assert failures == {}
    counts = {s.id: (s.status, s.passed) for s in result.suites}  # type: ignore[attr-defined]
    assert counts == {"assert-json": ("passed", 8), "shop": ("passed", 3), "shop-postman": ("passed", 3)}


def test_the_cli_imports_and_never_replaces_a_file(project: Path) -> None:
    reply = preflight_json(project, "import", "assert_json.hurl", "--output", "tests/cli.yaml")
    assert reply["success"] is True
    data = reply["data"]
    assert (data["cases"], data["hosts"][0]["how"]) == (8, "by port 8000")
    assert any(n["place"] == "assert_json.hurl:13" for n in data["notConverted"])
    again = preflight_json(project, "import", "assert_json.hurl", "--output", "tests/cli.yaml")
    assert again["success"] is False
    assert again["error"]["code"] == "INVALID_INPUT" and "already exists" in again["error"]["message"]
