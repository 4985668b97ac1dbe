"""Turn docker CLI failures into `PreflightError`s with a code and a hint.

The docker CLI reports everything as text on stderr; this is the one place that reads it.
"""

from __future__ import annotations

import re

from ..errors import EnvironmentError_

__all__ = ["DAEMON_HINT", "daemon_unreachable", "translate"]

DAEMON_HINT = (
    "start Docker: `scripts/ensure-docker` (installs and starts dockerd on Debian), "
    "`sudo systemctl start docker`, or start Docker Desktop; then check with `docker info`"
)
_DAEMON = re.compile(
    r"Cannot connect to the Docker daemon|Is the docker daemon running|error during connect|"
    r"dial unix .*docker.sock|permission denied while trying to connect",
    re.I,
)
_PERMISSION_HINT = (
    "the daemon runs but refuses this user: add it to the docker group "
    "(`sudo usermod -aG docker $USER`, then log in again), or use a context this user may reach"
)
_NO_IMAGE = re.compile(r"No such image: *(\S+)")
_PORT = re.compile(r"(?:port is already allocated|address already in use|bind: .*in use)", re.I)
_PORT_NUMBER = re.compile(r"(?:0\.0\.0\.0|127\.0\.0\.1|\[::\]|::)?:(\d{1,5})")


def daemon_unreachable(detail: str) -> EnvironmentError_:
    """Return the error for a Docker daemon that does not answer."""
    return EnvironmentError_(
        "the Docker daemon is not reachable: " + _first_line(detail),
        code="DOCKER_ERROR",
        hint=_PERMISSION_HINT if "permission denied" in detail.lower() else DAEMON_HINT,
        details={"stderr": detail[-2000:]},
        retryable=True,
    )


def translate(stderr: str, *, action: str, subject: str | None = None) -> EnvironmentError_:
    """Return the `PreflightError` that best describes a failed docker command.

    Args:
        stderr: what docker printed.
        action: what was being done (`run container api`, `create network`…), for the message.
        subject: the container, image or network concerned.
    """
    text = stderr.strip()
    if _DAEMON.search(text):
        return daemon_unreachable(text)
    if "No such image" in text:
        named = _NO_IMAGE.search(text)
        # `docker run` of docker 20.10 ends its message with a period: not part of the name.
        image = named.group(1).removesuffix(".") if named else subject
        return EnvironmentError_(
            f"cannot {action}: image {image} is not built (or not present locally)",
            code="NOT_BUILT",
            hint="call build first (or build with pull=true for images without a Dockerfile)",
            details={"image": image, "subject": subject},
        )
    if _PORT.search(text):
        port = _conflicting_port(text)
        return EnvironmentError_(
            f"cannot {action}: host port {port or '?'} is already in use",
            code="PORT_CONFLICT",
            hint="stop what holds the port (`ss -ltnp` shows it), or publish another host port "
            "(`0:<container port>` lets Docker pick a free one)",
            details={"port": port, "stderr": text[-2000:], "subject": subject},
        )
    return EnvironmentError_(
        f"cannot {action}: {_first_line(text) or 'docker failed without a message'}",
        code="DOCKER_ERROR",
        hint="see details.stderr; `docker info` shows whether the daemon is healthy",
        details={"stderr": text[-2000:], "subject": subject},
    )


def _conflicting_port(text: str) -> int | None:
    for match in _PORT_NUMBER.finditer(text):
        number = int(match.group(1))
        if 0 < number < 65536:
            return number
    return None


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("docker: ").removeprefix("Error response from daemon: ")
    return ""
