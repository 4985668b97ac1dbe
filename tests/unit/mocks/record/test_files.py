"""The route file: written whole in e2e.yaml's grammar, large bodies beside it, merged with the last one."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.config.mocks.recorded import read_route_file, route_file_path
from preflight_sdk.config.model import MockResponse, MockRoute, RecordedOrigin
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.core.redaction import DEFAULT
from preflight_sdk.mocks.record import Recorder, save_recording
from preflight_sdk.mocks.record.files import INLINE_LIMIT, write_route_file
from preflight_sdk.mocks.record.merge import merge_routes

CONFIG = """\
project: {name: files}
mocks:
  payments:
    port: 0
    routes:
      - {method: GET, path: /v1/plans, response: {body: [hand-written]}}
"""


def route(path: str, body: object, *, at: str = "2026-11-30T10:00:00Z", status: int = 200) -> MockRoute:
    return MockRoute(
        method="GET",
        path=path,
        response=MockResponse(status=status, body=body),
        recorded=RecordedOrigin(at=at, example=path),
    )


def recorder_with(*answers: tuple[str, bytes, bytes]) -> Recorder:
    recorder = Recorder("http://upstream.test")
    for index, (path, content_type, payload) in enumerate(answers):
        recorder.keep(
            "GET", path, b"", [], b"", 200, [(b"content-type", content_type)], payload, time.time() + index
        )
    return recorder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "e2e.yaml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def test_recorded_routes_load_after_the_hand_written_ones_which_win(project: Path) -> None:
    path = route_file_path(project / "e2e.yaml", "payments")
    write_route_file(
        path,
        mock="payments",
        upstream="http://upstream.test",
        routes=[route("/v1/plans", ["recorded"]), route("/v1/other", 1)],
    )
    loaded = load_config(project)
    routes = loaded.config.mocks["payments"].routes
    assert [(r.path, r.recorded is not None) for r in routes] == [
        ("/v1/plans", False),
        ("/v1/plans", True),
        ("/v1/other", True),
    ]
    assert str(path) in loaded.sources


def test_a_large_body_goes_to_a_file_beside_the_routes_and_comes_back_whole(project: Path) -> None:
    big = {"items": [{"sku": f"sku-{i}", "name": "x" * 40} for i in range(200)]}
    path = route_file_path(project / "e2e.yaml", "payments")
    payload = json.dumps(big).encode()
    assert len(payload) > INLINE_LIMIT
    saved = save_recording(
        recorder_with(
            ("/v1/catalog", b"application/json", payload), ("/v1/logo", b"image/png", b"\x89PNG\r\n\x00\xff")
        ),
        mock="payments",
        path=path,
        redactor=DEFAULT,
        at="2026-11-30T10:00:00Z",
    )
    assert saved.merged is not None and len(saved.merged.added) == 2
    text = path.read_text()
    assert "sku-199" not in text  # not inline
    files = sorted(p.name for p in (path.parent / "payments").iterdir())
    assert len(files) == 2 and files[0].endswith(".json") and files[1].endswith(".bin")
    loaded, problems = read_route_file(path)
    assert problems == [] and loaded is not None
    by_path = {r.path: r for r in loaded.routes}
    catalog = by_path["/v1/catalog"].response
    assert catalog is not None and catalog.body_file is not None and Path(catalog.body_file).is_absolute()
    assert json.loads(Path(catalog.body_file).read_bytes()) == big
    logo = by_path["/v1/logo"].response
    assert logo is not None and logo.body_file is not None
    assert Path(logo.body_file).read_bytes() == b"\x89PNG\r\n\x00\xff"


def test_recording_the_same_answers_again_writes_the_same_file_and_says_nothing_changed(
    project: Path,
) -> None:
    path = route_file_path(project / "e2e.yaml", "payments")
    answers = [("/v1/catalog", b"application/json", json.dumps({"n": "x" * 5000}).encode())]
    save_recording(
        recorder_with(*answers), mock="payments", path=path, redactor=DEFAULT, at="2026-11-30T10:00:00Z"
    )
    first = {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()}
    again = save_recording(
        recorder_with(*answers), mock="payments", path=path, redactor=DEFAULT, at="2026-12-01T09:00:00Z"
    )
    assert again.merged is not None
    assert (again.merged.added, again.merged.replaced, again.merged.unchanged) == ([], [], 1)
    assert {p.relative_to(project): p.read_bytes() for p in project.rglob("*") if p.is_file()} == first


def test_a_second_recording_adds_new_routes_replaces_changed_ones_and_keeps_the_rest() -> None:
    before = [route("/a", 1), route("/b", 2), route("/c", 3)]
    merged = merge_routes(
        before, [route("/a", 1, at="later"), route("/b", 20, at="later"), route("/d", 4, at="later")]
    )
    assert merged.added == ["GET /d"]
    assert merged.replaced == ["GET /b"]
    assert (merged.unchanged, merged.kept) == (1, 1)
    by_path = {r.path: r for r in merged.routes}
    assert by_path["/a"].recorded is not None and by_path["/a"].recorded.at == "2026-11-30T10:00:00Z"
    assert by_path["/b"].recorded is not None and by_path["/b"].recorded.at == "later"
    assert set(by_path) == {"/a", "/b", "/c", "/d"}


def test_an_invalid_route_file_is_a_config_error_with_its_own_line(project: Path) -> None:
    path = route_file_path(project / "e2e.yaml", "payments")
    path.parent.mkdir()
    path.write_text("mock: payments\nroutes:\n  - path: /x\n    respnse: {status: 200}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(project)
    (problem,) = caught.value.problems
    assert problem.file == str(path) and problem.line == 4
    assert problem.suggestion == "response"


def test_a_missing_body_file_is_a_config_error_at_its_line(project: Path) -> None:
    (project / "e2e.yaml").write_text(
        CONFIG.replace("response: {body: [hand-written]}", "response: {bodyFile: plans.json}"),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as caught:
        load_config(project)
    (problem,) = caught.value.problems
    assert "plans.json" in problem.message and problem.line == 6
    (project / "plans.json").write_text('{"plans": []}', encoding="utf-8")
    loaded = load_config(project)
    response = loaded.config.mocks["payments"].routes[0].response
    assert response is not None and response.body_file == str(project / "plans.json")


def test_a_write_that_fails_leaves_the_previous_route_file_whole(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = route_file_path(project / "e2e.yaml", "payments")
    write_route_file(path, mock="payments", upstream=None, routes=[route("/a", 1)])
    before = path.read_bytes()

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_route_file(path, mock="payments", upstream=None, routes=[route("/a", 1), route("/b", 2)])
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
    assert read_route_file(path)[0] is not None  # still a readable file
