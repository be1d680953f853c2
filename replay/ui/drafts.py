"""Annotation drafts: a label picked or a note typed at a stop and not saved yet, kept per
stop while the reviewer looks elsewhere, until saved or discarded."""

from __future__ import annotations

from dataclasses import dataclass

from replay.core.annotate.annotations import Annotation
from replay.core.session.text import one_line

DraftKey = tuple[str, str]
"""(session id, stop id): stop ids repeat across the sessions of a review queue."""


@dataclass(frozen=True, slots=True)
class Draft:
    """What the reviewer had picked and typed at one stop."""

    name: str
    """The stop as the header names it: `#12`, or `#12+` for a missing reply."""
    label: str | None
    """The label picked (None: only a note was typed)."""
    note: str
    confidence: str
    overrule: str

    def differs_from(self, saved: Annotation | None) -> bool:
        """True when saving it would change what is saved (a label or a note)."""
        label = saved.label if saved is not None else None
        note = saved.note if saved is not None else ""
        return (self.label is not None and self.label != label) or self.note != note

    def describe(self) -> str:
        """`#12 approval, note "draft note"`, for the question asked before leaving."""
        said = [self.label] if self.label else []
        if self.note:
            said.append(f'note "{one_line(self.note, 40)}"')
        return f"{self.name} {', '.join(said)}"


class Drafts:
    """The drafts of one screen, by stop."""

    def __init__(self) -> None:
        self._by_key: dict[DraftKey, Draft] = {}

    def keep(self, key: DraftKey, draft: Draft, saved: Annotation | None) -> None:
        """Keep `draft` for the stop, or forget the stop's draft when it saves nothing new."""
        if draft.differs_from(saved):
            self._by_key[key] = draft
        else:
            self._by_key.pop(key, None)

    def get(self, key: DraftKey | None) -> Draft | None:
        """The stop's draft, if it has one."""
        return self._by_key.get(key) if key is not None else None

    def drop(self, key: DraftKey | None) -> None:
        """Forget the stop's draft (saved or discarded)."""
        if key is not None:
            self._by_key.pop(key, None)

    def items(self) -> list[tuple[DraftKey, Draft]]:
        """Every draft kept, by stop."""
        return list(self._by_key.items())
