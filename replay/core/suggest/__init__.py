"""Suggested interpretations of empty turns, from signals around them and a table of rules.

`signals` (what surrounds an empty turn), `rules` (the table that turns signals into a label
and its reasons), `evaluate` (accuracy against labelled turns).
May import: `session`, `detection`, `index`, `readers` and the core utilities.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from replay.core.detection.empty import EmptyTurn, Suggester
from replay.core.session.model import Session
from replay.core.suggest.rules import RULES, Rule, Suggestion, label_names, suggest
from replay.core.suggest.signals import Signals, read_signals

if TYPE_CHECKING:
    from replay.core.session.labels import LabelSet

__all__ = [
    "RULES",
    "Rule",
    "Signals",
    "Suggestion",
    "default_suggester",
    "read_signals",
    "suggest",
    "suggester_for",
]


def suggester_for(labels: Collection[str] | LabelSet | None = None) -> Suggester:
    """A suggester limited to a label set (every rule's label when None)."""
    active = label_names(labels)

    def suggester(session: Session, empty: EmptyTurn) -> tuple[str, str, list[str], str] | None:
        found = suggest(session, empty, active)
        return None if found is None else found.as_tuple()

    return suggester


def default_suggester() -> Suggester | None:
    """The suggester used by scan, export and the app."""
    return suggester_for(None)
