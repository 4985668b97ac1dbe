"""`expect.expr`: small boolean expressions over a step's outcome.

    status == 201 && body.items.length > 0
    headers.content-type != null || body.ok == true
    !(body.total < 10)

Operands are paths (`status`, `body.a.b`, `body.items[0].id`, `headers.x-request-id`, with
`.length` on strings, lists and objects) or literals (numbers, "strings", 'strings', true, false,
null); operators `== != > >= < <=`, `&&`, `||`, `!` and parentheses. A syntax error raises
`ExpressionError` naming the position; a missing path is null. A false expression says which of
its parts is false and the values they read (`why_false`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import msgspec

__all__ = ["ExpressionError", "evaluate", "resolve_path", "why_false"]

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
    return why_false(expression, context)[0]


def why_false(expression: str, context: Mapping[str, Any]) -> tuple[bool, list[str]]:
    """Evaluate `expression`; when false, also say which operands made it so and what they read.

    Each reason names a false part and the values of the paths it read, e.g. ``"`body.items.length
    > 5` is false: body.items.length is 2"``: the false conjuncts of an `&&`, every disjunct of a
    false `||`.

    Raises:
        ExpressionError: for a syntax error.
    """
    tokens = _tokenize(expression)
    parser = _Parser(tokens, context, expression)
    term = parser.or_expr()
    if parser.position != len(tokens):
        raise ExpressionError(f"unexpected `{tokens[parser.position].text}` in `{expression}`")
    value = bool(term.value)
    return value, [] if value else parser.reasons(term)


class _Token(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


class _Term(NamedTuple):
    """A parsed part of the expression: its value, where it is in the text, the paths it read and,
    for `&&` and `||`, the reasons of the parts that made it false."""

    value: Any
    start: int
    end: int
    reads: tuple[tuple[str, Any], ...] = ()
    parts: tuple[str, ...] | None = None


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
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
        tokens.append(_Token(kind, match.group(kind), match.start(kind), match.end(kind)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[_Token], context: Mapping[str, Any], text: str) -> None:
        self.tokens = tokens
        self.position = 0
        self.context = context
        self.text = text

    def peek(self) -> tuple[str, str] | None:
        token = self.tokens[self.position] if self.position < len(self.tokens) else None
        return (token.kind, token.text) if token is not None else None

    def take(self) -> _Token:
        if self.position >= len(self.tokens):
            raise ExpressionError(f"unexpected end of `{self.text}`")
        self.position += 1
        return self.tokens[self.position - 1]

    def reasons(self, term: _Term) -> list[str]:
        """Why `term` is false: its false parts' reasons, or itself and the values it read."""
        if term.parts is not None:
            return list(term.parts)
        source = self.text[term.start : term.end]
        read = dict(term.reads)  # each path once
        values = ", ".join(f"{path} is {_shown(value)}" for path, value in read.items())
        return [f"`{source}` is false" + (f": {values}" if values else "")]

    def or_expr(self) -> _Term:
        return self._logical("||", self.and_expr)

    def and_expr(self) -> _Term:
        return self._logical("&&", self.not_expr)

    def _logical(self, op: str, operand: Callable[[], _Term]) -> _Term:
        """`operand (op operand)*`: every operand is parsed (and so evaluated), the result is a bool."""
        terms = [operand()]
        while self.peek() == ("op", op):
            self.take()
            terms.append(operand())
        if len(terms) == 1:
            return terms[0]
        truths = [bool(term.value) for term in terms]
        value = all(truths) if op == "&&" else any(truths)
        # A false `&&` is false for its false operands; a false `||` for every one of them.
        culprits = [term for term, truth in zip(terms, truths, strict=True) if not truth]
        parts = tuple(reason for term in culprits for reason in self.reasons(term))
        reads = tuple(read for term in terms for read in term.reads)
        return _Term(value, terms[0].start, terms[-1].end, reads, None if value else parts)

    def not_expr(self) -> _Term:
        if self.peek() == ("op", "!"):
            bang = self.take()
            inner = self.not_expr()
            return _Term(not bool(inner.value), bang.start, inner.end, inner.reads)
        return self.comparison()

    def comparison(self) -> _Term:
        left = self.operand()
        token = self.peek()
        if token is not None and token[0] == "op" and token[1] in ("==", "!=", ">", ">=", "<", "<="):
            self.take()
            right = self.operand()
            return _Term(
                _compare(token[1], left.value, right.value), left.start, right.end, left.reads + right.reads
            )
        return left

    def operand(self) -> _Term:
        token = self.take()
        kind, text = token.kind, token.text
        if kind == "op" and text == "(":
            inner = self.or_expr()
            close = self.take()
            if (close.kind, close.text) != ("op", ")"):
                raise ExpressionError(f"missing `)` in `{self.text}`")
            return inner._replace(start=token.start, end=close.end)
        if kind == "number":
            return _Term(float(text) if "." in text else int(text), token.start, token.end)
        if kind == "string":
            return _Term(bytes(text[1:-1], "utf-8").decode("unicode_escape"), token.start, token.end)
        if kind == "path":
            if text in _LITERALS:
                return _Term(_LITERALS[text], token.start, token.end)
            value = resolve_path(self.context, text)
            return _Term(value, token.start, token.end, ((text, value),))
        raise ExpressionError(f"unexpected `{text}` in `{self.text}`")


_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
# A value read by a false part is quoted this long at most.
_SHOWN = 80


def _shown(value: Any) -> str:
    """A read value as the expression would write it (JSON), cut to `_SHOWN` characters."""
    text = msgspec.json.encode(value).decode() if _encodable(value) else repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _encodable(value: Any) -> bool:
    try:
        msgspec.json.encode(value)
    except (TypeError, msgspec.EncodeError):
        return False
    return True


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
