"""`mocks.<name>.hosts`: host names only, and none a container already resolves to something else."""

from __future__ import annotations

from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import ConfigError

CONFIG = """\
project: {name: hosts}
services:
  api:
    build: {image: preflight-base/python}
    container:
      ports: ["0:8000"]
      aliases: [backend]
mocks:
  stripe:
    port: 0
    hosts: [api.stripe.test, {first}]
  github:
    port: 0
    hosts: [{second}]
"""


def problems(tmp_path: Path, first: str, second: str) -> list[tuple[str, int | None, str]]:
    (tmp_path / "e2e.yaml").write_text(CONFIG.replace("{first}", first).replace("{second}", second), encoding="utf-8")
    try:
        load_config(tmp_path)
    except ConfigError as exc:
        return [(p.path, p.line, p.message) for p in exc.problems]
    return []


def test_distinct_host_names_load(tmp_path: Path) -> None:
    assert problems(tmp_path, "files.stripe.test", "api.github.test") == []
    loaded = load_config(tmp_path)
    assert loaded.config.mocks["stripe"].hosts == ["api.stripe.test", "files.stripe.test"]


@pytest.mark.parametrize(
    ("first", "second", "path", "line", "says"),
    [
        ("api", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "also the service `api`"),
        ("backend", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "alias of service `api`"),
        ("github", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "also the mock `github`"),
        ("files.stripe.test", "API.stripe.test", "$.mocks.github.hosts[0]", 14, "already a host of the mock `stripe`"),
        ("10.0.0.7", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "an IP address"),
        ("'*.stripe.test'", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "wildcard"),
        ("localhost", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "localhost"),
        ("bad_name.test", "api.github.test", "$.mocks.stripe.hosts[1]", 11, "not a host name"),
    ],
)
def test_a_host_that_collides_or_is_no_host_name_is_config_invalid_at_its_line(
    tmp_path: Path, first: str, second: str, path: str, line: int, says: str
) -> None:
    (found,) = problems(tmp_path, first, second)
    assert found[0] == path and found[1] == line and says in found[2], found
