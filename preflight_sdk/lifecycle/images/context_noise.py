"""Files in a build context that are rarely meant for the image: a change of them is worth a hint.

A virtualenv, `node_modules`, caches or e2e.yaml inside a build context are sent to every build and
hashed into its inputs: an edit of e2e.yaml or a `pip install` on the host rebuilds the image
(often hundreds of files: "…and 739 more changed"). Docker's answer is `.dockerignore`; this module
finds such files among the changed ones and names them, so the reason says what to list there.
"""

from __future__ import annotations

__all__ = ["changed_names", "dockerignore_hint", "noise_folder"]

# Folders no image needs from the host: environments, dependency trees and tool caches built on
# the host for the host (an image installs its own).
_FOLDERS = frozenset(
    {
        ".venv",
        "venv",
        "node_modules",
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".hypothesis",
    }
)
# preflight's own configuration: read by preflight on the host, not by the service in its image.
_FILES = frozenset({"e2e.yaml", "e2e.yml"})
_NAMED = 4  # entries named in the hint before "and N more"


def noise_folder(path: str) -> str | None:
    """The folder (`.venv/`, `app/node_modules/`) holding `path` that no image needs, or None."""
    parts = path.split("/")
    folder = next((i for i, part in enumerate(parts[:-1]) if part in _FOLDERS), None)
    return None if folder is None else "/".join(parts[: folder + 1]) + "/"


def changed_names(changed: list[str]) -> list[str]:
    """The `changed` files as a reason names them: a noise folder's files counted as one name
    (`740 files under .venv/`), the others by their path, in the order first met."""
    names: dict[str, int] = {}
    for path in changed:
        folder = noise_folder(path)
        names[folder or path] = names.get(folder or path, 0) + 1
    return [
        name if not name.endswith("/") else f"{count} file{'s' if count != 1 else ''} under {name}"
        for name, count in names.items()
    ]


def dockerignore_hint(changed: list[str]) -> str | None:
    """A hint naming what to list in the context's `.dockerignore`, or None when nothing fits.

    Entries: a noise folder (`.venv/`) once, e2e.yaml as itself.
    """
    entries: dict[str, None] = {}
    for path in changed:
        folder = noise_folder(path)
        if folder is not None or path.rsplit("/", 1)[-1] in _FILES:
            entries[folder or path] = None
    if not entries:
        return None
    listed = list(entries)
    named = ", ".join(listed[:_NAMED])
    more = f" and {len(listed) - _NAMED} more" if len(listed) > _NAMED else ""
    verb, them = ("is", "it") if len(listed) == 1 else ("are", "them")
    return f"{named}{more} {verb} in the build context: list {them} in its .dockerignore if the image does not need {them}"
