"""The non-HTTP steps: `exec`, `file`, `process`, `port`, and the setup waits.

Container checks need nothing but `sh` and `/proc` in the image (no procps, no ss, no stat
quirks beyond busybox's): processes are read from /proc, listening ports from /proc/net/tcp
(whose ports are hexadecimal; the original compared them as decimal and never matched).
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from preflight_sdk.config.testfile import ExecStep, FileStep, PortStep, ProcessStep, WaitForPort, WaitHealthy
from preflight_sdk.core.assertions import AssertionResult, check, compare_count, result_at
from preflight_sdk.core.durations import parse_duration
from preflight_sdk.core.errors import PreflightError
from preflight_sdk.lifecycle.health.probe import NetworkProber

from ..environment import RunEnvironment
from ..outcome import StepOutcome

__all__ = ["count_check", "run_exec", "run_file", "run_port", "run_process", "wait_for_port", "wait_healthy"]

_PROCESS_LIST = (
    'for d in /proc/[0-9]*; do [ -r "$d/cmdline" ] || continue; '
    'u=$(stat -c %U "$d" 2>/dev/null || echo "?"); '
    "c=$(tr '\\000' ' ' < \"$d/cmdline\" 2>/dev/null); "
    '[ -n "$c" ] && printf "%s %s\\n" "$u" "$c"; done'
)


def _argv(command: str | list[str]) -> list[str]:
    return ["sh", "-c", command] if isinstance(command, str) else [str(part) for part in command]


async def run_exec(env: RunEnvironment, step: ExecStep) -> StepOutcome:
    """Run a command in a container."""
    started = time.perf_counter()
    try:
        result = await env.exec(step.container, _argv(step.command), timeout=parse_duration(step.timeout))
    except PreflightError as exc:
        return StepOutcome(kind="exec", error=exc.message, error_kind="engine", duration=_ms(started))
    outcome = StepOutcome(
        kind="exec",
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        duration=_ms(started),
    )
    if result.timed_out:
        outcome.error = f"`{step.command}` did not finish within {step.timeout}"
        outcome.error_kind = "timeout"
    return outcome


async def run_file(env: RunEnvironment, step: FileStep) -> StepOutcome:
    """Check a file in a container."""
    started = time.perf_counter()
    script = 'if [ -e "$1" ]; then echo EXISTS; stat -c "%A %U %s" "$1"; else echo MISSING; fi'
    try:
        probe = await env.exec(step.container, ["sh", "-c", script, "sh", step.path], timeout=15)
        content = None
        wants_content = any(
            v is not None for v in (step.contains, step.not_contains, step.matches, step.json)
        )
        if wants_content and probe.stdout.startswith("EXISTS"):
            content = (await env.exec(step.container, ["cat", step.path], timeout=15)).stdout
    except PreflightError as exc:
        return StepOutcome(kind="file", error=exc.message, error_kind="engine", duration=_ms(started))
    lines = probe.stdout.splitlines()
    exists = bool(lines) and lines[0] == "EXISTS"
    checks: list[AssertionResult] = []
    base = f"file:{step.path}"
    if step.exists is not None:
        checks += check(exists, step.exists, f"{base}.exists")
    elif not exists:
        checks += check(False, True, f"{base}.exists")
    if exists and len(lines) > 1:
        mode, _, rest = lines[1].partition(" ")
        owner, _, size = rest.partition(" ")
        if step.permissions is not None:
            checks += check(mode, step.permissions, f"{base}.permissions")
        if step.owner is not None:
            checks += check(owner, step.owner, f"{base}.owner")
        if step.size is not None:
            checks.append(count_check(f"{base}.size", step.size, int(size or 0)))
    if content is not None:
        checks += _text_checks(base, content, step.contains, step.not_contains, step.matches, step.json)
    return StepOutcome(kind="file", checks=checks, stdout=content or "", duration=_ms(started))


async def run_process(env: RunEnvironment, step: ProcessStep) -> StepOutcome:
    """Check the processes running in a container."""
    started = time.perf_counter()
    try:
        listing = await env.exec(step.container, ["sh", "-c", _PROCESS_LIST], timeout=15)
    except PreflightError as exc:
        return StepOutcome(kind="process", error=exc.message, error_kind="engine", duration=_ms(started))
    matches = []
    for line in listing.stdout.splitlines():
        user, _, command = line.partition(" ")
        if step.name in command and _PROCESS_LIST[:20] not in command:
            if step.user is None or user == step.user:
                matches.append(line)
    base = f"process:{step.name}"
    checks = check(bool(matches), step.running, f"{base}.running")
    if step.count is not None:
        checks.append(count_check(f"{base}.count", step.count, len(matches)))
    return StepOutcome(kind="process", checks=checks, stdout="\n".join(matches), duration=_ms(started))


async def run_port(env: RunEnvironment, step: PortStep) -> StepOutcome:
    """Check that a port listens, inside a container or from the host."""
    started = time.perf_counter()
    base = f"port:{step.port}"
    if step.container is not None:
        try:
            tables = await env.exec(
                step.container, ["sh", "-c", "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"], timeout=15
            )
        except PreflightError as exc:
            return StepOutcome(kind="port", error=exc.message, error_kind="engine", duration=_ms(started))
        listening = step.port in _listening_ports(tables.stdout)
    else:
        listening = await _connects(step.host, step.port, parse_duration(step.timeout))
    return StepOutcome(
        kind="port", checks=check(listening, step.listening, f"{base}.listening"), duration=_ms(started)
    )


async def wait_healthy(env: RunEnvironment, step: WaitHealthy) -> StepOutcome:
    """Wait until each service's configured health probe passes (`waitHealthy`)."""
    started = time.perf_counter()
    deadline = parse_duration(step.timeout)
    prober = NetworkProber()
    names = [step.service] if step.service else list(env.services)
    for name in names:
        endpoint = env.services.get(name)
        configured = env.loaded.service(name)
        if endpoint is None or configured is None or not endpoint.ports:
            continue
        health = configured.container.healthcheck
        first = min(endpoint.ports)
        ok, detail = False, "not probed"
        with anyio.move_on_after(max(0.0, deadline - (time.perf_counter() - started))):
            while True:
                if health is not None and health.path is not None:
                    port = endpoint.ports.get(health.port or first, endpoint.ports[first])
                    result = await prober.http(endpoint.host, port, health.path, 2.0)
                else:
                    port = endpoint.ports.get(
                        health.tcp if health and health.tcp else first, endpoint.ports[first]
                    )
                    result = await prober.tcp(endpoint.host, port, 2.0, proxied=True)
                ok, detail = result.ok, result.detail
                if ok:
                    break
                await anyio.sleep(0.05)
        if not ok:
            return StepOutcome(
                kind="wait",
                error=f"service `{name}` not healthy within {step.timeout}: {detail}",
                error_kind="timeout",
                duration=_ms(started),
            )
    return StepOutcome(kind="wait", duration=_ms(started))


async def wait_for_port(step: WaitForPort) -> StepOutcome:
    """Wait until a TCP port accepts connections (`waitForPort`)."""
    started = time.perf_counter()
    deadline = parse_duration(step.timeout)
    with anyio.move_on_after(deadline):
        while True:
            if await _connects(step.host, step.port, 1.0):
                return StepOutcome(kind="wait", duration=_ms(started))
            await anyio.sleep(0.05)
    return StepOutcome(
        kind="wait",
        error=f"{step.host}:{step.port} did not accept connections within {step.timeout}",
        error_kind="timeout",
        duration=_ms(started),
    )


def _text_checks(
    base: str, text: str, contains: Any, not_contains: Any, matches: str | None, expected_json: Any
) -> list[AssertionResult]:
    checks: list[AssertionResult] = []
    for item in _as_list(contains):
        checks += check(text, {"contains": item}, f"{base}.content")
    for item in _as_list(not_contains):
        checks += check(text, {"notContains": item}, f"{base}.content")
    if matches is not None:
        checks += check(text, {"matches": matches}, f"{base}.content")
    if expected_json is not None:
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            checks.append(
                result_at(f"{base}.json", "json", expected_json, text[:200], False, f"not JSON ({exc})")
            )
        else:
            checks += check(parsed, expected_json, f"{base}.json")
    return checks


def output_checks(stdout: str, expected: Any) -> list[AssertionResult]:
    """Check `expect.output` (contains, notContains, matches, json, length in lines)."""
    checks = _text_checks(
        "output", stdout, expected.contains, expected.not_contains, expected.matches, expected.json
    )
    if expected.length is not None:
        checks.append(count_check("output.length", expected.length, len(stdout.splitlines())))
    return checks


def count_check(path: str, spec: str | int, value: int) -> AssertionResult:
    """The check of a size against an "op N" spec (`2`, `'>= 1'`); a bad spec fails with why."""
    try:
        ok = compare_count(spec, value)
        message = f"{value} {'satisfies' if ok else 'does not satisfy'} `{spec}`"
    except ValueError as exc:
        ok, message = False, str(exc)
    return result_at(path, "count", spec, value, ok, message)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _listening_ports(tables: str) -> set[int]:
    ports: set[int] = set()
    for line in tables.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A" and ":" in fields[1]:  # 0A = TCP_LISTEN
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


async def _connects(host: str, port: int, timeout: float) -> bool:
    try:
        with anyio.fail_after(timeout):
            stream = await anyio.connect_tcp(host, port)
            await stream.aclose()
    except (OSError, TimeoutError):
        return False
    return True


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
