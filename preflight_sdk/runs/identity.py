"""What a run was made from: the config hash, the request hash, and the git commit.

The config hash is the sha256 of the canonical JSON (sorted keys) of the loaded e2e.yaml plus the
sha256 of each suite's test file, so two runs share it exactly when they ran the same definitions.
The request hash adds what was asked (the whole `RunRequest` but its key): an idempotency key replays a run only
for the same request.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
import msgspec

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.results.run import GitState
from preflight_sdk.core.run_request import RunRequest

__all__ = ["config_hash", "git_state", "request_hash"]

_canonical = msgspec.json.Encoder(order="sorted")


def config_hash(loaded: LoadedConfig) -> str:
    """The hash of the loaded configuration and its suites' files (blocking: reads the files)."""
    digest = hashlib.sha256(_canonical.encode(loaded.config))
    for suite in loaded.suites:
        for name in (suite.file, suite.config):
            if not name:
                continue
            try:
                digest.update(hashlib.sha256(Path(loaded.resolve(name)).read_bytes()).digest())
            except OSError:
                digest.update(b"missing:" + name.encode())
    return digest.hexdigest()


def request_hash(config: str, request: RunRequest, given: bytes = b"") -> str:
    """The hash of one request: the config hash, every field of the request but its idempotency
    key, and `given` (the suites it brings beside e2e.yaml's, encoded)."""
    digest = hashlib.sha256(config.encode())
    digest.update(request.identity())
    digest.update(given)
    return digest.hexdigest()


async def git_state(root: str) -> GitState | None:
    """The commit checked out at `root` and whether tracked files changed; None outside a git work tree."""
    if not any((parent / ".git").exists() for parent in (Path(root), *Path(root).parents)):
        return None
    try:
        with anyio.fail_after(5):
            head = await anyio.run_process(["git", "-C", root, "rev-parse", "HEAD"], check=False)
            if head.returncode != 0:
                return None
            status = await anyio.run_process(
                ["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], check=False
            )
    except (OSError, TimeoutError):
        return None
    return GitState(commit=head.stdout.decode().strip(), dirty=bool(status.stdout.strip()))
