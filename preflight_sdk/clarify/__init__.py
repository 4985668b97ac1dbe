"""Clarify an intention into decisions before code: ADR and task files an agent can follow.

`clarify(project_path, intention)` asks at most five questions about a change ("Add
authentication"), then writes, in the git repository that holds the project:

- `docs/adr/<UID>_<slug>.md`: an architecture decision record (immutable), when the change is
  architectural; the latest ADR (highest UID) holds the whole snapshot and is the source of truth;
- `docs/CURRENT_TASK.md`: the brief (objective, allowlist, forbidden paths, constraints,
  acceptance criteria); the previous one is archived as `docs/archive/task/<UID>_<slug>.md`;
- `docs/ARCHITECTURE_STATE.md`: a projection of the latest ADR, regenerated whenever it is
  missing or stale.

`read_architecture(project_path)` returns the current decisions. The files use the layout of the
`preflights` tool, so repositories written by either can be read by the other. Sessions persist
under `<repo>/.preflight/clarify/` and expire after 30 idle minutes.

Layer: an area. Owns the clarification flow, its sessions and the ADR/TASK files, and returns
plain results: their rendering is the display face's, their form the notebook face's, and the
`preflights` alias reply shapes the MCP face's. May import the core only; never a face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from preflight_sdk.core.lazy import lazy_attributes

from .questions import Question
from .results import ArchitectureResult, Artifact, ClarifyResult, Detected, Progress

if TYPE_CHECKING:
    from .flow import clarify, read_architecture
    from .llm.assist import LLMClient, LLMFailure
    from .llm.providers import AnthropicLLM, OpenAILLM, OpenRouterLLM, ToolSpec

# The engine, files and model adapters load on first use: a process that only lists the
# operations (the MCP server starting, the CLI's --help) never pays for them.
_LAZY = {
    "clarify": "flow",
    "read_architecture": "flow",
    "LLMClient": "llm.assist",
    "LLMFailure": "llm.assist",
    "AnthropicLLM": "llm.providers",
    "OpenAILLM": "llm.providers",
    "OpenRouterLLM": "llm.providers",
    "ToolSpec": "llm.providers",
}


__getattr__ = lazy_attributes(__name__, _LAZY)


__all__ = [
    "AnthropicLLM",
    "ArchitectureResult",
    "Artifact",
    "ClarifyResult",
    "Detected",
    "LLMClient",
    "LLMFailure",
    "OpenAILLM",
    "OpenRouterLLM",
    "Progress",
    "Question",
    "ToolSpec",
    "clarify",
    "read_architecture",
]
