"""Pause Python's cyclic garbage collector while a large structure is built.

Building a big value (the node tree and data of a 30,000-line test file, say) allocates hundreds of
thousands of objects that all stay alive until it is done. Each allocation burst triggers a
collection of the oldest generation, which walks every live object and finds nothing to free:
the collections grow with the heap, so the cost grows faster than the file (at 5,000 cases, 8
full collections took most of the load). Reference counting still frees what dies meanwhile; only
cycles wait for the collector, which resumes when the last pause ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]

_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off (pauses from several threads nest)."""
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
