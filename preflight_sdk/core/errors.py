"""Every error preflight raises, each with a stable code, a hint and JSON details.

```
PreflightError                    code INTERNAL unless a subclass says otherwise
├── ConfigError                   CONFIG_NOT_FOUND, CONFIG_INVALID (with .problems)
├── InputError                    INVALID_INPUT, SUITE_NOT_FOUND, RUN_NOT_FOUND, TEST_NOT_FOUND,
│                                 PROJECT_NOT_ALLOWED…
├── StateError                    INVALID_STATE, NOT_BUILT, NOT_RUNNING, SESSION_NOT_FOUND
├── InfrastructureError           DOCKER_ERROR, BUILD_FAILED, DOCKERFILE_NOT_FOUND, PORT_CONFLICT,
│                                 HEALTH_CHECK_TIMEOUT, CONTAINER_NOT_FOUND, CONTAINER_NOT_RUNNING,
│                                 UNSUPPORTED_ON_ENGINE, SWARM_NOT_ACTIVE, STORE_UNAVAILABLE, BROWSER_UNAVAILABLE,
│                                 CONTRACT_UNAVAILABLE
├── MockError                     MOCK_NOT_FOUND, MOCKS_NOT_RUNNING
└── OperationCancelled            CANCELLED
```

`EnvironmentError_` and `CancelledError_`, their former names, are deprecated aliases.

A failed test is a result, never an exception. Third-party exceptions are translated where they
are caught (`raise PreflightError(...) from exc`), so callers only ever catch `PreflightError`.
The faces decide what an error looks like: the CLI maps its class to an exit status, the MCP face
puts `to_info()` in the envelope.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import msgspec

from .hints import RETRY, SDK, Wording, word

__all__ = [
    "DEPRECATED_NAMES",
    "CancelledError_",
    "ConfigError",
    "ConfigProblem",
    "EnvironmentError_",
    "ErrorCode",
    "ErrorInfo",
    "InfrastructureError",
    "InputError",
    "MockError",
    "OperationCancelled",
    "PreflightError",
    "StateError",
    "single_error",
]

ErrorCode = Literal[
    "CONFIG_NOT_FOUND",
    "CONFIG_INVALID",
    "SESSION_NOT_FOUND",
    "INVALID_STATE",
    "BUILD_FAILED",
    "DOCKERFILE_NOT_FOUND",
    "NOT_BUILT",
    "HEALTH_CHECK_TIMEOUT",
    "PORT_CONFLICT",
    "DOCKER_ERROR",
    "UNSUPPORTED_ON_ENGINE",
    "SWARM_NOT_ACTIVE",
    "BROWSER_UNAVAILABLE",
    "CONTRACT_UNAVAILABLE",
    "NOT_RUNNING",
    "SUITE_NOT_FOUND",
    "CONTAINER_NOT_FOUND",
    "CONTAINER_NOT_RUNNING",
    "CONTAINER_EXITED",
    "JOB_FAILED",
    "RESET_FAILED",
    "MOCK_NOT_FOUND",
    "MOCKS_NOT_RUNNING",
    "MOCK_UPSTREAM_UNREACHABLE",
    "INVALID_INPUT",
    "EXTRA_NOT_INSTALLED",
    "RUN_NOT_FOUND",
    "TEST_NOT_FOUND",
    "ARTIFACT_NOT_FOUND",
    "PROJECT_NOT_ALLOWED",
    "IDEMPOTENCY_CONFLICT",
    "STORE_UNAVAILABLE",
    "CANCELLED",
    "INTERNAL",
    # verify
    "SERVER_START_FAILED",
    "SERVER_TIMEOUT",
    "PROTOCOL_ERROR",
    "MANIFEST_INVALID",
    # clarify
    "REPO_NOT_FOUND",
    "INVALID_ANSWER",
    "SESSION_EXPIRED",
    "LLM_ERROR",
    "PARSE_ERROR",
    "FILESYSTEM_ERROR",
]


class ErrorInfo(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The `error` member of a result envelope: what went wrong and what to do next.

    `code`, `message`, `retryable` and `hint` are always written: a client can show
    `error.message` and follow `error.hint` without checking that they exist.
    """

    code: str
    message: str
    retryable: bool
    hint: str
    details: dict[str, Any] | None = None


class ConfigProblem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One problem found in a configuration or test file.

    `path` is a JSON path into the document (`$.services[0].container.ports[1]`), `line` and
    `column` are 1-based positions in the YAML file when known.
    """

    path: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    suggestion: str | None = None

    def render(self) -> str:
        """Return the problem as one line: `file:line:col: $.path: message (did you mean …?)`."""
        where = ""
        if self.file:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        text = f"{where}{self.path}: {self.message}"
        if self.suggestion:
            text += f" (did you mean `{self.suggestion}`?)"
        return text


class PreflightError(Exception):
    """The root of every error preflight raises.

    Attributes:
        code: stable, machine-readable code (see `ErrorCode`).
        message: one or two sentences for a human or an agent.
        hint: the next thing to try, when there is one.
        details: JSON-serialisable context (paths tried, valid names, log tail…).
        retryable: whether the same call may succeed if simply tried again.
    """

    default_code: ClassVar[ErrorCode] = "INTERNAL"
    # The hint of an error raised without one: every envelope error carries a next step.
    default_hint: ClassVar[str] = "call `status` to see the project's state, then retry the call"

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
        retryable: bool = False,
    ) -> None:
        # Bounded where every error is built: a message or a detail may echo an argument (a 1 MB
        # container name), and the error must not carry it whole, twice.
        message = _bounded(message)
        super().__init__(message)
        self.message = message
        self.code: ErrorCode = code or self.default_code
        self._hint = hint
        self.details = _bounded(details) if details is not None else None
        self.retryable = retryable

    @property
    def hint(self) -> str | None:
        """The next thing to try, in the SDK's words (`project.build()`); None without one."""
        return word(self._hint, SDK) if self._hint else None

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._hint = value

    def hint_for(
        self, wording: Wording = SDK, *, again: str | None = None, shown: frozenset[str] | None = None
    ) -> str:
        """Return the hint (or the class's default one) in a face's words (see `hints`: `again`
        names the call that failed, `shown` the details the face prints with it)."""
        return word(self._hint or self.default_hint, wording, again=again, shown=shown)

    def to_info(self, wording: Wording = SDK, *, again: str | None = None) -> ErrorInfo:
        """Return the envelope form of this error, its hint in `wording`'s words (the SDK's by
        default; its details are in the envelope, not beside it)."""
        return ErrorInfo(
            code=self.code,
            message=self.message,
            retryable=self.retryable,
            hint=self.hint_for(wording, again=again, shown=frozenset()),
            details=self.details,
        )

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


_TEXT_LIMIT = 2000


def _bounded(value: Any) -> Any:
    """Return `value` with every string longer than 2,000 characters cut, saying how much was left out."""
    if isinstance(value, str):
        if len(value) <= _TEXT_LIMIT:
            return value
        return f"{value[:_TEXT_LIMIT]}… ({len(value) - _TEXT_LIMIT} more characters)"
    if isinstance(value, dict):
        return {key: _bounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bounded(item) for item in value]
    return value


class ConfigError(PreflightError):
    """The configuration (or a test file) could not be found or is invalid."""

    default_code: ClassVar[ErrorCode] = "CONFIG_INVALID"
    default_hint: ClassVar[str] = f"fix the file named in the message, {RETRY}"

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        hint: str | None = None,
        details: dict[str, Any] | None = None,
        problems: list[ConfigProblem] | None = None,
    ) -> None:
        self.problems: list[ConfigProblem] = list(problems or [])
        if self.problems:
            details = dict(details or {})
            details["problems"] = msgspec.to_builtins(self.problems)
        super().__init__(message, code=code, hint=hint, details=details)

    def __str__(self) -> str:
        lines = [super().__str__()]
        lines.extend(f"  - {p.render()}" for p in self.problems)
        return "\n".join(lines)


class InputError(PreflightError):
    """An argument is wrong: a bad value, an unknown suite, run or test id."""

    default_code: ClassVar[ErrorCode] = "INVALID_INPUT"
    default_hint: ClassVar[str] = (
        "check the arguments against the operation's parameters (names, types, valid values)"
    )


class StateError(PreflightError):
    """The call does not fit the project's lifecycle state (build before setup, setup before run)."""

    default_code: ClassVar[ErrorCode] = "INVALID_STATE"
    default_hint: ClassVar[str] = "call `status` to see the lifecycle state and the call to make first"


class InfrastructureError(PreflightError):
    """Docker, a build, a port, a container or a health check failed."""

    default_code: ClassVar[ErrorCode] = "DOCKER_ERROR"
    default_hint: ClassVar[str] = "check that Docker runs (`docker info`) and read the error's details"


class MockError(PreflightError):
    """A mock service is unknown or not running."""

    default_code: ClassVar[ErrorCode] = "MOCK_NOT_FOUND"
    default_hint: ClassVar[str] = "call `status` to see the project's mocks and whether they run"


class OperationCancelled(PreflightError):
    """The operation was cancelled; everything it started has been removed."""

    default_code: ClassVar[ErrorCode] = "CANCELLED"
    default_hint: ClassVar[str] = "call `status` to see what still runs"


EnvironmentError_ = InfrastructureError
"""Deprecated: the former name of `InfrastructureError` (importing it from `preflight_sdk` warns)."""
CancelledError_ = OperationCancelled
"""Deprecated: the former name of `OperationCancelled` (importing it from `preflight_sdk` warns)."""
DEPRECATED_NAMES = {"EnvironmentError_": "InfrastructureError", "CancelledError_": "OperationCancelled"}


def single_error(exc: BaseException) -> BaseException:
    """The one meaningful error inside (nested) exception groups, else `exc` itself."""
    while isinstance(exc, BaseExceptionGroup):
        preflight = [e for e in exc.exceptions if isinstance(e, PreflightError | BaseExceptionGroup)]
        if not preflight:
            return exc
        exc = preflight[0]
    return exc
