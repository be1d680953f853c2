"""Annotations of empty turns and the store that saves each one the moment it is committed."""

from __future__ import annotations

import getpass
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from replay.core.annotate.journal import (
    FORMAT_VERSION,
    HAS_CONTENT,
    Journal,
    JournalError,
    check_record,
    latest,
)
from replay.core.paths import data_dir
from replay.core.session.model import Session

__all__ = [
    "CONFIDENCE",
    "HAS_CONTENT",
    "OVERRULE_REASONS",
    "Annotation",
    "AnnotationStore",
    "JournalError",
    "annotations_from_records",
    "default_journal_path",
    "default_reviewer",
    "now_iso",
    "session_identity",
    "session_key",
]

CONFIDENCE: tuple[str, ...] = ("low", "medium", "high")
"""How sure a reviewer is of a label, weakest first."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def now_iso() -> str:
    """The current UTC time as ISO 8601 with milliseconds and a `Z`."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


OVERRULE_REASONS: tuple[tuple[str, str], ...] = (
    ("evidence", "the evidence is misread"),
    ("context", "the turns around it say otherwise"),
    ("too-eager", "the rule fires on too little"),
    ("ambiguous", "two labels fit; mine fits better"),
)
"""Why a reviewer overrules a suggestion: (code saved in the record, plain words)."""


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name, "")
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class Annotation:
    """One reviewer's interpretation of one turn; an empty `label` means it was withdrawn."""

    session_id: str
    """The session's own id (or `session_identity` when the source has none)."""
    turn_id: str
    """The turn's own message id."""
    turn_index: int
    """0-based position of the turn when it was annotated."""
    label: str
    """Label name, or "" when the reviewer withdrew the annotation (undo or clear)."""
    note: str = ""
    """Free text from the reviewer."""
    confidence: str = "medium"
    """One of `CONFIDENCE`."""
    reviewer: str = ""
    """Who annotated."""
    time: str = ""
    """ISO 8601 UTC time of the commit."""
    suggestion: str = ""
    """The label the suggester offered when this was saved ("" when none or unknown)."""
    rule: str = ""
    """Name of the suggestion rule that offered it."""
    overrule: str = ""
    """Why the reviewer disagreed with the suggestion (a code of `OVERRULE_REASONS`), or ""."""
    blind: bool = False
    """The reviewer did not see the suggestion or other labels before saving."""
    has_content: bool = False
    """The turn was found to show content after this was saved (a reply still being written
    when it was labelled): the label is kept, but no longer rates an empty turn."""

    @property
    def withdrawn(self) -> bool:
        """True when this record takes an earlier annotation back."""
        return not self.label

    def to_json(self) -> dict[str, Any]:
        """The self-contained journal record."""
        record: dict[str, Any] = {
            "v": FORMAT_VERSION,
            "session_id": self.session_id,
            "turn_id": self.turn_id,
            "turn_index": self.turn_index,
            "label": self.label,
            "note": self.note,
            "confidence": self.confidence,
            "reviewer": self.reviewer,
            "time": self.time,
        }
        # Written only when known, so older records and older readers stay as they were.
        for name in ("suggestion", "rule", "overrule"):
            if getattr(self, name):
                record[name] = getattr(self, name)
        if self.blind:
            record["blind"] = True
        if self.has_content:
            record[HAS_CONTENT] = True
        return record

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Annotation:
        """Read a journal record back; unknown fields are ignored.

        Raises:
            ValueError: the record lacks a required field or has one of the wrong type.
        """
        problem = check_record(record)
        if problem is not None:
            raise ValueError(f"not an annotation record: {problem}")
        return cls(
            session_id=record["session_id"],
            turn_id=record["turn_id"],
            turn_index=record.get("turn_index", -1),
            label=record["label"],
            note=record.get("note", ""),
            confidence=record.get("confidence", "medium"),
            reviewer=record.get("reviewer", ""),
            time=record.get("time", ""),
            suggestion=_text(record, "suggestion"),
            rule=_text(record, "rule"),
            overrule=_text(record, "overrule"),
            blind=record.get("blind") is True,
            has_content=record.get(HAS_CONTENT) is True,
        )


def annotations_from_records(
    records: Iterable[dict[str, Any]],
    *,
    session_id: str | None = None,
    reviewer: str | None = None,
    include_withdrawn: bool = False,
) -> list[Annotation]:
    """The latest annotation per (reviewer, session, turn), maybe of one session or reviewer."""
    chosen = [
        Annotation.from_json(record)
        for record in latest(records).values()
        if (session_id is None or record["session_id"] == session_id)
        and (reviewer is None or record.get("reviewer", "") == reviewer)
    ]
    return chosen if include_withdrawn else [note for note in chosen if not note.withdrawn]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def session_identity(session: Session) -> str:
    """The id written into records: the source's session id, or a path-derived one without it."""
    return identity_for(session.session_id, session.path)


def identity_for(session_id: str | None, path: str) -> str:
    """`session_identity` from a session's id and path (as a `scan --json` object has them)."""
    if session_id:
        return session_id
    return f"path-{_digest(os.path.realpath(path))[:16]}"


def session_key(session: Session) -> str:
    """A stable, file-name-safe key for a session: format plus session id (or path hash)."""
    return key_for(session.format, session.session_id, session.path)


def key_for(format: str, session_id: str | None, path: str) -> str:
    """`session_key` from a session's format, id and path."""
    if not session_id:
        return f"{_UNSAFE.sub('_', format)}-{identity_for(session_id, path)}"
    raw = f"{format}-{session_id}"
    safe = _UNSAFE.sub("_", raw).strip("._")[:96]
    # Sanitising could map two ids onto one name; a short digest keeps them apart.
    return safe if safe == raw else f"{safe}-{_digest(raw)[:10]}"


def default_journal_path(session: Session) -> Path:
    """A session's default journal: in the user data directory, never beside the transcript."""
    return journal_path_for(session_key(session))


def journal_path_for(key: str) -> Path:
    """The default journal of the session with this `session_key`."""
    return data_dir() / "journals" / f"{key}.jsonl"


def default_reviewer(configured: str | None = None) -> str:
    """The reviewer name: the configured one, else the login name, else `reviewer`."""
    if configured and configured.strip():
        return configured.strip()
    try:
        name = getpass.getuser()
    except (OSError, KeyError, ImportError):
        name = ""
    return name.strip() or "reviewer"


def _without_id(session: Session) -> Session:
    """The same source as it was known before its session id was read."""
    return Session(path=session.path, format=session.format)


def _fingerprint(record: dict[str, Any]) -> tuple[object, ...]:
    """What makes two journal records the same commit (to copy each one only once)."""
    return tuple(record.get(name) for name in (
        "session_id", "turn_id", "label", "note", "confidence", "reviewer", "time"))


@dataclass(frozen=True, slots=True)
class _Change:
    """One commit of this process, remembered so it can be undone."""

    turn_id: str
    turn_index: int
    previous: Annotation | None


class AnnotationStore:
    """One reviewer's annotations of one session, saved to a journal on every commit.

    When the journal cannot be written, the annotation is still applied in memory and kept
    in `unsaved` (then `JournalError` is raised), so the work is not lost: `retry_unsaved`
    writes them once the problem is fixed, `save_unsaved_to` writes them somewhere else.
    """

    def __init__(self, journal: Journal, session_id: str, reviewer: str) -> None:
        self.journal = journal
        """Where commits are appended."""
        self.session_id = session_id
        """The session whose annotations this store holds."""
        self.reviewer = reviewer
        """Whose annotations; other reviewers' records in the same journal are left alone."""
        self.unsaved: list[Annotation] = []
        """Committed annotations the journal refused, oldest first."""
        self._current: dict[str, Annotation] = {}
        self._changes: list[_Change] = []

    @classmethod
    def for_session(
        cls, session: Session, reviewer: str, path: str | Path | None = None
    ) -> AnnotationStore:
        """A store for a loaded session, on `path` or the session's default journal."""
        journal = Journal(path if path is not None else default_journal_path(session))
        store = cls(journal, session_identity(session), reviewer)
        if path is None and session.session_id:
            # Annotations made while the session had no id yet (a followed file that started
            # empty) were filed under its path: take over any the move did not finish.
            store._adopt(Journal(default_journal_path(_without_id(session))),
                         session_identity(_without_id(session)))
        return store

    def rekey(self, session: Session, *, keep_journal: bool = False) -> int:
        """File this store under the session's identity now that it is known (a followed
        file that started empty learns its session id from its first records).

        Every record filed under the old identity, any reviewer's, is copied under the new
        one (the old records stay where they were: nothing is dropped); with `keep_journal`
        the copies go to the same journal (an `--annotations` file), else to the session's
        default journal. Returns how many records were copied.

        Raises:
            JournalError: a journal cannot be read or written; the store is unchanged.
        """
        old_journal, old_id = self.journal, self.session_id
        new_id = session_identity(session)
        if new_id == old_id:
            return 0
        journal = old_journal if keep_journal else Journal(default_journal_path(session))
        self.journal, self.session_id = journal, new_id
        try:
            moved = self._adopt(old_journal, old_id)
        except JournalError:
            self.journal, self.session_id = old_journal, old_id
            raise
        self._current = {turn_id: replace(note, session_id=new_id)
                         for turn_id, note in self._current.items()}
        self.unsaved = [replace(note, session_id=new_id) for note in self.unsaved]
        return moved

    def _adopt(self, journal: Journal, old_id: str) -> int:
        """Copy records filed under `old_id` in `journal` into this store's journal, once."""
        if journal.path == self.journal.path and old_id == self.session_id:
            return 0
        try:
            records = [record for record in journal.load().records
                       if record["session_id"] == old_id]
        except JournalError:
            if journal.path == self.journal.path:
                raise
            return 0
        if not records:
            return 0
        present = {_fingerprint(record) for record in self.journal.load().records
                   if record["session_id"] == self.session_id}
        copied = 0
        for record in records:
            moved = {**record, "session_id": self.session_id}
            if _fingerprint(moved) in present:
                continue
            self.journal.append(moved)
            present.add(_fingerprint(moved))
            copied += 1
        return copied

    def load(self) -> list[str]:
        """Read this reviewer's latest annotations of the session from the journal.

        Returns one warning per journal line that was ignored.

        Raises:
            JournalError: the journal exists but cannot be read.
        """
        loaded = self.journal.load()
        self._current = {
            note.turn_id: note
            for note in annotations_from_records(
                loaded.records, session_id=self.session_id, reviewer=self.reviewer,
                include_withdrawn=True,
            )
        }
        self._changes.clear()
        return loaded.warnings

    def get(self, turn_id: str) -> Annotation | None:
        """This reviewer's current annotation of a turn (None when absent or withdrawn)."""
        note = self._current.get(turn_id)
        return None if note is None or note.withdrawn else note

    def all(self) -> dict[str, Annotation]:
        """Every current (not withdrawn) annotation by turn id."""
        return {turn_id: note for turn_id, note in self._current.items() if not note.withdrawn}

    @property
    def annotated_ids(self) -> frozenset[str]:
        """Ids of the turns that hold an annotation now."""
        return frozenset(turn_id for turn_id, note in self._current.items() if not note.withdrawn)

    def commit(
        self, turn_id: str, turn_index: int, label: str, note: str = "", confidence: str = "medium",
        *, suggestion: str = "", rule: str = "", overrule: str = "", blind: bool = False,
    ) -> Annotation:
        """Record an annotation: it is on disk (fsynced) when this returns.

        Raises:
            ValueError: `confidence` is not one of `CONFIDENCE`.
            JournalError: the journal cannot be written; the annotation is kept in `unsaved`.
        """
        if confidence not in CONFIDENCE:
            allowed = ", ".join(CONFIDENCE)
            raise ValueError(f"confidence must be one of {allowed}, not {confidence!r}")
        annotation = Annotation(
            session_id=self.session_id, turn_id=turn_id, turn_index=turn_index, label=label,
            note=note, confidence=confidence, reviewer=self.reviewer, time=now_iso(),
            suggestion=suggestion, rule=rule, overrule=overrule if label != suggestion else "",
            blind=blind,
        )
        self._changes.append(_Change(turn_id, turn_index, self._current.get(turn_id)))
        self._save(annotation)
        return annotation

    def mark_has_content(self, turn_id: str) -> Annotation | None:
        """Say in the journal that this reviewer's annotation of a turn now rates a turn with
        content (`outgrown`): the same record, marked. Not an undoable change; None when
        there is no annotation to mark or it is marked already.

        Raises:
            JournalError: the journal cannot be written; the mark is kept in `unsaved`.
        """
        current = self.get(turn_id)
        if current is None or current.has_content:
            return None
        marked = replace(current, has_content=True)
        self._save(marked)
        return marked

    def withdraw(self, turn_id: str, turn_index: int) -> Annotation:
        """Take back the annotation of a turn by appending a record with an empty label."""
        return self.commit(turn_id, turn_index, "")

    def undo(self) -> Annotation | None:
        """Revert this process's last commit by appending the state before it.

        Returns the record appended (with an empty label when the turn had no annotation
        before), or None when there is nothing left to undo.
        """
        if not self._changes:
            return None
        change = self._changes.pop()
        if change.previous is None:
            restored = Annotation(self.session_id, change.turn_id, change.turn_index, "",
                                  reviewer=self.reviewer, time=now_iso())
        else:
            restored = replace(change.previous, time=now_iso())
        self._save(restored)
        return restored

    def _save(self, annotation: Annotation) -> None:
        """Apply in memory, then write; earlier unsaved records go first to keep the order."""
        self._current[annotation.turn_id] = annotation
        self.unsaved.append(annotation)
        self.retry_unsaved()

    def retry_unsaved(self) -> int:
        """Write the unsaved annotations to the journal, oldest first; returns how many it wrote.

        Raises:
            JournalError: the journal still cannot be written; the rest stay in `unsaved`.
        """
        written = 0
        while self.unsaved:
            self.journal.append(self.unsaved[0].to_json())
            self.unsaved.pop(0)
            written += 1
        return written

    def save_unsaved_to(self, path: str | Path) -> int:
        """Write the unsaved annotations to another journal file; returns how many were written.

        Raises:
            JournalError: that file cannot be written either; the rest stay in `unsaved`.
        """
        other = Journal(path)
        written = 0
        while self.unsaved:
            other.append(self.unsaved[0].to_json())
            self.unsaved.pop(0)
            written += 1
        return written
