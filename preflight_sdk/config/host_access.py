"""Settings that hand a container this machine (or the engine's): said once each, never refused.

`privileged`, the engine's socket mounted, the host's process namespace, the capabilities and
profiles whose loss lets a process leave its container, host devices, a build context of `/` or
outside the project: compose and testcontainers run them as written, and so does preflight, since
a test environment may need them (a CI runner that starts containers, a FUSE mount). What a
project's files ask for should not pass unseen by whoever runs it, an agent above all: each such
setting is one line in the configuration's warnings, which setup, status and init results carry
on every face.

Each is named as the file that set it spells it: compose's `cap_add` for a service that came from
a compose file, e2e.yaml's `capAdd` for one written in e2e.yaml.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

from .model import ServiceConfig

__all__ = ["host_access_warnings"]

# Capabilities that reach past the container: mounts and namespaces, kernel modules, other
# processes' memory, raw devices, reading any file by handle.
_STRONG = ("ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_PTRACE", "SYS_RAWIO", "DAC_READ_SEARCH")
_SOCKETS = ("docker.sock", "podman.sock", "containerd.sock")
_RUNS_AS_ASKED = "it runs as written, as compose does"


def _key(name: str, compose: bool) -> str:
    """`cap_add` as compose writes it, `capAdd` as e2e.yaml does."""
    if compose:
        return name
    first, *rest = name.split("_")
    return first + "".join(part.capitalize() for part in rest)


def _unconfined(options: list[str]) -> list[str]:
    """The profiles `security_opt` turns off (`seccomp`, `apparmor`, SELinux `label`)."""
    off: list[str] = []
    for option in options:
        name, _, value = option.replace(":", "=", 1).partition("=")
        if (name, value) in (("seccomp", "unconfined"), ("apparmor", "unconfined"), ("label", "disable")):
            off.append(option)
    return off


def _service(service: ServiceConfig, root: Path, homes: list[Path], compose: bool) -> Iterator[str]:
    options = service.container.options
    if options.privileged:
        yield (
            "`privileged: true`: every capability and every host device, no seccomp or AppArmor "
            f"profile; what runs in it can take over the engine's host ({_RUNS_AS_ASKED})"
        )
    if options.pid == "host":
        yield f"`pid: host`: it sees and can signal every process of the engine's host ({_RUNS_AS_ASKED})"
    unconfined = _unconfined(options.security_opt)
    strong = [cap for cap in options.cap_add if cap.upper().removeprefix("CAP_") in _STRONG]
    for cap in strong:
        profiles = " and ".join(option.split("=")[0].split(":")[0] for option in unconfined)
        escape = f"; with {profiles} unconfined, enough to leave the container" if unconfined else ""
        yield (
            f"`{_key('cap_add', compose)}: {cap}`: powers of the host's kernel beyond the container{escape} "
            f"({_RUNS_AS_ASKED})"
        )
    for option in unconfined:
        yield (
            f"`{_key('security_opt', compose)}: {option}`: turns off the profile that limits what the "
            f"container may ask of the kernel ({_RUNS_AS_ASKED})"
        )
    for device in options.devices:
        yield f"`devices: {device}`: the host's device {device.split(':', 1)[0]} inside the container ({_RUNS_AS_ASKED})"
    for volume in service.container.volumes:
        source = volume.split(":", 1)[0]
        if source.endswith(_SOCKETS):
            yield (
                f"`volumes: {volume}`: the engine's socket: the container controls the engine, so it is "
                f"root on the engine's host ({_RUNS_AS_ASKED})"
            )
        elif source == "/":
            yield f"`volumes: {volume}`: the host's whole file system inside the container ({_RUNS_AS_ASKED})"
    if service.build.dockerfile is not None:
        context = Path(service.build.context)
        context = (context if context.is_absolute() else root / context).resolve()
        if context == Path("/"):
            yield (
                "`build.context: /`: this machine's whole file system is sent to the engine as the build "
                "context (and may end up in the image)"
            )
        elif not any(context == home or home in context.parents for home in homes):
            yield (
                f"`build.context: {context}`: outside the project, so the build may copy files beyond it "
                "into the image"
            )


def host_access_warnings(
    services: list[ServiceConfig], root: str, compose: Collection[str] = (), sources: Collection[str] = ()
) -> list[str]:
    """One line per setting of `services` that hands a container the host (see the module docstring).

    `root` is the project's directory; `compose` names the services that came from compose files,
    and the YAML files among `sources` (the compose files read) are the project's too: a build
    context under the folder of one is inside the project.
    """
    base = Path(root).resolve()
    homes = [base, *(Path(s).resolve().parent for s in sources if s.endswith((".yaml", ".yml")))]
    return [
        f"service `{service.name}`: {line}"
        for service in services
        for line in _service(service, base, homes, service.name in compose)
    ]
