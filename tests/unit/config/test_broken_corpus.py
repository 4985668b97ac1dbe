"""Every broken e2e.yaml under tests/fixtures/config/broken/ fails exactly as its header says.

Each file starts with one `# expect:` comment per problem the loader must report:

    # expect: CONFIG_INVALID $.service.container.healthCheck line=11 col=5 suggestion=healthcheck

The words are the error code and the JSON path, then optional `line=`, `col=`, `suggestion=`,
`file=` (a test file, relative to the e2e.yaml; default: the e2e.yaml itself) and `says=` (text the
message must contain). Values with spaces are quoted (shell rules). All problems of a file come
from one load, and nothing else may be reported.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from preflight_sdk.config import load_config
from preflight_sdk.core.errors import ConfigError, ConfigProblem

BROKEN = Path(__file__).resolve().parents[2] / "fixtures" / "config" / "broken"
FILES = sorted(BROKEN.glob("*.yaml"))
# Only what a file names itself: the corpus must not depend on the machine's environment.
ENVIRON = {"HOME": "/home/test"}


@dataclass(frozen=True)
class Expected:
    code: str
    path: str
    file: Path
    line: int | None = None
    column: int | None = None
    suggestion: str | None = None
    says: str | None = None


def expectations(config: Path) -> list[Expected]:
    found: list[Expected] = []
    for raw in config.read_text(encoding="utf-8").splitlines():
        if not raw.startswith("#"):
            if raw.strip():
                break
            continue
        text = raw.lstrip("#").strip()
        if not text.startswith("expect:"):
            continue
        code, path, *options = shlex.split(text.removeprefix("expect:"))
        fields = dict(option.split("=", 1) for option in options)
        unknown = set(fields) - {"line", "col", "suggestion", "file", "says"}
        assert not unknown, f"{config.name}: unknown expectation field(s) {unknown}"
        found.append(
            Expected(
                code=code,
                path=path,
                file=(config.parent / fields["file"]) if "file" in fields else config,
                line=int(fields["line"]) if "line" in fields else None,
                column=int(fields["col"]) if "col" in fields else None,
                suggestion=fields.get("suggestion"),
                says=fields.get("says"),
            )
        )
    return found


def matches(problem: ConfigProblem, want: Expected) -> bool:
    return (
        problem.path == want.path
        and Path(problem.file or "").resolve() == want.file.resolve()
        and (want.line is None or problem.line == want.line)
        and (want.column is None or problem.column == want.column)
        and (want.suggestion is None or problem.suggestion == want.suggestion)
        and (want.says is None or want.says in problem.message)
    )


def test_the_corpus_is_large_and_every_file_states_its_expectations() -> None:
    assert len(FILES) >= 30
    for config in FILES:
        assert expectations(config), f"{config.name} has no `# expect:` line"


@pytest.mark.parametrize("config", FILES, ids=[f.stem for f in FILES])
def test_broken_config_reports_exactly_the_expected_problems(config: Path) -> None:
    wanted = expectations(config)
    with pytest.raises(ConfigError) as caught:
        load_config(config, environ=ENVIRON)
    error = caught.value
    assert {w.code for w in wanted} == {error.code}
    problems = error.problems
    shown = "\n".join(p.render() for p in problems)
    assert len(problems) == len(wanted), f"expected {len(wanted)} problem(s), got:\n{shown}"
    unmatched = list(problems)
    for want in wanted:
        hit = next((p for p in unmatched if matches(p, want)), None)
        assert hit is not None, f"no problem matches {want}; got:\n{shown}"
        unmatched.remove(hit)
    # Every problem is in the details an agent receives, each with a line to go to.
    assert error.details is not None
    assert len(error.details["problems"]) == len(problems)
    assert all(p.line is not None for p in problems)
    assert error.hint


def test_a_missing_directory_is_config_not_found_with_the_path_named(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ConfigError) as caught:
        load_config(missing)
    assert caught.value.code == "CONFIG_NOT_FOUND"
    names = [
        "e2e.yaml",
        "e2e.yml",
        "compose.yaml",
        "compose.yml",
        "docker-compose.yaml",
        "docker-compose.yml",
    ]
    assert caught.value.details == {"tried": [str(missing / name) for name in names]}
    assert "does not exist" in (caught.value.hint or "")


def test_a_directory_without_a_config_lists_every_name_tried(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.code == "CONFIG_NOT_FOUND"
    names = [
        "e2e.yaml",
        "e2e.yml",
        "compose.yaml",
        "compose.yml",
        "docker-compose.yaml",
        "docker-compose.yml",
    ]
    assert caught.value.details == {"tried": [str(tmp_path / name) for name in names]}
    assert "e2e.yaml" in caught.value.message


def test_an_explicit_config_file_that_does_not_exist_is_config_not_found(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_text("project: {name: shop}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, "ci.e2e.yaml")
    assert caught.value.code == "CONFIG_NOT_FOUND"
    # The default file beside it is not silently used instead.
    assert caught.value.details == {"tried": [str(tmp_path / "ci.e2e.yaml")]}


def test_an_unreadable_path_is_a_config_problem_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "e2e.yaml").write_bytes(b"project:\n  name: \xff\xfe\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert caught.value.code == "CONFIG_INVALID"
    assert "UTF-8" in caught.value.problems[0].message
