"""`preflight import`: read a Postman collection, a `.http` file or a Hurl file, write a YAML test file.

The format is told by the file's name (`.hurl`, `.http`/`.rest`, `.json`) or its content; the
output goes inside the project (default `tests/<name>.yaml`), is checked by loading it, and never
replaces a file unless asked.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from pathlib import Path

import yaml

from preflight_sdk.config import LoadedConfig
from preflight_sdk.core.errors import InputError
from preflight_sdk.core.redaction import DEFAULT, Redactor
from preflight_sdk.core.results.imports import ImportedTests, ImportFormat, NotConverted

from .hosts import check_asked, targets_of
from .http_file import read_http_file
from .hurl import read_hurl
from .model import Draft
from .postman import read_postman
from .writer import check_loads, render, write_test_file

__all__ = ["MAX_SOURCE_BYTES", "convert_file"]

MAX_SOURCE_BYTES = 20 * 1024 * 1024
_TEXT_LIMIT = 20_000
_MAX_LISTED = 500


def convert_file(
    source: str,
    *,
    root: Path,
    loaded: LoadedConfig | None,
    output: str | None = None,
    environment: str | None = None,
    hosts: Mapping[str, str] | None = None,
    overwrite: bool = False,
    dry_run: bool = False,
    redactor: Redactor = DEFAULT,
) -> ImportedTests:
    """Convert `source` (relative to `root`) and write the test file (blocking: run it in a thread).

    Raises:
        InputError: `INVALID_INPUT` for a missing or unreadable source, an unknown format, an
            output outside the project or that exists, or a `hosts` entry naming nothing.
    """
    root = root.resolve()
    path = _resolve(root, source)
    data = _read(path, "source")
    kind = _format_of(path, data)
    targets = targets_of(loaded)
    asked = dict(hosts or {})
    check_asked(asked, targets)
    draft = _draft(kind, path, data, root, environment, redactor)
    if not draft.cases:
        raise InputError(
            f"{source} holds no request to convert", hint="give a file with at least one request"
        )
    target = _output(root, output, path)
    rendered = render(
        draft, source=str(source), format_name=kind, targets=targets, asked=asked, redactor=redactor
    )
    if dry_run:  # checked in a scratch folder: nothing is written in the project
        with tempfile.TemporaryDirectory(prefix="preflight-import-") as scratch:
            check = Path(scratch) / target.name
            check.write_text(rendered.text, encoding="utf-8")
            check_loads(check)
    else:
        write_test_file(rendered.text, target, overwrite=overwrite)
    relative = target.relative_to(root).as_posix()
    entry = {"id": _slug(target.stem), "file": relative}
    return ImportedTests(
        path=str(target),
        format=kind,
        source=str(path),
        cases=rendered.cases,
        not_converted=_bounded(rendered.not_converted),
        hosts=rendered.hosts,
        variables_needed=rendered.variables_needed,
        notes=draft.notes,
        suite_entry=entry,
        suite_entry_yaml=yaml.safe_dump([entry], sort_keys=False).strip(),
        text=rendered.text if dry_run or len(rendered.text) <= _TEXT_LIMIT else None,
        written=not dry_run,
    )


def _bounded(items: list[NotConverted]) -> list[NotConverted]:
    """At most `_MAX_LISTED` parts, then one that says how many more (the file's header has them all counted)."""
    if len(items) <= _MAX_LISTED:
        return items
    more = len(items) - _MAX_LISTED
    return [
        *items[:_MAX_LISTED],
        NotConverted(place="…", source="", reason=f"{more} more parts not listed here"),
    ]


def _draft(
    kind: ImportFormat, path: Path, data: bytes, root: Path, environment: str | None, redactor: Redactor
) -> Draft:
    if kind == "postman":
        env = _read(_resolve(root, environment), "environment") if environment else None
        return read_postman(data, environment=env, redactor=redactor)
    if environment:
        raise InputError(
            "`environment` is for Postman collections", hint="leave it out for .http and Hurl files"
        )
    text = _text(data, path)
    if kind == "http":
        return read_http_file(text, name=path.stem, file=path.name, base=path.parent, redactor=redactor)
    return read_hurl(text, name=path.stem, file=path.name)


def _resolve(root: Path, given: str) -> Path:
    path = Path(given).expanduser()
    return path if path.is_absolute() else root / path


def _read(path: Path, what: str) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise InputError(
                f"the {what} {path} is {size // (1024 * 1024)} MB, more than the 20 MB read",
                hint="split it, or import its parts one by one",
            )
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise InputError(
            f"the {what} {path} does not exist" + (" (it is a directory)" if path.is_dir() else ""),
            hint="give a path relative to the project (the e2e.yaml directory), or an absolute one",
            details={"path": str(path)},
        ) from None
    except OSError as exc:
        raise InputError(
            f"cannot read the {what} {path}: {exc.strerror or exc}", details={"path": str(path)}
        ) from None


def _text(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text ({exc.reason})", hint="save it as UTF-8") from None


def _format_of(path: Path, data: bytes) -> ImportFormat:
    """The format, by the file's name, else by its content."""
    suffix = path.suffix.lower()
    if suffix == ".hurl":
        return "hurl"
    if suffix in (".http", ".rest"):
        return "http"
    head = data[:65536].decode("utf-8", "replace")
    if suffix == ".json" or head.lstrip().startswith("{"):
        return "postman"
    if re.search(
        r"^(?:HTTP(?:/[\d.]+)?\s+(?:\d{3}|\*)|\[(?:Asserts|Captures|Query|Form|Options)\])\s*$", head, re.M
    ):
        return "hurl"
    if re.search(r"^(?:###|@[\w.-]+\s*=|(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+\S+)", head, re.M):
        return "http"
    raise InputError(
        f"cannot tell the format of {path.name}",
        hint="name it .json (Postman collection), .http/.rest or .hurl",
    )


def _output(root: Path, output: str | None, source: Path) -> Path:
    stem = re.sub(r"\.postman_collection$", "", source.stem)
    target = _resolve(root, output) if output else root / "tests" / f"{_slug(stem)}.yaml"
    if target.suffix not in (".yaml", ".yml"):
        raise InputError(f"the output {output!r} must end in .yaml or .yml", hint="e.g. tests/imported.yaml")
    resolved = target.resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise InputError(
            f"the output {target} is outside the project ({root})",
            hint="give a path inside the project, such as tests/imported.yaml",
        )
    return resolved


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "imported"
