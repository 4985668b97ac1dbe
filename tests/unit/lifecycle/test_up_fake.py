"""What is up to date when images carry no labels (Docker's legacy builder): the build record decides."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.fake_engine import FakeEngine

from preflight_sdk import Project
from preflight_sdk.lifecycle.images.inputs import read_record

pytestmark = pytest.mark.anyio

BUILT = """
project: {name: shop}
services:
  api:
    build: {image: "shop-api:e2e", dockerfile: Dockerfile}
"""
FILES = {"Dockerfile": "FROM busybox\nCOPY app.py /\n", "app.py": "print(1)\n"}


def _acted(result: object) -> dict[str, tuple[str, str]]:
    return {s.name: (s.action, s.reason) for s in result.services}  # type: ignore[attr-defined]


async def test_an_unlabelled_image_is_known_by_the_id_this_checkout_built(
    make_project: Callable[..., Path], engine: FakeEngine
) -> None:
    engine.labels_free = False
    root = make_project(BUILT, FILES, name="mine")
    project = Project.open(root, engine=engine)
    try:
        await project.build()
        first = await project.setup()
        assert engine.image_labels["shop-api:e2e"] == {}, "no label on the image"
        built = read_record(root).builds["api"]
        assert built.image == (await engine.inspect_image("shop-api:e2e")).id  # type: ignore[union-attr]
        assert _acted(first) == {"api": ("started", "no container yet")}

        assert _acted(await project.setup()) == {"api": ("reused", "unchanged")}

        (root / "app.py").write_text("print(2)\n")
        assert _acted(await project.setup()) == {"api": ("rebuilt", "app.py changed")}
        assert _acted(await project.setup()) == {"api": ("reused", "unchanged")}

        # Another checkout builds the same tag from other files: the tag names an id this one did not build.
        other = make_project(BUILT, {**FILES, "app.py": "print(3)\n"}, name="other")
        await Project.open(other, engine=engine).build()
        assert _acted(await project.setup()) == {
            "api": ("rebuilt", "the image was replaced by another build")
        }

        # Without the record, an unlabelled image cannot be trusted: it is built again (from the cache).
        (root / ".preflight" / "inputs.json").unlink()
        assert _acted(await project.setup()) == {
            "api": ("rebuilt", "the image was not built from these inputs")
        }
        assert _acted(await project.setup()) == {"api": ("reused", "unchanged")}
    finally:
        await project.clean()
