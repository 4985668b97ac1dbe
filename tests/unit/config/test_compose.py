"""`compose:` in e2e.yaml: real compose files from other projects, every supported key, every error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.config.compose.interpolate import InterpolationError, substitute
from preflight_sdk.config.compose.schema import compose_schema
from preflight_sdk.core.errors import ConfigError
from preflight_sdk.lifecycle.setup.specs import container_spec

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "compose"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def problems(root: Path, environ: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(root, environ=environ or {})
    assert caught.value.code == "CONFIG_INVALID"
    return [p.render() for p in caught.value.problems]


E2E = "project: {name: demo}\ncompose: compose.yaml\n"


# -- real files from other projects' test setups ---------------------------------------------------


def test_docker_compose_fixture_service_completed_successfully_makes_a_job() -> None:
    loaded = load_config(REAL / "dc-deps-completed", environ={})
    oneshot, longrunning = loaded.services
    assert (oneshot.name, oneshot.kind, oneshot.container.command) == ("oneshot", "job", "echo 'hello world'")
    assert (longrunning.kind, longrunning.depends_on) == ("service", ["oneshot"])
    # e2e.yaml swapped the registry image for a local one; the compose command stays.
    assert longrunning.build.image == "preflight-base/busybox"
    assert longrunning.container.command == "sleep infinity"


def test_docker_compose_fixture_shell_health_test_becomes_dockers_own_check() -> None:
    loaded = load_config(REAL / "dc-healthy", environ={})
    nginx = loaded.service("nginx")
    assert nginx is not None and nginx.container.healthcheck is None
    check = nginx.container.docker_healthcheck
    assert check is not None
    assert (check.test, check.interval, check.timeout, check.retries) == (
        ["CMD-SHELL", "echo | nc -w 5 localhost:80"],
        "2s",
        "1s",
        10,
    )
    assert loaded.service("my-service").depends_on == ["nginx"]  # type: ignore[union-attr]


def test_docker_compose_fixture_env_files_required_and_optional() -> None:
    loaded = load_config(REAL / "dc-env-file", environ={})
    env = {s.name: s.container.environment for s in loaded.services}
    assert env == {"with-env-file": {"EXAMPLE": "value"}, "optional-env": {}, "plain": {}}
    assert str(REAL / "dc-env-file" / "app.env") in loaded.sources


def test_testcontainers_fixture_named_volume_init_and_read_only() -> None:
    loaded = load_config(REAL / "tc-volume", environ={})
    (service,) = loaded.services
    assert service.container.volumes == ["cf-volume_my-data:/var/lib/example/data"]
    assert (service.container.init, service.container.read_only) == (True, True)
    spec = container_spec(loaded, service, session="s1", network="n", mocks={})
    assert (spec.init, spec.read_only, spec.volumes) == (
        True,
        True,
        ["cf-volume_my-data:/var/lib/example/data"],
    )


@pytest.mark.parametrize(("host_ports", "expected"), [("ephemeral", 0), ("asWritten", 0)])
def test_testcontainers_fixture_short_and_long_port_syntax(
    tmp_path: Path, host_ports: str, expected: int
) -> None:
    compose = REAL / "tc-ports" / "compose.yaml"
    write(
        tmp_path,
        {"e2e.yaml": f"project: {{name: p}}\ncompose: {{files: ['{compose}'], hostPorts: {host_ports}}}\n"},
    )
    loaded = load_config(tmp_path, environ={})
    ports = {s.name: s.container.ports for s in loaded.services}
    assert ports == {
        "alpine": [f"{expected}:81/tcp", f"{expected}:82/tcp", f"127.0.0.1:{expected}:80/tcp"],
        "alpine2": [f"127.0.0.1:{expected}:80/tcp"],
    }
    # `$$` in the command is a literal dollar after interpolation.
    assert "$d/81.conf" in loaded.services[0].container.command[2]  # type: ignore[index]


def test_prest_fixture_loads_with_logging_set_aside_and_the_link_honoured(tmp_path: Path) -> None:
    compose = REAL / "prest" / "docker-compose.yml"
    write(tmp_path, {"e2e.yaml": f"project: {{name: p}}\ncompose: '{compose}'\n"})
    loaded = load_config(tmp_path, environ={})
    assert loaded.warnings == [
        f"{compose}:17: `logging` set aside: preflight reads every service's logs through the engine"
    ]
    # `links: ["postgres:postgres"]`: the alias is the service's own name, reachable already.
    assert "postgres" in (
        container_spec(loaded, loaded.services[0], session="s", network="n", mocks={}).aliases
    )


# -- keys, one by one ----------------------------------------------------------------------------


def test_build_image_command_entrypoint_and_environment(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": E2E,
            "compose.yaml": """
                services:
                  api:
                    build:
                      context: ./api
                      dockerfile: docker/Dockerfile.test
                      args: [VERSION=1.2, FROM_ENV]
                      target: test
                    entrypoint: /bin/run --verbose
                    command: serve --port 8080
                    environment: {A: "1", B: null, C: from-file}
                    working_dir: /srv
                    user: "1000"
                    container_name: the-api
                  worker:
                    build: ./worker
                    environment: [X=y, FROM_ENV]
                    entrypoint: []
            """,
        },
    )
    loaded = load_config(tmp_path, environ={"FROM_ENV": "e"})
    api, worker = loaded.services
    assert (api.build.image, api.build.context, api.build.dockerfile, api.build.target) == (
        "demo-api",
        str(tmp_path / "api"),
        str(tmp_path / "api" / "docker" / "Dockerfile.test"),
        "test",
    )
    assert api.build.args == {"VERSION": "1.2", "FROM_ENV": "e"}
    assert api.container.environment == {"A": "1", "C": "from-file"}
    assert (api.container.working_dir, api.container.user, api.container.aliases) == (
        "/srv",
        "1000",
        ["the-api"],
    )
    spec = container_spec(loaded, api, session="s1", network="n", mocks={})
    assert (spec.entrypoint, list(spec.command or [])) == (
        "/bin/run",
        ["--verbose", "serve", "--port", "8080"],
    )
    assert (worker.build.image, worker.build.context) == ("demo-worker", str(tmp_path / "worker"))
    assert worker.container.environment == {"X": "y", "FROM_ENV": "e"}
    assert container_spec(loaded, worker, session="s1", network="n", mocks={}).entrypoint == ""


def test_http_health_test_becomes_a_host_probe_on_a_published_port(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": E2E,
            "compose.yaml": """
                services:
                  web:
                    image: web
                    healthcheck:
                      test: ["CMD", "curl", "-f", "http://localhost:8080/health"]
                      interval: 5s
                      retries: 3
                  other:
                    image: web
                    ports: ["9000:80"]
                    healthcheck:
                      test: wget -q -O - http://127.0.0.1/ready || exit 1
                  off:
                    image: web
                    healthcheck: {disable: true}
            """,
        },
    )
    loaded = load_config(tmp_path, environ={})
    web, other, off = loaded.services
    assert web.container.healthcheck is not None
    assert (web.container.healthcheck.path, web.container.healthcheck.port) == ("/health", 8080)
    assert (web.container.healthcheck.interval, web.container.healthcheck.retries) == ("5s", 3)
    assert web.container.ports == ["0:8080"]
    assert other.container.healthcheck is not None and other.container.healthcheck.path == "/ready"
    assert other.container.ports == ["0:80/tcp"]
    assert off.container.healthcheck is None and off.container.docker_healthcheck is None


def test_depends_on_forms_networks_aliases_and_bind_mounts(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": E2E,
            "compose.yaml": """
                services:
                  db:
                    image: db
                    networks:
                      back: {aliases: [database]}
                    volumes: ["./seed:/seed:ro", "/anonymous", {type: bind, source: ./x, target: /x, read_only: true}]
                  migrate: {image: db}
                  api:
                    image: api
                    networks: [back]
                    depends_on:
                      db: {condition: service_healthy, restart: true}
                      migrate: {condition: service_completed_successfully}
                  cli: {image: api, depends_on: [api]}
                networks:
                  back: {driver: bridge}
            """,
        },
    )
    loaded = load_config(tmp_path, environ={})
    by = {s.name: s for s in loaded.services}
    assert by["db"].container.aliases == ["database"]
    assert by["db"].container.volumes == [
        f"{tmp_path / 'seed'}:/seed:ro",
        "/anonymous",
        f"{tmp_path / 'x'}:/x:ro",
    ]
    assert (by["migrate"].kind, by["api"].depends_on, by["cli"].depends_on) == (
        "job",
        ["db", "migrate"],
        ["api"],
    )


def test_profiles_leave_services_out_unless_active(tmp_path: Path) -> None:
    compose = """
        services:
          app: {image: app}
          debug: {image: app, profiles: [debug]}
          tools: {image: app, profiles: [tools]}
    """
    write(tmp_path, {"e2e.yaml": E2E, "compose.yaml": compose})
    assert [s.name for s in load_config(tmp_path, environ={}).services] == ["app"]
    assert [s.name for s in load_config(tmp_path, environ={"COMPOSE_PROFILES": "debug"}).services] == [
        "app",
        "debug",
    ]
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: demo}\ncompose: {files: [compose.yaml], profiles: [tools]}\n"
    )
    assert [s.name for s in load_config(tmp_path, environ={}).services] == ["app", "tools"]


def test_a_dependency_in_an_inactive_profile_is_an_error(tmp_path: Path) -> None:
    compose = """
        services:
          app: {image: app, depends_on: [debug]}
          debug: {image: app, profiles: [debug]}
    """
    write(tmp_path, {"e2e.yaml": E2E, "compose.yaml": compose})
    assert any(
        "$.services.app.depends_on.debug: `debug` is only in profiles that are not active" in p
        for p in problems(tmp_path)
    )


def test_interpolation_with_dotenv_defaults_and_required_variables(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": E2E,
            ".env": "TAG=from-dotenv\nPORT=7000\n",
            "compose.yaml": """
                services:
                  api:
                    image: "api:${TAG}"
                    ports: ["${PORT}:80"]
                    environment:
                      GREETING: "${GREETING:-hello} $$HOME ${UNSET}"
                      ALT: "${TAG:+tagged}"
            """,
        },
    )
    loaded = load_config(tmp_path, environ={"PORT": "7001"})
    (api,) = loaded.services
    assert api.build.image == "api:from-dotenv"
    assert api.container.environment == {"GREETING": "hello $HOME ", "ALT": "tagged"}
    (tmp_path / "compose.yaml").write_text(
        "services:\n  api:\n    image: ${IMAGE:?set IMAGE to the image under test}\n"
    )
    assert problems(tmp_path) == [
        f"{tmp_path / 'compose.yaml'}:3:12: $.services.api.image: variable `IMAGE` is not set: set IMAGE to the image under test"
    ]


def test_schema_violations_and_refused_keys_carry_file_and_line(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": E2E,
            "compose.yaml": """
                services:
                  api:
                    image: api
                    imagee: typo
                    ports: {a: 1}
                    gpus: all
                  web:
                    image: web
                    network_mode: host
                    volumes: [{type: npipe, source: x, target: /tmp}]
                secrets:
                  token: {external: true}
            """,
        },
    )
    found = problems(tmp_path)
    file = tmp_path / "compose.yaml"
    expected = [
        f"{file}:5:5: $.services.api.imagee: compose schema: unknown key `imagee`",
        f"{file}:6:12: $.services.api.ports: compose schema: {{'a': 1}} is not of type 'array'",
        f"{file}:7:5: $.services.api.gpus: `gpus` is not supported by preflight",
        f"{file}:10:19: $.services.web.network_mode: `network_mode: host` is not supported",
        f"{file}:11:22: $.services.web.volumes[0].type: `npipe` mounts are not supported",
        f"{file}:13:11: $.secrets.token.external: secret `external` is not supported",
    ]
    for line in expected:
        assert any(p.startswith(line) for p in found), (line, found)
    assert len(found) == len(expected)  # a key the schema rejects is not reported twice


def test_e2e_yaml_adds_health_checks_and_services_to_the_compose_ones(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "compose.yaml": "services:\n  api: {image: api, ports: ['8080']}\n",
            "e2e.yaml": """
                project: {name: demo}
                compose: compose.yaml
                services:
                  api:
                    container: {healthcheck: {path: /health}}
                  extra:
                    build: {image: extra}
                mocks:
                  payments: {port: 0}
            """,
        },
    )
    loaded = load_config(tmp_path, environ={})
    api, extra = loaded.services
    assert (api.build.image, api.container.ports) == ("api", ["0:8080/tcp"])
    assert api.container.healthcheck is not None and api.container.healthcheck.path == "/health"
    assert extra.name == "extra" and list(loaded.config.mocks) == ["payments"]


def test_several_files_merge_like_dash_f_and_edits_change_the_digest(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "e2e.yaml": "project: {name: demo}\ncompose: [compose.yaml, compose.test.yaml]\n",
            "compose.yaml": "services:\n  api: {image: api, environment: {A: '1'}, command: [a]}\n",
            "compose.test.yaml": "services:\n  api: {environment: {B: '2'}, command: [b]}\n",
        },
    )
    first = load_config(tmp_path, environ={})
    (api,) = first.services
    assert (api.container.environment, api.container.command) == ({"A": "1", "B": "2"}, ["b"])
    (tmp_path / "compose.test.yaml").write_text("services:\n  api: {command: [c]}\n")
    assert load_config(tmp_path, environ={}).digest != first.digest


def test_a_missing_compose_file_or_env_file_is_invalid(tmp_path: Path) -> None:
    write(tmp_path, {"e2e.yaml": E2E})
    assert any("compose file" in p and "does not exist" in p for p in problems(tmp_path))
    write(tmp_path, {"compose.yaml": "services:\n  api: {image: api, env_file: [missing.env]}\n"})
    assert any(":2:" in p and "env_file" in p and "does not exist" in p for p in problems(tmp_path))


def test_substitute_follows_the_compose_rules() -> None:
    env = {"SET": "v", "EMPTY": ""}
    assert substitute("$SET ${SET} $$SET ${EMPTY:-d} ${EMPTY-d} ${UNSET-${SET}}", env) == "v v $SET d  v"
    assert substitute("${EMPTY:+x}${SET:+x}${EMPTY+y}", env) == "xy"
    for bad in ("${SET", "${1X}", "${SET%%x}", "${EMPTY:?needed}"):
        with pytest.raises(InterpolationError):
            substitute(bad, env)


def test_the_vendored_schema_is_the_compose_specification() -> None:
    schema = compose_schema()
    assert schema["title"] == "Compose Specification"
    assert {"services", "volumes", "networks", "secrets", "configs", "include"} <= set(schema["properties"])
