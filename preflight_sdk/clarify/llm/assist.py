"""Optional language model: better question wording, and decisions stated in free text.

Off by default: `PREFLIGHT_LLM_PROVIDER` is `mock` (the deterministic engine alone), or
`anthropic`, `openai`, `openrouter`; `PREFLIGHT_LLM_MODEL` overrides the model; the key comes from
`PREFLIGHT_<PROVIDER>_API_KEY`, else the provider's usual variable (`ANTHROPIC_API_KEY`…).

The model never decides which questions are asked, never overrides an answer, and its replies
are validated (msgspec Structs, schema fields only). Any failure (no key, timeout, HTTP error,
malformed reply) falls back to the deterministic engine; the result then carries
`warning: "llm_fallback"` and the reason. Everything sent is passed through `redact` first.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

import msgspec

from preflight_sdk.core import decoding

from ..questions import AnswerValue, Question
from ..snapshot import SCHEMA_V1, DecisionItem, normalize_item
from .providers import AnthropicLLM, LLMFailure, OpenAILLM, OpenRouterLLM, ToolSpec
from .redact import redact

__all__ = ["LLMClient", "LLMFailure", "attempt", "extract_items", "llm_from_env", "word_questions"]

T = TypeVar("T")
_PROVIDERS = {"anthropic": AnthropicLLM, "openai": OpenAILLM, "openrouter": OpenRouterLLM}
_KEYS = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "openrouter": "OPENROUTER_API_KEY"}


class LLMClient(Protocol):
    """A model that can be asked to call one tool (see `providers.HttpLLM`).

    `call_tool` returns the tool's input as decoded JSON; it should raise `LLMFailure` when it
    cannot (any other exception is treated the same way).
    """

    provider: str
    model: str

    async def call_tool(self, *, system: str, prompt: str, tool: ToolSpec) -> Any: ...


def llm_from_env(environ: Mapping[str, str] | None = None) -> tuple[LLMClient | None, str | None]:
    """Return the configured client (None for `mock`) and, when it cannot be used, why."""
    env = os.environ if environ is None else environ
    provider = env.get("PREFLIGHT_LLM_PROVIDER", "mock").strip().lower() or "mock"
    if provider == "mock":
        return None, None
    if provider not in _PROVIDERS:
        return (
            None,
            f"unknown PREFLIGHT_LLM_PROVIDER {provider!r} (use mock, anthropic, openai or openrouter)",
        )
    names = (f"PREFLIGHT_{provider.upper()}_API_KEY", _KEYS[provider])
    key = next((env[n] for n in names if env.get(n)), None)
    if key is None:
        return None, f"no API key for {provider} (set {names[0]} or {names[1]})"
    return _PROVIDERS[provider](key, env.get("PREFLIGHT_LLM_MODEL") or None), None


async def attempt(call: Callable[[], Awaitable[T]]) -> tuple[T | None, str | None]:
    """Run one model step; return (value, None) or (None, reason) on any failure."""
    try:
        return await call(), None
    except LLMFailure as exc:
        return None, exc.reason
    except msgspec.ValidationError as exc:
        return None, f"malformed reply: {exc}"
    except Exception as exc:  # a model failure, whatever its kind, must never fail a clarification
        return None, f"{type(exc).__name__}: {exc}"


class _Wording(msgspec.Struct, frozen=True):
    id: str
    question: str


class _WordingReply(msgspec.Struct, frozen=True):
    questions: list[_Wording]


class _Field(msgspec.Struct, frozen=True):
    category: str
    field: str
    value: str


class _ExtractionReply(msgspec.Struct, frozen=True):
    fields: list[_Field]


_WORDING_TOOL = ToolSpec(
    name="submit_questions",
    description="Submit the reworded clarification questions.",
    schema={
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "question": {"type": "string"}},
                    "required": ["id", "question"],
                },
            }
        },
        "required": ["questions"],
    },
)
_EXTRACTION_TOOL = ToolSpec(
    name="submit_decision",
    description="Submit the architecture decisions stated explicitly in the text.",
    schema={
        "type": "object",
        "properties": {
            "fields": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string", "enum": list(SCHEMA_V1)},
                        "field": {"type": "string"},
                        "value": {"type": "string"},
                    },
                    "required": ["category", "field", "value"],
                },
            }
        },
        "required": ["fields"],
    },
)


async def word_questions(
    client: LLMClient, intention: str, context: str | None, summary: str, questions: list[Question]
) -> dict[str, str]:
    """Return better wordings `{question id: text}` for `questions` (ids and options unchanged)."""
    listing = "\n".join(
        f"- {q.id}: {q.question}" + (f" (options: {', '.join(q.options)})" if q.options else "")
        for q in questions
    )
    prompt = redact(
        f"Intention: {intention}\n\nContext: {context or 'none'}\n\n{summary}\n\nQuestions:\n{listing}"
    )
    system = (
        "Reword each clarification question so it reads naturally for this intention and repository. "
        "Keep its meaning and keep it answerable with its options. Return every id once, no new ids."
    )
    raw = await client.call_tool(system=system, prompt=prompt, tool=_WORDING_TOOL)
    reply = decoding.convert(raw, _WordingReply)
    ids = {q.id for q in questions}
    out: dict[str, str] = {}
    for item in reply.questions:
        text = " ".join(item.question.split())
        if item.id not in ids or not 3 <= len(text) <= 300:
            raise LLMFailure(f"reply rewords unknown question {item.id!r} or has an unusable text")
        out[item.id] = text
    return out


async def extract_items(
    client: LLMClient, intention: str, context: str | None, answers: Mapping[str, AnswerValue]
) -> list[DecisionItem]:
    """Return decisions stated in the intention, context or free-text answers (schema fields only)."""
    schema = "; ".join(f"{c}: {', '.join(f)}" for c, f in SCHEMA_V1.items()).replace("*", "any field name")
    shown = "\n".join(f"- {k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in answers.items())
    prompt = redact(
        f"Intention: {intention}\n\nContext: {context or 'none'}\n\nAnswers:\n{shown or '- none'}"
    )
    system = (
        "List the architecture decisions this text states explicitly, as category, field and value. "
        f"Allowed categories and fields: {schema}. Never guess; return an empty list if nothing is stated."
    )
    raw = await client.call_tool(system=system, prompt=prompt, tool=_EXTRACTION_TOOL)
    reply = decoding.convert(raw, _ExtractionReply)
    items: list[DecisionItem] = []
    for field in reply.fields:
        item = normalize_item(
            DecisionItem(category=field.category, field=field.field, value=field.value, source="llm")
        )
        if item is None:
            raise LLMFailure(f"reply names a field outside schema v1: {field.category}.{field.field}")
        items.append(item)
    return items
