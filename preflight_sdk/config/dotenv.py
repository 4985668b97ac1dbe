"""`.env` files: `KEY=value` lines, as docker compose and the original Preflight read them."""

from __future__ import annotations

from pathlib import Path

__all__ = ["read_dotenv"]


def read_dotenv(path: Path) -> dict[str, str]:
    """Read a `.env` file: `KEY=value` lines, `export` prefixes, quotes and `#` comments."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return values
    except (OSError, UnicodeDecodeError):
        return values
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if key:
            values[key] = value
    return values
