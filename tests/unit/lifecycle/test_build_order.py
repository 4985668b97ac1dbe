"""A Dockerfile that starts FROM (or copies from) another service's image is built after it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import FakeEngine

from preflight_sdk import PreflightError, Project
from preflight_sdk.engine.base import BuildSpec
from preflight_sdk.lifecycle.images.build_order import image_dependencies

pytestmark = pytest.mark.anyio

LAYERED = """
project: {name: layered}
services:
  app:
    build: {image: "shop/app:1", dockerfile: app.Dockerfile}
  base:
    build: {image: "shop/base", dockerfile: base.Dockerfile}
  tools:
    build: {image: "shop/tools", dockerfile: tools.Dockerfile}
"""
FILES = {
    "base.Dockerfile": "FROM scratch\n",
    "app.Dockerfile": "# syntax=docker/dockerfile:1\nFROM --platform=linux/amd64 shop/base:latest AS run\n",
    "tools.Dockerfile": "FROM scratch\nCOPY --from=shop/app:1 /bin/app /bin/app\n",
}


async def test_a_build_waits_for_the_image_it_starts_from(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.build_delay = 0.02
    result = await Project.open(make_project(LAYERED, FILES), engine=engine).build()
    assert all(s.status == "success" for s in result.services)
    order = [(call, image) for _, call, image in engine.calls if call.startswith("build-")]
    assert order.index(("build-end", "shop/base")) < order.index(("build-start", "shop/app:1"))
    assert order.index(("build-end", "shop/app:1")) < order.index(("build-start", "shop/tools"))


async def test_a_build_whose_base_failed_is_not_attempted(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.build_failures["shop/base"] = ["ERROR: boom"]
    with pytest.raises(PreflightError) as caught:
        await Project.open(make_project(LAYERED, FILES), engine=engine).build()
    assert caught.value.code == "BUILD_FAILED"
    services = {s["name"]: s for s in caught.value.details["services"]}
    assert "whose build failed" in services["app"]["error"]
    assert "`base`" in services["app"]["error"]
    started = [image for _, call, image in engine.calls if call == "build-start"]
    assert "shop/app:1" not in started and "shop/tools" not in started


def test_a_cycle_orders_nothing(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("FROM img/b\n")
    (tmp_path / "b").write_text("FROM img/a:latest\n")
    (tmp_path / "c").write_text("FROM img/a\n")
    specs = {
        name: BuildSpec(image=f"img/{name}", context=str(tmp_path), dockerfile=str(tmp_path / name))
        for name in ("a", "b", "c")
    }
    assert image_dependencies(specs) == {"a": set(), "b": set(), "c": set()}
    (tmp_path / "b").write_text("FROM scratch AS img/a\n")
    assert image_dependencies(specs) == {"a": {"b"}, "b": set(), "c": {"a"}}
