"""The app's CSV export: the rows `replay export PATH --all-empty` writes, written atomically
under a name that never replaces an earlier one."""

from __future__ import annotations

from pathlib import Path

from replay.core.annotate.annotations import (
    Annotation,
    AnnotationStore,
    annotations_from_records,
)
from replay.core.annotate.journal import JournalError
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, Suggester
from replay.core.session.labels import LabelSet
from replay.core.session.model import Session

MAX_NUMBERED = 999
"""Numbered names tried before giving up (`x-annotations-2.csv` and so on)."""


def export_name(session: Session) -> str:
    """`<session label>-annotations.csv`, with only characters safe in any file name."""
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in session.label)
    return f"{name[:60] or 'session'}-annotations.csv"


def free_path(directory: Path, name: str) -> Path:
    """`name` in `directory`, or the first numbered variant of it that does not exist yet.

    Raises:
        OSError: every numbered name is taken.
    """
    candidate = directory / name
    stem, suffix = candidate.stem, candidate.suffix
    number = 1
    while candidate.exists() or candidate.is_symlink():
        number += 1
        if number > MAX_NUMBERED:
            raise OSError(f"{directory}: {MAX_NUMBERED} exports of this session already")
        candidate = directory / f"{stem}-{number}{suffix}"
    return candidate


def exported_annotations(store: AnnotationStore, *,
                         only_reviewer: bool = False) -> list[Annotation]:
    """The annotations an export writes: every reviewer's in the store's journal, as
    `replay export` reads them, with this reviewer's taken from the store (so one the journal
    refused is written too). `only_reviewer` (a blind review, which must not show the others'
    labels) keeps this reviewer's alone.

    Raises:
        OSError: the journal cannot be read.
    """
    mine = list(store.all().values())
    if only_reviewer:
        return mine
    try:
        records = store.journal.load().records
    except JournalError as error:
        raise OSError(str(error)) from None
    others = [note for note in annotations_from_records(records, session_id=store.session_id)
              if note.reviewer != store.reviewer]
    return others + mine


def export_scope(store: AnnotationStore, *, only_reviewer: bool = False) -> str:
    """Which rows an export holds, in the words of its notification."""
    if only_reviewer:
        return f"{store.reviewer}'s annotations only (blind review)"
    return "every reviewer's annotations and each unannotated empty turn, as " \
           "replay export --all-empty"


def export_session(session: Session, store: AnnotationStore, labels: LabelSet,
                   suggester: Suggester | None, directory: Path,
                   rules: DetectionRules = DEFAULT_RULES, *,
                   only_reviewer: bool = False) -> tuple[Path, int]:
    """Write every reviewer's annotations (this reviewer's saved or only in memory; see
    `exported_annotations`) and the unannotated empty turns to a new CSV file, the rows of
    `replay export PATH --all-empty`; returns where and how many rows.

    Raises:
        OSError: the journal cannot be read or the file cannot be written (nothing is left
            half-written).
    """
    from replay.core.publish.export import export_rows, write_file

    rows = export_rows(session, exported_annotations(store, only_reviewer=only_reviewer),
                       labels, all_empty=True, suggester=suggester, rules=rules)
    target = free_path(directory, export_name(session))
    return target, write_file(rows, target, "csv")
