"""Result Structs returned by `Project` operations, and the envelope that wraps them on the wire."""

from __future__ import annotations

from .base import Result
from .envelope import Envelope, failure, success

__all__ = ["Envelope", "Result", "failure", "success"]
