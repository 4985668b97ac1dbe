"""The repository a clarification writes into, and what a quick look at it tells.

The repository is the first directory holding `.git` (a folder, or a file for worktrees and
submodules) at or above the project path. `scan` looks at a bounded number of entries (depth 3,
2 000 entries, no hidden or vendored folders) to find technology signals, folders that match a
topic (for the task's allowlist) and folders an agent should not touch (for its forbidden list).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

import msgspec

from .errors import repo_not_found

__all__ = ["RepoFacts", "find_repo", "relative", "scan"]

_SKIP = {"node_modules", "__pycache__", "venv", "dist", "build", "target", "site-packages", "docs"}
_MAX_ENTRIES = 2000
_MAX_DEPTH = 3

_SIGNAL_FILES: dict[str, tuple[str, ...]] = {
    "python": ("pyproject.toml", "requirements.txt", "setup.py", "Pipfile"),
    "node": ("package.json",),
    "typescript": ("tsconfig.json",),
    "nextjs": ("next.config.js", "next.config.mjs", "next.config.ts"),
    "django": ("manage.py",),
    "go": ("go.mod",),
    "rust": ("Cargo.toml",),
    "java": ("pom.xml", "build.gradle", "build.gradle.kts"),
    "prisma": ("prisma",),
    "docker": ("Dockerfile", "compose.yaml", "docker-compose.yml", "docker-compose.yaml"),
}

_NEVER_TOUCH = ("node_modules/", "dist/", "build/", "__pycache__/", ".venv/", "venv/")


class RepoFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What `scan` found: signals (python, node, typescript, nextjs…), folders, sensitive entries."""

    root: Path
    signals: frozenset[str] = frozenset()
    folders: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()

    def summary(self) -> str:
        """A few lines describing the repository (for a language model; no file contents)."""
        tops = sorted({f.split("/")[0] for f in self.folders})[:15]
        return (
            f"Signals: {', '.join(sorted(self.signals)) or 'none'}\n"
            f"Top-level folders: {', '.join(tops) or 'none'}"
        )


def find_repo(start: Path) -> Path:
    """Return the repository root at or above `start` (a directory or a file in one).

    Raises:
        InputError: REPO_NOT_FOUND when no `.git` is found up to the filesystem root.
    """
    here = Path(os.path.abspath(Path(start).expanduser()))
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    raise repo_not_found(here)


def relative(root: Path, path: Path) -> str:
    """Return `path` relative to `root` with forward slashes ("." for the root itself)."""
    rel = Path(os.path.abspath(path)).relative_to(root).as_posix()
    return rel or "."


def _walk(root: Path) -> Iterable[tuple[str, bool]]:
    budget = _MAX_ENTRIES
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and budget > 0:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            budget -= 1
            if budget <= 0:
                return
            is_dir = entry.is_dir(follow_symlinks=False)
            rel = Path(entry.path).relative_to(root).as_posix()
            yield rel, is_dir
            if (
                is_dir
                and depth + 1 < _MAX_DEPTH
                and not entry.name.startswith(".")
                and entry.name not in _SKIP
            ):
                stack.append((Path(entry.path), depth + 1))


def scan(root: Path) -> RepoFacts:
    """Look at the repository (blocking; call it from a worker thread)."""
    folders: list[str] = []
    top: set[str] = set()
    for rel, is_dir in _walk(root):
        name = rel.rsplit("/", 1)[-1]
        if "/" not in rel:
            top.add(name + ("/" if is_dir else ""))
        if is_dir and not any(part.startswith(".") or part in _SKIP for part in rel.split("/")):
            folders.append(rel)
    signals = {
        signal for signal, names in _SIGNAL_FILES.items() if any(n in top or n + "/" in top for n in names)
    }
    forbidden = [".git/", "docs/adr/"]
    forbidden += [entry for entry in _NEVER_TOUCH if entry in top]
    if any(re.match(r"^\.env(\..+)?$", entry) for entry in top):
        forbidden.append(".env")
    forbidden += sorted(e for e in top if re.match(r"^(credentials|secrets)\b", e, re.IGNORECASE))
    return RepoFacts(
        root=root, signals=frozenset(signals), folders=tuple(folders), forbidden=tuple(forbidden)
    )
