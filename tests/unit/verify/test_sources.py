"""Where the server comes from: a command string or list, both manifest shapes, the e2e.yaml `mcp:` block."""

from __future__ import annotations

import json
import shlex
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from preflight_sdk.config.model import McpConfig, McpToolDecl
from preflight_sdk.core.errors import ConfigError, InputError
from preflight_sdk.verify import ExpectedTool, VerifyResult, verify

if TYPE_CHECKING:
    from conftest import Tagged

pytestmark = pytest.mark.anyio
SERVERS = Path(__file__).resolve().parents[2] / "fixtures" / "mcp_servers"
GOOD = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVERS / 'good.py'))}"


def triples(result: VerifyResult) -> set[tuple[str, str, str | None]]:
    return {(f.severity, f.code, f.tool) for f in result.all_findings()}


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


async def test_a_command_string_is_split_like_a_shell_but_never_run_by_one(
    tagged: Tagged, tmp_path: Path
) -> None:
    marker = tmp_path / "pwned"
    name = f"two words; touch {marker}"

    result = await verify(root=tmp_path, command=f"{GOOD} --name {shlex.quote(name)}", env=tagged.env)

    assert result.server is not None
    assert result.server.name == name  # one argument, spaces and `;` included
    assert result.server.command[-2:] == ["--name", name]
    assert not marker.exists()
    assert result.status == "passed"


async def test_an_unbalanced_quote_in_a_command_string_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        await verify(root=tmp_path, command='python "server.py')

    assert caught.value.code == "INVALID_INPUT"
    assert caught.value.hint


async def test_a_bad_timeout_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        await verify(root=tmp_path, command=GOOD, timeout="soon")

    assert caught.value.code == "INVALID_INPUT"


async def test_nothing_to_start_is_skipped_with_a_warning_not_all_missing(tmp_path: Path) -> None:
    result = await verify(root=tmp_path, expected_tools=[ExpectedTool(name="search_books")])

    assert result.status == "skipped" and result.ok
    assert triples(result) == {("warning", "NO_START_COMMAND", None)}
    assert "search_books" in result.findings[0].message
    assert result.tools == [] and result.summary.missing == 0


async def test_strict_makes_a_missing_start_command_fail(tmp_path: Path) -> None:
    result = await verify(root=tmp_path, strict=True)

    assert result.status == "skipped" and not result.ok
    assert triples(result) == {("error", "NO_START_COMMAND", None)}


async def test_a_command_replaces_the_mcp_block(tagged: Tagged, tmp_path: Path) -> None:
    block = McpConfig(start=["/nonexistent/other"], tools=[McpToolDecl(name="nothing_like_this")])

    result = await verify(root=tmp_path, command=GOOD, mcp=block, env=tagged.env)

    assert result.status == "passed"
    assert result.server is not None and result.server.name == "good-books"
    assert triples(result) == {("info", "NO_DECLARATIONS", None)}  # the block's tools went with it


async def test_a_command_and_a_manifest_together_are_an_input_error(tagged: Tagged, tmp_path: Path) -> None:
    manifest = write(tmp_path, "pai-manifest.yaml", f"name: x\nmcp_start: {GOOD}\n")

    with pytest.raises(InputError) as caught:
        await verify(root=tmp_path, command=GOOD, manifest=str(manifest), env=tagged.env)

    assert caught.value.code == "INVALID_INPUT"
    assert "command and manifest" in caught.value.message
    assert caught.value.hint and "--manifest" in caught.value.hint
    assert tagged.leftovers() == []  # refused before anything started


async def test_a_manifest_with_mcp_start_and_a_provides_list(tagged: Tagged, tmp_path: Path) -> None:
    write(tmp_path, "schemas/search.json", json.dumps({"type": "object"}))
    write(
        tmp_path,
        "tool/pai-manifest.yaml",
        f"""\
        name: books
        type: cli+mcp
        mcp_start: {GOOD}
        depends_on: []
        provides:
          cli:
            - command: books list
          mcp:
            - tool: search_books
              schema: ../schemas/search.json
            - tool: get_stats
            - tool: remove_book
            - resource: books://all
        """,
    )

    result = await verify(root=tmp_path, manifest="tool/pai-manifest.yaml", env=tagged.env, mcp_only=True)

    assert result.status == "failed"
    assert [(t.name, t.status) for t in result.tools] == [
        ("search_books", "found"),
        ("get_stats", "found"),
        ("remove_book", "missing"),
        ("add_book", "extra"),
    ]
    assert triples(result) == {
        ("error", "SCHEMA_MISMATCH", "search_books"),
        ("error", "TOOL_MISSING", "remove_book"),
        ("warning", "TOOL_EXTRA", "add_book"),
    }
    assert result.server is not None and result.server.cwd == str(tmp_path / "tool")
    assert result.cli == [], "mcp_only skips the command-line contracts"


async def test_command_line_contracts_of_a_manifest_are_run_unless_mcp_only(
    tagged: Tagged, tmp_path: Path
) -> None:
    write(tmp_path, "schemas/version.json", json.dumps({"type": "object", "required": ["version"]}))
    write(tmp_path, "version.py", "import json; print(json.dumps({'version': '1.0'}))")
    write(tmp_path, "listing.py", "print('[]')")
    write(tmp_path, "broken.py", "import sys; sys.exit(4)")
    write(
        tmp_path,
        "pai-manifest.yaml",
        """\
        name: books
        provides:
          cli:
            - command: python3 version.py
              output_schema: schemas/version.json
            - command: [python3, listing.py]
              output_schema: schemas/version.json
            - python3 broken.py
            - command: no-such-program-here --help
        """,
    )

    result = await verify(root=tmp_path, manifest="pai-manifest.yaml", env=tagged.env)

    assert [(c.status, c.exit_code) for c in result.cli] == [
        ("passed", 0),
        ("failed", 0),
        ("failed", 4),
        ("failed", None),
    ]
    codes = [[f.code for f in c.findings] for c in result.cli]
    assert codes == [[], ["CLI_OUTPUT_SCHEMA"], ["CLI_EXIT_STATUS"], ["CLI_NOT_FOUND"]]
    assert result.status == "failed" and not result.ok
    assert "Command-line contracts:" in result_text(result)
    skipped = await verify(root=tmp_path, manifest="pai-manifest.yaml", env=tagged.env, mcp_only=True)
    assert skipped.cli == [] and skipped.status == "skipped"


async def test_a_manifest_with_a_provides_mcp_block(tagged: Tagged, tmp_path: Path) -> None:
    manifest = write(
        tmp_path,
        "pai-manifest.yaml",
        f"""\
        name: books
        provides:
          mcp:
            start: {GOOD}
            tools:
              - tool: search_books
              - name: get_stats
              - add_book
            resources:
              - resource: books://all
        """,
    )

    result = await verify(root=None, manifest=str(manifest), env=tagged.env)

    assert result.status == "passed"
    assert triples(result) == set()
    assert [t.name for t in result.tools] == ["search_books", "get_stats", "add_book"]


async def test_a_manifest_without_a_start_command_is_skipped(tmp_path: Path) -> None:
    write(tmp_path, "pai-manifest.yaml", "name: books\nprovides:\n  mcp:\n    - tool: search_books\n")

    result = await verify(root=tmp_path, manifest="pai-manifest.yaml")

    assert result.status == "skipped"
    assert triples(result) == {("warning", "NO_START_COMMAND", None)}


async def test_a_bad_manifest_lists_each_problem_with_its_line(tmp_path: Path) -> None:
    write(
        tmp_path,
        "pai-manifest.yaml",
        """\
        name: books
        mcp_start: python a.py
        provides:
          mcp:
            start: python b.py
            tols: []
            tools:
              - tool: search_books
                schmea: s.json
              - tool: search_books
              - 42
              - tool: get_stats
                schema: missing.json
        """,
    )

    with pytest.raises(ConfigError) as caught:
        await verify(root=tmp_path, manifest="pai-manifest.yaml")

    error = caught.value
    assert error.code == "MANIFEST_INVALID"
    problems = {(p.path, p.line, p.suggestion) for p in error.problems}
    assert problems == {
        ("$.provides.mcp.start", 5, None),
        ("$.provides.mcp.tols", 6, "tools"),
        ("$.provides.mcp.tools[0].schmea", 9, "schema"),
        ("$.provides.mcp.tools[1]", 10, None),
        ("$.provides.mcp.tools[2]", 11, None),
        ("$.provides.mcp.tools[3].schema", 13, None),
    }
    assert "disagree" in next(p.message for p in error.problems if p.path == "$.provides.mcp.start")
    assert "declared twice" in next(p.message for p in error.problems if p.path == "$.provides.mcp.tools[1]")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- just\n- a list\n", "mapping"),
        ("mcp_start: [1, 2]\n", "string or a list of strings"),
        ("provides:\n  mcp: yes\n", "list of tools or a block"),
        ("name: [unclosed\n", "YAML syntax error"),
    ],
)
async def test_manifest_shape_errors(tmp_path: Path, text: str, message: str) -> None:
    write(tmp_path, "m.yaml", text)

    with pytest.raises(ConfigError) as caught:
        await verify(root=tmp_path, manifest="m.yaml")

    assert caught.value.code == "MANIFEST_INVALID"
    assert message in caught.value.problems[0].message


async def test_a_missing_manifest_is_manifest_invalid(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        await verify(root=tmp_path, manifest="nowhere.yaml")

    assert caught.value.code == "MANIFEST_INVALID"


async def test_the_mcp_block_compares_a_schema_file_and_lists_the_drift(
    tagged: Tagged, tmp_path: Path
) -> None:
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv" / "good.py").write_text((SERVERS / "good.py").read_text())
    declared = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for in titles."},
            "offset": {"type": "integer", "description": "Skip this many."},
        },
        "required": ["query", "offset"],
        "additionalProperties": False,
    }
    write(tmp_path, "schemas/search_books.json", json.dumps(declared))
    block = McpConfig(
        start=[sys.executable, "good.py"],
        cwd="srv",
        env={"GOOD_SERVER_NAME": "from-env"},
        tools=[
            McpToolDecl(name="search_books", schema="schemas/search_books.json"),
            McpToolDecl(
                name="get_stats", schema={"type": "object", "properties": {}, "additionalProperties": False}
            ),
        ],
    )

    result = await verify(root=tmp_path, mcp=block, env=tagged.env)

    assert result.server is not None
    assert result.server.name == "from-env"  # the block's env reached the server
    assert result.server.cwd == str(tmp_path / "srv")
    assert triples(result) == {
        ("error", "SCHEMA_MISMATCH", "search_books"),
        ("warning", "TOOL_EXTRA", "add_book"),
    }
    search = result.tools[0]
    assert search.schema_diff is not None
    assert (search.schema_diff.added, search.schema_diff.removed, search.schema_diff.changed) == (
        ["limit"],
        ["offset"],
        ["query"],
    )
    assert (search.schema_diff.required_added, search.schema_diff.required_removed) == ([], ["offset"])
    assert search.schema_diff.declared_hash != search.schema_diff.served_hash
    message = next(f.message for f in search.findings if f.code == "SCHEMA_MISMATCH")
    assert "added properties ['limit']" in message and "removed properties ['offset']" in message
    assert result.tools[1].schema_diff is None  # same schema, other key order


async def test_a_schema_file_that_is_not_json_is_a_config_error(tmp_path: Path) -> None:
    write(tmp_path, "s.json", "{not json")
    block = McpConfig(start=GOOD, tools=[McpToolDecl(name="search_books", schema="s.json")])

    with pytest.raises(ConfigError) as caught:
        await verify(root=tmp_path, mcp=block)

    assert caught.value.code == "CONFIG_INVALID"
    assert caught.value.problems[0].path == "$.mcp.tools[0].schema"


async def test_expected_tools_replace_the_declarations_and_compare_output_schema_and_annotations(
    tagged: Tagged, tmp_path: Path
) -> None:
    block = McpConfig(start=GOOD, tools=[McpToolDecl(name="nothing_like_this")])
    expected = [
        ExpectedTool(
            name="get_stats",
            input_schema={"type": "object", "properties": {}, "additionalProperties": False},
            output_schema={"type": "object", "properties": {"count": {"type": "integer"}}},
            annotations={"readOnlyHint": True, "openWorldHint": True},
        ),
        ExpectedTool(name="search_books", annotations={"readOnlyHint": True}),
        ExpectedTool(name="add_book"),
    ]

    result = await verify(root=tmp_path, mcp=block, expected_tools=expected, env=tagged.env)

    assert triples(result) == {
        ("error", "OUTPUT_SCHEMA_MISMATCH", "get_stats"),
        ("error", "ANNOTATIONS_MISMATCH", "get_stats"),
    }
    mismatch = next(f.message for f in result.tools[0].findings if f.code == "ANNOTATIONS_MISMATCH")
    assert "openWorldHint: declared True, served False" in mismatch


def result_text(result: object) -> str:
    from preflight_sdk.faces.notebook.static import render_text

    return render_text(result)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"self_check": True, "command": GOOD}, "self_check and command"),
        ({"self_check": True, "manifest": "pai-manifest.yaml"}, "self_check and manifest"),
        ({"command": GOOD, "manifest": "pai-manifest.yaml"}, "command and manifest"),
    ],
)
async def test_project_verify_refuses_more_than_one_server_source(
    tmp_path: Path, options: dict[str, Any], named: str
) -> None:
    from preflight_sdk import Project

    # No e2e.yaml at all: the options are refused before the project is even read.
    with pytest.raises(InputError) as caught:
        await Project.open(tmp_path).verify(**options)

    assert caught.value.code == "INVALID_INPUT"
    assert named in caught.value.message
    assert caught.value.hint
