"""The registry: reflection of Project, docstring parsing, lint, and agreement between the faces."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any, ClassVar

import msgspec
import pytest
from unit.faces.standin import Demo

from preflight_sdk.core.errors import InputError
from preflight_sdk.core.operations import operation
from preflight_sdk.core.progress import ProgressArg
from preflight_sdk.core.results.base import Result
from preflight_sdk.faces.cli.app import build_cli, command_name
from preflight_sdk.faces.cli.extensions import EXTENSIONS
from preflight_sdk.faces.mcp.aliases import AliasSpec
from preflight_sdk.faces.mcp.schemas import CONFIG_FILE_OPERATIONS, TOOL_PREFIX, build_tools
from preflight_sdk.faces.reflection.docstrings import parse_docstring
from preflight_sdk.faces.reflection.lint import lint
from preflight_sdk.faces.reflection.registry import reflect
from preflight_sdk.project import Project

# -- the gate on Project ---------------------------------------------------------------------------


def test_every_public_project_method_is_documented_typed_and_decorated() -> None:
    assert lint(Project) == []


@pytest.mark.parametrize("target", [Project, Demo], ids=["Project", "stand-in"])
def test_every_operation_has_a_tool_and_a_command_with_the_same_parameters(target: type) -> None:
    registry = reflect(target)
    assert registry.operations, "no operation reflected"
    for required in (True, False):
        tools = {t.name: t for t in build_tools(registry, project_required=required)}
        for op in registry:
            tool = tools[TOOL_PREFIX + op.name]
            extra = {"projectPath"} | ({"configFile"} if op.name in CONFIG_FILE_OPERATIONS else set())
            assert set(tool.input_schema["properties"]) == {p.wire_name for p in op.parameters} | extra
            assert ("projectPath" in tool.input_schema.get("required", [])) is required
    group = build_cli(registry)
    for op in registry:
        command = group.commands[command_name(op)]
        extra = {extension.option.name for extension in EXTENSIONS.get(op.name, ())}
        names = {p.name for p in command.params if p.expose_value} - extra
        assert names == {p.name for p in op.parameters}, command.name


def test_operations_come_in_definition_order_without_private_sync_or_progress_members() -> None:
    registry = reflect(Demo)
    names = [op.name for op in registry]
    assert names == ["init", "build", "setup", "run", "run_suite", "status", "logs", "clean", "clarify"]
    build = registry.get("build")
    assert build is not None and build.progress
    assert [p.name for p in build.parameters] == ["no_cache", "service", "pull"]
    assert [p.wire_name for p in build.parameters] == ["noCache", "service", "pull"]
    init = registry.get("init")
    assert init is not None and not init.progress


def test_reflection_happens_once_per_class() -> None:
    assert reflect(Demo) is reflect(Demo)


def test_argument_struct_is_camel_case_strict_and_described() -> None:
    logs = reflect(Demo).get("logs")
    assert logs is not None
    schema = msgspec.json.schema(logs.arguments)
    body = schema["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    assert body["additionalProperties"] is False
    assert body["required"] == ["container"]
    assert body["properties"]["lines"] == {
        "description": "how many lines from the end.",
        "type": "integer",
        "default": 100,
    }
    assert logs.convert({"container": "api"}) == {
        "container": "api",
        "lines": 100,
        "since": None,
        "follow": False,
    }


def test_a_string_for_an_integer_is_rejected_strictly_naming_field_and_type() -> None:
    logs = reflect(Demo).get("logs")
    assert logs is not None
    with pytest.raises(InputError) as caught:
        logs.convert({"container": "api", "lines": "50"})
    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.details is not None
    assert caught.value.details["field"] == "lines"
    assert caught.value.details["expected"] == "integer"


def test_the_tool_description_has_summary_body_example_and_tips_but_no_args_block() -> None:
    init = reflect(Demo).get("init")
    assert init is not None
    text = init.described()
    assert text.startswith("Load and validate the project's configuration.")
    assert "Example" not in text and "await" not in text  # the docstring's example is Python
    assert 'Example: {"x": 1}' in init.described('{"x": 1}')  # a face passes its own rendering
    assert "Tips:\n    Call it again after editing the file." in text
    assert "Returns:" not in text
    build = reflect(Demo).get("build")
    assert build is not None
    assert "Args:" not in build.described()
    assert "no_cache" not in build.described()


# -- lint catches each kind of gap ----------------------------------------------------------------


class _Undocumented(msgspec.Struct, frozen=True, kw_only=True):
    """An alias input without field descriptions."""

    question: str


_ALIAS = AliasSpec(
    name="ask",
    input_type=_Undocumented,
    to_kwargs=lambda a, base: {},
    output_type=str,
    from_result=lambda r: "",
    description="Ask.",
)


class _Sloppy:
    __mcp_aliases__: ClassVar[dict[str, tuple[AliasSpec, ...]]] = {"aliased": (_ALIAS,)}

    @operation(title="Aliased", group="g")
    async def aliased(self) -> Result:
        """Has an alias whose input is not described."""
        return Result()

    @operation(title="No docs", group="g")
    async def undocumented(self, value: int) -> Result:
        return Result()

    async def undecorated(self) -> Result:
        """Has docs but no decorator."""
        return Result()

    @operation(title="Untyped", group="g")
    async def untyped(self, value, progress: ProgressArg = None) -> Result:  # type: ignore[no-untyped-def]
        """Missing a hint.

        Args:
            value: something.
        """
        return Result()

    @operation(title="No return", group="g")
    async def no_return(self, value: int):  # type: ignore[no-untyped-def]
        """Missing a return hint and an argument description."""

    @operation(title="Stale docs", group="g")
    async def stale(self, value: int) -> Result:
        """Documents a parameter that is gone.

        Args:
            value: fine.
            old: gone.
        """
        return Result()

    @operation(title="Reserved", group="g")
    async def reserved(self, json: bool = False) -> Result:
        """Uses a name the CLI takes for itself.

        Args:
            json: clashes with --json.
        """
        return Result()

    @operation(title="Unschemable", group="g")
    async def unschemable(self, value: object) -> Result:
        """Takes a type with no JSON Schema.

        Args:
            value: anything at all.
        """
        return Result()

    @operation(title="Ungrouped")
    async def ungrouped(self) -> Result:
        """Has no tool group."""
        return Result()

    @operation(title="Pythonic example", group="g")
    async def pythonic(self, name: str) -> Result:
        """Shows an example that is not literal arguments.

        Args:
            name: a name.

        Example:
            `await project.pythonic(name=some_variable)`
        """
        return Result()


def test_lint_names_every_gap_in_a_sloppy_class() -> None:
    problems = lint(_Sloppy)
    expected = [
        "_Sloppy.aliased: alias `ask` field `question` has no description",
        "_Sloppy.undocumented: no docstring summary",
        "_Sloppy.undocumented: parameter `value` has no description in `Args:`",
        "_Sloppy.undecorated: no @operation decorator",
        "_Sloppy.untyped: parameter `value` has no type hint",
        "_Sloppy.no_return: no return type hint",
        "_Sloppy.no_return: parameter `value` has no description in `Args:`",
        "_Sloppy.stale: `Args:` documents `old`, which is not a parameter",
        "_Sloppy.reserved: parameter `json` clashes with a face's own argument; rename it",
        "_Sloppy.ungrouped: no tool group: give @operation(group=...) (e.g. environment, runs, tests)",
        "_Sloppy.pythonic: the Example of `pythonic` cannot be shown as arguments: "
        "`some_variable` is not a literal",
    ]
    for problem in expected:
        assert problem in problems
    assert any(p.startswith("_Sloppy.unschemable: no JSON Schema") for p in problems)
    assert len(problems) == len(expected) + 1


# -- docstrings ------------------------------------------------------------------------------------


def test_google_docstrings_split_into_summary_body_args_and_sections() -> None:
    doc = parse_docstring(
        """Run one suite
        by its id.

        The body explains
        more.

        Note:
            kept in the body.

        Args:
            suite_id (str): the suite's id,
                continued here.
            progress: injected.

        Returns:
            The run report,
            with totals.

        Example:
            ```python
            await p.run_suite("smoke")
            ```

        Tips:
            - first tip
              continued
        """
    )
    assert doc.summary == "Run one suite by its id."
    assert doc.description == "The body explains\nmore.\n\nNote:\n    kept in the body."
    assert doc.args == {"suite_id": "the suite's id, continued here.", "progress": "injected."}
    assert doc.returns == "The run report, with totals."
    assert doc.example == '```python\nawait p.run_suite("smoke")\n```'
    assert doc.tips == "- first tip\n  continued"


def test_an_empty_docstring_parses_to_nothing() -> None:
    assert parse_docstring(None) == parse_docstring("   ") == parse_docstring("")
    assert parse_docstring(None).summary == ""


# -- import hygiene -------------------------------------------------------------------------------


def test_the_registry_imports_neither_mcp_nor_click() -> None:
    code = (
        "import sys, json, preflight_sdk.project\n"
        "before = set(sys.modules)\n"
        "from preflight_sdk.faces.reflection.registry import reflect\n"
        "reflect()\n"
        "added = set(sys.modules) - before\n"
        "heavy = ('mcp', 'mcp_types', 'click', 'pydantic')\n"
        "print(json.dumps(sorted(m for m in added if m.split('.')[0] in heavy)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert msgspec.json.decode(done.stdout) == []


def test_type_hints_with_annotated_metadata_keep_their_constraints() -> None:
    class Bounded:
        @operation(title="Bounded")
        async def pick(self, count: typing.Annotated[int, msgspec.Meta(ge=1)] = 1) -> Result:
            """Pick some.

            Args:
                count: how many (at least 1).
            """
            return Result()

    pick = reflect(Bounded).get("pick")
    assert pick is not None
    with pytest.raises(InputError) as caught:
        pick.convert({"count": 0})
    details: dict[str, Any] = caught.value.details or {}
    assert details["field"] == "count"
    assert ">= 1" in caught.value.message
