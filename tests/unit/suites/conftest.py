"""Fixtures of the suite tests: the raw socket HTTP server (`support.raw_http`)."""

from support.raw_http import raw_server

__all__ = ["raw_server"]
