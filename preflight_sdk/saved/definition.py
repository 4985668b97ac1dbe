"""A saved test's definition: one case of the YAML test grammar, checked by the test-file loader's rules.

The definition arrives as a mapping (JSON over MCP, a dict in Python, YAML in a file). It is
checked by the same type walk and step rules as a test file, placed under `test`, so a problem
reads `$.test.request.methd: unknown key (did you mean method?)`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from preflight_sdk.config import SuiteConfig, TestFile, TestStep
from preflight_sdk.config.steps import check_case
from preflight_sdk.config.validate import Validator
from preflight_sdk.core import decoding
from preflight_sdk.core.errors import ConfigProblem, InputError
from preflight_sdk.core.templates import find_templates
from preflight_sdk.core.yaml_source import ParsedYaml

__all__ = [
    "MAX_DEFINITION_BYTES",
    "check_id",
    "needs_environment",
    "parse_case",
    "suite_of",
]

ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,99}$")
MAX_DEFINITION_BYTES = 100_000


class _Definition(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    test: TestStep


def check_id(value: object, *, field: str = "id") -> str:
    """Return `value` when it is a lowercase slug (`^[a-z0-9][a-z0-9-]{0,99}$`), else INVALID_INPUT."""
    if not isinstance(value, str) or not ID_PATTERN.match(value):
        shown = value[:60] if isinstance(value, str) else type(value).__name__
        suggestion = _slug(value) if isinstance(value, str) else None
        raise InputError(
            f"{field} {shown!r} is not a valid id: use lowercase letters, digits and dashes "
            "(1 to 100 characters, not starting with a dash)",
            hint=f"e.g. {suggestion!r}" if suggestion else "e.g. 'login-works'",
            details={"field": field, "pattern": ID_PATTERN.pattern},
        )
    return value


def parse_case(
    raw: object, *, name: str | None = None, where: str = "test"
) -> tuple[dict[str, Any], TestStep]:
    """Check `raw` as one case; return it as given (with `name` set, when given) and as a `TestStep`.

    Raises:
        InputError: INVALID_INPUT listing every problem in `details.problems`, each with its path
            inside `test` and a did-you-mean where one fits.
    """
    if not isinstance(raw, dict):
        raise InputError(
            f"`{where}` must be a mapping: one case of the YAML test grammar, not {type(raw).__name__}",
            hint='e.g. {"name": "health", "request": {"url": "http://localhost:8080/health"}, '
            '"expect": {"status": 200}}',
        )
    data = dict(raw) if name is None else {"name": name, **{k: v for k, v in raw.items() if k != "name"}}
    size = len(json.dumps(data, default=str))
    if size > MAX_DEFINITION_BYTES:
        raise InputError(
            f"`{where}` is {size} bytes as JSON; the limit is {MAX_DEFINITION_BYTES}",
            hint="keep large bodies in a file and reference them from a test file instead",
        )
    source = ParsedYaml(data={"test": data}, values={}, keys={}, problems=[])
    validator = Validator(source, file=None)
    validator.check({"test": data}, _Definition)
    check_case(data, ("test",), validator)
    if validator.problems:
        raise _invalid(where, validator.problems)
    try:
        return data, decoding.convert(data, TestStep)
    except msgspec.ValidationError as exc:
        raise _invalid(where, [ConfigProblem(path="$.test", message=str(exc))]) from None


def needs_environment(step: TestStep) -> bool:
    """Whether a case needs the environment running: it names a service, a container or a mock.

    A request with a `path` (and a browser step whose `goto` is a path) goes to a service's base
    URL; exec, file and process steps run in a
    container; `expect.mock` reads a mock's journal; `{{services.…}}` and `{{mocks.…}}` name them.
    Absolute URLs and plain variables need none of that.
    """
    if step.exec or step.file or step.process or (step.port and step.port.container):
        return True
    if step.request is not None and (step.request.url is None or step.request.service is not None):
        return True
    if step.browser is not None and (step.browser.service is not None or "://" not in step.browser.goto):
        return True  # a page path is a path of a service
    expectations = [step.expect, *(step.retry.until, step.retry.fail_if)] if step.retry else [step.expect]
    if any(e is not None and e.mock is not None for e in expectations):
        return True
    plain = msgspec.to_builtins(step)
    return any(t.strip().startswith(("services.", "mocks.")) for t in find_templates(plain))


def suite_of(suite_id: str, name: str, cases: list[dict[str, Any]]) -> tuple[SuiteConfig, TestFile]:
    """A YAML suite (not in e2e.yaml) holding `cases`, in order, run like any test file's cases."""
    suite = SuiteConfig(id=suite_id, name=name, runner="yaml")
    test = decoding.convert({"name": name, "cases": cases}, TestFile)
    return suite, test


def _invalid(where: str, problems: list[ConfigProblem]) -> InputError:
    count = len(problems)
    first = problems[0]
    shown = (
        first.path
        + ": "
        + first.message
        + (f" (did you mean `{first.suggestion}`?)" if first.suggestion else "")
    )
    return InputError(
        f"`{where}` is not a valid test case: {count} problem{'s' if count != 1 else ''}; first: {shown}",
        hint="fix every problem in details.problems (the grammar is that of a case in a YAML test file)",
        details={"problems": [msgspec.to_builtins(p) for p in problems]},
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:100]
