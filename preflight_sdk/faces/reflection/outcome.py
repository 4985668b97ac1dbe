"""How both faces turn an operation's outcome into an envelope (and exceptions into errors)."""

from __future__ import annotations

from typing import Any

from preflight_sdk.core.errors import PreflightError
from preflight_sdk.core.hints import Face
from preflight_sdk.core.results.envelope import Envelope, failure, success

__all__ = ["envelope_of", "error_envelope", "internal", "told_once", "unwrap"]


def envelope_of(result: Any) -> Envelope[Any]:
    """Wrap a result: `success` is true (a failing verdict is data, in `data.status`), `runId` is copied."""
    return success(result, run_id=getattr(result, "run_id", None))


def told_once(result: Any) -> Any:
    """A run as the faces show it: failures with one cause told once (`results.grouping`)."""
    from preflight_sdk.core.results.grouping import group_failures
    from preflight_sdk.core.results.run import RunResult

    return group_failures(result) if isinstance(result, RunResult) else result


def error_envelope(error: PreflightError, face: Face = "mcp", *, again: str | None = None) -> Envelope[None]:
    """Wrap an error, its hint in the words of `face` (tool names unless the CLI says otherwise);
    `again` says the call that failed as that face does ("run `preflight run`")."""
    return failure(error, face=face, again=again)


def unwrap(exc: BaseException) -> BaseException:
    """Return the single error inside (nested) exception groups, or `exc` itself.

    A task group wraps what its tasks raise; a `PreflightError` inside one is still the error the
    caller should see, with its code and hint.
    """
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def internal(exc: BaseException, *, where: str) -> PreflightError:
    """Wrap an unexpected exception as INTERNAL, naming its class in `details.causeClass`."""
    cause = type(exc)
    text = str(exc)
    message = f"{where} failed unexpectedly: {cause.__name__}" + (f": {text[:300]}" if text else "")
    return PreflightError(
        message,
        code="INTERNAL",
        hint="this is a bug in preflight, not in your project; its traceback is on stderr",
        details={"causeClass": f"{cause.__module__}.{cause.__qualname__}"},
    )
