"""Loading good e2e.yaml files: the two original Preflight examples unchanged, and our own forms."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from preflight_sdk import Project
from preflight_sdk.config import load_config, load_test_file
from preflight_sdk.core.errors import ConfigError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "config"
ORIGIN = FIXTURES / "origin"
GOOD = FIXTURES / "good"
DEMO = ORIGIN / "demo-project"
ARGUS = ORIGIN / "argusai-server" / "packages" / "server"
ENV = {"PAYMENTS_PORT": "19081", "STAGE": "e2e", "IDP_PORT": "19082", "SHARED": "from-env", "TOKEN": "t"}
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


# -- the original Preflight examples ----------------------------------------------------------


def test_the_demo_project_example_loads_unchanged() -> None:
    loaded = load_config(DEMO, environ={})
    assert loaded.project_name == "demo-project"
    assert loaded.config.project.description == "示例演示项目"
    assert loaded.config.version == "1"
    (service,) = loaded.services
    assert (service.name, service.build.image, service.build.dockerfile) == (
        "demo-e2e",
        "demo-service:latest",
        "./Dockerfile",
    )
    assert service.container.ports == ["8080:8080"]
    assert service.container.environment == {"NODE_ENV": "test"}
    assert service.container.healthcheck is None
    # The dashboard section is kept as written.
    assert loaded.config.dashboard is not None
    assert loaded.config.dashboard.ui_port == 9091
    assert [e.name for e in loaded.config.dashboard.presets[0].endpoints] == ["健康检查", "系统信息"]
    assert [(s.id, s.name, s.runner, s.file) for s in loaded.suites] == [
        ("basic", "基础测试", "yaml", "tests/basic.yaml")
    ]
    assert [c.name for c in loaded.test_files["basic"].cases] == ["健康检查", "系统信息"]


def test_the_argusai_server_example_loads_unchanged() -> None:
    loaded = load_config(ARGUS, environ={})
    assert loaded.project_name == "argusai-server"
    (service,) = loaded.services
    assert service.name == "argusai-server-e2e"
    assert service.build.context == "../.."
    assert loaded.resolve(service.build.context) == ARGUS / "../.."
    health = service.container.healthcheck
    assert health is not None
    assert (health.path, health.interval, health.timeout, health.retries, health.start_period) == (
        "/api/health",
        "5s",
        "3s",
        15,
        "20s",
    )
    assert service.container.environment["PORT"] == "3000"
    assert service.vars == {"base_url": "http://localhost:23000"}
    history = loaded.config.history
    assert history is not None and history.retention is not None
    assert (history.enabled, history.storage, history.retention.max_age, history.flaky_window) == (
        True,
        "local",
        "90d",
        10,
    )
    assert [s.id for s in loaded.suites] == ["health", "teams", "sync", "query"]
    assert set(loaded.test_files) == {"health", "teams", "sync", "query"}
    health_file = loaded.test_files["health"]
    assert health_file.sequential is True
    assert health_file.setup[0].wait_healthy is not None
    assert health_file.cases[0].expect is not None
    assert health_file.cases[0].expect.body == {"status": "ok", "service": "argusai-server"}
    # Test files keep their templates: they are rendered when the suite runs.
    assert loaded.test_files["query"].cases[0].request is not None
    assert loaded.test_files["query"].cases[0].request.headers == {"X-API-Key": "{{runtime.api_key}}"}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("relative", "name", "has_healthcheck", "suites"),
    [
        ("demo-project", "demo-project", False, ["basic"]),
        ("argusai-server/packages/server", "argusai-server", True, ["health", "teams", "sync", "query"]),
    ],
)
async def test_init_on_an_original_example(
    tmp_path: Path, relative: str, name: str, has_healthcheck: bool, suites: list[str]
) -> None:
    root = copy_tree(ORIGIN, tmp_path / "origin") / relative
    project = Project.open(root)
    first = await project.init()
    assert first.project_name == name
    assert first.config_path == str(root / "e2e.yaml")
    assert [s.has_healthcheck for s in first.services] == [has_healthcheck]
    assert [(s.id, s.runner) for s in first.suites] == [(s, "yaml") for s in suites]
    assert first.schema_version == "1"
    assert first.state == "initialized"
    assert first.reloaded is False
    wire = first.to_dict()
    assert wire["projectName"] == name and wire["services"][0]["hasHealthcheck"] is has_healthcheck

    again = await project.init()
    assert again.session_id == first.session_id
    assert again.reloaded is False

    config = root / "e2e.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('version: "1"', 'version: "2"', 1), encoding="utf-8"
    )
    edited = await project.init()
    assert edited.reloaded is True
    assert edited.session_id != first.session_id
    assert edited.state == "initialized"

    # A new process (a new Project) resumes the session recorded for the unchanged file.
    assert (await Project.open(root).init()).session_id == edited.session_id


# -- our own forms ----------------------------------------------------------------------------


def test_services_in_list_form_keep_order_dependencies_and_typed_environment() -> None:
    loaded = load_config(GOOD / "services-list", environ=ENV)
    assert [s.name for s in loaded.services] == ["db", "api", "worker"]
    db, api, worker = loaded.services
    assert api.depends_on == ["db"] and worker.depends_on == ["db", "api"]
    assert db.container.healthcheck is not None and db.container.healthcheck.tcp == 5432
    assert api.container.environment == {
        "DATABASE_URL": "postgres://postgres:secret@shop-db:5432/shop",
        "WORKERS": 2,
        "DEBUG": False,
    }
    assert api.build.args == {"PYTHON_VERSION": "3.12"}
    assert worker.container.command == ["python", "-m", "shop.worker"]
    # `{{config.X}}` comes from any service's vars.
    assert worker.container.environment == {"QUEUE_URL": "http://localhost:18080/queue"}
    assert loaded.suites[1].env == {"API_URL": "http://localhost:18080"}
    assert [s.runner for s in loaded.suites] == ["yaml", "pytest", "shell"]
    assert loaded.config.tests is not None and loaded.config.tests.retry is not None
    assert loaded.config.tests.retry.max_attempts == 3
    assert list(loaded.test_files) == ["orders"]
    assert len(loaded.test_files["orders"].cases) == 9


def test_services_in_map_form_are_named_by_their_keys_and_jobs_are_kept() -> None:
    loaded = load_config(GOOD / "services-map", environ={})
    assert [(s.name, s.kind, s.depends_on) for s in loaded.services] == [
        ("postgres", "service", []),
        ("migrate", "job", ["postgres"]),
        ("api", "service", ["migrate"]),
    ]
    api = loaded.services[2]
    assert (api.container.user, api.container.working_dir, api.container.aliases) == (
        "1000:1000",
        "/srv",
        ["billing-api"],
    )
    assert loaded.service("migrate") is loaded.services[1]


def test_mock_responses_keep_their_per_request_templates() -> None:
    loaded = load_config(GOOD / "mocks", environ=ENV)
    payments = loaded.config.mocks["payments"]
    assert payments.port == 19081  # a whole-value `{{env.X}}` where a number is wanted
    first = payments.routes[0].response
    assert first is not None
    assert first.body == {
        "id": "{{request.params.id}}",
        "amount": 100.0,
        "currency": "EUR",
        "traceId": "{{uuid}}",
    }
    assert first.headers == {"X-Request-Id": "{{uuid}}"}
    charges = payments.routes[3]
    assert charges.sequence is not None and [r.status for r in charges.sequence] == [500, 500, 201]
    assert charges.sequence[2].body == {"id": "ch_{{uuid}}", "at": "{{now}}"}
    assert charges.when is not None and charges.when.query == {"dryRun": "false"}
    assert (payments.routes[4].loop, payments.routes[4].times) == (True, 10)
    assert payments.routes[4].sequence is not None and payments.routes[4].sequence[1].fault == "reset"
    # Outside mock responses, templates are rendered once at load.
    environment = loaded.services[0].container.environment
    assert environment["PAYMENTS_URL"] == "http://payments:19081"
    assert UUID.match(str(environment["BUILD_ID"]).removeprefix("build-"))
    assert loaded.config.mocks["audit"].journal_limit == 500


def test_an_unset_variable_in_a_mock_response_is_reported_at_load(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: m}\n"
        "mocks:\n"
        "  pay:\n"
        "    port: 0\n"
        "    routes:\n"
        "      - path: /x\n"
        "        response: {body: {key: '{{env.PF_NOT_SET_ANYWHERE}}', id: '{{uuid}}'}}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={})
    (problem,) = caught.value.problems
    assert problem.path == "$.mocks.pay.routes[0].response.body.key"
    assert problem.line == 7
    assert "PF_NOT_SET_ANYWHERE" in problem.message


def test_a_test_only_project_has_no_services() -> None:
    loaded = load_config(GOOD / "test-only", environ={})
    assert loaded.services == []
    assert [(s.id, s.runner) for s in loaded.suites] == [("status", "yaml"), ("script", "exec")]
    request = loaded.test_files["status"].cases[0].request
    assert request is not None and request.url == "{{mocks.upstream.url}}/status"


def test_dotenv_fills_what_the_environment_lacks_and_never_overrides_it() -> None:
    loaded = load_config(GOOD / "dotenv", environ={"SHARED": "from-env"})
    assert loaded.project_name == "from-dotenv"
    (service,) = loaded.services
    assert service.build.image == "app:1.2.3"  # quotes stripped
    assert service.container.ports == ["18090:80"]  # `export` prefix accepted
    assert service.container.environment == {"FROM_ENV": "from-env", "ONLY_DOTENV": "dotenv value"}
    assert loaded.environ["SHARED"] == "from-env"
    assert loaded.environ["ONLY_IN_DOTENV"] == "dotenv value"


def test_the_digest_covers_the_dotenv_file(tmp_path: Path) -> None:
    root = copy_tree(GOOD / "dotenv", tmp_path / "p")
    before = load_config(root, environ={})
    assert load_config(root, environ={}).digest == before.digest
    (root / ".env").write_text((root / ".env").read_text() + "EXTRA=1\n")
    assert load_config(root, environ={}).digest != before.digest


def test_relative_paths_are_resolved_against_the_config_directory_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = GOOD / "nested" / "deploy" / "e2e"
    monkeypatch.chdir(tmp_path)
    loaded = load_config(root, environ={})
    assert loaded.root == str(root)
    (service,) = loaded.services
    assert service.build.dockerfile is not None
    assert loaded.resolve(service.build.dockerfile).resolve() == GOOD / "nested" / "deploy" / "Dockerfile"
    assert loaded.resolve(service.build.context).resolve() == GOOD / "nested"
    assert loaded.resolve("suites/check.sh").is_file()
    assert list(loaded.test_files) == ["api"]
    # A relative project path is taken from the cwd, but everything inside from the file.
    monkeypatch.chdir(GOOD / "nested")
    assert load_config("deploy/e2e", environ={}).root == str(root)


def test_e2e_yml_is_the_fallback_and_e2e_yaml_wins_when_both_exist(tmp_path: Path) -> None:
    assert load_config(GOOD / "yml-fallback", environ={}).project_name == "yml-fallback"
    root = copy_tree(GOOD / "yml-fallback", tmp_path / "both")
    (root / "e2e.yaml").write_text("project: {name: yaml-wins}\n")
    assert load_config(root, environ={}).project_name == "yaml-wins"


@pytest.mark.anyio
async def test_config_file_overrides_the_default_name(tmp_path: Path) -> None:
    root = GOOD / "config-file"
    assert load_config(root, environ={}).project_name == "default-config"
    loaded = load_config(root, "ci.e2e.yaml", environ={})
    assert loaded.project_name == "ci-config"
    assert loaded.path == str(root / "ci.e2e.yaml")
    assert list(loaded.test_files) == ["smoke"]
    # The file itself may be the path; config_file is then relative to its directory.
    assert load_config(root / "e2e.yaml", "ci.e2e.yaml", environ={}).project_name == "ci-config"
    copied = copy_tree(root, tmp_path / "p")
    result = await Project.open(copied, "ci.e2e.yaml").init()
    assert (result.project_name, result.config_path) == ("ci-config", str(copied / "ci.e2e.yaml"))


def test_anchors_merge_keys_and_extension_keys() -> None:
    loaded = load_config(GOOD / "anchors", environ=ENV)
    api, admin = loaded.services
    assert api.container.environment == {"LOG_LEVEL": "debug", "REGION": "eu"}
    assert admin.container.environment == {"LOG_LEVEL": "info", "REGION": "eu"}
    assert (api.build.image, admin.build.target, api.build.target) == ("anchors:e2e", "admin", None)
    assert loaded.config.mocks["idp"].port == 19082


def test_a_templated_number_stays_text_where_text_is_wanted(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text(
        "project: {name: '{{env.N}}'}\n"
        "service:\n"
        "  build: {image: '{{env.N}}'}\n"
        "  container:\n"
        "    ports: ['{{env.N}}']\n"
        "    environment: {N: '{{env.N}}'}\n"
        "    healthcheck: {tcp: '{{env.N}}', retries: '{{env.N}}'}\n"
    )
    loaded = load_config(tmp_path, environ={"N": "123"})
    (service,) = loaded.services
    assert (loaded.project_name, service.build.image, service.container.ports) == ("123", "123", ["123"])
    assert service.container.environment == {"N": "123"}
    assert service.container.healthcheck is not None
    assert (service.container.healthcheck.tcp, service.container.healthcheck.retries) == (123, 123)


def test_a_templated_value_that_is_not_a_number_is_reported_where_a_number_is_wanted(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: p}\nmocks:\n  m:\n    port: '{{env.P}}'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={"P": "eighty"})
    (problem,) = caught.value.problems
    assert (problem.path, problem.line) == ("$.mocks.m.port", 4)
    assert "got a string ('eighty')" in problem.message


def test_problems_come_in_reading_order_with_test_files_last() -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(FIXTURES / "broken" / "many-problems.yaml", environ={})
    lines = [p.line or 0 for p in caught.value.problems]
    assert lines == sorted(lines)
    assert caught.value.message.startswith("configuration ") and "7 problems" in caught.value.message
    assert ":9:1: $.project: missing required key `name`" in caught.value.message.split("first: ")[1]


def test_load_test_file_reads_a_file_and_reports_a_missing_one(tmp_path: Path) -> None:
    health = load_test_file(ARGUS / "tests" / "health.yaml")
    assert health.name == "Health Check"
    assert [c.name for c in health.cases] == ["Server is alive", "Health reports database connected"]
    for target in (tmp_path / "missing.yaml", tmp_path):
        with pytest.raises(ConfigError) as caught:
            load_test_file(target)
        assert caught.value.code == "CONFIG_NOT_FOUND"
        assert caught.value.details == {"tried": [str(target)]}


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: big}\n" + "# padding\n" * 250_000)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={})
    assert caught.value.code == "CONFIG_INVALID"
    assert "limit" in caught.value.problems[0].message


@pytest.mark.parametrize(
    "services",
    [
        # map form and list form: a service with a mistake of its own and an unknown dependency
        'api: {build: {image: "x:1"}, dependsOn: [dbb], container: {portz: ["0:80"]}}\n  db: {build: {image: "y:1"}}',
        '- {name: api, build: {image: "x:1"}, dependsOn: [dbb], container: {portz: ["0:80"]}}\n'
        '  - {name: db, build: {image: "y:1"}}',
    ],
)
def test_every_problem_comes_at_once_also_an_unknown_dependency_of_a_broken_service(
    tmp_path: Path, services: str
) -> None:
    (tmp_path / "e2e.yaml").write_text(f"project: {{name: rounds}}\nservices:\n  {services}\n")

    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, environ={})

    messages = [p.message for p in caught.value.problems]
    assert any("unknown key `portz`" in m for m in messages), messages
    assert "`dbb` is not a service" in messages
    dependency = next(p for p in caught.value.problems if p.message == "`dbb` is not a service")
    assert dependency.suggestion == "db" and dependency.line == 3


def test_every_key_of_a_service_reaches_its_normalised_form_in_each_form(tmp_path: Path) -> None:
    keyed = tmp_path / "keyed"
    keyed.mkdir()
    (keyed / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: keyed}\nservices:\n'
        "  db:\n    build: {image: postgres}\n    reset: {exec: [psql, -c, select]}\n"
        "  seed:\n    kind: job\n    dependsOn: [db]\n    build: {image: seed}\n"
        "    vars: {rows: 3}\n    container: {command: [seed]}\n"
    )
    db, seed = load_config(keyed, environ={}).services
    assert (db.name, db.reset is not None and db.reset.exec) == ("db", ["psql", "-c", "select"])
    assert (seed.name, seed.kind, seed.depends_on, seed.vars, seed.container.command) == (
        "seed", "job", ["db"], {"rows": 3}, ["seed"],
    )  # fmt: skip
    single = tmp_path / "single"
    single.mkdir()
    (single / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: single}\nservice:\n  build: {image: api}\n  reset: none\n'
        "  vars: {mode: test}\n  container: {name: api-1}\n"
    )
    (only,) = load_config(single, environ={}).services
    assert (only.name, only.reset, only.vars, only.build.image) == ("api-1", "none", {"mode": "test"}, "api")
