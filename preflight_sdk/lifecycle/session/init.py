"""What `init` answers: what a loaded e2e.yaml declares (`Environment.init` loads it and opens the session)."""

from __future__ import annotations

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.results.lifecycle import InitMock, InitResult, InitService, InitSuite

__all__ = ["SCHEMA_VERSION", "describe"]

SCHEMA_VERSION = "1"


def describe(loaded: LoadedConfig, session_id: str, state: str, *, reloaded: bool = False) -> InitResult:
    """Return the InitResult of a loaded configuration."""
    services = [
        InitService(
            name=s.name,
            image=s.build.image,
            ports=list(s.container.ports),
            has_healthcheck=s.container.healthcheck is not None,
            kind=s.kind,
            depends_on=list(s.depends_on),
            builds=s.build.dockerfile is not None,
        )
        for s in loaded.services
    ]
    mocks = [
        InitMock(name=name, port=m.port, route_count=len(m.routes)) for name, m in loaded.config.mocks.items()
    ]
    suites = [
        InitSuite(
            id=s.id, name=s.name or s.id, runner="shell" if s.runner == "exec" else s.runner, file=s.file
        )
        for s in loaded.suites
    ]
    return InitResult(
        project_name=loaded.project_name,
        config_path=loaded.path,
        services=services,
        mocks=mocks,
        suites=suites,
        schema_version=SCHEMA_VERSION,
        session_id=session_id,
        state=state,  # type: ignore[arg-type]
        reloaded=reloaded,
        warnings=list(loaded.warnings),
    )
