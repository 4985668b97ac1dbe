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

from preflight_sdk.core.errors import ConfigProblem

__all__ = ["Location", "ParsedYaml", "PathKey", "format_path", "parse_yaml"]

PathKey = tuple[str | int, ...]

MAX_NODES = 200_000
"""Values walked at most: aliases can make a small file expand exponentially ("billion laughs")."""


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
    # Keys written as numbers (`123:`, `1.5:`), kept as their text in `data`; compose refuses them.
    number_keys: frozenset[PathKey] = frozenset()
    # Values with a local tag (`!reset`, `!override`), when the caller reads them (`local_tags`).
    tags: dict[PathKey, str] = msgspec.field(default_factory=dict)

    def locate(self, path: PathKey, *, key: bool = False) -> Location | None:
        """Return where the value (or, with `key`, the key) at `path` is, else its nearest parent."""
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

    def problem(
        self,
        path: PathKey,
        message: str,
        *,
        file: str | None,
        suggestion: str | None = None,
        key: bool = False,
    ) -> ConfigProblem:
        """A problem at `path` of this document (of `file`), placed where `locate` finds it."""
        where = self.locate(path, key=key)
        return ConfigProblem(
            path=format_path(path),
            message=message,
            file=file,
            line=where.line if where else None,
            column=where.column if where else None,
            suggestion=suggestion,
        )


def format_path(path: PathKey) -> str:
    """Return `path` as a JSON path: `$.services[0].container`."""
    text = "$"
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def parse_yaml(
    text: str, *, file: str | None = None, local_tags: bool = False, max_nodes: int = MAX_NODES
) -> ParsedYaml:
    """Parse one YAML document.

    A syntax error does not raise: it comes back as a problem with its position, and `data` is None.
    With `local_tags`, a value tagged `!name` is read as if untagged and its tag kept in `tags`
    (compose's `!reset` and `!override`); otherwise such a scalar is an error. `max_nodes` bounds
    the values walked (a published API document may hold far more than an e2e.yaml).
    """
    walk = _Walk(file, local_tags, max_nodes)
    try:
        # The reader checks the characters as soon as it is created, so it belongs in the `try`.
        walk.loader = _LOADER(text)
        node = walk.loader.get_single_node()
        data = walk.build(node, (), 0) if node is not None else None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        walk.problem((), f"character U+{code:04X} is not allowed in YAML ({exc.reason})", (line, column))
        data = None
    except yaml.MarkedYAMLError as exc:
        message, where = _syntax_problem(exc, text)
        walk.problem((), message, where)
        data = None
    except yaml.YAMLError as exc:
        walk.problem((), f"YAML error: {exc}", None)
        data = None
    except RecursionError:
        # pyyaml composes nested collections recursively; a few hundred levels exhaust the stack.
        walk.problem((), "nesting is too deep", None)
        data = None
    finally:
        if walk.loader is not None:
            walk.loader.dispose()
    return ParsedYaml(
        data=data,
        values=walk.values,
        keys=walk.keys,
        problems=walk.problems,
        number_keys=frozenset(walk.number_keys),
        tags=walk.tags,
    )


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str) -> tuple[str, tuple[int, int] | None]:
    """Return the message and position of a YAML error.

    The position is where the parser gave up, except at the very end of the file (an unclosed
    bracket): there the construct that was left open is the place to fix.
    """
    problem, context = exc.problem, exc.context
    message = f"YAML syntax error: {problem or context or 'cannot parse'}"
    if problem and context and exc.context_mark is not None:
        opened = exc.context_mark
        message += f" ({context} started at line {opened.line + 1}, column {opened.column + 1})"
    mark = exc.problem_mark or exc.context_mark
    if mark is not None and exc.problem_mark is not None and exc.context_mark is not None:
        if exc.problem_mark.index >= len(text.rstrip()):
            mark = exc.context_mark
    return message, (mark.line + 1, mark.column + 1) if mark is not None else None


def _location(node: yaml.Node) -> Location:
    return Location(node.start_mark.line + 1, node.start_mark.column + 1)


_MERGE_TAG = "tag:yaml.org,2002:merge"
_NUMBER_TAGS = frozenset({"tag:yaml.org,2002:int", "tag:yaml.org,2002:float"})
# libyaml parses about ten times faster; both report the same positions and errors.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Walk:
    """One walk over a composed node tree, building data and recording positions."""

    def __init__(self, file: str | None, local_tags: bool = False, budget: int = MAX_NODES) -> None:
        self.loader: Any = None  # a yaml.SafeLoader once the text is accepted
        self.file = file
        self.local_tags = local_tags
        self.tags: dict[PathKey, str] = {}
        self.values: dict[PathKey, Location] = {}
        self.keys: dict[PathKey, Location] = {}
        self.problems: list[ConfigProblem] = []
        self.budget = budget
        # Where each mapping's own keys start once flattened. A node reached again through an alias
        # is already flattened, so the split is remembered rather than recomputed.
        self.first_own: dict[int, int] = {}
        self.number_keys: set[PathKey] = set()

    def problem(self, path: PathKey, message: str, where: tuple[int, int] | Location | None) -> None:
        line, column = (where.line, where.column) if isinstance(where, Location) else where or (None, None)
        self.problems.append(
            ConfigProblem(path=format_path(path), message=message, file=self.file, line=line, column=column)
        )

    def build(self, node: yaml.Node, path: PathKey, depth: int) -> Any:
        if depth > 64:
            self.problem(path, "nesting is too deep", _location(node))
            return None
        self.budget -= 1
        if self.budget < 0:
            if self.budget == -1:
                self.problem(
                    path, "the document is too large (too many values once aliases expand)", _location(node)
                )
            return None
        self.values[path] = _location(node)
        if self.local_tags and node.tag.startswith("!") and not node.tag.startswith("!!"):
            self.tags[path] = node.tag
            if isinstance(node, yaml.ScalarNode):
                implicit = self.loader.resolve(yaml.ScalarNode, node.value, (True, False))
                node = yaml.ScalarNode(implicit, node.value, node.start_mark, node.end_mark, node.style)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, index), depth + 1) for index, item in enumerate(node.value)]
        try:
            value = self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, OverflowError) as exc:
            # An explicit tag with a value it cannot take (`!!int abc`).
            self.problem(
                path, f"cannot read `{node.value}` as {node.tag.rsplit(':', 1)[-1]}: {exc}", _location(node)
            )
            return None
        if isinstance(value, datetime.date | bytes):
            # e2e.yaml has no date or binary fields; keep what was written.
            return node.value
        return value

    def _mapping(self, node: yaml.MappingNode, path: PathKey, depth: int) -> dict[str, Any]:
        # `<<` merges put the merged pairs first; a key written in the mapping itself overrides them
        # (that is what merging is for), so only a repeat among the mapping's own keys is a duplicate.
        first_own = self.first_own.get(id(node))
        if first_own is None:
            own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
            self.loader.flatten_mapping(node)
            first_own = self.first_own[id(node)] = len(node.value) - own
        result: dict[str, Any] = {}
        own_keys: set[str] = set()
        for position, (key_node, value_node) in enumerate(node.value):
            key = self._key(key_node, path)
            if key is None:
                continue
            child = (*path, key)
            if position >= first_own:
                if key in own_keys:
                    self.problem(
                        child, f"duplicate key `{key}` (the earlier value would be lost)", _location(key_node)
                    )
                own_keys.add(key)
            self.keys[child] = _location(key_node)
            result[key] = self.build(value_node, child, depth + 1)
        return result

    def _key(self, key_node: yaml.Node, path: PathKey) -> str | None:
        if isinstance(key_node, yaml.ScalarNode):
            # Keys are names: `on`, `1`, `2024-01-01` stay the text that was written.
            if key_node.tag in _NUMBER_TAGS:
                self.number_keys.add((*path, str(key_node.value)))
            return str(key_node.value)
        self.problem(path, "mapping keys must be plain strings", _location(key_node))
        return None
