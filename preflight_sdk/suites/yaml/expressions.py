"""`expect.expr`: small boolean expressions over a step's outcome.

    status == 201 && body.items.length > 0
    headers.content-type != null || body.ok == true
    !(body.total < 10)

Operands are paths (`status`, `body.a.b`, `body.items[0].id`, `headers.x-request-id`, with
`.length` on strings, lists and objects) or literals (numbers, "strings", 'strings', true, false,
null); operators `== != > >= < <=`, `&&`, `||`, `!` and parentheses. A syntax error raises
`ExpressionError` naming the position; a missing path is null.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ExpressionError", "evaluate", "resolve_path"]

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<number>-?\d+(?:\.\d+)?)
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<op>==|!=|>=|<=|&&|\|\||[<>!()])
      | (?P<path>[A-Za-z_$][\w$-]*(?:(?:\.[\w$-]+)|(?:\[\d+\]))*)
    )""",
    re.X,
)
_MISSING = object()


class ExpressionError(ValueError):
    """An expression that cannot be parsed."""


def resolve_path(root: Mapping[str, Any], path: str, missing: Any = None) -> Any:
    """Return the value at a dotted path (`body.items[0].id`, `headers.X-Id`), or `missing`."""
    current: Any = root
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            index = int(part[1:-1])
            if isinstance(current, list) and -len(current) <= index < len(current):
                current = current[index]
                continue
            return missing
        if isinstance(current, Mapping):
            if part in current:
                current = current[part]
                continue
            lowered = {str(k).lower(): v for k, v in current.items()}
            if part.lower() in lowered:
                current = lowered[part.lower()]
                continue
            if part == "length":
                return len(current)
            return missing
        if part == "length" and isinstance(current, list | str):
            return len(current)
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
            continue
        return missing
    return current


def evaluate(expression: str, context: Mapping[str, Any]) -> bool:
    """Evaluate `expression` against `context` (`status`, `body`, `headers`…) and return its truth.

    Raises:
        ExpressionError: for a syntax error.
    """
    tokens = _tokenize(expression)
    parser = _Parser(tokens, context, expression)
    value = parser.or_expr()
    if parser.position != len(tokens):
        raise ExpressionError(f"unexpected `{tokens[parser.position][1]}` in `{expression}`")
    return bool(value)


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise ExpressionError(
                f"cannot read `{text[position:].strip()[:20]}` (position {position}) in `{text}`"
            )
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], context: Mapping[str, Any], text: str) -> None:
        self.tokens = tokens
        self.position = 0
        self.context = context
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ExpressionError(f"unexpected end of `{self.text}`")
        self.position += 1
        return token

    def or_expr(self) -> Any:
        return self._logical("||", self.and_expr, operator.or_)

    def and_expr(self) -> Any:
        return self._logical("&&", self.not_expr, operator.and_)

    def _logical(self, op: str, operand: Callable[[], Any], combine: Callable[[bool, bool], bool]) -> Any:
        """`operand (op operand)*`: every operand is parsed (and so evaluated), the result is a bool."""
        value = operand()
        while self.peek() == ("op", op):
            self.take()
            value = combine(bool(value), bool(operand()))
        return value

    def not_expr(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not bool(self.not_expr())
        return self.comparison()

    def comparison(self) -> Any:
        left = self.operand()
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ("==", "!=", ">", ">=", "<", "<="):
            self.take()
            right = self.operand()
            return _compare(token[1], left, right)
        return left

    def operand(self) -> Any:
        kind, text = self.take()
        if kind == "op" and text == "(":
            value = self.or_expr()
            if self.take() != ("op", ")"):
                raise ExpressionError(f"missing `)` in `{self.text}`")
            return value
        if kind == "number":
            return float(text) if "." in text else int(text)
        if kind == "string":
            return bytes(text[1:-1], "utf-8").decode("unicode_escape")
        if kind == "path":
            if text == "true":
                return True
            if text == "false":
                return False
            if text == "null":
                return None
            return resolve_path(self.context, text)
        raise ExpressionError(f"unexpected `{text}` in `{self.text}`")


def _compare(op: str, left: Any, right: Any) -> bool:
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right))
    strings = isinstance(left, str) and isinstance(right, str)
    if not (numbers or strings):
        return False
    outcome: bool = {">": left > right, ">=": left >= right, "<": left < right, "<=": left <= right}[op]
    return outcome


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    return bool(left == right)
