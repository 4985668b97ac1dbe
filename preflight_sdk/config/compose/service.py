"""One compose service → one e2e.yaml service body (plain data, camelCase keys, absolute paths).

Every key has a decision (`decisions.DECISIONS`): honoured keys are translated here, keys set
aside are warned about once per file, refused keys are problems with a hint. None is dropped in
silence.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from preflight_sdk.config.dotenv import read_dotenv

from .context import Context
from .decisions import DECISIONS
from .health import translate_healthcheck
from .mounts import file_mounts, translate_volume
from .options import run_options
from .published_ports import translate_ports

__all__ = ["check_depends_on", "decide_keys", "depends_on", "translate_service"]

_SERVICE = DECISIONS["service"]
_BUILD = DECISIONS["build"]
_NETWORK_ENTRY_ASIDE = "addresses and priorities on the session's network are Docker's"


def translate_service(name: str, service: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """Return the e2e.yaml body of compose service `name` (problems and warnings go to `ctx`)."""
    where = ("services", name)
    decide_keys(service, where, ctx)
    ctx.tmpfs = []
    container: dict[str, Any] = {}
    body: dict[str, Any] = {"build": _build(name, service, ctx), "container": container}
    environment: dict[str, Any] = _env_files(service.get("env_file"), ctx, (*where, "env_file"))
    environment.update(ctx.read.mapping(service.get("environment"), ctx.environ))
    if environment:
        container["environment"] = environment
    ports = translate_ports(
        service.get("ports") or [],
        keep_host=ctx.keep_host_ports,
        path=(*where, "ports"),
        report=ctx.report,
        warn=ctx.warn,
    )
    if service.get("command") is not None:
        container["command"] = service["command"]
    entrypoint = service.get("entrypoint")
    if entrypoint is not None:
        container["entrypoint"] = shlex.split(entrypoint) if isinstance(entrypoint, str) else list(entrypoint)
    for key, target in (("working_dir", "workingDir"), ("user", "user")):
        if service.get(key) is not None:
            container[target] = str(service[key])
    for key, target in (("init", "init"), ("read_only", "readOnly")):
        if service.get(key) is not None:
            container[target] = bool(ctx.read.boolean(service[key], (*where, key)))
    aliases = [service[key] for key in ("container_name", "hostname") if isinstance(service.get(key), str)]
    aliases += _network_aliases(service.get("networks"), ctx, (*where, "networks"))
    if aliases:
        container["aliases"] = list(dict.fromkeys(aliases))
    volumes = [
        translate_volume(v, ctx, (*where, "volumes", i)) for i, v in enumerate(service.get("volumes") or [])
    ]
    volumes += file_mounts("secrets", service.get("secrets"), ctx, (*where, "secrets"))
    volumes += file_mounts("configs", service.get("configs"), ctx, (*where, "configs"))
    if any(volumes):
        container["volumes"] = [v for v in volumes if v]
    health = service.get("healthcheck")
    if isinstance(health, dict):
        ports = translate_healthcheck(health, container, ports, ctx.read, (*where, "healthcheck"), ctx.warn)
    options = run_options(service, ctx, where)
    network_of = _network_mode(service.get("network_mode"), ctx, (*where, "network_mode"))
    if network_of is not None:
        options["networkOf"] = network_of
        if ports:
            ctx.report(
                (*where, "ports"),
                "a service in another service's network cannot publish ports",
                hint=f"publish them on `{network_of}`",
            )
            ports = []
    if ports:
        container["ports"] = ports
    if options:
        container["options"] = options
    return body


def depends_on(service: Mapping[str, Any]) -> dict[str, tuple[str, bool]]:
    """The service's dependencies: (condition, required); the list form is `service_started`, required."""
    value = service.get("depends_on") or []
    if isinstance(value, list):
        return {str(item): ("service_started", True) for item in value}
    result: dict[str, tuple[str, bool]] = {}
    for key, entry in value.items():
        entry = entry if isinstance(entry, dict) else {}
        required = entry.get("required", True)
        result[str(key)] = (
            str(entry.get("condition", "service_started")),
            required if isinstance(required, bool) else str(required).lower() != "false",
        )
    return result


def check_depends_on(service: Mapping[str, Any], where: tuple[str | int, ...], ctx: Context) -> None:
    """Read the `restart` and `required` flags of `depends_on` entries (typed after interpolation)."""
    value = service.get("depends_on")
    if not isinstance(value, dict):
        return
    for dependency, entry in value.items():
        for key in ("required", "restart"):
            if isinstance(entry, dict) and key in entry:
                ctx.read.boolean(entry[key], (*where, dependency, key))


# -- parts -------------------------------------------------------------------------------------


def decide_keys(service: Mapping[str, Any], where: tuple[str | int, ...], ctx: Context) -> None:
    """Warn about keys set aside and report refused ones (value-dependent cases included)."""
    for key, value in service.items():
        verdict, note = _SERVICE.get(str(key), ("honoured", ""))
        if verdict == "refused":
            ctx.report((*where, key), f"`{key}` is not supported by preflight", key=True, hint=note)
        elif verdict == "aside" and not _harmless(str(key), value, ctx, (*where, key)):
            ctx.warn((*where, key), str(key), note)


def _harmless(key: str, value: Any, ctx: Context, path: tuple[str | int, ...]) -> bool:
    """Whether a key set aside asks for nothing preflight does not do anyway (`restart: "no"`, `scale: 1`)."""
    if key == "restart":
        return str(value) == "no"
    if key == "scale":
        return ctx.read.integer(value, path) in (0, 1)
    return False


def _network_mode(value: Any, ctx: Context, path: tuple[str | int, ...]) -> str | None:
    if value is None or value in ("bridge", "default"):
        return None
    text = str(value)
    if text.startswith("service:"):
        return text.removeprefix("service:")
    hint = {
        "host": "services reach each other by name on the session's network; publish ports with `ports`",
        "none": "remove `network_mode`, or make the service a `kind: job` that needs no network",
    }.get(text, "join the session's network: remove `network_mode`, or use `service:NAME`")
    ctx.report(path, f"`network_mode: {text}` is not supported", hint=hint)
    return None


def _build(name: str, service: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    image = service.get("image")
    build = service.get("build")
    policy = str(service.get("pull_policy") or "missing")
    if policy not in ("missing", "if_not_present", "never", "build"):
        ctx.warn(
            ("services", name, "pull_policy"),
            f"pull_policy: {policy}",
            "images are pulled when missing, not refreshed",
        )
    if build is None:
        if not image:
            ctx.report(("services", name), "the service has neither `image` nor `build`")
        elif policy == "build":
            ctx.report(("services", name, "pull_policy"), "`pull_policy: build` needs a `build` section")
        return {"image": image or name, "pull": "never" if policy == "never" else "missing"}
    spec: Mapping[str, Any] = {"context": build} if isinstance(build, str) else build
    for key in spec:
        verdict, note = _BUILD.get(str(key), ("honoured", ""))
        if verdict == "refused":
            ctx.report(
                ("services", name, "build", key), f"build `{key}` is not supported", key=True, hint=note
            )
        elif verdict == "aside":
            ctx.warn(("services", name, "build", key), f"build.{key}", note)
    context_text = str(spec.get("context") or ".")
    if re.match(r"^[a-z]+://|^git@", context_text):
        ctx.report(
            ("services", name, "build", "context"),
            "remote build contexts are not supported",
            hint="clone it and point `context` at the checkout",
        )
    context = ctx.path(context_text)
    dockerfile = str(spec.get("dockerfile") or "Dockerfile")
    result: dict[str, Any] = {
        "image": image or f"{ctx.slug(ctx.project)}-{ctx.slug(name)}",
        "context": context,
        "dockerfile": dockerfile if dockerfile.startswith("/") else f"{context}/{dockerfile}",
    }
    args = ctx.read.mapping(spec.get("args"), ctx.environ)
    if args:
        result["args"] = args
    if spec.get("target"):
        result["target"] = str(spec["target"])
    return result


def _env_files(value: Any, ctx: Context, path: tuple[str | int, ...]) -> dict[str, Any]:
    entries = [value] if isinstance(value, str) else list(value or [])
    result: dict[str, Any] = {}
    for index, entry in enumerate(entries):
        spec = {"path": entry} if isinstance(entry, str) else dict(entry)
        where = path if isinstance(value, str) else (*path, index)
        file = ctx.path(str(spec.get("path", "")))
        ctx.sources.append(file)
        try:
            with open(file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            if ctx.read.boolean(spec.get("required", True), (*where, "required")):
                ctx.report(
                    where, f"env_file {file} does not exist", hint="create it, or mark it `required: false`"
                )
            continue
        if spec.get("format") == "raw":
            # Each line `KEY=VALUE` as written: no quotes removed, nothing interpolated.
            for line in text.splitlines():
                key, sep, raw = line.partition("=")
                if sep and key.strip() and not key.lstrip().startswith("#"):
                    result[key.strip()] = raw
        else:
            result.update(read_dotenv(Path(file)))
    return result


def _network_aliases(value: Any, ctx: Context, path: tuple[str | int, ...]) -> list[str]:
    names = list(value) if isinstance(value, list) else list((value or {}).keys())
    aliases: list[str] = []
    for name in names:
        if name not in ctx.networks and name != "default":
            ctx.report((*path, name), f"network `{name}` is not declared under the top-level `networks`")
        entry = value.get(name) if isinstance(value, dict) else None
        for key in entry or {}:
            if key != "aliases" and not str(key).startswith("x-"):
                ctx.warn((*path, name, key), f"networks.*.{key}", _NETWORK_ENTRY_ASIDE)
        aliases += [str(alias) for alias in (entry or {}).get("aliases") or []]
    return aliases
