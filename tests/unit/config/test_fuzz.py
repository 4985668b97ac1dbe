"""Whatever the file holds, loading it raises `PreflightError` or succeeds: never anything else.

Random YAML documents, random text, and random mutations of the good fixtures (a key deleted,
renamed, retyped, garbage inserted, characters spliced into the text) go through `load_config` and
`load_test_file`. The runs are derandomized so that a failure reproduces.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from preflight_sdk.config import load_config, load_test_file
from preflight_sdk.core.errors import ConfigError, PreflightError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "config"
GOOD_CONFIGS = sorted([*(FIXTURES / "good").rglob("e2e.y*ml"), *(FIXTURES / "origin").rglob("e2e.yaml")])
TEST_FILES = sorted(
    p
    for p in (FIXTURES / "good").rglob("*.yaml")
    if p.name != "e2e.yaml" and p.parent.name in ("tests", "suites")
) + sorted((FIXTURES / "origin").rglob("tests/*.yaml"))
ENV = {"PAYMENTS_PORT": "19081", "STAGE": "e2e", "IDP_PORT": "19082", "SHARED": "s", "TOKEN": "t"}

# Keys of both formats, so that random documents reach past the first unknown key.
KEYS = [
    "project",
    "name",
    "service",
    "services",
    "build",
    "image",
    "dockerfile",
    "container",
    "ports",
    "environment",
    "healthcheck",
    "path",
    "tcp",
    "port",
    "dependsOn",
    "kind",
    "vars",
    "mocks",
    "routes",
    "method",
    "response",
    "sequence",
    "loop",
    "when",
    "body",
    "status",
    "tests",
    "suites",
    "id",
    "file",
    "runner",
    "command",
    "retry",
    "maxAttempts",
    "delay",
    "parallel",
    "timeout",
    "cases",
    "setup",
    "teardown",
    "request",
    "expect",
    "exec",
    "save",
    "waitHealthy",
    "until",
    "x-any",
    "<<",
]
SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["{{env.X}}", "{{config.y}}", "{{uuid}}", "{{", "}}", "5s", "-1", "0:80", "/x", "yaml"])
)
documents = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the good fixtures, so mutated files sit beside the test files they name."""
    root = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(FIXTURES / "good", root / "good")
    shutil.copytree(FIXTURES / "origin", root / "origin")
    return root


def attempt_config(directory: Path, text: str) -> None:
    target = directory / "fuzz.e2e.yaml"
    target.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_config(directory, "fuzz.e2e.yaml", environ=ENV)
    except ConfigError as exc:
        assert exc.code == "CONFIG_INVALID"
        assert exc.problems, "an invalid file must say what is wrong"
        assert all(p.path.startswith("$") for p in exc.problems)
    except PreflightError:
        pass


def attempt_test_file(directory: Path, text: str) -> None:
    target = directory / "fuzz.test.yaml"
    target.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_test_file(target)
    except ConfigError as exc:
        assert exc.problems
    except PreflightError:
        pass


def dump(document: Any) -> str:
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)


@SETTINGS
@given(document=documents)
def test_random_documents(workspace: Path, document: Any) -> None:
    attempt_config(workspace, dump(document))
    attempt_test_file(workspace, dump(document))


@SETTINGS
@given(text=st.text(max_size=300))
def test_random_text(workspace: Path, text: str) -> None:
    attempt_config(workspace, text)
    attempt_test_file(workspace, text)


# -- mutations of the good fixtures ----------------------------------------------------------


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(paths_of(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(paths_of(item, (*prefix, index)))
    return found


@st.composite
def mutated(draw: st.DrawFn, sources: list[Path]) -> tuple[Path, str]:
    source = draw(st.sampled_from(sources))
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths_of(data)))
        if not path:
            continue
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        last = path[-1]
        action = draw(st.sampled_from(["delete", "rename", "retype", "garbage"]))
        if action == "delete":
            del parent[last]
        elif action == "rename" and isinstance(parent, dict):
            new_key = draw(st.sampled_from(KEYS) | st.text(max_size=6) | st.just(str(last).lower()))
            parent[new_key] = parent.pop(last)
        elif action == "retype":
            parent[last] = draw(documents)
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(documents)
        else:
            parent.insert(draw(st.integers(0, len(parent))), draw(documents))
    text = dump(data)
    if draw(st.booleans()):
        # Splice raw characters in as well: broken indentation, quotes, tabs, brackets.
        at = draw(st.integers(0, len(text)))
        text = (
            text[:at]
            + draw(st.sampled_from(["\t", ":", "'", '"', "[", "{", "- ", "&a", "*a", "\n  x"]))
            + text[at:]
        )
    return source, text


@SETTINGS
@given(case=mutated(GOOD_CONFIGS))
def test_mutated_configs(workspace: Path, case: tuple[Path, str]) -> None:
    source, text = case
    directory = workspace / source.parent.relative_to(FIXTURES)
    attempt_config(directory, text)


@SETTINGS
@given(case=mutated(TEST_FILES))
def test_mutated_test_files(workspace: Path, case: tuple[Path, str]) -> None:
    source, text = case
    attempt_test_file(workspace / source.parent.relative_to(FIXTURES), text)


def test_the_fuzzed_fixtures_are_valid_to_begin_with() -> None:
    # Mutations only mean something if the originals load.
    assert len(GOOD_CONFIGS) >= 10 and len(TEST_FILES) >= 10
    for config in GOOD_CONFIGS:
        load_config(config, environ=ENV)
    for test_file in TEST_FILES:
        load_test_file(test_file)
