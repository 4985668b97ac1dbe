"""A mock stands in for a real host name over HTTPS: real Docker, real TLS, real clients.

The service's image has Python's urllib, requests, httpx and curl and knows nothing of preflight: the
environment gives its container the host name (resolved to the mocks), the project's CA bundle
(mounted read-only) and the variables those clients read. Each call verifies the certificate.
The same image without the environment cannot even resolve the name (it is not on the internet
here), and the CA's key is in no file of the run.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support.cli import BIN
from support.docker import force_clean

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "https-hosts"


def preflight(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [str(BIN / "preflight"), *args, "-C", str(root), "--json"], capture_output=True, text=True, timeout=900
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("hosts") / "https-hosts"
    shutil.copytree(FIXTURE, root)
    yield root
    force_clean(root)


def test_urllib_requests_httpx_and_curl_reach_the_mock_at_its_real_name_with_verification_on(project: Path) -> None:
    code, reply = preflight(project, "run", "--keep")
    assert reply["success"], reply
    data = reply["data"]
    cases = {c["name"]: (c["status"], (c.get("failure") or {}).get("summary")) for s in data["suites"] for c in s["cases"]}
    assert code == 0 and all(status == "passed" for status, _ in cases.values()), cases
    (mock,) = data["setup"]["mocks"]
    assert mock["hosts"] == ["api.example.test"]

    # The command exited, the environment is kept: a detached mock host now serves HTTPS too.
    state = json.loads((project / ".preflight" / "state.json").read_text())
    container = state["containers"][0]["name"]
    again = subprocess.run(
        ["docker", "exec", container, "curl", "-sS", "--fail", "--max-time", "10", "https://api.example.test/v1/hello"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0 and json.loads(again.stdout)["hello"] == "world", again.stderr
    # The plain port answers as always, beside HTTPS on 443.
    plain = subprocess.run(
        ["docker", "exec", container, "curl", "-sS", "--fail", "--max-time", "10", f"http://example:{mock['port']}/v1/hello"],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert plain.returncode == 0 and json.loads(plain.stdout)["url"].startswith("http://example:"), plain.stderr
    journal = preflight(project, "mock-requests")[1]["data"]["mocks"][0]["requests"]
    assert [r["url"] for r in journal] == [
        "https://api.example.test/v1/hello",
        f"http://example:{mock['port']}/v1/hello",
    ]

    # The service's own container: the CA bundle is mounted read-only, nothing else changed.
    inspect = json.loads(subprocess.run(["docker", "inspect", container], capture_output=True, check=True).stdout)[0]
    mounts = {m["Destination"]: m for m in inspect["Mounts"]}
    assert mounts["/etc/preflight/ca-bundle.pem"]["RW"] is False
    for variable in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"):
        assert f"{variable}=/etc/preflight/ca-bundle.pem" in inspect["Config"]["Env"], variable

    # The same image outside the environment: the name does not resolve.
    alone = subprocess.run(
        ["docker", "run", "--rm", "preflight-test/https-client:latest", "curl", "-sS", "--max-time", "10",
         "https://api.example.test/v1/hello"],
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert alone.returncode == 6 and "resolve" in alone.stderr.lower(), alone.stderr

    # The CA's key stays in .preflight/tls: no report or other file of the run holds it.
    key = (project / ".preflight" / "tls" / "ca-key.pem").read_bytes()
    body = b"".join(line for line in key.splitlines() if line and not line.startswith(b"-----"))
    for path in (project / ".preflight").rglob("*"):
        if path.is_file() and path.parent.name != "tls":
            assert body[:40] not in path.read_bytes(), path
    assert b"PRIVATE KEY" not in json.dumps(reply).encode()

    cleaned = preflight(project, "clean")[1]
    assert cleaned["success"], cleaned
