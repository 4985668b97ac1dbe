"""Read the checks and saved values out of a Postman test script, line by line.

Postman scripts are JavaScript; a test file has expectations and `save`. The statements that say
the same thing are converted: status checks (`pm.response.to.have.status(200)`,
`tests[…] = responseCode.code === 200`), body checks on a path of the JSON body (`pm.expect(x.a)
.to.eql(1)`, `.to.include`, `.to.be.a('string')`, `.to.exist`, `.to.have.property`, `.above`,
`.below`, `.lengthOf`, `hasOwnProperty`, `Number.isInteger`, `Array.isArray`, `/re/.test(…)`),
header and response-time checks, and values kept for later requests (`pm.environment.set`,
`pm.globals.set`, `pm.collectionVariables.set`, `postman.setEnvironmentVariable`) from a body
path or a header. Variables holding the body or a part of it are followed
(`var user = JSON.parse(responseBody).user || {}`).

Everything else is returned with its line: code under a condition (a test file has none, except
a guard on the status or on a check that is converted itself), loops, functions, and any
statement this reader does not know.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from .model import as_expression, dotted, merged, nest, outside_quotes

__all__ = ["ScriptReading", "read_test_script"]


class ScriptReading(msgspec.Struct, frozen=True, kw_only=True):
    """What a script became: an `expect` block, `save` entries, and the lines left (number, text, why)."""

    expect: dict[str, Any] = msgspec.field(default_factory=dict)
    save: dict[str, str] = msgspec.field(default_factory=dict)
    left: list[tuple[int, str, str]] = msgspec.field(default_factory=list)


_NAME = r"[A-Za-z_$][\w$]*"
_PATH = rf"{_NAME}(?:\.{_NAME}|\[\d+\]|\['[^']*'\]|\[\"[^\"]*\"\])*"
_LITERAL = r"-?\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|true|false|null"
_DECLARE = re.compile(rf"^(?:var|let|const)\s+({_NAME})\s*=\s*(.+?)\s*$")
_ASSIGN = re.compile(rf"^({_NAME})\s*=\s*(?!=)(.+?)\s*$")
_BODY = re.compile(r"^(?:JSON\.parse\(\s*responseBody\s*\)|pm\.response\.json\(\s*\))$")
_STATUS_EXPR = re.compile(r"^\(?\s*(?:responseCode\.code|pm\.response\.code)\s*={2,3}\s*(\d{3})\s*\)?$")
_STATUS_CALL = re.compile(r"^pm\.response\.to\.(?:have\.status\((\d{3})\)|be\.(ok|success))$")
_EXPECT = re.compile(r"^pm\.expect\((.+?)\)\.to\.((?:not\.)?(?:be\.|have\.|deep\.)*)(\w+)(?:\((.*)\))?$")
_TESTS = re.compile(r"^tests\[(['\"])(.*)\1\]\s*=\s*(.+)$")
_SET = re.compile(
    r"^(?:pm\.(?:environment|globals|collectionVariables|variables)\.set|"
    r"postman\.(?:setEnvironmentVariable|setGlobalVariable))\(\s*(['\"])([^'\"]+)\1\s*,\s*(.+)\)$"
)
_HEADER_GET = re.compile(r"^pm\.response\.headers\.get\(\s*(['\"])([^'\"]+)\1\s*\)$")
_HAS_HEADER = re.compile(r"^pm\.response\.to\.have\.header\(\s*(['\"])([^'\"]+)\1\s*(?:,\s*(.+))?\)$")
_HAS_OWN = re.compile(rf"^({_PATH})\.hasOwnProperty\(\s*(['\"])([^'\"]+)\2\s*\)$")
_IS_TYPE = re.compile(rf"^(Number\.isInteger|Array\.isArray)\(\s*({_PATH})\s*\)$")
_REGEX_TEST = re.compile(rf"^/(.+)/([a-z]*)\.test\(\s*({_PATH})\s*\)$")
_EQUALS = re.compile(rf"^({_PATH})\s*={{2,3}}\s*({_LITERAL})$")
_COMPARE = re.compile(rf"^({_PATH})\s*(>=|<=|>|<|!==?)\s*({_LITERAL}|undefined)$")
_COMPARE_OPERATORS = {">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "!=": "ne", "!==": "ne"}
_TEST_CALL = re.compile(
    r"^pm\.test\(\s*(['\"`]).*?\1\s*,\s*(?:function\s*\(\s*\)|\(\s*\)\s*=>)\s*\{(.*)\}\s*\)$"
)
_TEST_OPEN = re.compile(r"^pm\.test\(\s*(['\"`]).*?\1\s*,\s*(?:function\s*\(\s*\)|\(\s*\)\s*=>)\s*\{$")
_IF = re.compile(r"^(?:\}\s*else\s+)?if\s*\((.*)\)\s*\{$")
_TYPES = {"string": "string", "number": "number", "boolean": "boolean", "object": "object", "array": "array"}
_CONDITION = "it is under a condition, and a test file has none: check it by hand"
_UNKNOWN = "a script statement with no equivalent in the test grammar"


class _Reader:
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # a variable → the body path it holds ("" is the body)
        self.status_names: dict[str, int] = {}  # a variable → the status it compares to
        self.tests: dict[str, bool] = {}  # tests['name'] → whether it was converted
        self.expect: dict[str, Any] = {}
        self.save: dict[str, str] = {}
        self.left: list[tuple[int, str, str]] = []
        self.blocks: list[bool] = []  # per open block: whether its lines are under a condition

    def line(self, number: int, raw: str) -> None:
        text = _strip_comment(raw).strip()
        if not text or text in ("});", "})", "}", "};"):
            if text.startswith("}") and self.blocks:
                self.blocks.pop()
            return
        opening = self._opening(text)
        if opening is not None:
            if text.startswith("}") and self.blocks:
                self.blocks.pop()
            self.blocks.append(opening or any(self.blocks))
            return
        if any(self.blocks):
            self.left.append((number, raw.strip(), _CONDITION))
            return
        single = _TEST_CALL.match(text.rstrip(";"))
        statements = _split(single.group(2)) if single else [text]
        for statement in statements:
            if statement and not self.statement(statement):
                self.left.append((number, raw.strip(), _UNKNOWN))
                return

    def _opening(self, text: str) -> bool | None:
        """None when `text` opens no block; else whether the block is a condition."""
        if not text.endswith("{"):
            return None
        if _TEST_OPEN.match(text):
            return False
        guard = _IF.match(text)
        if guard is not None and not text.startswith("}"):
            return not self._is_guard(guard.group(1).strip())
        return True  # else, loops, functions: opaque

    def _is_guard(self, condition: str) -> bool:
        if condition in self.status_names or _STATUS_EXPR.match(condition):
            return True
        test = re.match(r"^tests\[(['\"])(.*)\1\]$", condition)
        return test is not None and self.tests.get(test.group(2), False)

    def statement(self, text: str) -> bool:
        text = text.strip().rstrip(";").strip()
        declared = _DECLARE.match(text) or _ASSIGN.match(text)
        if declared is not None and not text.startswith("tests["):
            return self._declare(declared.group(1), declared.group(2))
        tests = _TESTS.match(text)
        if tests is not None:
            converted = self._check(tests.group(3).strip())
            self.tests[tests.group(2)] = converted
            return converted
        status = _STATUS_CALL.match(text)
        if status is not None:
            self._add({"status": int(status.group(1)) if status.group(1) else 200})
            return True
        header = _HAS_HEADER.match(text)
        if header is not None:
            value = _literal(header.group(3)) if header.group(3) else None
            self._add({"headers": {header.group(2): {"exists": True} if header.group(3) is None else value}})
            return header.group(3) is None or value is not None
        setter = _SET.match(text)
        if setter is not None:
            path = self._source(setter.group(3).strip())
            if path is not None:
                self.save[setter.group(2)] = path
            return path is not None
        expect = _EXPECT.match(text)
        if expect is not None:
            return self._expect(expect.group(1).strip(), expect.group(2), expect.group(3), expect.group(4))
        return False

    def _declare(self, name: str, value: str) -> bool:
        value = re.sub(r"\s*\|\|\s*\{\s*\}$", "", value)
        if _BODY.match(value):
            self.aliases[name] = ""
            return True
        status = _STATUS_EXPR.match(value)
        if status is not None:
            self.status_names[name] = int(status.group(1))
            return True
        path = self._body_path(value)
        if path is not None:
            self.aliases[name] = path
            return True
        return False

    def _check(self, value: str) -> bool:
        """`tests[…] = value`: a status, a key, a type, a pattern or an equality on the body."""
        if value in self.status_names:
            self._add({"status": self.status_names[value]})
            return True
        status = _STATUS_EXPR.match(value)
        if status is not None:
            self._add({"status": int(status.group(1))})
            return True
        own = _HAS_OWN.match(value)
        if own is not None:
            base = self._body_path(own.group(1))
            return base is not None and self._body(_join(base, own.group(3)), {"exists": True})
        typed = _IS_TYPE.match(value)
        if typed is not None:
            path = self._body_path(typed.group(2))
            kind = "integer" if typed.group(1) == "Number.isInteger" else "array"
            return path is not None and self._body(path, {"type": kind})
        pattern = _REGEX_TEST.match(value)
        if pattern is not None and not pattern.group(2):
            path = self._body_path(pattern.group(3))
            return path is not None and self._body(path, {"matches": pattern.group(1).replace("\\/", "/")})
        equals = _EQUALS.match(value)
        if equals is not None:
            path = self._body_path(equals.group(1))
            return path is not None and self._body(path, _literal(equals.group(2)))
        compared = _COMPARE.match(value)
        if compared is not None:
            path = self._body_path(compared.group(1))
            operator, operand = compared.group(2), compared.group(3)
            if operand == "undefined":
                return operator.startswith("!") and path is not None and self._body(path, {"exists": True})
            return path is not None and self._body(path, {_COMPARE_OPERATORS[operator]: _literal(operand)})
        return False

    def _expect(self, subject: str, chain: str, verb: str, argument: str | None) -> bool:
        negated = "not." in chain
        operand = _literal(argument) if argument else None
        if subject in ("pm.response.code", "responseCode.code") and verb in ("eql", "equal", "eq", "equals"):
            if isinstance(operand, int) and not negated:
                self._add({"status": operand})
                return True
            return False
        if (
            subject == "pm.response.responseTime"
            and verb in ("below", "lessThan", "lt")
            and isinstance(operand, (int, float))
        ):
            self._add({"responseTime": {"lt": operand}})
            return not negated
        check = _operator(verb, operand, argument)
        if check is None:
            return False
        if negated:
            check = {"not": check}
        header = _HEADER_GET.match(subject)
        if header is not None:
            self._add({"headers": {header.group(2): check}})
            return True
        if subject == "pm.response.text()":
            self._add({"body": check})
            return True
        path = self._body_path(subject)
        return path is not None and self._body(path, check)

    def _source(self, value: str) -> str | None:
        """What `pm.environment.set(name, value)` saves: a body path or a header."""
        header = _HEADER_GET.match(value)
        if header is not None:
            return f"headers.{header.group(2).lower()}"
        path = self._body_path(value)
        if path is None:
            return None
        return path or "body"

    def _body_path(self, expression: str) -> str | None:
        expression = expression.strip()
        for prefix in ("pm.response.json()", "JSON.parse(responseBody)"):
            if expression.startswith(prefix):
                rest = expression[len(prefix) :]
                return _path_of(rest) if rest else ""
        head = re.match(rf"^({_NAME})(.*)$", expression)
        if head is None or head.group(1) not in self.aliases:
            return None
        tail = _path_of(head.group(2)) if head.group(2) else ""
        return None if tail is None else _join(self.aliases[head.group(1)], tail)

    def _body(self, path: str, check: Any) -> bool:
        addition = nest(path, check) if path else check
        if addition is not None:
            self._add({"body": addition})
            return True
        expression = as_expression(f"body.{path}", check)  # an indexed path: `articles[0].title`
        if expression is None:
            return False
        self._add({"expr": expression})
        return True

    def _add(self, addition: dict[str, Any]) -> None:
        self.expect = merged(self.expect, addition)


def read_test_script(lines: list[str]) -> ScriptReading:
    """Read a Postman `test` script: what it checks and keeps, and the lines it leaves."""
    reader = _Reader()
    for number, raw in enumerate(lines, start=1):
        reader.line(number, raw)
    return ScriptReading(expect=reader.expect, save=reader.save, left=reader.left)


def _operator(verb: str, operand: Any, argument: str | None) -> dict[str, Any] | Any | None:
    if verb in ("eql", "equal", "eq", "equals"):
        return operand if argument is not None else None
    if verb in ("include", "includes", "contain", "contains", "string") and argument is not None:
        return {"contains": operand}
    if verb in ("a", "an") and isinstance(operand, str) and operand.lower() in _TYPES:
        return {"type": _TYPES[operand.lower()]}
    if verb in ("exist", "exists") and argument is None:
        return {"exists": True}
    if verb == "property" and isinstance(operand, str):
        return {operand: {"exists": True}}
    if verb in ("above", "greaterThan", "gt") and isinstance(operand, (int, float)):
        return {"gt": operand}
    if verb in ("below", "lessThan", "lt") and isinstance(operand, (int, float)):
        return {"lt": operand}
    if verb in ("least", "gte") and isinstance(operand, (int, float)):
        return {"gte": operand}
    if verb in ("most", "lte") and isinstance(operand, (int, float)):
        return {"lte": operand}
    if verb in ("lengthOf", "length") and isinstance(operand, int):
        return {"length": operand}
    if verb == "oneOf" and isinstance(operand, list):
        return {"in": operand}
    if verb == "true" and argument is None:
        return True
    if verb == "false" and argument is None:
        return False
    if verb == "null" and argument is None:
        return None  # an expectation of `null` cannot be told from "no check": left
    return None


def _literal(text: str | None) -> Any:
    if text is None:
        return None
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return None


def _path_of(rest: str) -> str | None:
    """`.a.b[0]['c']` → `a.b[0].c`; None for anything that is not a plain path."""
    if not re.fullmatch(r"(?:\.[A-Za-z_$][\w$]*|\[\d+\]|\['[^']*'\]|\[\"[^\"]*\"\])*", rest):
        return None
    return dotted(re.findall(r"\.[A-Za-z_$][\w$]*|\[\d+\]|\['[^']*'\]|\[\"[^\"]*\"\]", rest))


def _join(base: str, rest: str) -> str:
    return f"{base}.{rest}" if base and rest else base or rest


def _strip_comment(line: str) -> str:
    """The line without a trailing `// comment` (outside quotes)."""
    for index, _char in outside_quotes(line):
        if line.startswith("//", index):
            return line[:index]
    return line


def _split(body: str) -> list[str]:
    """Statements of one line, split on `;` outside quotes and brackets."""
    parts, depth, start = [], 0, 0
    for index, char in outside_quotes(body):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ";" and depth == 0:
            parts.append(body[start:index].strip())
            start = index + 1
    parts.append(body[start:].strip())
    return [p for p in parts if p]
