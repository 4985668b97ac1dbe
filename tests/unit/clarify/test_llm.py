"""The optional language model, against mocked provider APIs (respx; no real network)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from preflight_sdk.clarify import AnthropicLLM, OpenAILLM, OpenRouterLLM, clarify, read_architecture
from preflight_sdk.clarify.llm.assist import llm_from_env
from preflight_sdk.clarify.llm.redact import redact

ANTHROPIC = "https://api.anthropic.com/v1/messages"
OPENAI = "https://api.openai.com/v1/chat/completions"
OPENROUTER = "https://openrouter.ai/api/v1/chat/completions"
SECRET = "sk-ant-api03-" + "x" * 40
CONTEXT = f"Tokens live in an HTTP-only cookie. ANTHROPIC_API_KEY={SECRET} password='hunter2'"

WORDING = {"questions": [{"id": "auth_strategy", "question": "How should shoppers prove who they are?"}]}
EXTRACTION = {
    "fields": [{"category": "Authentication", "field": "token storage", "value": "HTTP-only cookie"}]
}


def _tool_input(request: httpx.Request) -> dict[str, Any]:
    body = json.loads(request.content)
    name = body["tools"][0].get("name") or body["tools"][0]["function"]["name"]
    return WORDING if name == "submit_questions" else EXTRACTION


def anthropic_reply(request: httpx.Request) -> httpx.Response:
    block = {
        "type": "tool_use",
        "id": "t1",
        "name": json.loads(request.content)["tools"][0]["name"],
        "input": _tool_input(request),
    }
    return httpx.Response(200, json={"content": [{"type": "text", "text": "ok"}, block]})


def openai_reply(request: httpx.Request) -> httpx.Response:
    call = {"function": {"name": "f", "arguments": json.dumps(_tool_input(request))}}
    return httpx.Response(200, json={"choices": [{"message": {"tool_calls": [call]}}]})


async def _two_turns(repo: Path, llm: Any) -> tuple[Any, Any]:
    first = await clarify(repo, "Add authentication", context=CONTEXT, llm=llm)
    done = await clarify(
        repo,
        "Add authentication",
        answers={"auth_strategy": "OAuth", "auth_library": "Auth0"},
        session_id=first.session_id,
        llm=llm,
    )
    return first, done


@pytest.mark.parametrize(
    ("make", "url", "reply"),
    [
        (lambda: AnthropicLLM("key-a", backoff=0), ANTHROPIC, anthropic_reply),
        (lambda: OpenAILLM("key-o", backoff=0), OPENAI, openai_reply),
        (lambda: OpenRouterLLM("key-r", backoff=0), OPENROUTER, openai_reply),
    ],
)
@pytest.mark.anyio
async def test_a_provider_rewords_questions_and_extracts_stated_decisions(
    repo: Path, make: Callable[[], Any], url: str, reply: Callable[[httpx.Request], httpx.Response]
) -> None:
    with respx.mock(assert_all_called=True) as router:
        route = router.post(url).mock(side_effect=reply)
        first, done = await _two_turns(repo, make())
    assert route.call_count == 2
    assert first.warning is None and done.warning is None
    assert first.questions[0].question == "How should shoppers prove who they are?"
    assert first.questions[0].options and first.questions[0].options[0] == "OAuth"  # options never change
    assert (await read_architecture(repo)).categories["Authentication"] == {
        "Library": "Auth0",  # the answer, not the model
        "Strategy": "OAuth",
        "Token_Storage": "HTTP-only cookie",
    }
    for call in route.calls:
        sent = call.request.content.decode()
        assert SECRET not in sent and "hunter2" not in sent
        assert "[REDACTED" in sent


@pytest.mark.anyio
async def test_the_provider_request_carries_the_key_model_and_forced_tool(repo: Path) -> None:
    with respx.mock() as router:
        route = router.post(ANTHROPIC).mock(side_effect=anthropic_reply)
        await clarify(repo, "Add authentication", llm=AnthropicLLM("key-a", "claude-test", backoff=0))
    request = route.calls[0].request
    body = json.loads(request.content)
    assert request.headers["x-api-key"] == "key-a" and request.headers["anthropic-version"] == "2023-06-01"
    assert body["model"] == "claude-test"
    assert body["tool_choice"] == {"type": "tool", "name": "submit_questions"}
    assert request.extensions["timeout"] == {"connect": 15.0, "read": 15.0, "write": 15.0, "pool": 15.0}


@pytest.mark.parametrize(
    ("side_effect", "calls", "reason"),
    [
        (httpx.ReadTimeout("slow"), 3, "timeout after 15s (after 3 attempts)"),
        (httpx.Response(500, text="boom"), 3, "HTTP 500 (after 3 attempts)"),
        (httpx.Response(429, text="slow down"), 3, "HTTP 429 (after 3 attempts)"),
        (httpx.ConnectError("refused"), 3, "transport error"),
        (httpx.Response(401, text="bad key"), 1, "HTTP 401"),
        (
            httpx.Response(200, json={"content": [{"type": "text", "text": "no tool"}]}),
            1,
            "no tool_use block",
        ),
        (httpx.Response(200, text="<html>"), 1, "not JSON"),
        (
            httpx.Response(
                200,
                json={
                    "content": [
                        {"type": "tool_use", "name": "submit_questions", "input": {"questions": "nope"}}
                    ]
                },
            ),
            1,
            "malformed reply",
        ),
        (
            httpx.Response(
                200,
                json={
                    "content": [
                        {
                            "type": "tool_use",
                            "name": "submit_questions",
                            "input": {"questions": [{"id": "made_up", "question": "?"}]},
                        }
                    ]
                },
            ),
            1,
            "unknown question",
        ),
    ],
)
@pytest.mark.anyio
async def test_any_provider_failure_falls_back_with_the_warning(
    repo: Path, side_effect: Any, calls: int, reason: str
) -> None:
    with respx.mock() as router:
        route = router.post(ANTHROPIC).mock(side_effect=[side_effect] * calls if calls > 1 else side_effect)
        result = await clarify(repo, "Add authentication", llm=AnthropicLLM("k", backoff=0))
    assert route.call_count == calls
    assert result.status == "needs_clarification"
    assert result.warning == "llm_fallback"
    assert result.warning_reason and reason in result.warning_reason
    assert result.questions[0].question == "Which authentication strategy should the project use?"


@pytest.mark.anyio
async def test_an_extraction_outside_the_schema_falls_back_and_still_completes(repo: Path) -> None:
    bad = {"fields": [{"category": "Database", "field": "Sharding", "value": "yes"}]}

    def reply(request: httpx.Request) -> httpx.Response:
        name = json.loads(request.content)["tools"][0]["name"]
        data = WORDING if name == "submit_questions" else bad
        return httpx.Response(200, json={"content": [{"type": "tool_use", "name": name, "input": data}]})

    with respx.mock() as router:
        router.post(ANTHROPIC).mock(side_effect=reply)
        _, done = await _two_turns(repo, AnthropicLLM("k", backoff=0))
    assert done.status == "completed"
    assert done.warning == "llm_fallback" and "Database.Sharding" in (done.warning_reason or "")
    assert (await read_architecture(repo)).categories["Authentication"] == {
        "Library": "Auth0",
        "Strategy": "OAuth",
    }


@pytest.mark.anyio
async def test_the_environment_selects_the_provider_and_its_key(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PREFLIGHT_LLM_PROVIDER", "openai")
    monkeypatch.setenv("OPENAI_API_KEY", "plain")
    monkeypatch.setenv("PREFLIGHT_OPENAI_API_KEY", "preferred")
    monkeypatch.setenv("PREFLIGHT_LLM_MODEL", "gpt-test")
    with respx.mock() as router:
        route = router.post(OPENAI).mock(side_effect=openai_reply)
        result = await clarify(repo, "Add authentication")
    assert result.warning is None
    request = route.calls[0].request
    assert request.headers["authorization"] == "Bearer preferred"
    assert json.loads(request.content)["model"] == "gpt-test"


@pytest.mark.parametrize(
    ("env", "provider", "problem"),
    [
        ({}, None, None),
        ({"PREFLIGHT_LLM_PROVIDER": "mock"}, None, None),
        ({"PREFLIGHT_LLM_PROVIDER": "gemini"}, None, "unknown PREFLIGHT_LLM_PROVIDER 'gemini'"),
        (
            {"PREFLIGHT_LLM_PROVIDER": "openrouter"},
            None,
            "set PREFLIGHT_OPENROUTER_API_KEY or OPENROUTER_API_KEY",
        ),
        ({"PREFLIGHT_LLM_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "k"}, "anthropic", None),
    ],
)
def test_llm_configuration_from_the_environment(
    env: dict[str, str], provider: str | None, problem: str | None
) -> None:
    client, reason = llm_from_env(env)
    assert (client.provider if client else None) == provider
    if problem is None:
        assert reason is None
    else:
        assert reason is not None and problem in reason


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-" + "a" * 40,
        "ghp_" + "b" * 36,
        "AKIAABCDEFGHIJKLMNOP",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "Bearer abc.def-ghi",
        "postgres://admin:s3cret@db/app",
        "DB_PASSWORD=s3cret",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_secrets_are_redacted(secret: str) -> None:
    out = redact(f"config: {secret} end")
    assert "REDACTED" in out
    assert "s3cret" not in out and secret not in out
    assert out.startswith("config: ") and out.endswith(" end")
