"""Record real upstreams through a shop's suite, replay without them, catch drift: real processes.

The orders service runs in a container and calls two mocks by name; each mock records from a
real JSON API started by the test in a process of its own (payments over HTTP, the ledger over
HTTPS with a CA made by `trustme`). Then the upstreams are stopped and a plain run must pass on
the recorded routes alone. A second recording on fresh upstreams must write the same files
(nothing per-call was kept), the files must hold no secret the suite or the service sent, and
once the upstream changes a field, `preflight mocks check` must name it.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trustme
from support.upstreams import upstream

from tests.support.cli import BIN
from tests.support.docker import force_clean

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "recorded-shop"
SECRETS = ("sk_test_recshop_51HxQ2eZvKYlo2C", "tok_visa_suite_7f3a9c")
CHECK_KEY = "sk_test_checker_0a1b2c3d"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def preflight(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> tuple[int, dict[str, Any]]:
    import os

    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def recorded_files(root: Path) -> dict[str, bytes]:
    folder = root / "e2e.recorded"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A CA for the HTTPS upstream (trusted by preflight through SSL_CERT_FILE) and its certificate."""
    folder = tmp_path_factory.mktemp("upstream-tls")
    ca = trustme.CA()
    leaf = ca.issue_cert("localhost")
    (folder / "ca.pem").write_bytes(ca.cert_pem.bytes())
    leaf.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    leaf.private_key_pem.write_to_path(str(folder / "key.pem"))
    return {"ca": str(folder / "ca.pem"), "cert": str(folder / "cert.pem"), "key": str(folder / "key.pem")}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("recshop") / "recorded-shop"
    shutil.copytree(FIXTURE, root)
    yield root
    force_clean(root)


def test_record_through_a_suite_then_replay_without_the_upstreams_then_catch_drift(
    project: Path, tls: dict[str, str]
) -> None:
    ports = {"payments": free_port(), "ledger": free_port()}
    env = {"SSL_CERT_FILE": tls["ca"]}

    def record() -> dict[str, Any]:
        urls = f"payments=http://127.0.0.1:{ports['payments']},ledger=https://localhost:{ports['ledger']}"
        with (
            upstream(port=ports["payments"]),
            upstream(port=ports["ledger"], tls=(tls["cert"], tls["key"])),
        ):
            code, reply = preflight(
                project, "run", "--record", "payments,ledger", "--upstream", urls, env=env
            )
        assert reply["success"], reply
        assert code == 0, json.dumps(reply["data"]["suites"], indent=1)[:3000]
        return reply["data"]

    first = record()
    modes = {r["mock"]: (r["mode"], r["written"]) for r in first["recordings"]}
    assert modes == {"payments": ("recorded", True), "ledger": ("recorded", True)}
    payments = next(r for r in first["recordings"] if r["mock"] == "payments")
    assert payments["exchanges"] == 3 and len(payments["added"]) == 3  # charge, read back, declined

    files = recorded_files(project)
    assert {"payments.yaml", "ledger.yaml"} <= set(files)
    text = b"".join(files.values()).decode("utf-8", "replace")
    for secret in SECRETS:
        assert secret not in text, f"{secret} reached the route files"
    assert not UUID.search(text), "a per-call UUID was written"
    assert "x-request-id" not in text.lower() and "date:" not in text.lower()
    assert "hand-written health" not in text  # the hand-written route answered; nothing recorded for it

    # The upstreams are gone: the recorded routes alone give the same verdict.
    code, replay = preflight(project, "run")
    assert replay["success"] and code == 0, json.dumps(replay["data"]["suites"], indent=1)[:3000]
    assert replay["data"]["status"] == "passed"
    assert {(r["mock"], r["mode"]) for r in replay["data"]["recordings"]} == {
        ("payments", "replayed"),
        ("ledger", "replayed"),
    }

    # A second recording on fresh upstreams writes the same files: nothing per call was kept.
    second = record()
    assert recorded_files(project) == files
    for result in second["recordings"]:
        assert (result.get("added", []), result.get("replaced", [])) == ([], []), result
        assert result.get("unchanged", 0) >= 1

    # The upstream moves on (`amount` becomes a string, `fee` appears): the check names both.
    with upstream(port=ports["payments"], drift=True):
        code, check = preflight(
            project, "mocks", "check", "payments", "-H", f"Authorization: Bearer {CHECK_KEY}", env=env
        )
    assert check["success"], check
    assert code == 1 and check["data"]["status"] == "drift"
    found = {(d["kind"], d.get("path")) for r in check["data"]["routes"] for d in r.get("differences", [])}
    assert ("type", "$.amount") in found and ("added", "$.fee") in found
    assert all(secret not in json.dumps(check) for secret in (*SECRETS, CHECK_KEY))
