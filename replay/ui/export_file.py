"""The app's CSV export: written atomically under a name that never replaces an earlier one."""

from __future__ import annotations

from pathlib import Path

from replay.core.annotate.annotations import AnnotationStore
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


def export_session(session: Session, store: AnnotationStore, labels: LabelSet,
                   suggester: Suggester | None, directory: Path,
                   rules: DetectionRules = DEFAULT_RULES) -> tuple[Path, int]:
    """Write the reviewer's annotations (saved or only in memory) and the unannotated empty
    turns to a new CSV file; returns where and how many rows.

    Raises:
        OSError: the file cannot be written (nothing is left half-written).
    """
    from replay.core.publish.export import export_rows, write_file

    rows = export_rows(session, list(store.all().values()), labels, all_empty=True,
                       suggester=suggester, rules=rules)
    target = free_path(directory, export_name(session))
    return target, write_file(rows, target, "csv")
