"""scripts/ensure-docker and scripts/base-images leave a daemon and three working local images."""

from __future__ import annotations

import secrets
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(*argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)


def test_ensure_docker_returns_at_once_when_the_daemon_answers() -> None:
    done = _run(str(REPO / "scripts" / "ensure-docker"), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Docker daemon is answering" in done.stderr or "Docker daemon is up" in done.stderr


def test_base_images_exist_and_a_second_run_skips_them() -> None:
    done = _run(str(REPO / "scripts" / "base-images"), timeout=600)
    assert done.returncode == 0, done.stderr
    assert "preflight-base/busybox exists, skipped" in done.stderr
    assert "preflight-base/python exists, skipped" in done.stderr
    assert "preflight-base/postgres exists, skipped" in done.stderr
    for image in ("preflight-base/busybox", "preflight-base/python", "preflight-base/postgres"):
        assert _run("docker", "image", "inspect", image).returncode == 0, image


def test_a_busybox_container_serves_a_file_with_httpd() -> None:
    name = f"pf-test-httpd-{secrets.token_hex(3)}"
    script = (
        "mkdir -p /www && echo served-by-busybox > /www/index.html && httpd -p 8080 -h /www && sleep 0.3 && "
        "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc 127.0.0.1 8080"
    )
    try:
        done = _run("docker", "run", "--name", name, "preflight-base/busybox", "sh", "-c", script)
        assert done.returncode == 0, done.stderr
        assert "200 OK" in done.stdout
        assert "served-by-busybox" in done.stdout
    finally:
        _run("docker", "rm", "-f", name)


def test_a_python_container_prints_its_version() -> None:
    done = _run("docker", "run", "--rm", "preflight-base/python", "python3", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Python 3.")


def test_a_postgres_container_answers_sql_from_psql_and_python() -> None:
    script = (
        "pg-start >/dev/null 2>&1 & "
        "until pg_isready -q -h 127.0.0.1; do sleep 0.05; done; "
        "psql -h 127.0.0.1 -U postgres -Atc 'CREATE TABLE t (n int); INSERT INTO t VALUES (41)' >/dev/null && "
        "python3 -c \"import psycopg2; c = psycopg2.connect(host='127.0.0.1', user='postgres'); "
        "cur = c.cursor(); cur.execute('SELECT n + 1 FROM t'); print(cur.fetchone()[0])\""
    )
    done = _run("docker", "run", "--rm", "preflight-base/postgres", "sh", "-c", script, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"
