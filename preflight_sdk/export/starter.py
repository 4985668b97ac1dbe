"""The starter project `preflight init` writes into a directory without an e2e.yaml.

One busybox httpd service with a health check, one mock, one YAML suite: small enough to read in a
minute, complete enough to show every part of the format. Existing files are never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["STARTER_CONFIG", "STARTER_TEST", "write_compose_starter", "write_starter"]

STARTER_CONFIG = """\
# preflight: what to build and start, and which suites to run against it.
# Reference: `preflight schema` prints the JSON Schema of this file (point your editor at it).
# `preflight run` builds, starts, tests and cleans up; `preflight up` keeps it running.
project:
  name: {name}

services:
  - name: web
    build:
      # An existing image; add `dockerfile: Dockerfile` to build your own.
      # If busybox is not on this machine yet, run `preflight build --pull` once.
      image: busybox:1.36
    container:
      ports: ["0:8080"]          # 0 = any free host port
      command: ["sh", "-c", "mkdir -p /www && echo ok > /www/health && exec httpd -f -p 8080 -h /www"]
      healthcheck:
        path: /health            # probed from the host until it answers 2xx/3xx

mocks:
  # An HTTP mock the services reach as http://payments:<port> (and you as http://localhost:<port>).
  payments:
    port: 0
    routes:
      - method: GET
        path: /status
        response:
          status: 200
          body: {{ status: up }}

tests:
  suites:
    - id: smoke
      name: Smoke tests
      file: tests/smoke.yaml
"""

STARTER_TEST = """\
# A YAML test file: `cases` run in order against the first service's URL.
name: Smoke tests
cases:
  - name: web answers its health check
    request:
      method: GET
      path: /health
    expect:
      status: 200
"""


def _project_name(directory: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", directory.resolve().name).strip("-.")
    return name or "my-project"


COMPOSE_STARTER = """\
# preflight: the services come from {compose}; this file adds what compose has no words for.
# `preflight run` builds, starts, tests and cleans up; `preflight up` keeps it running.
project:
  name: {name}

# One file, or a list merged in order like `docker compose -f a -f b`. As a mapping:
#   compose: {{files: [...], profiles: [test], hostPorts: asWritten}}
compose: {compose}

# An entry here is laid over the compose service of the same name: a host-side health check
# (probed in milliseconds, not Docker's intervals), `kind: job` for a one-shot, another image.
services:
{services}

# HTTP mocks the services reach as http://<name>:<port>:
# mocks:
#   payments:
#     port: 0
#     routes:
#       - {{method: POST, path: /charges, response: {{status: 201, body: {{id: ch_1}}}}}}

# The suites to run against the environment:
# tests:
#   suites:
#     - {{id: e2e, runner: pytest, file: tests/e2e}}
"""


def write_compose_starter(directory: Path, compose: Path) -> list[Path]:
    """Write an `e2e.yaml` under `directory` that takes its services from `compose`.

    Returns the file written (none when `e2e.yaml` already exists).
    """
    import yaml

    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "e2e.yaml"
    if target.exists():
        return []
    try:
        relative = str(compose.resolve().relative_to(directory.resolve()))
    except ValueError:
        relative = str(compose.resolve())
    try:
        data = yaml.safe_load(compose.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        data = None
    declared = data.get("services") if isinstance(data, dict) else None
    names = [str(name) for name in declared] if isinstance(declared, dict) else []
    lines = [
        f"  {name}: {{}}   # e.g. container: {{healthcheck: {{path: /health, port: 8080}}}}" for name in names
    ]
    text = COMPOSE_STARTER.format(
        name=_project_name(directory),
        compose=json_string(relative),
        services="\n".join(lines) if lines else "  {}",
    )
    with target.open("x", encoding="utf-8") as handle:
        handle.write(text)
    return [target]


def json_string(text: str) -> str:
    """Return `text` as a YAML scalar that needs no escaping thought (a JSON string when needed)."""
    import json

    return text if re.fullmatch(r"[A-Za-z0-9_./-]+", text) else json.dumps(text)


def write_starter(directory: Path) -> list[Path]:
    """Write `e2e.yaml` and `tests/smoke.yaml` under `directory`; return the files written.

    A file that already exists is left alone (and not returned).
    """
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        directory / "e2e.yaml": STARTER_CONFIG.format(name=_project_name(directory)),
        directory / "tests" / "smoke.yaml": STARTER_TEST,
    }
    written: list[Path] = []
    for path, text in files.items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as handle:  # "x": never clobber a file created meanwhile
            handle.write(text)
        written.append(path)
    return written
