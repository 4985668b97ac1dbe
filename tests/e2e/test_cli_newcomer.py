"""What a new user meets at the command line: the help, `init`, and naming a run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

PREFLIGHT = str(Path(sys.executable).parent / "preflight")


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFLIGHT, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
    )


def _commands(help_text: str) -> list[str]:
    """The command names `preflight --help` lists (the first word of each entry in a section)."""
    body = help_text.split("\n\n", 3)[-1]
    return re.findall(r"^  ([a-z][a-z-]*)  ", body, flags=re.MULTILINE)


def test_the_help_groups_the_commands_and_shows_each_once() -> None:
    shown = _run("--help").stdout

    names = _commands(shown)
    assert len(names) == len(set(names)), names
    for pair in (("diff-runs", "runs"), ("resume-run", "runs"), ("get-run", "runs"), ("list-runs", "runs")):
        assert pair[0] not in names and pair[1] in names
    assert all(section in shown for section in ("Everyday:", "Environment:", "Runs:", "Saved tests:", "MCP:"))
    # The hidden ones still work under their own names.
    assert _run("get-run", "--help").returncode == 0


def test_init_help_is_one_description_and_run_help_one_way_to_shard() -> None:
    init = _run("init", "--help").stdout
    assert init.count("validate") == 1
    assert "Load and validate the project's e2e.yaml" not in init
    run = _run("run", "--help").stdout
    assert "--shard-on" in run and "--shards" not in run


def test_runs_show_help_shows_its_own_command_line() -> None:
    shown = _run("runs", "show", "--help").stdout
    assert "preflight runs show 01" in shown
    assert "get-run" not in shown


def test_init_ignores_the_state_folder_in_git(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/")

    done = _run("-C", str(tmp_path), "init")

    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == ".preflight/"
    assert "node_modules/" in (tmp_path / ".gitignore").read_text()
    again = _run("-C", str(tmp_path / "fresh"), "init")
    assert again.returncode == 0
    assert ".preflight/" in (tmp_path / "fresh" / ".gitignore").read_text()


def test_init_says_what_it_wrote_before_its_summary_on_the_same_stream(tmp_path: Path) -> None:
    # A reader that shows stdout, then stderr (an agent's shell tool), still reads them in order.
    done = _run("-C", str(tmp_path), "init")
    assert done.returncode == 0, done.stderr
    lines = [line.replace(f"{tmp_path}/", "") for line in done.stdout.splitlines()]
    assert lines[:4] == [
        "wrote e2e.yaml",
        "wrote web/Dockerfile",
        "wrote tests/smoke.yaml",
        "wrote .gitignore",
    ], lines
    assert lines[4].startswith(f"{tmp_path.name}: 1 service"), lines
    assert "wrote" not in done.stderr
    # With --json, stdout is the envelope alone.
    fresh = tmp_path / "fresh"
    quiet = _run("-C", str(fresh), "--json", "init")
    assert json.loads(quiet.stdout)["success"] is True
    assert f"wrote {fresh}/e2e.yaml" in quiet.stderr


def test_a_run_is_named_by_latest_or_by_the_start_of_its_id(tmp_path: Path) -> None:
    (tmp_path / "ok.sh").write_text("echo ok\n")
    (tmp_path / "e2e.yaml").write_text(
        textwrap.dedent(
            """\
            project: {name: naming}
            tests:
              suites:
                - {id: ok, runner: shell, file: ok.sh, expect: {exitCode: 0}}
            """
        )
    )
    first = json.loads(_run("-C", str(tmp_path), "--json", "run").stdout)["runId"]
    second = json.loads(_run("-C", str(tmp_path), "--json", "run").stdout)["runId"]

    latest = json.loads(_run("-C", str(tmp_path), "--json", "runs", "show", "latest").stdout)
    assert latest["data"]["runId"] == second
    # The shortest prefix only one run has (ULIDs of the same second share their first 10).
    size = next(n for n in range(4, 27) if first[:n] != second[:n])
    shown = json.loads(_run("-C", str(tmp_path), "--json", "runs", "show", first[:size].lower()).stdout)
    assert shown["data"]["runId"] == first
    shared = _run("-C", str(tmp_path), "--json", "runs", "show", first[: size - 1])
    if size - 1 >= 4:
        error = json.loads(shared.stdout)["error"]
        assert error["code"] == "INVALID_INPUT" and first in error["message"] and second in error["message"]
    unknown = json.loads(_run("-C", str(tmp_path), "--json", "runs", "show", "ZZZZZZZZ").stdout)["error"]
    assert unknown["code"] == "RUN_NOT_FOUND"
