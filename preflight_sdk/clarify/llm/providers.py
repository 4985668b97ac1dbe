"""Language-model providers over HTTP (httpx, async): Anthropic, OpenAI and OpenRouter.

Each asks the model to call one tool and returns that tool's JSON input. Every request has a
15-second timeout and is retried twice on a timeout, a transport error, HTTP 429 or a 5xx; any
other failure raises `LLMFailure` at once. httpx is imported only when a request is made.
"""

from __future__ import annotations

from typing import Any

import anyio
import msgspec

__all__ = ["AnthropicLLM", "HttpLLM", "LLMFailure", "OpenAILLM", "OpenRouterLLM", "ToolSpec"]


class LLMFailure(Exception):
    """A model call failed or its reply was unusable; `reason` says how (it is never fatal)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ToolSpec(msgspec.Struct, frozen=True, kw_only=True):
    """The single tool a model must call: its name, description and JSON Schema."""

    name: str
    description: str
    schema: dict[str, Any]


class HttpLLM:
    """Common request, retry and error handling; subclasses shape the request and reply."""

    provider = "http"
    default_model = ""
    default_base = ""

    def __init__(
        self,
        api_key: str,
        model: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 15.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self.api_key = api_key
        self.model = model or self.default_model
        self.base_url = (base_url or self.default_base).rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    def request(self, system: str, prompt: str, tool: ToolSpec) -> tuple[str, dict[str, str], dict[str, Any]]:
        """Return (url, headers, JSON body)."""
        raise NotImplementedError

    def reply(self, data: Any, tool: ToolSpec) -> Any:
        """Return the tool input from the decoded reply, or raise `LLMFailure`."""
        raise NotImplementedError

    async def call_tool(self, *, system: str, prompt: str, tool: ToolSpec) -> Any:
        """Ask the model to call `tool` and return the tool's input (decoded JSON)."""
        import httpx

        url, headers, body = self.request(system, prompt, tool)
        last = "no attempt made"
        async with httpx.AsyncClient(timeout=httpx.Timeout(self.timeout)) as client:
            for attempt in range(self.retries + 1):
                if attempt:
                    await anyio.sleep(self.backoff * 2 ** (attempt - 1))
                try:
                    response = await client.post(url, headers=headers, json=body)
                except httpx.TimeoutException:
                    last = f"timeout after {self.timeout:g}s"
                    continue
                except httpx.HTTPError as exc:
                    last = f"transport error: {exc}"
                    continue
                if response.status_code == 429 or response.status_code >= 500:
                    last = f"HTTP {response.status_code}"
                    continue
                if response.status_code >= 400:
                    raise LLMFailure(f"HTTP {response.status_code}: {response.text[:200]}")
                try:
                    data = msgspec.json.decode(response.content)
                except msgspec.DecodeError as exc:
                    raise LLMFailure(f"reply is not JSON: {exc}") from exc
                return self.reply(data, tool)
        raise LLMFailure(f"{self.provider}: {last} (after {self.retries + 1} attempts)")


def _get(data: Any, *path: str | int) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMFailure(f"reply has no {'.'.join(map(str, path))}") from exc
    return data


class AnthropicLLM(HttpLLM):
    """Anthropic Messages API with a forced tool call."""

    provider = "anthropic"
    default_model = "claude-sonnet-4-5"
    default_base = "https://api.anthropic.com"

    def request(self, system: str, prompt: str, tool: ToolSpec) -> tuple[str, dict[str, str], dict[str, Any]]:
        """Return the Messages API request."""
        body = {
            "model": self.model,
            "max_tokens": 1024,
            "system": system,
            "messages": [{"role": "user", "content": prompt}],
            "tools": [{"name": tool.name, "description": tool.description, "input_schema": tool.schema}],
            "tool_choice": {"type": "tool", "name": tool.name},
        }
        headers = {"x-api-key": self.api_key, "anthropic-version": "2023-06-01"}
        return f"{self.base_url}/v1/messages", headers, body

    def reply(self, data: Any, tool: ToolSpec) -> Any:
        """Return the input of the `tool_use` block for the tool."""
        for block in _get(data, "content"):
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == tool.name:
                return block.get("input")
        raise LLMFailure(f"reply has no tool_use block for {tool.name}")


class OpenAILLM(HttpLLM):
    """OpenAI Chat Completions with a forced function call."""

    provider = "openai"
    default_model = "gpt-4.1-mini"
    default_base = "https://api.openai.com"

    def headers(self) -> dict[str, str]:
        """Authorization headers."""
        return {"authorization": f"Bearer {self.api_key}"}

    def request(self, system: str, prompt: str, tool: ToolSpec) -> tuple[str, dict[str, str], dict[str, Any]]:
        """Return the Chat Completions request."""
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.schema,
                    },
                }
            ],
            "tool_choice": {"type": "function", "function": {"name": tool.name}},
        }
        return f"{self.base_url}/v1/chat/completions", self.headers(), body

    def reply(self, data: Any, tool: ToolSpec) -> Any:
        """Return the decoded arguments of the tool call."""
        arguments = _get(data, "choices", 0, "message", "tool_calls", 0, "function", "arguments")
        if not isinstance(arguments, str):
            raise LLMFailure("tool call arguments are not a JSON string")
        try:
            return msgspec.json.decode(arguments)
        except msgspec.DecodeError as exc:
            raise LLMFailure(f"tool call arguments are not JSON: {exc}") from exc


class OpenRouterLLM(OpenAILLM):
    """OpenRouter's OpenAI-compatible API."""

    provider = "openrouter"
    default_model = "anthropic/claude-sonnet-4.5"
    default_base = "https://openrouter.ai/api"

    def headers(self) -> dict[str, str]:
        """Authorization and attribution headers."""
        return {"authorization": f"Bearer {self.api_key}", "x-title": "preflight"}
