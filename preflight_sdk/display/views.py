"""Renderers for the result types (filled in per result as they land)."""

from __future__ import annotations
