"""The lines of a Dockerfile that only BuildKit builds, for a build that Docker's legacy builder ran.

Without the buildx plugin the docker client builds with the legacy builder, which stops at
BuildKit's syntax with its own words: `dockerfile parse error line 18: unknown instruction: APK`
for a heredoc (the line after `RUN <<EOF`), `the --mount option requires BuildKit`, `failed to
parse platform : ""` for `FROM --platform=$BUILDPLATFORM` (an argument only BuildKit sets). It
ignores a `# syntax=` directive, so the frontend it asks for is not there either. `scan` finds
these lines; `culprit` picks the one the daemon's message is about, so the error names the line
to change and how.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.core.errors import InfrastructureError
from preflight_sdk.core.results.lifecycle import DockerfileLine

from .base import BuildSpec

__all__ = ["BUILDX_HINT", "culprit", "legacy_build_error", "scan"]

BUILDX_HINT = (
    "install the buildx plugin for the docker client (Docker's `docker-buildx-plugin` package, "
    "Debian's `docker-buildx`, or a release binary from github.com/docker/buildx in "
    "~/.docker/cli-plugins/), so BuildKit builds it"
)
_DIRECTIVE = re.compile(r"^#\s*syntax\s*=\s*(\S+)", re.I)
_INSTRUCTION = re.compile(r"^\s*(\w+)\b(.*)$")
# `RUN <<EOF`, `RUN <<-EOT`, `COPY <<"EOF" /file`: a whole word (BuildKit's own pattern), outside
# quotes; the name after `<<` closes the document.
_HEREDOC = re.compile(r"(?:^|(?<=\s))<<-?([\"']?)([A-Za-z_][A-Za-z0-9_]*)\1(?=\s|$)")
_QUOTED = re.compile(r"(?<!<)(?<!<-)('[^']*'|\"[^\"]*\")")
_FLAG = re.compile(r"--(mount|network|security|chmod|link|parents|exclude|checksum|keep-git-dir)\b[=\S]*")
_BUILDKIT_ARGS = re.compile(
    r"\$\{?(BUILDPLATFORM|TARGETPLATFORM|BUILDOS|BUILDARCH|TARGETOS|TARGETARCH|TARGETVARIANT)\b"
)
_FLAGS = {  # the BuildKit-only flags per instruction, and what to write instead
    "RUN": {
        "mount": "drop the --mount option (the step runs without its cache, secret or bind mount)",
        "network": "drop the --network option",
        "security": "drop the --security option",
    },
    "COPY": {
        "chmod": "COPY without --chmod, then `RUN chmod …` the copied files",
        "link": "drop --link",
        "parents": "copy each folder with a COPY of its own",
        "exclude": "list what to leave out in .dockerignore instead",
    },
    "ADD": {
        "chmod": "ADD without --chmod, then `RUN chmod …`",
        "link": "drop --link",
        "checksum": "drop --checksum",
        "keep-git-dir": "drop --keep-git-dir",
    },
}
_LINE = re.compile(r"(?:parse error|error parsing)[^\n]*?line (\d+)", re.I)
_OPTION = re.compile(r"the --(\w[\w-]*) option requires BuildKit", re.I)


def _logical_lines(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each instruction, its `\\` continuations joined."""
    out: list[tuple[int, int, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        start, joined = index, lines[index]
        while joined.rstrip().endswith("\\") and index + 1 < len(lines):
            index += 1
            joined = joined.rstrip()[:-1] + " " + lines[index].strip()
        out.append((start + 1, index + 1, joined))
        index += 1
    return out


def scan(text: str) -> list[DockerfileLine]:
    """The BuildKit-only lines of a Dockerfile's `text`, in the order they come."""
    found: list[DockerfileLine] = []
    seen_instruction = False
    lines = _logical_lines(text)
    skip_until = 0
    for first, last, line in lines:
        if first <= skip_until:
            continue
        stripped = line.strip()
        if not seen_instruction and (directive := _DIRECTIVE.match(stripped)):
            found.append(
                DockerfileLine(
                    line=first,
                    text=stripped,
                    needs=f"the BuildKit frontend {directive.group(1)}, which the legacy builder ignores",
                    instead="nothing to change for the directive itself; the lines below it must build without it",
                )
            )
            continue
        match = _INSTRUCTION.match(stripped)
        if not match or stripped.startswith("#"):
            continue
        seen_instruction = True
        keyword, rest = match.group(1).upper(), match.group(2)
        heredoc = _HEREDOC.search(_QUOTED.sub(" ", rest)) if keyword in ("RUN", "COPY", "ADD") else None
        if heredoc is not None:
            end = next((n for n, _, body in lines if n > last and body.strip() == heredoc.group(2)), last)
            skip_until = end
            found.append(
                DockerfileLine(
                    line=first,
                    last_line=end,
                    text=f"{match.group(1)} {rest.strip()}"[:120],
                    needs="a heredoc",
                    instead="write the commands on the RUN line itself, joined by `&&` (or a script file COPYed in)",
                )
            )
            continue
        for flag in _FLAG.finditer(rest):
            advice = _FLAGS.get(keyword, {}).get(flag.group(1))
            if advice is not None and not any(
                f.line == first and f.needs.endswith(f"--{flag.group(1)}") for f in found
            ):
                found.append(
                    DockerfileLine(
                        line=first,
                        last_line=last if last != first else None,
                        text=f"{match.group(1)} {flag.group(0)}",
                        needs=f"{keyword} --{flag.group(1)}",
                        instead=advice,
                    )
                )
        if keyword == "FROM" and (argument := _BUILDKIT_ARGS.search(rest)):
            option = next((p for p in rest.split() if argument.group(0) in p), argument.group(0))
            found.append(
                DockerfileLine(
                    line=first,
                    text=f"{match.group(1)} {option}",
                    needs=f"${argument.group(1)}, which only BuildKit sets",
                    instead=f"drop `{option}`, or give it a value with `ARG {argument.group(1)}=linux/amd64` above FROM",
                )
            )
    return found


def culprit(found: Sequence[DockerfileLine], message: str) -> list[DockerfileLine]:
    """`found` with the line the daemon's `message` is about first (a line number it names, the
    option it names, a platform it could not parse), else as it is."""

    def first(pick: object) -> list[DockerfileLine]:
        chosen = [line for line in found if line is pick]
        return [*chosen, *(line for line in found if line is not pick)]

    if (number := _LINE.search(message)) is not None:
        at = int(number.group(1))
        for line in found:
            if line.line <= at <= (line.last_line or line.line):
                return first(line)
    if (option := _OPTION.search(message)) is not None:
        for line in found:
            if line.needs.endswith(f"--{option.group(1)}"):
                return first(line)
    if "failed to parse platform" in message:
        for line in found:
            if line.needs.startswith("$"):
                return first(line)
    directives = [line for line in found if line.needs.startswith("the BuildKit frontend")]
    return [*(line for line in found if line not in directives), *directives]


async def legacy_build_error(
    spec: BuildSpec, said: str, exit_code: int, tail: Sequence[str]
) -> InfrastructureError | None:
    """BUILD_FAILED naming the BuildKit-only line of `spec`'s Dockerfile that the legacy builder
    stopped at (`said`: its last complaint), or None when the Dockerfile has none."""
    try:
        text = await anyio.Path(spec.dockerfile).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = culprit(scan(text), said)
    if not found:
        return None
    head = found[0]
    name = Path(spec.dockerfile).name
    said = said.strip().removeprefix("Error response from daemon: ")
    return InfrastructureError(
        f"docker build of {spec.image} failed: line {head.line} of {name} (`{head.text}`) needs BuildKit "
        f"({head.needs}); the legacy builder was used because this docker client has no buildx plugin "
        f"(it said: {said})",
        code="BUILD_FAILED",
        hint=f"{BUILDX_HINT}; or change line {head.line} of {name}: {head.instead}",
        details={
            "image": spec.image,
            "dockerfile": spec.dockerfile,
            "exitCode": exit_code,
            "builder": "legacy",
            "buildkitOnly": [msgspec.to_builtins(line) for line in found],
            "logTail": list(tail),
        },
    )
