"""One compose service → one e2e.yaml service body (plain data, camelCase keys, absolute paths).

Every key of the service is either translated or reported through `Problems.unsupported`; none is
dropped in silence. The part of the compose specification that test environments use is covered:
build, image, command, entrypoint, environment, env_file, ports, expose, depends_on, healthcheck,
volumes, networks, profiles, container_name, hostname, working_dir, user, init, read_only.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ...durations import parse_duration
from ...errors import InputError
from ..dotenv import read_dotenv
from .ports import translate_ports

__all__ = ["Context", "Report", "translate_service"]

Report = Callable[..., None]
"""`report(path, message, key=False)`: one problem at a JSON path of the compose document."""

_SUPPORTED = frozenset(
    {
        "build", "image", "command", "entrypoint", "environment", "env_file", "ports", "expose",
        "depends_on", "healthcheck", "volumes", "networks", "profiles", "container_name", "hostname",
        "working_dir", "user", "init", "read_only", "restart",
    }
)  # fmt: skip
_BUILD_KEYS = frozenset({"context", "dockerfile", "args", "target"})
_HEALTH_KEYS = frozenset({"test", "interval", "timeout", "retries", "start_period", "disable"})
_HINTS = {
    "restart": 'preflight reports a crashed service instead of restarting it; remove `restart` or set it to "no"',
    "logging": "preflight reads every service's logs; remove `logging` (a driver such as `none` hides them)",
    "network_mode": "every service joins the session's private network; remove `network_mode`",
    "links": "services reach each other by name on the private network; use `networks.<net>.aliases` for extra names",
    "scale": "one container per service; remove `scale`",
}
# `curl -f http://localhost:8080/health`, `wget -qO- http://127.0.0.1/ready || exit 1`: probed from the host.
_HTTP_PROBE = re.compile(r"^https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::(\d{1,5}))?(/\S*)?$")
_OPTION_WITH_VALUE = frozenset(
    {"-o", "-O", "--output", "--output-document", "-m", "--max-time", "-T", "--timeout"}
)


class Context:
    """What translating one service needs to know about the rest of the project."""

    def __init__(
        self,
        *,
        directory: Path,
        environ: Mapping[str, str],
        project: str,
        volumes: Mapping[str, Any],
        networks: Mapping[str, Any],
        keep_host_ports: bool,
    ) -> None:
        self.directory = directory
        self.environ = environ
        self.project = project
        self.volumes = volumes
        self.networks = networks
        self.keep_host_ports = keep_host_ports
        self.env_files: list[str] = []

    def path(self, written: str) -> str:
        candidate = Path(written).expanduser()
        return str(candidate if candidate.is_absolute() else (self.directory / candidate).resolve())


def translate_service(name: str, service: Mapping[str, Any], ctx: Context, report: Report) -> dict[str, Any]:
    """Return the e2e.yaml body of compose service `name` (problems go to `report`)."""
    where = ("services", name)
    for key in service:
        if key not in _SUPPORTED and not key.startswith("x-"):
            _unsupported(report, (*where, key), key)
    if service.get("restart") not in (None, "no"):
        report(
            (*where, "restart"),
            f"restart policy `{service['restart']}` is not supported",
            hint=_HINTS["restart"],
        )
    container: dict[str, Any] = {}
    body: dict[str, Any] = {"build": _build(name, service, ctx, report), "container": container}
    environment = _env_files(service.get("env_file"), ctx, report, (*where, "env_file"))
    environment.update(_mapping(service.get("environment"), ctx.environ))
    if environment:
        container["environment"] = environment
    ports = translate_ports(
        service.get("ports") or [], keep_host=ctx.keep_host_ports, path=(*where, "ports"), report=report
    )
    if service.get("command") is not None:
        container["command"] = service["command"]
    entrypoint = service.get("entrypoint")
    if entrypoint is not None:
        container["entrypoint"] = shlex.split(entrypoint) if isinstance(entrypoint, str) else list(entrypoint)
    for key, target in (("working_dir", "workingDir"), ("user", "user")):
        if service.get(key) is not None:
            container[target] = service[key]
    for key, target in (("init", "init"), ("read_only", "readOnly")):
        if service.get(key) is not None:
            container[target] = _boolean(service[key])
    aliases = [service[key] for key in ("container_name", "hostname") if isinstance(service.get(key), str)]
    aliases += _network_aliases(service.get("networks"), ctx, report, (*where, "networks"))
    if aliases:
        container["aliases"] = list(dict.fromkeys(aliases))
    volumes = [
        _volume(v, ctx, report, (*where, "volumes", i)) for i, v in enumerate(service.get("volumes") or [])
    ]
    if any(volumes):
        container["volumes"] = [v for v in volumes if v]
    health = service.get("healthcheck")
    if isinstance(health, dict):
        ports = _healthcheck(health, container, ports, report, (*where, "healthcheck"))
    if ports:
        container["ports"] = ports
    return body


def depends_on(service: Mapping[str, Any]) -> dict[str, str]:
    """Return the service's dependencies with their conditions (`service_started` for the list form)."""
    value = service.get("depends_on") or []
    if isinstance(value, list):
        return {str(item): "service_started" for item in value}
    return {str(key): str((entry or {}).get("condition", "service_started")) for key, entry in value.items()}


def check_depends_on(service: Mapping[str, Any], where: tuple[str | int, ...], report: Report) -> None:
    """Report the parts of `depends_on` entries that preflight cannot honour."""
    value = service.get("depends_on")
    if not isinstance(value, dict):
        return
    for dependency, entry in value.items():
        for key in entry or {}:
            if key not in ("condition", "required", "restart") and not str(key).startswith("x-"):
                _unsupported(report, (*where, dependency, key), key)
        if isinstance(entry, dict) and entry.get("required") is False:
            report(
                (*where, dependency, "required"),
                "optional dependencies (`required: false`) are not supported",
                hint="remove the dependency, or make it required",
            )


# -- parts -------------------------------------------------------------------------------------


def _unsupported(report: Report, path: tuple[str | int, ...], key: str) -> None:
    hint = _HINTS.get(key, "remove it, or describe the service in e2e.yaml instead (see docs/compose.md)")
    report(path, f"`{key}` is not supported by preflight", key=True, hint=hint)


def _build(name: str, service: Mapping[str, Any], ctx: Context, report: Report) -> dict[str, Any]:
    image = service.get("image")
    build = service.get("build")
    if build is None:
        if not image:
            report(("services", name), "the service has neither `image` nor `build`")
        return {"image": image or name}
    spec: Mapping[str, Any] = {"context": build} if isinstance(build, str) else build
    for key in spec:
        if key not in _BUILD_KEYS and not str(key).startswith("x-"):
            _unsupported(report, ("services", name, "build", key), key)
    context_text = str(spec.get("context") or ".")
    if re.match(r"^[a-z]+://|^git@", context_text):
        report(
            ("services", name, "build", "context"),
            "remote build contexts are not supported",
            hint="clone it and point `context` at the checkout",
        )
    context = Path(ctx.path(context_text))
    dockerfile = str(spec.get("dockerfile") or "Dockerfile")
    result: dict[str, Any] = {
        "image": image or f"{_slug(ctx.project)}-{_slug(name)}",
        "context": str(context),
        "dockerfile": str(Path(dockerfile) if Path(dockerfile).is_absolute() else context / dockerfile),
    }
    args = _mapping(spec.get("args"), ctx.environ)
    if args:
        result["args"] = args
    if spec.get("target"):
        result["target"] = spec["target"]
    return result


def _mapping(value: Any, environ: Mapping[str, str]) -> dict[str, Any]:
    """`{K: V}` or `["K=V", "K"]`; a key without a value takes the environment's, or is left out."""
    pairs: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        pairs = list(value.items())
    elif isinstance(value, list):
        for item in value:
            key, sep, text = str(item).partition("=")
            pairs.append((key, text if sep else None))
    result: dict[str, Any] = {}
    for key, item in pairs:
        if item is None:
            if key in environ:
                result[key] = environ[key]
        else:
            result[key] = item
    return result


def _env_files(value: Any, ctx: Context, report: Report, path: tuple[str | int, ...]) -> dict[str, Any]:
    entries = [value] if isinstance(value, str) else list(value or [])
    result: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        spec = {"path": entry} if isinstance(entry, str) else dict(entry)
        where = path if isinstance(value, str) else (*path, index)
        if spec.get("format") not in (None, ""):
            _unsupported(report, (*where, "format"), "format")
        file = Path(ctx.path(str(spec["path"])))
        ctx.env_files.append(str(file))
        if not file.is_file():
            if _boolean(spec.get("required", True)):
                report(
                    where, f"env_file {file} does not exist", hint="create it, or mark it `required: false`"
                )
            continue
        result.update(read_dotenv(file))
    return result


def _network_aliases(value: Any, ctx: Context, report: Report, path: tuple[str | int, ...]) -> list[str]:
    names = list(value) if isinstance(value, list) else list((value or {}).keys())
    aliases: list[str] = []
    for name in names:
        if name not in ctx.networks and name != "default":
            report((*path, name), f"network `{name}` is not declared under the top-level `networks`")
        entry = value.get(name) if isinstance(value, dict) else None
        for key in entry or {}:
            if key != "aliases":
                _unsupported(report, (*path, name, key), key)
        aliases += [str(alias) for alias in (entry or {}).get("aliases") or []]
    return aliases


def _volume(value: Any, ctx: Context, report: Report, path: tuple[str | int, ...]) -> str | None:
    if isinstance(value, str):
        source, sep, rest = value.partition(":")
        if not sep:
            return value  # an anonymous volume: only a container path
        target, _, mode = rest.partition(":")
        modes = [m for m in mode.split(",") if m in ("ro", "rw", "z", "Z")]
        kind = "bind" if source.startswith((".", "/", "~")) else "volume"
        return _mount(kind, source, target, modes, ctx, report, path)
    spec = dict(value)
    for key in spec:
        if key not in ("type", "source", "target", "read_only", "consistency", "bind") and not key.startswith(
            "x-"
        ):
            _unsupported(report, (*path, key), key)
    kind = str(spec.get("type"))
    if kind not in ("bind", "volume"):
        report((*path, "type"), f"`{kind}` mounts are not supported (only `bind` and `volume`)")
        return None
    for key in spec.get("bind") or {}:
        if key != "create_host_path":
            _unsupported(report, (*path, "bind", key), key)
    modes = ["ro"] if _boolean(spec.get("read_only", False)) else []
    if not spec.get("source"):
        return str(spec.get("target", ""))
    return _mount(kind, str(spec["source"]), str(spec.get("target", "")), modes, ctx, report, path)


def _mount(
    kind: str,
    source: str,
    target: str,
    modes: list[str],
    ctx: Context,
    report: Report,
    path: tuple[str | int, ...],
) -> str | None:
    suffix = f":{','.join(modes)}" if modes else ""
    if kind == "bind":
        return f"{ctx.path(source)}:{target}{suffix}"
    if source not in ctx.volumes:
        report(path, f"volume `{source}` is not declared under the top-level `volumes`")
        return None
    declared = ctx.volumes[source] or {}
    for key in declared:
        if key not in ("name", "external") and not str(key).startswith("x-"):
            _unsupported(report, ("volumes", source, key), key)
    if declared.get("name"):
        real = str(declared["name"])
    elif _boolean(declared.get("external", False)):
        real = source
    else:
        # As docker compose names them: one volume per project, kept across sessions.
        real = f"{_slug(ctx.project)}_{source}"
    return f"{real}:{target}{suffix}"


def _healthcheck(
    health: Mapping[str, Any],
    container: dict[str, Any],
    ports: list[str],
    report: Report,
    path: tuple[str | int, ...],
) -> list[str]:
    for key in health:
        if key not in _HEALTH_KEYS and not str(key).startswith("x-"):
            _unsupported(report, (*path, key), key)
    test = health.get("test")
    argv = ["CMD-SHELL", test] if isinstance(test, str) else list(test or [])
    if _boolean(health.get("disable", False)) or argv[:1] == ["NONE"] or not argv:
        return ports
    timing: dict[str, Any] = {}
    for key, target in (("interval", "interval"), ("timeout", "timeout"), ("start_period", "startPeriod")):
        if health.get(key) is not None:
            try:
                parse_duration(str(health[key]))
            except InputError:
                report((*path, key), f"`{health[key]}` is not a duration (e.g. `5s`, `1m30s`)")
                continue
            timing[target] = str(health[key])
    if health.get("retries") is not None:
        timing["retries"] = int(health["retries"])
    command = shlex.join(argv[1:]) if argv[0] == "CMD" else " ".join(argv[1:])
    probe = _http_probe(command)
    if probe is not None:
        port, probe_path = probe
        container["healthcheck"] = {"path": probe_path, "port": port, **timing}
        if not any(_container_port(spec) == port for spec in ports):
            ports = [*ports, f"0:{port}"]  # the host probe needs a published port
        return ports
    if argv[0] not in ("CMD", "CMD-SHELL"):
        report((*path, "test"), f"a health test starts with CMD, CMD-SHELL or NONE, not `{argv[0]}`")
        return ports
    # Docker's own probe, at a test-friendly interval unless the file says otherwise.
    container["dockerHealthcheck"] = {"test": argv, "interval": "1s", **timing}
    return ports


def _http_probe(command: str) -> tuple[int, str] | None:
    """Return (port, path) when the test only GETs a local URL with curl or wget."""
    text = re.sub(r"\s*\|\|\s*(exit\s+1|false)\s*$", "", command.strip())
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words or Path(words[0]).name not in ("curl", "wget"):
        return None
    url = None
    skip = False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in _OPTION_WITH_VALUE:
            skip = True
        elif word.startswith("-"):
            continue
        elif url is None:
            url = word
        else:
            return None
    match = _HTTP_PROBE.match(url or "")
    if match is None:
        return None
    return int(match.group(1) or 80), match.group(2) or "/"


def _container_port(spec: str) -> int | None:
    tail = spec.rsplit(":", 1)[-1].split("/", 1)[0]
    return int(tail) if tail.isdigit() else None


def _boolean(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "project"
