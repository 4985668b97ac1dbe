"""What translating one compose service needs: the project's declarations and where to report."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .values import Reader

__all__ = ["Context", "Report", "Warn"]

Report = Callable[..., None]
"""`report(path, message, key=False, hint=None)`: a problem at a JSON path of the compose document."""
Warn = Callable[[tuple[str | int, ...], str, str], None]
"""`warn(path, key, reason)`: a key set aside; said once per key and file."""


class Context:
    """The project-level parts of the compose document, and the sinks for problems and warnings."""

    def __init__(
        self,
        *,
        directory: Path,
        environ: Mapping[str, str],
        project: str,
        data: Mapping[str, Any],
        keep_host_ports: bool,
        report: Report,
        warn: Warn,
    ) -> None:
        self.directory = directory
        self.environ = environ
        self.project = project
        self.volumes: Mapping[str, Any] = _section(data, "volumes")
        self.networks: Mapping[str, Any] = _section(data, "networks")
        self.secrets: Mapping[str, Any] = _section(data, "secrets")
        self.configs: Mapping[str, Any] = _section(data, "configs")
        self.keep_host_ports = keep_host_ports
        self.report = report
        self.warn = warn
        self.read = Reader(report)
        self.sources: list[str] = []
        self.tmpfs: list[str] = []  # the tmpfs mounts of the service being translated

    def path(self, written: str) -> str:
        """`written` as an absolute path, relative to the compose file's directory."""
        candidate = Path(written).expanduser()
        return str(candidate if candidate.is_absolute() else (self.directory / candidate).resolve())

    @staticmethod
    def slug(text: str) -> str:
        """A name as compose writes it into Docker names (lower case, dashes)."""
        return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "project"


def _section(data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}
