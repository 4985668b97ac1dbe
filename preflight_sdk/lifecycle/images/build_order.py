"""Which builds of a project wait for which: a Dockerfile may start FROM another service's image."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from preflight_sdk.engine.base import BuildSpec

__all__ = ["image_dependencies"]

# `FROM [--platform=…] image [AS stage]` and `COPY --from=image`: the two ways a build reads
# another image. Stage names are local to the Dockerfile and never match a project image tag.
_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", re.IGNORECASE | re.MULTILINE)
_COPY_FROM = re.compile(r"^\s*(?:COPY|ADD)\s+.*?--from=(\S+)", re.IGNORECASE | re.MULTILINE)


def image_dependencies(specs: Mapping[str, BuildSpec]) -> dict[str, set[str]]:
    """Map each service to the services whose freshly built image its Dockerfile uses.

    Reads the Dockerfiles (blocking: call it from a worker thread). A cycle, which docker could not
    build either, yields no ordering at all, so each build fails on its own terms.
    """
    owner = {_canonical(spec.image): name for name, spec in specs.items()}
    needs: dict[str, set[str]] = {}
    for name, spec in specs.items():
        try:
            text = Path(spec.dockerfile).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        refs = {_canonical(ref) for ref in (*_FROM.findall(text), *_COPY_FROM.findall(text))}
        needs[name] = {owner[ref] for ref in refs if ref in owner and owner[ref] != name}
    return needs if _acyclic(needs) else {name: set() for name in specs}


def _canonical(image: str) -> str:
    """`shop/api` and `shop/api:latest` name the same image; a digest or tag is kept as written."""
    last = image.rsplit("/", 1)[-1]
    return image if (":" in last or "@" in last) else f"{image}:latest"


def _acyclic(needs: Mapping[str, set[str]]) -> bool:
    done: set[str] = set()
    visiting: set[str] = set()

    def visit(name: str) -> bool:
        if name in done:
            return True
        if name in visiting:
            return False
        visiting.add(name)
        ok = all(visit(dep) for dep in needs.get(name, ()))
        visiting.discard(name)
        done.add(name)
        return ok

    return all(visit(name) for name in needs)
