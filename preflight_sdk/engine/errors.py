"""Docker's failures as `PreflightError`s with a code and a hint: python-on-whales' exceptions (typed
ones, or a `DockerException` with the CLI's `stderr`) and the CLI's words, each pattern next to the
words it matches (`translate`); the Engine API's answers by their HTTP status (`from_status`).
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from preflight_sdk.core.errors import InfrastructureError

if TYPE_CHECKING:
    from python_on_whales.exceptions import DockerException

__all__ = [
    "DAEMON_HINT",
    "daemon_unreachable",
    "first_line",
    "from_status",
    "is_daemon_down",
    "name_the_engine",
    "no_cli",
    "pull_error",
    "translate",
    "translate_exception",
    "unsupported",
]

DAEMON_HINT = (
    "start Docker: `scripts/ensure-docker` (installs and starts dockerd on Debian), "
    "`sudo systemctl start docker`, or start Docker Desktop; then check with `docker info`"
)
# Not typed by python-on-whales. The CLI's words when it cannot reach the daemon:
# "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?",
# "error during connect: ... connection refused" (TCP hosts), "Got permission denied while trying
# to connect to the Docker daemon socket ..." (a user outside the docker group).
_DAEMON = re.compile(
    r"Cannot connect to the Docker daemon|Is the docker daemon running|error during connect|"
    r"dial unix .*docker.sock|permission denied while trying to connect",
    re.I,
)
_PERMISSION_HINT = (
    "the daemon runs but refuses this user: add it to the docker group "
    "(`sudo usermod -aG docker $USER`, then log in again), or use a context this user may reach"
)
# The image named in "No such image: shop-api:e2e" (python-on-whales types the error, not the name),
# or in Podman's "Error: shop-api:e2e: image not known".
_NO_IMAGE = re.compile(r"No such image: *(\S+)|(\S+): image not known", re.I)
# Not typed: "Bind for 0.0.0.0:8080 failed: port is already allocated" (docker-proxy), "listen tcp4
# 127.0.0.1:57225: bind: address already in use" (userland proxy), "failed to bind host port for
# 0.0.0.0:5432:...: address already in use" (the daemon's newer port mapper).
_PORT = re.compile(r"(?:port is already allocated|address already in use|bind: .*in use)", re.I)
_PORT_NUMBER = re.compile(r"(?:0\.0\.0\.0|127\.0\.0\.1|\[::\]|::)?:(\d{1,5})")
_STDERR_KEPT = 2000
# ssh's words when the engine's ssh server answers but will not let this machine in (docker's ssh
# helper passes them on): "Permission denied (publickey).", "Host key verification failed."
_SSH_REFUSED = re.compile(r"Permission denied \(publickey[^)]*\)|Host key verification failed")


def daemon_unreachable(detail: str) -> InfrastructureError:
    """Return the error for a Docker daemon that does not answer."""
    return InfrastructureError(
        "the Docker daemon is not reachable: " + first_line(detail),
        code="DOCKER_ERROR",
        hint=_PERMISSION_HINT if "permission denied" in detail.lower() else DAEMON_HINT,
        details={"stderr": detail[-_STDERR_KEPT:]},
        retryable=True,
    )


def name_the_engine(error: InfrastructureError, host: str | None, context: str | None) -> InfrastructureError:
    """Return `error` naming the engine (`host`, else DOCKER_HOST; `context`, else DOCKER_CONTEXT) when
    the daemon did not answer and the engine is not a socket of this machine; else `error` itself.
    """
    where = host or os.environ.get("DOCKER_HOST", "")
    context = context or os.environ.get("DOCKER_CONTEXT", "")
    # Only an unreachable daemon is a retryable DOCKER_ERROR; a socket of this machine keeps the
    # hint about starting Docker.
    local = where.startswith("unix://") if where else not context
    if error.code != "DOCKER_ERROR" or not error.retryable or local:
        return error
    flag = f"--host {where}" if where else f"--context {context}"
    refused = _SSH_REFUSED.search(str((error.details or {}).get("stderr", "")))
    # An ssh server that refuses this machine: the engine is up, and trying again cannot help
    # until the login is fixed.
    hint = (
        f"the engine's ssh server refused this machine ({refused.group(0)}): check that "
        f"`{_ssh_command(where)} docker version` works without a prompt (docker runs `ssh` from PATH: "
        "a key in ssh-agent or ~/.ssh/config, the host in known_hosts)"
        if refused
        else f"check that the engine is up and reachable from this machine (`docker {flag} info`), "
        "or fix `engine.host`/`engine.context` in e2e.yaml (`--engine-host`/`--context`, DOCKER_HOST/DOCKER_CONTEXT)"
    )
    return InfrastructureError(
        error.message.replace("the Docker daemon", f"the Docker engine {where or context}", 1),
        code="DOCKER_ERROR",
        hint=hint,
        details={**(error.details or {}), "engine": where or f"context:{context}"},
        retryable=refused is None,
    )


def _ssh_command(host: str) -> str:
    """`ssh [-p PORT] [USER@]HOST` for an `ssh://` engine URL (plain `ssh HOST` for anything else)."""
    if not host.startswith("ssh://"):
        return "ssh HOST"
    url = urlsplit(host)
    port = f"-p {url.port} " if url.port else ""
    user = f"{url.username}@" if url.username else ""
    return f"ssh {port}{user}{url.hostname}"


def is_daemon_down(stderr: str) -> bool:
    """Tell whether the CLI failed because the daemon cannot be reached."""
    return _DAEMON.search(stderr) is not None


def no_cli() -> InfrastructureError:
    """Return the error for a missing docker command-line client."""
    return InfrastructureError(
        "the docker command-line client is not installed (or not on PATH)",
        code="DOCKER_ERROR",
        hint="install Docker (`scripts/ensure-docker` on Debian installs docker.io) and make sure `docker` is on PATH",
    )


def translate_exception(
    exc: DockerException, *, action: str, subject: str | None = None
) -> InfrastructureError:
    """Return the `PreflightError` for a failed python-on-whales call."""
    from python_on_whales.exceptions import NoSuchImage

    stderr = (exc.stderr or "").strip()
    if isinstance(exc, NoSuchImage) and not _DAEMON.search(stderr):
        return _not_built(_named_image(stderr, subject), action=action, subject=subject)
    return translate(stderr, action=action, subject=subject)


def translate(stderr: str, *, action: str, subject: str | None = None) -> InfrastructureError:
    """Return the `PreflightError` that best describes a docker failure from its stderr.

    Args:
        stderr: what docker printed.
        action: what was being done (`run container api`, `create network`…), for the message.
        subject: the container, image or network concerned.
    """
    text = stderr.strip()
    if _DAEMON.search(text):
        return daemon_unreachable(text)
    if "no such image" in text.lower() or "image not known" in text:  # the second: Podman's words
        return _not_built(_named_image(text, subject), action=action, subject=subject)
    if "container-init binary not found" in text:  # Podman's, for `init: true` without catatonit
        return unsupported(
            "podman",
            "container.init",
            f"cannot {action}: container.init is not supported on Podman: its init (catatonit) is not installed",
            "install catatonit (`scripts/ensure-podman` does on Debian), or drop `init: true`",
            subject=subject,
        )
    if _PORT.search(text):
        return _port_conflict(text, action=action, subject=subject)
    return _docker_error(text, action=action, subject=subject, hint=_DOCKER_HINT)


_DOCKER_HINT = "see details.stderr; `docker info` shows whether the daemon is healthy"
# The Engine API's statuses that say what kind of failure it was (the message says which object).
_STATUS_HINTS = {
    400: "the daemon refused the request as malformed (details.stderr says which value): "
    "check the service's settings in e2e.yaml and the compose file",
    404: "{missing} does not exist (any more): removed by `clean`, another run's reset, or by hand; "
    "`status` shows what runs, `setup` starts it again",
    409: "the request conflicts with the object's state (a name in use, a container not running, an object "
    "still in use): `clean` removes what an earlier run left, `status` shows what runs",
}


def from_status(
    status: int,
    said: str,
    *,
    action: str,
    subject: str | None = None,
    missing: tuple[str, str] | None = None,
) -> InfrastructureError:
    """Return the `PreflightError` for an Engine API answer of `status`, the daemon's message `said`.

    Args:
        action: what was being done (`start container api`…), for the message.
        subject: the container, image or network concerned.
        missing: the kind and name of the object a 404 says is missing (`("image", "shop-api:e2e")`),
            when the request names one: a missing image is `NOT_BUILT` whatever the daemon's words.
    """
    text = said.strip()
    if status == 404 and missing is not None and missing[0] == "image":
        return _not_built(missing[1], action=action, subject=subject, stderr=text, httpStatus=status)
    if status >= 500 and _PORT.search(text):
        # The daemon answers 500 both for a host port something else holds and for any other
        # container that would not start: only its words tell the one users act on apart.
        return _port_conflict(text, action=action, subject=subject, httpStatus=status)
    named = f"{missing[0]} {missing[1]}" if missing else "what the message names"
    hint = _STATUS_HINTS.get(status, _DOCKER_HINT).format(missing=named)
    return _docker_error(text, action=action, subject=subject, hint=hint, httpStatus=status)


def _docker_error(
    text: str, *, action: str, subject: str | None, hint: str, **details: object
) -> InfrastructureError:
    return InfrastructureError(
        f"cannot {action}: {first_line(text) or 'docker failed without a message'}",
        code="DOCKER_ERROR",
        hint=hint,
        details={"stderr": text[-_STDERR_KEPT:], "subject": subject, **details},
    )


# The resolver's words, as the daemon passes them on: "dial tcp: lookup registry.example on
# 10.0.0.53:53: no such host", "... : Temporary failure in name resolution", "... server misbehaving".
_LOOKUP = re.compile(
    r"lookup (?P<host>[^\s:]+)(?: on [^:]+:\d+)?: (?P<why>no such host|server misbehaving|"
    r"Temporary failure in name resolution|i/o timeout)",
    re.I,
)


def pull_error(ref: str, lines: list[str], last_error: str | None) -> InfrastructureError:
    """The error for a failed `pull` of `ref`: the daemon's complaint (its last line on stderr, not the
    CLI's `Using default tag: latest`), and when the registry's name did not resolve, that."""
    said = last_error or next((line for line in reversed(lines) if line.strip()), "")
    text = "\n".join(lines)
    if _DAEMON.search(text):
        return daemon_unreachable(text)
    lookup = _LOOKUP.search(said) or _LOOKUP.search(text)
    if lookup is not None:
        host, why = lookup.group("host"), lookup.group("why")
        return InfrastructureError(
            f"cannot pull {ref}: the registry's name {host} does not resolve from the engine ({lookup.group(0)})",
            code="DOCKER_ERROR",
            hint=f"check the image's registry name ({host}) and the engine's DNS and network, "
            "or provide the image another way (build it, or `docker load` it)",
            details={"stderr": text[-_STDERR_KEPT:], "subject": ref, "registry": host},
            retryable=why.lower() != "no such host",  # a timeout may pass; an unknown name does not
        )
    error = translate(said, action=f"pull {ref}", subject=ref)
    return InfrastructureError(
        error.message, code=error.code, hint=error.hint, retryable=error.retryable,
        details={**(error.details or {}), "stderr": text[-_STDERR_KEPT:]},
    )  # fmt: skip


def unsupported(
    engine: str, feature: str, message: str, hint: str, **details: str | None
) -> InfrastructureError:
    """`UNSUPPORTED_ON_ENGINE`: `feature`, which this `engine` (`podman`, `swarm`) cannot provide."""
    return InfrastructureError(
        message,
        code="UNSUPPORTED_ON_ENGINE",
        hint=hint,
        details={"engine": engine, "feature": feature, **details},
    )


def _not_built(
    image: str | None, *, action: str, subject: str | None, **details: object
) -> InfrastructureError:
    return InfrastructureError(
        f"cannot {action}: image {image} is not built (or not present locally)",
        code="NOT_BUILT",
        hint="call `build` first (or build with pull=true for images without a Dockerfile)",
        details={"image": image, "subject": subject, **details},
    )


def _named_image(text: str, subject: str | None) -> str | None:
    """The image the CLI's words name (else `subject`)."""
    named = _NO_IMAGE.search(text)
    # `docker run` of docker 20.10 ends its message with a period: not part of the name.
    return (named.group(1) or named.group(2)).removesuffix(".").removesuffix(":") if named else subject


def _port_conflict(text: str, *, action: str, subject: str | None, **details: object) -> InfrastructureError:
    port = _conflicting_port(text)
    return InfrastructureError(
        f"cannot {action}: host port {port or '?'} is already in use",
        code="PORT_CONFLICT",
        hint="stop what holds the port (`ss -ltnp` shows it), or publish another host port "
        "(`0:<container port>` lets Docker pick a free one)",
        details={"port": port, "stderr": text[-_STDERR_KEPT:], "subject": subject, **details},
    )


def _conflicting_port(text: str) -> int | None:
    for match in _PORT_NUMBER.finditer(text):
        number = int(match.group(1))
        if 0 < number < 65536:
            return number
    return None


def first_line(text: str) -> str:
    """The first line of a docker error, without the CLI's and the daemon's prefixes."""
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("docker: ").removeprefix("Error response from daemon: ")
    return ""
