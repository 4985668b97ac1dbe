"""Import another tool's tests as a YAML test file: Postman collections, `.http` files, Hurl files.

`convert_file` reads the source, places its hosts on the project's services and mocks, writes a
test file that loads as written, and returns what it could not convert with its place.

May import: `config/` and the core.
"""

from __future__ import annotations

from .convert import MAX_SOURCE_BYTES, convert_file

__all__ = ["MAX_SOURCE_BYTES", "convert_file"]
