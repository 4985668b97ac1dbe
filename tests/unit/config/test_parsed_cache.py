"""A test file that loaded without problems is read back by the next process instead of parsed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from preflight_sdk.config import load_config, load_test_file, loader
from preflight_sdk.config.parsed_cache import cache_folder
from preflight_sdk.core.errors import ConfigError

_PROBE = textwrap.dedent(
    """
    import json, sys
    import msgspec
    from preflight_sdk.config import loader
    parsed = []
    original = loader._load_test_file
    def counting(target):
        parsed.append(str(target))
        return original(target)
    loader._load_test_file = counting
    loaded = loader.load_config(sys.argv[1])
    names = [case.name for case in loaded.test_files["api"].cases]
    print(json.dumps({"parsed": len(parsed), "names": names,
                      "file": msgspec.json.encode(loaded.test_files["api"]).decode()}))
    """
)


def _project(root: Path, cases: list[str]) -> Path:
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "e2e.yaml").write_text(
        'version: "1"\nproject: {name: cached}\ntests:\n  suites:\n    - {id: api, file: tests/api.yaml}\n'
    )
    _write_cases(root, cases)
    return root


def _write_cases(root: Path, cases: list[str]) -> None:
    lines = ["name: API", "variables: {ratio: 1.5, on: true, none: null, list: [1, two]}", "cases:"]
    for name in cases:
        lines += [f"  - name: {name}", "    request: {method: GET, path: /items/1}", "    expect: {status: 200}"]
    (root / "tests" / "api.yaml").write_text("\n".join(lines) + "\n")


def _fresh_load(root: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(root / "e2e.yaml")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_fresh_process_reads_an_unchanged_test_file_back_and_parses_an_edited_one(tmp_path: Path) -> None:
    root = _project(tmp_path, ["one", "two"])
    first = _fresh_load(root)
    assert first["parsed"] == 1 and first["names"] == ["one", "two"]
    assert list(cache_folder(root).glob("*.msgpack"))  # kept in the project's state folder
    again = _fresh_load(root)
    assert again["parsed"] == 0
    assert again["file"] == first["file"]  # the same TestFile, every field
    _write_cases(root, ["one", "two", "three"])
    edited = _fresh_load(root)
    assert edited["parsed"] == 1 and edited["names"] == ["one", "two", "three"]
    assert len(list(cache_folder(root).glob("*.msgpack"))) == 1  # one entry per file, overwritten


@pytest.fixture
def forget_parsed() -> None:
    """Each load below behaves as in a fresh process (the in-process parse is dropped)."""
    loader._PARSED.clear()


def test_a_damaged_entry_is_ignored_and_replaced(tmp_path: Path, forget_parsed: None) -> None:
    root = _project(tmp_path, ["one"])
    folder = cache_folder(root)
    expected = load_config(root / "e2e.yaml").test_files["api"]
    [entry] = folder.glob("*.msgpack")
    good = entry.read_bytes()
    for damaged in (good[:40], good[:-3], b"\0" * 32 + good[32:], b"not an entry"):
        entry.write_bytes(damaged)
        loader._PARSED.clear()
        assert load_config(root / "e2e.yaml").test_files["api"] == expected
        assert entry.read_bytes() == good  # parsed again, and kept again


def test_a_file_with_problems_is_never_kept(tmp_path: Path, forget_parsed: None) -> None:
    root = _project(tmp_path, ["one"])
    (root / "tests" / "api.yaml").write_text("name: API\ncases:\n  - name: x\n    reqest: {}\n")
    for _ in range(2):
        loader._PARSED.clear()
        with pytest.raises(ConfigError) as failed:
            load_test_file(root / "tests" / "api.yaml", cache=cache_folder(root))
        assert any(p.line == 4 and p.suggestion == "request" for p in failed.value.problems)
    assert not list(cache_folder(root).glob("*.msgpack"))


def test_a_value_msgpack_cannot_carry_is_parsed_each_time_and_stays_right(
    tmp_path: Path, forget_parsed: None
) -> None:
    root = _project(tmp_path, ["one"])
    target = root / "tests" / "api.yaml"
    target.write_text(target.read_text().replace("ratio: 1.5", "ratio: 123456789012345678901234567890"))
    loaded = load_config(root / "e2e.yaml").test_files["api"]
    assert loaded.variables["ratio"] == 123456789012345678901234567890
    assert not list(cache_folder(root).glob("*.msgpack"))


@pytest.mark.parametrize(
    "secret",
    [
        "headers: {Authorization: Bearer tok-Q8v2Lm3x}",  # a secret name
        "headers: {X-Note: tok-Q8v2Lm3x}",  # the project's secret value, under an ordinary name
    ],
)
def test_a_file_holding_a_secret_is_never_kept(tmp_path: Path, forget_parsed: None, secret: str) -> None:
    root = _project(tmp_path, ["one"])
    config = root / "e2e.yaml"
    with_env = "file: tests/api.yaml, env: {API_TOKEN: tok-Q8v2Lm3x}}"
    config.write_text(config.read_text().replace("file: tests/api.yaml}", with_env))
    target = root / "tests" / "api.yaml"
    target.write_text(target.read_text().replace("{method: GET, path: /items/1}", "{method: GET, path: /x, " + secret + "}"))
    for _ in range(2):
        loader._PARSED.clear()
        loaded = load_config(root / "e2e.yaml").test_files["api"]
        assert "tok-Q8v2Lm3x" in str(loaded.cases[0].request)
    assert not list(cache_folder(root).glob("*.msgpack"))
