"""The labels every container, network and image of a project carries, and Docker-safe names.

Labels are how preflight finds its resources again from any process: the checkout's root (or a
shard's), the session, the service.
"""

from __future__ import annotations

import re

__all__ = [
    "LABEL_MANAGED",
    "LABEL_PROJECT",
    "LABEL_ROOT",
    "LABEL_SERVICE",
    "LABEL_SESSION",
    "labels_for",
    "slug",
]

LABEL_MANAGED = "preflight.managed"
LABEL_PROJECT = "preflight.project"
LABEL_SESSION = "preflight.session"
LABEL_SERVICE = "preflight.service"
LABEL_ROOT = "preflight.root"


def slug(text: str, *, limit: int = 40) -> str:
    """Return a Docker-safe name part: lowercase letters, digits and dashes."""
    cleaned = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (cleaned or "project")[:limit].rstrip("-")


def labels_for(project: str, session: str, root: str, service: str | None = None) -> dict[str, str]:
    """Return the labels every container and network of a session carries."""
    labels = {
        LABEL_MANAGED: "true",
        LABEL_PROJECT: slug(project),
        LABEL_SESSION: session,
        LABEL_ROOT: root,
    }
    if service is not None:
        labels[LABEL_SERVICE] = service
    return labels
