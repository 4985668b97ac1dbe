"""Rules of YAML test files that types alone cannot express (checked after the type walk)."""

from __future__ import annotations

import re
from typing import Any

from .browser import check_browser_step
from .validate import Validator

__all__ = ["ACTIONS", "check_case", "check_steps"]

ACTIONS = ("request", "exec", "file", "process", "port", "browser")
_SETUP_ONLY = ("waitHealthy", "waitForPort")
_POLICY = ("maxAttempts", "delay", "backoff", "backoffMultiplier")
_POLL = ("until", "failIf", "interval", "deadline")


def check_steps(data: dict[str, Any], out: Validator) -> None:
    """Add a problem to `out` for each step that breaks a rule of the test grammar.

    It runs alongside the type check (so a file with a typo in one case and a step without an
    action in another reports both), and skips whatever is not shaped as a step at all: the type
    check has already reported that.
    """
    names: dict[str, int] = {}
    for section in ("setup", "cases", "teardown"):
        steps = data.get(section)
        if not isinstance(steps, list):
            continue
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            path = (section, index)
            _check_step(step, path, section, out)
            if section == "cases" and isinstance(step.get("name"), str):
                name = step["name"]
                if name in names:
                    out.add((*path, "name"), f"case name `{name}` is already used by case #{names[name] + 1}")
                else:
                    names[name] = index


def check_case(step: dict[str, Any], path: tuple[str | int, ...], out: Validator) -> None:
    """Add a problem to `out` for each rule of a case that `step` (a case on its own, at `path`) breaks."""
    _check_step(step, path, "cases", out)


def _check_step(step: dict[str, Any], path: tuple[str | int, ...], section: str, out: Validator) -> None:
    actions = [a for a in ACTIONS if step.get(a) is not None]
    specials = [s for s in _SETUP_ONLY if step.get(s) not in (None, False)]
    if section == "cases" and not step.get("name"):
        out.add(path, "a case needs a `name`")
    if specials and section != "setup":
        out.add((*path, specials[0]), f"`{specials[0]}` may only be used in `setup`")
    if len(actions) + len(specials) > 1:
        out.add(
            path, "a step does exactly one thing; found " + ", ".join(f"`{a}`" for a in actions + specials)
        )
    if not actions and not specials:
        if section == "setup" and step.get("delay") is not None:
            return  # a bare `delay: 2s` setup step
        out.add(path, "a step needs one of " + ", ".join(f"`{a}`" for a in ACTIONS))
    check_browser_step(step, path, out)
    request = step.get("request")
    if isinstance(request, dict):
        if request.get("path") is None and request.get("url") is None:
            out.add((*path, "request"), "a request needs a `path` (on a service) or a `url`")
        bodies = [k for k in ("json", "body", "form") if request.get(k) is not None]
        if len(bodies) > 1:
            out.add((*path, "request"), "give one of `json`, `body`, `form`; found " + ", ".join(bodies))
        _check_request(request, (*path, "request"), out)
    retry = step.get("retry")
    if isinstance(retry, dict):
        policy = [k for k in _POLICY if retry.get(k) is not None]
        poll = [k for k in _POLL if retry.get(k) is not None]
        if policy and poll and not (policy == ["delay"]):
            out.add(
                (*path, "retry"),
                "use either a retry policy (maxAttempts, backoff) or a poll (until, failIf, deadline)",
            )
        if poll and retry.get("until") is None and retry.get("failIf") is None:
            out.add((*path, "retry"), "a poll needs `until` (and optionally `failIf`)")
        if not poll and retry.get("maxAttempts") is None:
            out.add((*path, "retry"), "a retry policy needs `maxAttempts`")


def _check_request(request: dict[str, Any], path: tuple[str | int, ...], out: Validator) -> None:
    """A method that is an HTTP token, and a `url`/`path` that parse (templates stand for a value)."""
    method = request.get("method")
    if isinstance(method, str) and not _TEMPLATE.search(method) and not _METHOD.fullmatch(method):
        out.add(
            (*path, "method"),
            f"`method` must be an HTTP method (a token such as GET or POST), not {method[:40]!r}",
        )
    for key in ("url", "path"):
        value = request.get(key)
        if isinstance(value, str):
            reason = _unparsable(value, absolute=key == "url")
            if reason is not None:
                out.add((*path, key), f"`{key}` {value[:80]!r} cannot be parsed: {reason}")
    headers = request.get("headers")
    if isinstance(headers, dict):
        for name, value in headers.items():
            if any(c in f"{name}{value}" for c in "\r\n\0"):
                out.add((*path, "headers", str(name)), "a header name or value may not hold a line break")


# An HTTP method is an RFC 9110 token; a template stands for a value known only when the test runs.
_METHOD = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]{1,32}")
_TEMPLATE = re.compile(r"\{\{.*?\}\}")


def _unparsable(value: str, *, absolute: bool) -> str | None:
    import httpx

    concrete = _TEMPLATE.sub("1", value)
    try:
        url = httpx.URL(concrete)
    except httpx.InvalidURL as exc:
        return str(exc)
    if absolute and "://" in concrete:
        if url.scheme not in ("http", "https"):
            return f"the scheme is {url.scheme!r}, not http or https"
        if not url.host:
            return "it names no host"
    return None
