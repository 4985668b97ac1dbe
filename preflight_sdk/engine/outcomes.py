"""What `docker rm` and `docker network rm` (or Podman's) of several resources did to each one.

python-on-whales raises one `DockerException` when any of them fails; its stdout still lists
what was removed and its stderr says why each other one was not.
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import RemoveOutcome
from .errors import is_daemon_down, translate

__all__ = ["removal_outcomes"]

# The daemon's words for a resource that is already gone: "No such container: <id>",
# "Error: No such network: <name>" (docker 20.10) and "network <name> not found" (docker 24+).
_MISSING = ("No such container", "No such network", "not found")


def removal_outcomes(
    refs: Sequence[str],
    stdout: str,
    stderr: str,
    returncode: int,
    *,
    action: str,
    unnamed_missing: bool = False,
) -> list[RemoveOutcome]:
    """Return one truthful outcome per ref; raise `DOCKER_ERROR` when the daemon is unreachable.

    With `unnamed_missing` (`podman rm --ignore`), a ref neither printed nor named by an error was
    not there.
    """
    removed = {line.strip() for line in stdout.splitlines() if line.strip()}
    errors = [line for line in stderr.splitlines() if line.strip()]
    if any(is_daemon_down(line) for line in errors):
        raise translate(stderr, action=action)

    def outcome(ref: str) -> RemoveOutcome:
        mine = [line for line in errors if ref in line]
        if ref in removed or (not mine and not unnamed_missing and returncode == 0):
            return RemoveOutcome(ref=ref, action="removed")
        if any(gone in line for line in mine for gone in _MISSING) or (not mine and unnamed_missing):
            return RemoveOutcome(ref=ref, action="not_found")
        error = mine[0].removeprefix("Error response from daemon: ").removeprefix("Error: ") if mine else None
        return RemoveOutcome(
            ref=ref, action="failed", error=error or (errors[0] if errors else "docker rm failed")
        )

    return [outcome(ref) for ref in refs]
