"""A directory with a compose file and no e2e.yaml: the e2e.yaml it stands for.

`docker compose` looks for `compose.yaml`, `compose.yml`, `docker-compose.yaml` and
`docker-compose.yml`, in that order; so does preflight when there is no `e2e.yaml`/`e2e.yml`.
The project is named by the file's top-level `name:` (else the directory, as compose does), its
services are the compose file's, and its suites are found by convention: a `tests/e2e/` or `e2e/`
directory is a pytest suite `e2e`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from preflight_sdk.core.yaml_source import parse_yaml

from . import COMPOSE_NAMES

__all__ = ["COMPOSE_NAMES", "SUITE_FOLDERS", "compose_project_text", "is_compose_file"]

SUITE_FOLDERS = ("tests/e2e", "e2e")
"""The folders that, in this order, make the `e2e` pytest suite of a compose-only project."""


def is_compose_file(path: Path) -> bool:
    """Whether `path` is read as a compose file standing for a whole project (by its name)."""
    return path.name in COMPOSE_NAMES


def compose_project_text(compose: Path) -> str:
    """The e2e.yaml (as YAML text) of the project made of `compose` alone."""
    directory = compose.parent
    suites = [
        {"id": "e2e", "runner": "pytest", "file": folder}
        for folder in SUITE_FOLDERS
        if (directory / folder).is_dir()
    ][:1]
    config = {
        "project": {"name": _name(compose)},
        "compose": compose.name,
        **({"tests": {"suites": suites}} if suites else {}),
    }
    return json.dumps(config, indent=2) + "\n"  # JSON is YAML


def _name(compose: Path) -> str:
    try:
        data = parse_yaml(compose.read_text(encoding="utf-8"), file=str(compose)).data
    except (OSError, UnicodeDecodeError):
        data = None  # the compose loader reports it, with its path
    written = data.get("name") if isinstance(data, dict) else None
    name = written if isinstance(written, str) and "$" not in written else compose.parent.resolve().name
    # As compose normalises a project name: lower case, letters, digits, dashes and underscores.
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_") or "project"
