"""The compose loader's edges (crashes, lineless problems, wrong accepts and refusals) and real sample files."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight_sdk.config import load_config
from preflight_sdk.config.compose import load_compose
from preflight_sdk.config.compose.schema import compose_schema
from preflight_sdk.core.errors import ConfigError

AWESOME = Path(__file__).resolve().parents[2] / "fixtures" / "compose" / "awesome"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def problems(root: Path, environ: dict[str, str] | None = None) -> list[tuple[str, int | None, str]]:
    """The CONFIG_INVALID problems of the project at `root` as (path, line, message)."""
    with pytest.raises(ConfigError) as caught:
        load_config(root, environ=environ or {})
    assert caught.value.code == "CONFIG_INVALID"
    return [(p.path, p.line, p.message) for p in caught.value.problems]


# -- once crashes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("retries", ['"${UNSET}"', "three", "2.5", "0"])
def test_a_retries_that_is_not_a_whole_number_after_substitution_is_a_problem(
    tmp_path: Path, retries: str
) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": f"""
                services:
                  db:
                    image: preflight-base/busybox
                    healthcheck:
                      test: ["CMD", "true"]
                      retries: {retries}
            """
        },
    )
    ((path, line, message),) = problems(tmp_path)
    assert (path, line) == ("$.services.db.healthcheck.retries", 7)
    assert "whole number" in message or "at least 1" in message


def test_services_written_as_a_list_is_a_problem_with_its_line(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": "services:\n  - name: db\n    image: x\n"})
    ((path, line, message),) = problems(tmp_path)
    assert (path, line) == ("$.services", 2)
    assert "is not of type 'object'" in message


# -- once without a line ---------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\n\n# only a comment\n"])
def test_an_empty_compose_file_is_a_problem_on_line_one(tmp_path: Path, text: str) -> None:
    (tmp_path / "compose.yaml").write_text(text)
    assert problems(tmp_path) == [("$", 1, "the compose file is empty; expected a mapping with `services:`")]


def test_an_alias_bomb_is_a_problem_with_a_line(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    (tmp_path / "compose.yaml").write_text("\n".join([*lines, "services: {}"]) + "\n")
    found = problems(tmp_path)
    assert any("too large" in message and line is not None for _, line, message in found), found


# -- once accepted, though invalid -----------------------------------------------------------------


def test_a_service_named_by_a_number_is_refused_and_a_quoted_one_is_not(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": "services:\n  123:\n    image: x\n  '456':\n    image: x\n"})
    ((path, line, message),) = problems(tmp_path)
    assert (path, line) == ("$.services.123", 2)
    assert "written as a number" in message and "'123'" in message


def test_an_environment_key_written_as_a_number_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": "services:\n  a:\n    image: x\n    environment:\n      1: FOO\n"})
    assert [(p, line) for p, line, _ in problems(tmp_path)] == [("$.services.a.environment.1", 5)]


def test_a_long_form_bind_mount_without_source_is_refused(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  a:\n    image: x\n    volumes:\n      - {type: bind, target: /data}\n"
        },
    )
    ((path, line, message),) = problems(tmp_path)
    assert (path, line) == ("$.services.a.volumes[0]", 5)
    assert "needs a `source`" in message


@pytest.mark.parametrize(
    ("key", "value", "why"),
    [
        ("init", "maybe", "true or false"),
        ("cpus", "lots", "not a number"),
        ("shm_size", "big", "not a size"),
        ("stop_grace_period", "soon", "not a duration"),
    ],
)
def test_values_are_checked_after_substitution(tmp_path: Path, key: str, value: str, why: str) -> None:
    write(tmp_path, {"compose.yaml": f"services:\n  a:\n    image: x\n    {key}: ${{V}}\n"})
    ((path, line, message),) = problems(tmp_path, {"V": value})
    assert (path, line) == (f"$.services.a.{key}", 4)
    assert why in message


# -- once refused, though valid --------------------------------------------------------------------


def test_healthcheck_start_interval_is_honoured(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": """
                services:
                  a:
                    image: x
                    healthcheck: {test: [CMD, "true"], interval: 30s, start_interval: 2s, start_period: 5s}
            """
        },
    )
    loaded = load_config(tmp_path, environ={})
    check = loaded.services[0].container.docker_healthcheck
    assert check is not None and (check.interval, check.start_period) == ("2s", "5s")
    assert loaded.warnings == []


# -- overrides, extends, include, profiles, dependencies ------------------------------------------


def test_compose_override_changes_and_drops_keys_without_editing_the_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": """
                services:
                  db:
                    image: postgres:16
                    restart: always
                    ports: ["5432:5432"]
                    environment: {POSTGRES_DB: prod, POSTGRES_USER: app}
                    network_mode: host
            """,
            "e2e.yaml": """
                project: {name: over}
                compose:
                  files: [compose.yaml]
                  override:
                    services:
                      db:
                        image: preflight-base/postgres
                        restart: null
                        network_mode: null
                        ports: ["5433"]
                        environment: {POSTGRES_DB: test}
            """,
        },
    )
    loaded = load_config(tmp_path, environ={})
    (db,) = loaded.services
    assert db.build.image == "preflight-base/postgres"
    assert db.container.ports == ["0:5433/tcp"]
    assert db.container.environment == {"POSTGRES_DB": "test", "POSTGRES_USER": "app"}
    assert loaded.warnings == []  # `restart` was dropped, so nothing was set aside


def test_reset_and_override_tags_of_an_override_file(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": """
                services:
                  db:
                    image: x
                    restart: always
                    ports: ["5432:5432"]
                    environment: {A: "1", B: "2"}
            """,
            "compose.test.yaml": """
                services:
                  db:
                    restart: !reset null
                    ports: !reset []
                    environment: !override {C: "3"}
            """,
            "e2e.yaml": "project: {name: tags}\ncompose: [compose.yaml, compose.test.yaml]\n",
        },
    )
    loaded = load_config(tmp_path, environ={})
    (db,) = loaded.services
    assert (db.container.ports, db.container.environment, loaded.warnings) == ([], {"C": "3"}, [])


def test_an_unknown_tag_is_a_problem(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": "services:\n  a:\n    image: !custom x\n"})
    ((path, line, message),) = problems(tmp_path)
    assert (path, line, message) == (
        "$.services.a.image",
        3,
        "unknown tag `!custom` (compose knows `!reset` and `!override`)",
    )


def test_an_override_that_breaks_the_schema_is_a_problem(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  db: {image: x}\n",
            "e2e.yaml": "project: {name: o}\ncompose: {files: [compose.yaml], override: {services: {db: {ports: 5}}}}\n",
        },
    )
    ((path, _, message),) = problems(tmp_path)
    assert path == "$.services.db.ports" and message.startswith("after `compose.override`")


def test_extends_include_and_profiles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": """
                include: [shared/compose.yaml]
                services:
                  web:
                    extends: {file: common/base.yaml, service: base}
                    environment: {ROLE: web}
                    depends_on:
                      cache: {condition: service_started}
                      metrics: {condition: service_started, required: false}
                  debug:
                    image: x
                    profiles: [debug]
            """,
            "common/base.yaml": """
                services:
                  base:
                    image: x
                    env_file: base.env
                    environment: {LEVEL: info}
            """,
            "common/base.env": "FROM_BASE_FILE=1\n",
            "shared/compose.yaml": "services:\n  cache:\n    image: y\n    env_file: cache.env\n",
            "shared/cache.env": "CACHE=1\n",
        },
    )
    loaded = load_config(tmp_path, environ={})
    by = {s.name: s for s in loaded.services}
    assert set(by) == {"web", "cache"}  # `debug` is in an inactive profile; `metrics` is optional
    assert by["web"].container.environment == {"FROM_BASE_FILE": "1", "LEVEL": "info", "ROLE": "web"}
    assert by["web"].depends_on == ["cache"]
    assert by["cache"].container.environment == {"CACHE": "1"}
    with_debug = load_config(tmp_path, environ={"COMPOSE_PROFILES": "debug"})
    assert {s.name for s in with_debug.services} == {"web", "cache", "debug"}


def test_metadata_of_ports_and_includes_is_set_aside_with_a_warning(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": """
                include: [{path: other.yaml, project_directory: elsewhere}]
                services:
                  a:
                    image: x
                    ports:
                      - {target: 80, name: web, app_protocol: http, mode: ingress}
                      - {target: 81, mode: host}
                    volumes: ["./data:/data:ro,nocopy", "./more:/more:cached"]
            """,
            "other.yaml": "services:\n  b: {image: x}\n",
        },
    )
    loaded = load_config(tmp_path, environ={})
    keys = sorted(w.split("`")[1] for w in loaded.warnings)
    assert keys == [
        "include.project_directory",
        "ports.app_protocol",
        "ports.mode",
        "ports.name",
        "volumes: :cached",
        "volumes: :nocopy",
    ]
    assert loaded.services[0].container.volumes == [
        f"{tmp_path / 'data'}:/data:ro",
        f"{tmp_path / 'more'}:/more",
    ]
    assert {s.name for s in loaded.services} == {"a", "b"}


def test_an_include_cycle_and_a_self_extend_are_problems(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": "include: [other.yaml]\nservices:\n  a: {extends: a, image: x}\n",
            "other.yaml": "include: [compose.yaml]\nservices:\n  b: {image: x}\n",
        },
    )
    found = problems(tmp_path)
    assert any("include cycle" in message for _, _, message in found), found
    assert any(path == "$.services.a.extends" and "itself" in message for path, _, message in found), found


# -- real sample applications --------------------------------------------------------------------


SAMPLES = sorted(p.parent.name for p in AWESOME.glob("*/compose.y*ml"))


def test_there_are_at_least_thirty_samples() -> None:
    assert len(SAMPLES) >= 30


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_sample_application_loads(sample: str) -> None:
    (path,) = (AWESOME / sample).glob("compose.y*ml")
    loaded = load_compose([path], environ={}, project=sample)
    if sample == "plex":
        # `network_mode: host` would make the environment lie; PLEX_MEDIA_PATH is unset here.
        assert [(p.path, p.line) for p in loaded.problems] == [
            ("$.services.plex.volumes[0]", 10),
            ("$.services.plex.network_mode", 5),
        ]
        return
    assert loaded.problems == []
    assert loaded.services
    assert all(w.startswith(f"{path}:") for w in loaded.warnings)


# -- whatever a service holds, loading says so or succeeds ------------------------------------------

_SERVICE_KEYS = sorted(compose_schema()["definitions"]["service"]["properties"])
_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 70000),
    st.sampled_from(["", "x", "1", "64m", "1s", "service:a", "./data:/data", "a:b:c", "${V}", "true"]),
)
_VALUE = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["a", "source", "target", "type", "test", "soft", "file"]), inner, max_size=3
        ),
    ),
    max_leaves=6,
)


@settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    services=st.dictionaries(
        st.sampled_from(["a", "b"]),
        st.dictionaries(st.sampled_from(_SERVICE_KEYS), _VALUE, max_size=4),
        max_size=2,
    )
)
def test_random_services_load_or_are_problems_never_a_crash(tmp_path: Path, services: dict[str, Any]) -> None:
    path = tmp_path / "compose.yaml"
    path.write_text(
        yaml.safe_dump({"services": services, "secrets": {"s": {"file": "x"}}, "volumes": {"v": {}}})
    )
    loaded = load_compose([path], environ={"V": "1"}, project="p")
    assert all(p.path.startswith("$") for p in loaded.problems)


def test_volumes_from_a_service_waits_for_it_and_a_foreign_container_is_refused(tmp_path: Path) -> None:
    write(tmp_path, {"compose.yaml": "services:\n  a: {image: x}\n  b: {image: x, volumes_from: ['a:ro']}\n"})
    loaded = load_config(tmp_path, environ={})
    b = loaded.service("b")
    assert b is not None and (b.depends_on, b.container.options.volumes_from) == (["a"], ["a:ro"])
    write(tmp_path, {"compose.yaml": "services:\n  b:\n    image: x\n    volumes_from: ['container:db']\n"})
    ((path, line, message),) = problems(tmp_path)
    assert (path, line) == ("$.services.b.volumes_from[0]", 4)
    assert "outside the project" in message
