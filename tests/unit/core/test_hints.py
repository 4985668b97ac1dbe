"""A hint is written once and read in the words of the face that shows it."""

from __future__ import annotations

import pytest

import preflight_sdk.project  # noqa: F401  (defines Project, so every operation name is known)
from preflight_sdk.core.errors import ConfigError, InputError, StateError
from preflight_sdk.core.hints import for_face
from preflight_sdk.faces.cli.output import error_text
from preflight_sdk.faces.reflection.outcome import error_envelope


@pytest.mark.parametrize(
    ("face", "expected"),
    [
        ("cli", "run `preflight build` first; `preflight runs` shows them"),
        ("mcp", "call `preflight_build` first; `preflight_list_runs` shows them"),
        ("sdk", "call `project.build()` first; `project.list_runs()` shows them"),
    ],
)
def test_operations_are_named_as_each_face_calls_them(face: str, expected: str) -> None:
    assert for_face("call `build` first; `list_runs` shows them", face) == expected  # type: ignore[arg-type]


def test_names_that_are_not_operations_are_left_alone() -> None:
    text = "publish the port under `ports`, then call `nosuch` again"
    assert for_face(text, "cli") == text
    assert for_face(text, "mcp") == text


def test_details_the_cli_text_hides_are_printed_under_the_error() -> None:
    error = StateError(
        "service api exited",
        code="SERVICE_EXITED",
        hint="read details.logTail: the process in the container stopped",
        details={"logTail": ["Traceback (most recent call last):", "KeyError: 'DB_URL'"]},
    )

    text = error_text(error)

    assert "hint: read logTail (shown with this error)" in text
    assert "details.logTail" not in text
    assert "  | KeyError: 'DB_URL'" in text
    assert error_envelope(error).error is not None
    assert error_envelope(error).error.hint == "read details.logTail: the process in the container stopped"


def test_each_face_gets_its_own_words_for_the_same_error() -> None:
    error = InputError("runId 'x' is not a run id", hint="`list_runs` shows them")

    cli = error_envelope(error, "cli").error
    mcp = error_envelope(error, "mcp").error
    assert cli is not None and mcp is not None
    assert cli.hint == "`preflight runs` shows them"
    assert mcp.hint == "`preflight_list_runs` shows them"
    assert "`project.list_runs()` shows them" in str(error)
    # An error raised without a hint gets its class's default, worded the same way: the same
    # call again, as the face that made it names it (nothing else to name: "try again").
    assert error_text(ConfigError("bad"), again="run `preflight test`").endswith(
        "then run `preflight test` again"
    )
    assert error_text(ConfigError("bad")).endswith("then try again")


def test_tool_descriptions_and_command_help_name_operations_in_their_faces_words() -> None:
    from preflight_sdk.faces.cli.app import build_cli
    from preflight_sdk.faces.reflection.registry import reflect

    setup = next(op for op in reflect() if op.name == "setup")
    assert "call `preflight_build` first" in setup.described()
    import click

    command = build_cli().commands["setup"]
    shown = command.get_help(click.Context(command, info_name="setup"))
    assert "run `preflight build` first" in shown


def test_an_sdk_reader_of_the_hint_attribute_gets_method_calls() -> None:
    error = StateError("the project has no session", code="SESSION_NOT_FOUND", hint="call `init` first")
    assert error.hint == "call `project.init()` first"
    assert error.hint_for("mcp") == "call `preflight_init` first"
