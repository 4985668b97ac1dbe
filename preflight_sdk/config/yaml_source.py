"""Parse YAML into plain Python data while remembering where every value came from.

pyyaml's `safe_load` forgets positions, so a validation error could only say `$.services[0].port`.
Here the node tree is walked by hand: each value and each mapping key is recorded under its JSON
path with its 1-based line and column, and duplicate keys (which `safe_load` silently collapses) are
reported. Anchors, aliases and `<<` merge keys keep working.
"""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import yaml

from ..errors import ConfigProblem

__all__ = ["Location", "ParsedYaml", "PathKey", "format_path", "parse_yaml"]

PathKey = tuple[str | int, ...]


class Location(msgspec.Struct, frozen=True):
    """A 1-based line and column in the source file."""

    line: int
    column: int


class ParsedYaml(msgspec.Struct, frozen=True, kw_only=True):
    """The data of a YAML document with the positions of its values and keys."""

    data: Any
    values: dict[PathKey, Location]
    keys: dict[PathKey, Location]
    problems: list[ConfigProblem]

    def locate(self, path: PathKey, *, key: bool = False) -> Location | None:
        """Return the position of the value (or, with `key`, of the key) at `path`, or of its nearest parent."""
        table = self.keys if key else self.values
        probe = path
        while True:
            if probe in table:
                return table[probe]
            if probe in self.values:
                return self.values[probe]
            if not probe:
                return None
            probe = probe[:-1]


def format_path(path: PathKey) -> str:
    """Return `path` as a JSON path: `$.services[0].container`."""
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def parse_yaml(text: str, *, file: str | None = None) -> ParsedYaml:
    """Parse one YAML document.

    A syntax error does not raise: it comes back as a problem with its position, and `data` is None.
    """
    values: dict[PathKey, Location] = {}
    keys: dict[PathKey, Location] = {}
    problems: list[ConfigProblem] = []
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = _build(loader, node, (), values, keys, problems, file) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problems.append(
            ConfigProblem(
                path="$",
                message=f"YAML syntax error: {exc.problem or exc.context or 'cannot parse'}",
                file=file,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            )
        )
        data = None
    except yaml.YAMLError as exc:
        problems.append(ConfigProblem(path="$", message=f"YAML error: {exc}", file=file))
        data = None
    finally:
        loader.dispose()
    return ParsedYaml(data=data, values=values, keys=keys, problems=problems)


def _location(node: yaml.Node) -> Location:
    return Location(node.start_mark.line + 1, node.start_mark.column + 1)


def _build(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: PathKey,
    values: dict[PathKey, Location],
    keys: dict[PathKey, Location],
    problems: list[ConfigProblem],
    file: str | None,
    depth: int = 0,
) -> Any:
    if depth > 64:
        problems.append(ConfigProblem(path=format_path(path), message="nesting is too deep", file=file))
        return None
    values[path] = _location(node)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, datetime.date | bool | int | float) or key is None:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key)
            if not isinstance(key, str):
                location = _location(key_node)
                problems.append(
                    ConfigProblem(
                        path=format_path(path),
                        message="mapping keys must be plain strings",
                        file=file,
                        line=location.line,
                        column=location.column,
                    )
                )
                continue
            child = (*path, key)
            if key in result:
                location = _location(key_node)
                problems.append(
                    ConfigProblem(
                        path=format_path(child),
                        message=f"duplicate key `{key}` (the earlier value would be lost)",
                        file=file,
                        line=location.line,
                        column=location.column,
                    )
                )
            keys[child] = _location(key_node)
            result[key] = _build(loader, value_node, child, values, keys, problems, file, depth + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _build(loader, item, (*path, index), values, keys, problems, file, depth + 1)
            for index, item in enumerate(node.value)
        ]
    value = loader.construct_object(node, deep=True)
    if isinstance(value, datetime.date):
        # e2e.yaml has no date fields; keep what was written rather than a datetime object.
        return node.value
    if isinstance(value, bytes):
        return node.value
    return value
