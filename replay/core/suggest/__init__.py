"""Suggested interpretations of empty turns (filled in by the suggestion engine)."""

from __future__ import annotations

from replay.core.detect import Suggester


def default_suggester() -> Suggester | None:
    """The suggester used by scan, export and the app."""
    return None
