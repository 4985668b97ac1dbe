"""Sections that e2e.yaml files of the original Preflight (and its ArgusAI successor) carry.

They are accepted with their exact shapes, so existing files load unchanged and a typo in them is
still caught, but preflight does its own thing for each: the dashboard and repos sections are kept
and unused, run history lives under `.preflight/`, ports and restarts are handled by setup itself.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import Meta, field

from ._meta import Duration, Scalar, Section

__all__ = [
    "CircuitBreakerConfig",
    "ContainerResilience",
    "DashboardConfig",
    "HistoryConfig",
    "HistoryRetention",
    "IsolationConfig",
    "NetworkResilience",
    "PreflightChecks",
    "Preset",
    "PresetEndpoint",
    "RepoConfig",
    "ResilienceConfig",
]


class PresetEndpoint(Section, frozen=True, kw_only=True):
    """A saved request of the original dashboard (kept, unused)."""

    method: str
    path: str
    name: str | None = None
    body: Any = None


class Preset(Section, frozen=True, kw_only=True):
    """A group of saved requests of the original dashboard (kept, unused)."""

    group: str
    endpoints: list[PresetEndpoint] = field(default_factory=list)


class DashboardConfig(Section, frozen=True, kw_only=True):
    """The original Preflight dashboard settings: accepted and kept, not used."""

    port: int = 9095
    ui_port: int = 9091
    presets: list[Preset] = field(default_factory=list)
    env_defaults: dict[str, Scalar] = field(default_factory=dict)
    default_dirs: list[str] = field(default_factory=list)


class RepoConfig(Section, frozen=True, kw_only=True):
    """A git repository of the original dashboard: accepted and kept, not used."""

    name: str
    path: str | None = None
    url: str | None = None
    branch: str | None = None


class HistoryRetention(Section, frozen=True, kw_only=True):
    """How long run history is kept."""

    max_age: Annotated[str | int, Duration("Drop runs older than this (e.g. `90d`).")] = "90d"
    max_runs: Annotated[int, Meta(ge=1, description="Keep at most this many runs.")] = 1000


class HistoryConfig(Section, frozen=True, kw_only=True):
    """How much run history the project's store keeps (`keep`, `maxAge`); pruned after each run.

    `enabled`, `storage`, `path`, `retention` and `flakyWindow` are ArgusAI's: accepted, and
    `retention` is honoured when `keep`/`maxAge` are not set.
    """

    keep: Annotated[int, Meta(ge=1, description="Keep the newest N runs (default 200).")] | None = None
    max_age: Annotated[
        str | int | None, Duration("Delete runs older than this, e.g. `30d` (default 30d).")
    ] = None
    enabled: Annotated[bool, Meta(description="Record runs.")] = True
    storage: Annotated[Literal["local", "memory"], Meta(description="Where runs are kept.")] = "local"
    path: Annotated[str | None, Meta(description="History location.")] = None
    retention: Annotated[HistoryRetention | None, Meta(description="Retention limits.")] = None
    flaky_window: Annotated[int, Meta(ge=1, description="Runs considered when spotting flaky cases.")] = 10


class PreflightChecks(Section, frozen=True, kw_only=True):
    """Checks before setup (kept)."""

    enabled: bool = True
    disk_space_threshold: str = "2GB"
    clean_orphans: bool = True


class ContainerResilience(Section, frozen=True, kw_only=True):
    """Restart policy of the original (kept)."""

    restart_on_failure: bool = True
    max_restarts: Annotated[int, Meta(ge=0, le=10)] = 3
    restart_delay: Annotated[str | int, Duration("Wait before a restart.")] = "2s"
    restart_backoff: Literal["fixed", "linear", "exponential"] = "exponential"


class NetworkResilience(Section, frozen=True, kw_only=True):
    """Port-conflict handling of the original (kept)."""

    port_conflict_strategy: Literal["auto", "fail"] = "auto"
    verify_connectivity: bool = True


class CircuitBreakerConfig(Section, frozen=True, kw_only=True):
    """Circuit breaker of the original (kept)."""

    enabled: bool = True
    failure_threshold: Annotated[int, Meta(ge=1, le=20)] = 5
    reset_timeout_ms: Annotated[int, Meta(ge=0)] = 30000


class ResilienceConfig(Section, frozen=True, kw_only=True):
    """Resilience settings of ArgusAI files: accepted and kept, not used."""

    preflight: PreflightChecks | None = None
    container: ContainerResilience | None = None
    network: NetworkResilience | None = None
    circuit_breaker: CircuitBreakerConfig | None = None


class IsolationConfig(Section, frozen=True, kw_only=True):
    """Isolation settings of ArgusAI files: accepted and kept (preflight names every run uniquely)."""

    namespace: Annotated[str | None, Meta(description="Name prefix.")] = None
    port_range: Annotated[
        tuple[Annotated[int, Meta(ge=1, le=65535)], Annotated[int, Meta(ge=1, le=65535)]] | None,
        Meta(description="Host port range `[low, high]`."),
    ] = None
