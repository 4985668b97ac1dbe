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
"""

from __future__ import annotations

from .flow import clarify, read_architecture
from .llm import LLMClient, LLMFailure
from .providers import AnthropicLLM, OpenAILLM, OpenRouterLLM, ToolSpec
from .questions import Question
from .results import ArchitectureResult, Artifact, ClarifyResult, Detected, Progress

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
