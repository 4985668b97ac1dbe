"""Affected cases: what each case touched, what an edit can affect, the order a run takes, and the
verdicts it carries instead of running again (see docs/affected.md)."""

from __future__ import annotations

from .planning import AffectedAsk

__all__ = ["AffectedAsk"]
