"""The starter project `preflight init` writes into a directory without an e2e.yaml.

One tiny web service built from its own Dockerfile, with a health check, one mock, one YAML suite:
small enough to read in a minute, complete enough to show every part of the format. The Dockerfile
starts FROM an image that is already on this machine when one fits (busybox, or preflight's own
base image), so the starter builds and runs offline; e2e.yaml says how to pick another base.
Existing files are never overwritten.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "BASE_CANDIDATES",
    "DEFAULT_BASE",
    "STARTER_CONFIG",
    "STARTER_DOCKERFILE",
    "STARTER_TEST",
    "STATE_IGNORE",
    "ignore_state",
    "pick_base",
    "write_compose_starter",
    "write_starter",
]

DEFAULT_BASE = "busybox:1.36"
# Images with busybox's httpd, best first: the first one present locally is the starter's base.
BASE_CANDIDATES = (DEFAULT_BASE, "busybox:latest", "busybox", "preflight-base/busybox:latest")

STARTER_CONFIG = """\
# preflight: what to build and start, and which suites to run against it.
# Reference: `preflight schema` prints the JSON Schema of this file (point your editor at it).
# `preflight run` builds, starts, tests and cleans up; `preflight up` keeps it running.
project:
  name: {name}

services:
  - name: web
    build:
      image: {image}
      dockerfile: web/Dockerfile
      context: web
      # The image the Dockerfile starts FROM: any local image with busybox's httpd. Offline, pick
      # one `docker images` lists; online, `preflight build --pull` is not needed (docker build
      # fetches a missing base itself).
      args: {{BASE: "{base}"}}
    container:
      ports: ["0:8080"]          # 0 = any free host port
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

STARTER_DOCKERFILE = """\
# The starter's web service: busybox's httpd serving /www on port 8080.
# BASE comes from e2e.yaml (`build.args`): an image already on this machine builds offline.
ARG BASE={default}
FROM ${{BASE}}
RUN mkdir -p /www && echo ok > /www/health
EXPOSE 8080
CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]
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


def pick_base(local: Sequence[str]) -> str:
    """The first of `BASE_CANDIDATES` among the `local` images, else `DEFAULT_BASE`."""
    return next((ref for ref in BASE_CANDIDATES if ref in local), DEFAULT_BASE)


def write_starter(directory: Path, *, base: str = DEFAULT_BASE) -> list[Path]:
    """Write `e2e.yaml`, `web/Dockerfile` and `tests/smoke.yaml` under `directory`; return the files written.

    `base` is the image the Dockerfile starts FROM. A file that already exists is left alone (and
    not returned).
    """
    directory.mkdir(parents=True, exist_ok=True)
    name = _project_name(directory)
    image = f"{re.sub(r'[^a-z0-9_.-]+', '-', name.lower()).strip('-.') or 'starter'}-web:dev"
    files = {
        directory / "e2e.yaml": STARTER_CONFIG.format(name=name, image=image, base=base),
        directory / "web" / "Dockerfile": STARTER_DOCKERFILE.format(default=DEFAULT_BASE),
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


STATE_IGNORE = ".preflight/"
"""The `.gitignore` entry for the project's state folder (runs, store, session, locks)."""


def ignore_state(directory: Path) -> Path | None:
    """Add `.preflight/` to `directory/.gitignore` (created when missing) unless it is there.

    Return the file when it changed, else None.
    """
    target = directory / ".gitignore"
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    entries = {line.strip().lstrip("/").rstrip("/") for line in text.splitlines()}
    if ".preflight" in entries:
        return None
    separator = "" if not text or text.endswith("\n") else "\n"
    with target.open("a", encoding="utf-8") as handle:
        handle.write(f"{separator}# preflight's runs, store and session\n{STATE_IGNORE}\n")
    return target
