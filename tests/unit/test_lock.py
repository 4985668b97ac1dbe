"""The test environment is the one constraints.txt describes, and every runtime range has a lower bound.

`scripts/test` installs with `-c constraints.txt`, so a fresh machine tests what main was tested
with. A dependency added to pyproject.toml without `scripts/lock` would be installed at whatever
version is newest that day: the first test says so. (`scripts/test --latest` and `--oldest`
install other versions on purpose; there the first test has nothing to check.)
"""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from importlib.metadata import distributions
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOT_LOCKED = {"preflight-sdk", "pip", "setuptools", "wheel"}


def _name(raw: str) -> str:
    return re.sub(r"[-_.]+", "-", raw).lower()


def _locked() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[_name(name)] = version.strip()
    return pins


@pytest.mark.skipif(
    os.environ.get("PREFLIGHT_DEPS", "locked") != "locked",
    reason="scripts/test --latest/--oldest install other versions on purpose",
)
def test_every_installed_package_is_the_version_constraints_txt_pins() -> None:
    pins = _locked()
    installed = {_name(d.metadata["Name"]): d.version for d in distributions()}
    differing = {
        name: (version, pins.get(name, "not in constraints.txt"))
        for name, version in installed.items()
        if name not in NOT_LOCKED and pins.get(name) != version
    }
    assert not differing, f"installed vs constraints.txt (run scripts/lock, then the suite): {differing}"


def test_every_runtime_dependency_declares_a_lower_bound() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    unbounded = [req for req in project["dependencies"] if ">=" not in req.partition(";")[0]]
    assert not unbounded, f"give these a lower bound that scripts/test --oldest installs: {unbounded}"


def test_lower_bounds_pins_each_runtime_dependency_at_its_lower_bound() -> None:
    done = subprocess.run(
        [str(REPO / "scripts" / "lower-bounds")], capture_output=True, text=True, timeout=30, check=True
    )
    pins = dict(line.split(" ;")[0].split("==") for line in done.stdout.splitlines())
    assert pins["msgspec"] == "0.23"
    assert pins["python-on-whales"] == "0.81"
    assert pins["click"] == "8.4.2"
    assert pins["schemathesis"] == "4.32.4"  # the `contracts` extra is pinned at its lower bound too
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert done.stdout.count("\n") == len(project["dependencies"]) + len(
        project["optional-dependencies"]["contracts"]
    )


def test_the_test_extra_tests_the_contracts_extra_in_its_own_range() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    [fuzzing] = extras["contracts"]
    assert fuzzing.startswith("schemathesis>=") and ",<" in fuzzing  # a pinned range, both ends
    assert fuzzing in extras["test"]
