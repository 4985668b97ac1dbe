"""Validated test files kept on disk, so a fresh process does not parse an unchanged file again.

Parsing YAML while keeping every value's position is most of what a fresh process pays before
its first request on a large suite: about 3 s for a 10,000-case file here (pyyaml's C parser
alone takes 2 s of it), against about 0.1 s to read the same validated `TestFile` back from
msgpack (an entry of about 4 MB). As Python keeps bytecode next to a module, a file that loaded without a problem is
kept under the project's `.preflight/cache/tests/`, one entry per test file path (overwritten
when the file changes, so the folder holds no more files than the project has), and used only
when both the file's bytes and the loader that read them are the same: the entry starts with
blake2b digests of the file's bytes and of preflight's version with the JSON Schema of
`TestFile`. A file with problems is never kept (its problems need the positions). Anything
wrong with an entry (unreadable, cut short, another shape) means "not kept": the file is parsed.

The entry is a copy of a file of the project, in the project's own state folder. Like every file
preflight writes, it holds no secret value: a file in which the project's redaction policy finds
a secret (a secret-named header or field, a secret value of the project's) is never kept, and is
parsed by each process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

import msgspec

from preflight_sdk._version import __version__
from preflight_sdk.core import decoding
from preflight_sdk.core.redaction import Redactor

from .testfile import TestFile

__all__ = ["cache_folder", "keep", "kept"]

_DIGEST = 16


def cache_folder(project_root: Path) -> Path:
    """Where a project's parsed test files are kept."""
    return project_root / ".preflight" / "cache" / "tests"


@functools.cache
def _loader_identity() -> bytes:
    shape = json.dumps(decoding.schema(TestFile), sort_keys=True)
    return hashlib.blake2b(f"{__version__}\n{shape}".encode(), digest_size=_DIGEST).digest()


def _entry(folder: Path, target: Path) -> Path:
    name = hashlib.blake2b(str(target.resolve()).encode(), digest_size=_DIGEST).hexdigest()
    return folder / f"{name}.msgpack"


def kept(folder: Path, target: Path, digest: bytes) -> TestFile | None:
    """The `TestFile` kept for `target` when its bytes had `digest`, else None."""
    try:
        raw = _entry(folder, target).read_bytes()
    except OSError:
        return None
    head = _loader_identity() + digest
    if not raw.startswith(head):
        return None
    try:
        return msgspec.msgpack.decode(raw[len(head) :], type=TestFile)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def keep(folder: Path, target: Path, digest: bytes, test: TestFile, redactor: Redactor) -> None:
    """Keep `test` (loaded from `target`, whose bytes had `digest`) unless `redactor`, the project's
    policy, finds a secret in it (by name or by value); a failure to write is ignored."""
    temporary: str | None = None
    try:
        plain = msgspec.to_builtins(test)
        if redactor.body(plain) != plain:
            return  # every file preflight writes holds no secret value, and this one would
        payload = msgspec.msgpack.encode(test)
        if msgspec.msgpack.decode(payload, type=TestFile) != test:
            return  # a value msgpack does not carry as it is: the file is parsed every time
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        with os.fdopen(handle, "wb") as out:
            out.write(_loader_identity() + digest + payload)
        os.replace(temporary, _entry(folder, target))
    except (
        OSError,
        OverflowError,
        TypeError,
        msgspec.EncodeError,
        msgspec.DecodeError,
        msgspec.ValidationError,
    ):
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
