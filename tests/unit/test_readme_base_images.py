"""The README names the base images a service's Dockerfile can start from on a machine without a
registry: those scripts/base-images builds, and those the starter of `preflight init` picks from."""

from __future__ import annotations

import re
from pathlib import Path

from preflight_sdk.faces.cli.starter import BASE_CANDIDATES

REPO = Path(__file__).resolve().parents[2]


def test_the_readme_names_every_local_base_image_and_the_starters_choices() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    built = set(re.findall(r"^#\s+(preflight-base/\w+)\s", (REPO / "scripts" / "base-images").read_text(), re.M))

    assert {"preflight-base/busybox", "preflight-base/python", "preflight-base/postgres"} <= built
    for image in built:
        assert f"`{image}:latest`" in readme
    for candidate in BASE_CANDIDATES:
        assert f"`{candidate}`" in readme
