"""Result Structs returned by `Project` operations, and the envelope that wraps them on the wire.

Layer: the core (the bottom). Plain Structs every layer may use; imports nothing of preflight but
the rest of the core (`errors`, `assertions`, `face_hooks`).
"""

from __future__ import annotations

from .base import Result
from .envelope import Envelope, failure, success

__all__ = ["Envelope", "Result", "failure", "success"]
