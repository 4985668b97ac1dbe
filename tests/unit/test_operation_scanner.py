"""One scanner of `Project`'s operations, shared by the registry (CLI, MCP) and `SyncProject`."""

from __future__ import annotations

from collections.abc import AsyncIterator

from preflight_sdk.core.operations import public_members
from preflight_sdk.faces.reflection.registry import reflect
from preflight_sdk.project import Project
from preflight_sdk.sync import SyncProject


class Base:
    async def first(self) -> int:
        return 1

    async def hidden(self) -> int:
        return 2

    async def stream(self) -> AsyncIterator[int]:
        yield 1

    async def _private(self) -> None:
        return None

    @property
    def value(self) -> int:
        return 0


class Child(Base):
    def hidden(self) -> int:  # type: ignore[override]  # a plain override hides the operation
        return 3

    async def last(self) -> int:
        return 4


def test_members_come_in_definition_order_bases_first_and_a_plain_override_hides_one() -> None:
    members = [(m.name, m.kind) for m in public_members(Child)]
    assert members == [("first", "coroutine"), ("stream", "generator"), ("last", "coroutine")]


def test_the_registry_and_the_blocking_facade_see_the_same_operations() -> None:
    scanned = public_members(Project)
    assert [op.name for op in reflect(Project)] == [m.name for m in scanned if m.kind == "coroutine"]
    for member in scanned:
        twin = getattr(SyncProject, member.name)
        assert twin.__wrapped_operation__ is member.function, member.name


class Left:
    async def left(self) -> int:
        return 1


class Right:
    async def right(self) -> int:
        return 2


class Joined(Left, Right):
    async def own(self) -> int:
        return 3


def test_bases_come_in_the_order_the_class_lists_them_then_its_own() -> None:
    assert [m.name for m in public_members(Joined)] == ["left", "right", "own"]


def test_projects_operations_come_group_by_group_as_the_faces_list_them() -> None:
    groups = [op.meta.group for op in reflect(Project)]
    seen = list(dict.fromkeys(groups))
    assert seen[:2] == ["environment", "runs"]
    # each group's operations side by side, not interleaved with another group's
    assert all(groups.index(g) + groups.count(g) - 1 == len(groups) - 1 - groups[::-1].index(g) for g in seen)
