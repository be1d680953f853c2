"""The app's CSV export: the rows `replay export PATH --all-empty` writes, written atomically
under a name that never replaces an earlier one."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

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


class Exported(NamedTuple):
    """What an export wrote: where, how many rows, and whose (the words of its notification)."""

    target: Path
    count: int
    scope: str


def exported_annotations(store: AnnotationStore, *,
                         only_reviewer: bool = False) -> tuple[list[Annotation], str]:
    """The annotations an export writes and whose they are: every reviewer's in the store's
    journal, as `replay export` reads them, with this reviewer's taken from the store (so one
    the journal refused is written too). `only_reviewer` (a blind review, which must not show
    the others' labels) keeps this reviewer's alone, and so does a journal that cannot be read
    now: this reviewer's work is exported all the same, and the scope says so."""
    mine = list(store.all().values())
    if only_reviewer:
        return mine, f"{store.reviewer}'s annotations only (blind review)"
    try:
        records = store.journal.load().records
    except JournalError as error:
        return mine, f"{store.reviewer}'s annotations only: {error}"
    others = [note for note in annotations_from_records(records, session_id=store.session_id)
              if note.reviewer != store.reviewer]
    return others + mine, ("every reviewer's annotations and each unannotated empty turn, "
                           "as replay export --all-empty")


def export_session(session: Session, store: AnnotationStore, labels: LabelSet,
                   suggester: Suggester | None, directory: Path,
                   rules: DetectionRules = DEFAULT_RULES, *,
                   only_reviewer: bool = False) -> Exported:
    """Write every reviewer's annotations (this reviewer's saved or only in memory; see
    `exported_annotations`) and the unannotated empty turns to a new CSV file, the rows of
    `replay export PATH --all-empty`.

    Raises:
        OSError: the file cannot be written (nothing is left half-written).
    """
    from replay.core.publish.export import export_rows, write_file

    annotations, scope = exported_annotations(store, only_reviewer=only_reviewer)
    rows = export_rows(session, annotations, labels, all_empty=True, suggester=suggester,
                       rules=rules)
    target = free_path(directory, export_name(session))
    return Exported(target, write_file(rows, target, "csv"), scope)
