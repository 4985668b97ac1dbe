"""What some commands do after their operation returns, for a person at a terminal.

`preflight clarify "Add authentication"` in a terminal asks the questions of a
`needs_clarification` reply one by one and continues the session with the answers, until it is
completed. With `--json`, `--answers`, or when stdin or stdout is not a terminal, the reply is
printed as it is (scripts pass `--answers '{"auth_strategy": "OAuth"}'`).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import click

__all__ = ["FOLLOW_UPS", "interactive"]

FollowUp = Callable[[Any, Any, dict[str, Any]], Awaitable[Any]]


def interactive() -> bool:
    """Whether a person can answer prompts (stdin and stdout are terminals)."""
    return sys.stdin.isatty() and sys.stdout.isatty()


async def _clarify(project: Any, result: Any, kwargs: dict[str, Any]) -> Any:
    while getattr(result, "status", None) == "needs_clarification" and result.questions:
        answers: dict[str, Any] = {}
        for question in result.questions:
            answer = await anyio.to_thread.run_sync(_ask, question)
            if answer is not None:
                answers[question.id] = answer
        result = await project.clarify(
            kwargs["intention"],
            answers=answers,
            session_id=result.session_id,
            context=kwargs.get("context"),
            force_adr=kwargs.get("force_adr", False),
        )
    return result


def _ask(question: Any) -> str | list[str] | None:
    """Prompt for one question on the terminal (blocking)."""
    optional = " (optional, Enter to skip)" if question.optional else ""
    click.echo(f"\n{question.question}{optional}", err=True)
    options: list[str] = list(question.options or [])
    for number, option in enumerate(options, 1):
        click.echo(f"  {number}. {option}", err=True)
    while True:
        raw = str(click.prompt(">", default="", show_default=False, err=True)).strip()
        if not raw:
            if question.optional:
                return None
            click.echo("  an answer is needed", err=True)
            continue
        if question.type == "free_text" or not options:
            return raw
        chosen = [_option(part.strip(), options) for part in raw.split(",") if part.strip()]
        if None in chosen:
            click.echo(f"  answer with numbers 1-{len(options)} (or 'Other: your value')", err=True)
            continue
        picked = [c for c in chosen if c is not None]
        if question.type == "single_choice":
            if len(picked) != 1:
                click.echo("  choose one option", err=True)
                continue
            return picked[0]
        return picked


def _option(text: str, options: list[str]) -> str | None:
    if text.lower().startswith("other:"):
        return "Other: " + text.split(":", 1)[1].strip()
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1]
    for option in options:
        if option.lower() == text.lower():
            return option
    return None


# Operation name → what to do with its result in an interactive terminal.
FOLLOW_UPS: dict[str, FollowUp] = {"clarify": _clarify}
