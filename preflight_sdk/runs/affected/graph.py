"""Which services and mocks depend on which: the edges a change travels along to its dependents.

A service depends on another service or a mock when e2e.yaml says so (`dependsOn`), when its
container's environment, command or entrypoint names it (`INVENTORY_URL: http://inventory:8000`,
`{{mocks.payments.url}}`), or when the traffic showed it: a case that reached the service also
had requests arrive at the mock. A change of a node changes the behaviour of everything that
depends on it, transitively.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from preflight_sdk.config import LoadedConfig
from preflight_sdk.suites.touches import mock_touch, service_touch

__all__ = ["Graph", "configured_edges"]


class Graph:
    """Directed edges `node → what it depends on`, nodes spelled as touches (`service:x`, `mock:y`)."""

    def __init__(self, edges: Mapping[str, Iterable[str]] | None = None) -> None:
        self.depends: dict[str, set[str]] = {}
        for node, targets in (edges or {}).items():
            for target in targets:
                self.add(node, target)

    def add(self, node: str, target: str) -> None:
        """`node` depends on `target`."""
        if node != target:
            self.depends.setdefault(node, set()).add(target)

    def observe(self, touches: Iterable[str]) -> None:
        """One case's touches: each service it reached depends on each mock it reached."""
        touched = list(touches)
        services = [t for t in touched if t.startswith("service:")]
        for mock in (t for t in touched if t.startswith("mock:")):
            for service in services:
                self.add(service, mock)

    def dependents(self, changed: Iterable[str]) -> dict[str, str]:
        """Every node whose behaviour `changed` may change, each with the change it comes from.

        The changed nodes come back mapped to themselves; a dependent to the first changed node
        found along its dependencies (breadth-first, so the nearest).
        """
        reverse: dict[str, set[str]] = {}
        for node, targets in self.depends.items():
            for target in targets:
                reverse.setdefault(target, set()).add(node)
        origin = {node: node for node in changed}
        frontier = sorted(origin)
        while frontier:
            following: list[str] = []
            for node in frontier:
                for dependent in sorted(reverse.get(node, ())):
                    if dependent not in origin:
                        origin[dependent] = origin[node]
                        following.append(dependent)
            frontier = following
        return origin


def configured_edges(loaded: LoadedConfig) -> Graph:
    """The edges e2e.yaml gives: `dependsOn`, and the names in each container's environment and command."""
    graph = Graph()
    names: dict[str, str] = {}
    for service in loaded.services:
        names[service.name] = service_touch(service.name)
        for alias in (service.container.name, *service.container.aliases):
            if alias:
                names[alias] = service_touch(service.name)
    mocks = {name: mock_touch(name) for name in loaded.config.mocks}
    pattern = _words([*names, *mocks])
    for service in loaded.services:
        node = service_touch(service.name)
        for dependency in service.depends_on:
            graph.add(node, service_touch(dependency))
        container = service.container
        texts = [str(v) for v in container.environment.values()]
        for part in (container.command, container.entrypoint):
            texts += [part] if isinstance(part, str) else [str(p) for p in part or ()]
        if pattern is None:
            continue
        for text in texts:
            for match in pattern.finditer(text):
                word = match.group(0)
                templated = text[max(0, match.start() - 6) : match.start()] == "mocks."
                target = (
                    (mocks.get(word) or names.get(word))
                    if templated
                    else (names.get(word) or mocks.get(word))
                )
                if target is not None:
                    graph.add(node, target)
    return graph


def _words(words: list[str]) -> re.Pattern[str] | None:
    """A pattern matching any of `words` as a whole word (names may hold `-`, `.` and `_`)."""
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:{alternatives})(?![A-Za-z0-9_-])")
