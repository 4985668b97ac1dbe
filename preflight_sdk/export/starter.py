"""The starter project `preflight init` writes into a directory without an e2e.yaml.

One busybox httpd service with a health check, one mock, one YAML suite: small enough to read in a
minute, complete enough to show every part of the format. Existing files are never overwritten.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["STARTER_CONFIG", "STARTER_TEST", "write_starter"]

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
