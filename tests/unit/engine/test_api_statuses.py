"""The Engine API lane's errors read by the HTTP status the daemon answered, its words kept."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from support.stand_in_daemon import stand_in_daemon

from preflight_sdk import PreflightError
from preflight_sdk.engine.base import ContainerSpec
from preflight_sdk.engine.errors import from_status
from preflight_sdk.engine.socket_lane import SocketLane

SPEC = ContainerSpec(name="pf-shop-1a2b3c-api", image="shop-api:e2e", network="pf-shop-1a2b3c")


def _answer(status: str, message: str) -> bytes:
    body = json.dumps({"message": message}).encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def _run(tmp_path: Path, *answers: bytes) -> PreflightError:
    path = tmp_path / f"d{len(list(tmp_path.iterdir()))}.sock"  # a daemon of its own each time
    thread = stand_in_daemon(path, list(answers))
    with pytest.raises(PreflightError) as caught:
        await SocketLane(str(path)).run(SPEC)
    await anyio.to_thread.run_sync(thread.join)
    return caught.value


@pytest.mark.anyio
async def test_a_create_answered_404_is_not_built_naming_the_image_whatever_the_daemons_words(
    tmp_path: Path,
) -> None:
    # Words no pattern knows (a daemon of another version, a registry's): the status says it.
    error = await _run(tmp_path, _answer("404 Not Found", "reference does not exist"))
    assert error.code == "NOT_BUILT"
    assert (
        error.message
        == f"cannot start container {SPEC.name}: image shop-api:e2e is not built (or not present locally)"
    )
    assert error.details == {
        "image": "shop-api:e2e",
        "subject": SPEC.name,
        "stderr": "reference does not exist",
        "httpStatus": 404,
    }


@pytest.mark.anyio
async def test_a_create_answered_404_for_its_network_is_not_a_missing_image(tmp_path: Path) -> None:
    error = await _run(tmp_path, _answer("404 Not Found", f"network {SPEC.network} not found"))
    assert error.code == "DOCKER_ERROR"
    assert error.message == f"cannot start container {SPEC.name}: network {SPEC.network} not found"
    assert error.details is not None and error.details["httpStatus"] == 404
    assert f"network {SPEC.network} does not exist (any more)" in error.hint


@pytest.mark.anyio
async def test_a_name_in_use_is_a_conflict_keeping_the_daemons_words(tmp_path: Path) -> None:
    said = (
        f'Conflict. The container name "/{SPEC.name}" is already in use by container "9f2c". '
        "You have to remove (or rename) that container to be able to reuse that name."
    )
    error = await _run(tmp_path, _answer("409 Conflict", said))
    assert error.code == "DOCKER_ERROR" and not error.retryable
    assert error.message == f"cannot start container {SPEC.name}: {said}"
    # Setup replaces a container of its own session that a crash left by these words.
    assert (
        error.details is not None and error.details["stderr"] == said and error.details["httpStatus"] == 409
    )
    assert "conflicts with the object's state" in error.hint


@pytest.mark.anyio
async def test_a_start_answered_500_is_a_port_conflict_only_when_it_says_a_port_is_taken(
    tmp_path: Path,
) -> None:
    created = (
        b'HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"Id":"c1"}\n'
    )
    taken = (
        "driver failed programming external connectivity on endpoint pf-shop-1a2b3c-api (3e1f): "
        "Bind for 0.0.0.0:8080 failed: port is already allocated"
    )
    error = await _run(tmp_path, created, _answer("500 Internal Server Error", taken))
    assert (error.code, error.details and error.details["port"]) == ("PORT_CONFLICT", 8080)
    assert error.details is not None and error.details["httpStatus"] == 500
    other = await _run(tmp_path, created, _answer("500 Internal Server Error", "OCI runtime create failed"))
    assert other.code == "DOCKER_ERROR"
    assert other.message == f"cannot start container {SPEC.name}: OCI runtime create failed"
    assert other.details is not None and other.details["httpStatus"] == 500


@pytest.mark.parametrize(
    ("status", "said", "missing", "code"),
    [
        (404, "no such object", ("image", "shop-api:e2e"), "NOT_BUILT"),
        (
            404,
            "No such image: shop-api:e2e",
            ("container", "api"),
            "DOCKER_ERROR",
        ),  # the status and kind rule
        (409, "address already in use", None, "DOCKER_ERROR"),  # a conflict, whatever its words
        (503, "the daemon is shutting down", None, "DOCKER_ERROR"),
    ],
)
def test_the_status_and_the_missing_kind_choose_the_code(
    status: int, said: str, missing: tuple[str, str] | None, code: str
) -> None:
    error = from_status(status, said, action="start container api", subject="api", missing=missing)
    assert error.code == code
    assert (
        error.details is not None
        and error.details["httpStatus"] == status
        and said in error.details["stderr"]
    )
