"""Which engines a sharded run uses, and which suites each one runs.

An engine is named as `--engine-host` names one: a DOCKER_HOST URL (`unix:///var/run/docker.sock`,
`tcp://10.0.0.5:2375`, `ssh://ci@builder`), `context:NAME` for a `docker context`, or `local` for
the engine the project uses anyway (e2e.yaml's `engine:`, `--engine-host`, DOCKER_HOST).

The split is longest-processing-time first: the suites sorted by their recorded duration,
longest first, each onto the engine with the least expected work so far. A suite with no
history counts as the mean of those with one (or `DEFAULT_SUITE_MS` when none has any). Ties go
by file order and engine order, so the same history always gives the same split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from preflight_sdk.config.engine_target import EngineTarget
from preflight_sdk.core.errors import InputError

__all__ = ["DEFAULT_SUITE_MS", "LOCAL", "MAX_SHARDS", "ShardSpec", "parse_shards", "split_suites"]

LOCAL = "local"
MAX_SHARDS = 16
DEFAULT_SUITE_MS = 10_000  # a suite never recorded, when no suite has been
_SCHEMES = ("unix://", "tcp://", "ssh://", "npipe://", "fd://")
_HINT = "name each engine as `local`, `context:NAME` or a DOCKER_HOST URL (unix://…, tcp://host:port, ssh://user@host)"


class ShardSpec(msgspec.Struct, frozen=True, kw_only=True):
    """One engine of a sharded run.

    Attributes:
        name: how reports name it (`local`, `context:ci`, the URL; `#2` on a repeated engine).
        key: the shard's folder under `.preflight/shards/` and its label suffix.
        target: the engine, or None for the project's own (`local`).
    """

    name: str
    key: str
    target: EngineTarget | None


def parse_shards(engines: Sequence[str]) -> list[ShardSpec]:
    """The shards `engines` name, in order (INVALID_INPUT for an empty list or an unknown spelling).

    One engine may be named twice: it then runs two copies of the environment side by side.
    """
    if not engines:
        raise InputError("shards needs at least one engine", hint=_HINT)
    if len(engines) > MAX_SHARDS:
        raise InputError(
            f"at most {MAX_SHARDS} shards, not {len(engines)}",
            hint="name fewer engines",
            details={"given": len(engines)},
        )
    specs: list[ShardSpec] = []
    seen: dict[str, int] = {}
    for index, text in enumerate(engines, start=1):
        spelled = text.strip()
        target = _target(spelled)
        seen[spelled] = seen.get(spelled, 0) + 1
        name = spelled if seen[spelled] == 1 else f"{spelled}#{seen[spelled]}"
        specs.append(ShardSpec(name=name, key=str(index), target=target))
    return specs


def _target(text: str) -> EngineTarget | None:
    if text == LOCAL:
        return None
    if text.startswith("context:") and text.removeprefix("context:").strip():
        return EngineTarget(context=text.removeprefix("context:").strip())
    if text.startswith(_SCHEMES) and len(text) > text.index("://") + 3:
        return EngineTarget(host=text)
    raise InputError(
        f"{text!r} names no engine",
        hint=_HINT,
        details={"engine": text, "accepted": [LOCAL, "context:NAME", *(s + "…" for s in _SCHEMES)]},
    )


def split_suites(
    suites: Sequence[str], durations: Mapping[str, int], engines: int
) -> tuple[list[list[str]], list[int]]:
    """Split `suites` over `engines`: each engine's suites (in the given order) and its expected ms.

    `durations` are the recorded durations (ms) by suite id; the others count as their mean.
    """
    known = [durations[s] for s in suites if s in durations]
    fallback = sum(known) // len(known) if known else DEFAULT_SUITE_MS
    expected = {s: max(0, durations.get(s, fallback)) for s in suites}
    position = {s: i for i, s in enumerate(suites)}
    parts: list[list[str]] = [[] for _ in range(engines)]
    loads = [0] * engines
    for suite in sorted(suites, key=lambda s: (-expected[s], position[s])):
        least = min(range(engines), key=lambda k: (loads[k], k))
        parts[least].append(suite)
        loads[least] += expected[suite]
    return [sorted(part, key=position.__getitem__) for part in parts], loads
