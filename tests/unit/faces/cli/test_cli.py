"""The CLI face with Click's CliRunner: generated options, usage errors, exit codes, composed commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from unit.faces.standin import Demo

from preflight_sdk.config import load_config
from preflight_sdk.faces.cli.app import RENAMED, build_cli, run_cli
from preflight_sdk.faces.cli.params import Extension
from preflight_sdk.faces.reflection.registry import reflect


class Made:
    """A project factory that keeps what it made."""

    def __init__(self, *, running: bool = False) -> None:
        self.projects: list[Demo] = []
        self.running = running

    def __call__(self, path: str, config_file: str | None) -> Demo:
        project = Demo(path, config_file)
        project.running = self.running
        self.projects.append(project)
        return project

    @property
    def calls(self) -> list[str]:
        return [name for project in self.projects for name, _ in project.calls]


def _invoke(args: list[str], made: Made | None = None) -> tuple[Any, Made]:
    made = made or Made()
    result = CliRunner().invoke(build_cli(reflect(Demo), factory=made), args, catch_exceptions=False)
    return result, made


def _options(command: click.Command) -> dict[str, click.Parameter]:
    return {p.name or "": p for p in command.params if p.expose_value}


# -- generated commands ----------------------------------------------------------------------------


def test_commands_are_named_with_dashes_and_run_stays_reachable_as_test() -> None:
    group = build_cli(reflect(Demo), factory=Made())
    assert {"run-suite", "test", "run", "up", "init", "schema", "mcp", "logs", "clarify"} <= set(
        group.commands
    )
    assert "run_suite" not in group.commands


def test_every_project_command_is_its_tool_name_and_aliases_stay_out_of_the_help() -> None:
    from preflight_sdk.faces.mcp.schemas import TOOL_PREFIX, build_tools
    from preflight_sdk.project import Project

    registry = reflect(Project)
    group = build_cli(registry, factory=Made())
    tools = [spec.name for spec in build_tools(registry, project_required=False) if spec.alias is None]
    # `preflight run` is the composed command (build, setup, run, clean); the operation is `test`.
    expected = {name: name.removeprefix(TOOL_PREFIX).replace("_", "-") for name in tools}
    # A renamed operation (`import_file` is `preflight import`) is its new name, and its tool name an alias.
    for operation, command in RENAMED.items():
        expected[TOOL_PREFIX + operation] = command
    for tool, command in expected.items():
        assert command in group.commands, (tool, command)
    assert "read-architecture" in group.commands and "architecture" not in group.commands
    assert "import-file" not in group.commands
    assert (
        group.get_command(click.Context(group, info_name="preflight"), "import-file")
        is group.commands["import"]
    )
    ctx = click.Context(group, info_name="preflight")
    assert group.get_command(ctx, "architecture") is group.commands["read-architecture"]
    assert "  architecture " not in group.get_help(ctx)


def test_help_shows_the_example_as_a_command_line_not_python() -> None:
    from preflight_sdk.project import Project

    group = build_cli(reflect(Project), factory=Made())
    for name, line in [
        ("logs", "preflight logs api --lines 50 --since 5m"),
        ("build", "preflight build --service api --no-cache"),
        ("test", "preflight test --filter orders"),
    ]:
        command = group.commands[name]
        text = command.get_help(click.Context(command, info_name=name))
        assert line in text, text
        assert "await " not in text


def test_the_first_required_parameter_is_positional_and_booleans_are_flag_pairs() -> None:
    group = build_cli(reflect(Demo), factory=Made())
    logs = _options(group.commands["logs"])
    assert isinstance(logs["container"], click.Argument)
    assert isinstance(logs["lines"], click.Option) and logs["lines"].opts == ["--lines"]
    follow = logs["follow"]
    assert isinstance(follow, click.Option)
    assert (follow.opts, follow.secondary_opts) == (["--follow"], ["--no-follow"])
    build = _options(group.commands["build"])
    no_cache = build["no_cache"]
    assert isinstance(no_cache, click.Option)
    assert (no_cache.opts, no_cache.secondary_opts) == (["--no-cache"], ["--cache"])
    clarify = _options(group.commands["clarify"])
    assert isinstance(clarify["answers"], click.Option) and clarify["answers"].metavar == "JSON"


def test_values_reach_the_method_by_python_name() -> None:
    result, made = _invoke(["logs", "api", "--lines", "50", "--follow"])
    assert result.exit_code == 0, result.output
    assert made.projects[0].calls == [
        ("logs", {"container": "api", "lines": 50, "since": None, "follow": True})
    ]


def test_unset_options_keep_the_method_defaults_including_tri_state_booleans() -> None:
    result, made = _invoke(["test"])
    assert result.exit_code == 0
    assert made.projects[0].calls == [
        ("run", {"filter": None, "parallel": None, "keep": True, "fresh": False})
    ]
    _, made = _invoke(["test", "--no-parallel"])
    assert made.projects[0].calls == [
        ("run", {"filter": None, "parallel": False, "keep": True, "fresh": False})
    ]


def test_json_options_are_decoded_then_validated() -> None:
    result, made = _invoke(["clarify", "add login", "--answers", '{"q1": "a", "q2": ["b", "c"]}'])
    assert result.exit_code == 0
    assert made.projects[0].calls[0][1]["answers"] == {"q1": "a", "q2": ["b", "c"]}
    bad, _ = _invoke(["--json", "clarify", "x", "--answers", '{"q1": 3}'])
    assert bad.exit_code == 2
    envelope = json.loads(bad.stdout)
    assert envelope["error"]["code"] == "INVALID_INPUT"
    assert envelope["error"]["details"]["field"] == "answers"
    broken, _ = _invoke(["clarify", "x", "--answers", "{nope"])
    assert broken.exit_code == 2
    assert "--answers is not valid JSON" in broken.stderr


@pytest.mark.parametrize(
    "args",
    [["logs"], ["logs", "api", "--lines", "many"], ["nope"], ["build", "--bogus"]],
    ids=["missing-argument", "bad-integer", "unknown-command", "unknown-option"],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result, made = _invoke(args)
    assert result.exit_code == 2
    assert made.projects == []


def test_global_options_work_before_and_after_the_command() -> None:
    before, made_before = _invoke(["-C", "/work/a", "--config", "x.yaml", "--json", "status"])
    after, made_after = _invoke(["status", "--json", "-C", "/work/b"])
    assert (made_before.projects[0].path, made_before.projects[0].config_file) == ("/work/a", "x.yaml")
    assert made_after.projects[0].path == "/work/b"
    for result in (before, after):
        assert json.loads(result.stdout)["data"] == {"state": "initialized"}


def test_the_engine_options_reach_the_project_factory() -> None:
    opened: list[dict[str, Any]] = []

    def factory(path: str, config_file: str | None, **engine: str | None) -> Demo:
        opened.append({"path": path, **engine})
        return Demo(path, config_file)

    cli = build_cli(reflect(Demo), factory=factory)
    args = ["status", "--engine-host", "ssh://ci@builder", "-C", "/work/c"]
    assert CliRunner().invoke(cli, args, catch_exceptions=False).exit_code == 0
    assert CliRunner().invoke(cli, ["--context", "remote", "status"], catch_exceptions=False).exit_code == 0
    assert opened == [
        {"path": "/work/c", "engine_host": "ssh://ci@builder", "context": None},
        {"path": ".", "engine_host": None, "context": "remote"},
    ]


# -- exit codes and output -------------------------------------------------------------------------


def test_exit_codes_follow_the_outcome() -> None:
    assert _invoke(["status"])[0].exit_code == 0
    assert _invoke(["test", "--filter", "failing"])[0].exit_code == 1
    assert _invoke(["run-suite", "nope"])[0].exit_code == 2
    assert _invoke(["logs", "docker-down"])[0].exit_code == 3


def test_json_prints_only_the_envelope_on_stdout() -> None:
    result, _ = _invoke(["--json", "build", "--no-cache"])
    envelope = json.loads(result.stdout)  # one JSON document, nothing else
    assert envelope["success"] is True
    assert envelope["data"]["arguments"]["no_cache"] is True
    assert result.stderr == ""


def test_human_output_streams_progress_on_stderr_and_the_summary_on_stdout() -> None:
    result, _ = _invoke(["build"])
    assert result.stderr.splitlines() == ["  api | step 1", "  api | step 2", "  api | step 3"]
    assert result.stdout.startswith("Echo ")


def test_a_failed_run_prints_its_report_with_success_true_and_exits_1() -> None:
    # The run did its job (success); its verdict is data, and the exit code still says it failed.
    result, _ = _invoke(["--json", "test", "--filter", "failing"])
    assert result.exit_code == 1
    envelope = json.loads(result.stdout)
    assert (envelope["success"], envelope["runId"], envelope["data"]["failedCases"]) == (True, "r-1", 1)
    assert "error" not in envelope


def test_an_unexpected_exception_is_internal_with_exit_1_and_a_traceback_on_stderr() -> None:
    result, _ = _invoke(["--json", "logs", "bug"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["details"]["causeClass"] == "builtins.KeyError"
    assert "Traceback" in result.stderr


def test_a_usage_error_with_json_still_prints_an_envelope(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["--json", "logs"], registry=reflect(Demo))
    assert code == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["code"] == "INVALID_INPUT"
    assert "Missing argument" in captured.err


# -- composed commands -----------------------------------------------------------------------------


def test_run_runs_keeping_the_environment_then_cleans_it_itself() -> None:
    result, made = _invoke(["run", "--fresh", "--filter", "smoke"])
    assert result.exit_code == 0, result.output
    project = made.projects[0]
    assert [name for name, _ in project.calls] == ["status", "run", "clean"]
    arguments = dict(project.calls)
    # The run keeps the environment: the command cleans it, also when cancelled.
    assert arguments["run"] == {"filter": "smoke", "parallel": None, "keep": True, "fresh": True}


def test_run_cleans_even_when_a_phase_fails_and_exits_with_its_code() -> None:
    result, made = _invoke(["run", "--filter", "docker-down"])
    assert result.exit_code == 3
    assert made.calls[-1] == "clean"


def test_run_cleans_on_ctrl_c_and_exits_130() -> None:
    result, made = _invoke(["--json", "run", "--filter", "interrupt"])
    assert result.exit_code == 130
    assert made.calls[-1] == "clean"
    assert json.loads(result.stdout)["error"]["code"] == "CANCELLED"


def test_run_keep_leaves_the_environment() -> None:
    result, made = _invoke(["run", "--keep"])
    assert result.exit_code == 0
    assert "clean" not in made.calls


def test_run_against_a_running_environment_only_runs_the_suites() -> None:
    result, made = _invoke(["run"], Made(running=True))
    assert result.exit_code == 0
    assert made.calls == ["status", "run"]
    assert "already running" in result.stderr
    assert "clean" not in made.calls


def test_init_writes_a_valid_starter_project_and_never_overwrites(tmp_path: Path) -> None:
    result, made = _invoke(["init", "-C", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert made.calls == ["init"]
    config = load_config(tmp_path)
    assert [s.name for s in config.services] == ["web"]
    assert list(config.config.mocks) == ["payments"]
    assert [s.id for s in config.suites] == ["smoke"]
    assert (tmp_path / "tests" / "smoke.yaml").is_file()
    (tmp_path / "e2e.yaml").write_text("project:\n  name: mine\n", encoding="utf-8")
    again, made_again = _invoke(["init", "-C", str(tmp_path)])
    assert again.exit_code == 0
    assert (tmp_path / "e2e.yaml").read_text(encoding="utf-8") == "project:\n  name: mine\n"
    assert made_again.calls == ["init"]
    assert "wrote" not in again.stderr


def test_schema_prints_the_config_and_test_file_schemas() -> None:
    e2e = json.loads(_invoke(["schema"])[0].stdout)
    test = json.loads(_invoke(["schema", "--test"])[0].stdout)
    assert e2e["$id"].endswith("e2e.schema.json") and "project" in e2e["properties"]
    assert test["$id"].endswith("test.schema.json") and "cases" in test["properties"]


def test_mcp_has_the_launcher_options() -> None:
    group = build_cli(reflect(Demo), factory=Made())
    names = {p.name for p in group.commands["mcp"].params}
    assert {"project", "keep_on_exit", "log_level"} <= names


def test_an_extension_option_can_fill_in_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    from preflight_sdk.faces.cli import extensions as cli_extensions

    def apply(value: Any, arguments: dict[str, Any]) -> None:
        if value:
            arguments["container"] = "self"

    extension = Extension(option=click.Option(["--self", "self_"], is_flag=True, default=False), apply=apply)
    monkeypatch.setitem(cli_extensions.EXTENSIONS, "logs", (extension,))
    result, made = _invoke(["logs", "--self", "--", "ignored"])
    assert result.exit_code == 0, result.output
    assert made.projects[0].calls[0][1]["container"] == "self"


def test_run_cleans_on_sigterm_and_exits_130() -> None:
    result, made = _invoke(["--json", "run", "--filter", "sigterm"])
    assert result.exit_code == 130
    assert made.calls == ["status", "run", "clean"]
    assert json.loads(result.stdout)["error"]["code"] == "CANCELLED"


def test_up_starts_waits_for_a_signal_then_cleans_and_exits_0() -> None:
    result, made = _invoke(["up", "--timeout", "sigterm"])
    assert result.exit_code == 0, result.output
    assert made.calls == ["build", "setup", "clean"]
    assert "The environment is up" in result.stdout
    assert "Stopped." in result.stderr


def test_up_interrupted_before_the_environment_is_up_is_cancelled_with_130() -> None:
    result, made = _invoke(["--json", "up", "--service", "sigterm"])
    assert result.exit_code == 130
    assert made.calls == []  # the build was interrupted: nothing was started, nothing to clean
    assert json.loads(result.stdout)["error"]["code"] == "CANCELLED"


def test_building_the_cli_imports_neither_mcp_nor_docker() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from preflight_sdk.faces.cli.app import build_cli\n"
        "build_cli().get_help\n"
        "print([m for m in ('mcp', 'python_on_whales', 'ipywidgets') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_command_builds_only_itself_and_the_help_lists_every_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import preflight_sdk.faces.cli.app as app

    built: list[str] = []
    make = app.operation_command

    def counted(op: Any, extensions: Any) -> click.Command:
        built.append(op.name)
        return make(op, extensions)

    monkeypatch.setattr(app, "operation_command", counted)
    made = Made()
    group = build_cli(reflect(Demo), factory=made)
    assert built == []  # the table of commands is names until one is asked for
    result = CliRunner().invoke(group, ["status"], catch_exceptions=False)
    assert result.exit_code == 0 and made.calls == ["status"]
    assert built == ["status"]
    listing = CliRunner().invoke(build_cli(reflect(Demo), factory=Made()), ["--help"], catch_exceptions=False)
    eager = build_cli(reflect(Demo), factory=Made())
    shown = sorted(n for n in eager.commands if not eager.commands[n].hidden)
    assert shown and all(f"  {name} " in listing.output for name in shown)
    from preflight_sdk.project import Project

    whole = build_cli(reflect(Project), factory=Made())
    assert whole.commands["get-run"].hidden and whole.commands["generate-cases"].hidden
    assert not whole.commands["runs"].hidden and not whole.commands["status"].hidden
