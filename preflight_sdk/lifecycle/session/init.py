"""`init`: load and validate e2e.yaml and open (or resume) the project's session."""

from __future__ import annotations

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import StateError
from preflight_sdk.core.results.lifecycle import InitMock, InitResult, InitService, InitSuite

from .context import ProjectContext

__all__ = ["SCHEMA_VERSION", "describe", "initialize"]

SCHEMA_VERSION = "1"


async def initialize(ctx: ProjectContext) -> InitResult:
    """Load the configuration and return what it declares (see `Project.init`)."""
    loaded, changed = await ctx.load()
    session = ctx.require_session()
    if ctx.stale:
        raise StateError(
            "e2e.yaml changed while the environment of the previous version is running",
            hint="call `clean` first (it removes the running containers), then `init` again",
            details={"configPath": loaded.path, "sessionId": session.session_id, "state": session.state},
        )
    return describe(loaded, session.session_id, session.state, reloaded=changed)


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
