"""The files of a build context that `docker build` sends: `.dockerignore` honoured as Docker reads it.

Patterns are Go `filepath.Match` patterns plus `**` (any number of directories); a pattern also
excludes everything under a directory it matches; `!pattern` re-includes; the last matching
pattern wins. The Dockerfile and `.dockerignore` are always part of the build.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

__all__ = ["context_files"]


def context_files(context: Path, *, skip: str | None = None) -> list[str]:
    """Return the context's files (relative, `/`-separated, sorted) that a build can see.

    `skip`: a directory (relative, `/`-separated) left out whatever `.dockerignore` says.
    """
    rules = _rules(context / ".dockerignore")
    negations = any(negate for _, negate in rules)
    found: list[str] = []
    for directory, dirs, files in os.walk(context):
        relative_dir = os.path.relpath(directory, context).replace(os.sep, "/")
        prefix = "" if relative_dir == "." else relative_dir + "/"
        if skip is not None:
            dirs[:] = [d for d in dirs if prefix + d != skip]
        if not negations:
            # Nothing can be re-included below an excluded directory: do not walk it.
            dirs[:] = [d for d in dirs if not _excluded(prefix + d, rules)]
        dirs.sort()
        for name in files:
            path = prefix + name
            if (name == ".dockerignore" and not prefix) or not _excluded(path, rules):
                found.append(path)
        # Symbolic links to directories are sent as links, not walked.
        for name in list(dirs):
            if os.path.islink(os.path.join(directory, name)):
                dirs.remove(name)
                if not _excluded(prefix + name, rules):
                    found.append(prefix + name)
    return sorted(found)


def _rules(path: Path) -> list[tuple[re.Pattern[str], bool]]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rules: list[tuple[re.Pattern[str], bool]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        pattern = posixpath.normpath(line[1:].strip() if negate else line).lstrip("/")
        if pattern in ("", "."):
            continue
        rules.append((re.compile(_regex(pattern)), negate))
    return rules


def _regex(pattern: str) -> str:
    """Translate a .dockerignore pattern into a regular expression over `/`-separated paths."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if pattern.startswith("/", i):
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith(("^", "!")) else body
                out.append(f"[{body}]")
                i = end
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _excluded(path: str, rules: list[tuple[re.Pattern[str], bool]]) -> bool:
    excluded = False
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    for regex, negate in rules:
        if any(regex.fullmatch(candidate) for candidate in candidates):
            excluded = not negate
    return excluded
