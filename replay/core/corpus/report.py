"""The corpus in numbers: counts over `scan --json` objects, labels and agreement.

A `CorpusReport` takes one session's object at a time and keeps only counters and a short
row per session (its empty turns included, which are few), so its memory does not grow
with the size of the sessions, only with how many there are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from replay.core.annotate.agree import AgreementReport, agreement
from replay.core.annotate.annotations import (
    Annotation,
    annotations_from_records,
    identity_for,
    key_for,
)
from replay.core.corpus.scan import report_label

GAP_BUCKETS: tuple[tuple[float, str], ...] = (
    (10.0, "< 10 s"),
    (60.0, "10 s – 1 min"),
    (600.0, "1 – 10 min"),
    (3600.0, "10 min – 1 h"),
    (6 * 3600.0, "1 – 6 h"),
    (86400.0, "6 – 24 h"),
    (float("inf"), "≥ 1 day"),
)
"""Upper bounds (seconds, exclusive) and names of the bins of the gap before an empty turn."""

NO_GAP = "no time"
"""The bin of empty turns whose gap cannot be told (no timestamps)."""

NO_SUGGESTION = "(none)"
"""How an empty turn without a suggestion is counted."""


def gap_bucket(seconds: float | None) -> str:
    """The name of the bin a gap falls in."""
    if seconds is None:
        return NO_GAP
    for bound, name in GAP_BUCKETS:
        if seconds < bound:
            return name
    return GAP_BUCKETS[-1][1]


@dataclass(slots=True)
class SessionRow:
    """What the report keeps of one session."""

    label: str
    """Title, else id, else file name (untrusted text: escape it when shown)."""
    path: str
    """Where it was read from."""
    format: str
    """Reader name."""
    identity: str
    """The session id annotations are keyed by."""
    key: str
    """The file-name-safe key (its default journal's name; its anchor in the HTML report)."""
    turns: int
    """Number of turns."""
    empty_turns: Sequence[dict[str, Any]]
    """Its `scan --json` empty turns, as the report held them (an `EncodedList` from a scan:
    each read anew, so change them by replacing the whole sequence)."""
    annotations: dict[str, list[Annotation]] = field(default_factory=dict)
    """Latest annotations per turn id, every reviewer, once journals are read."""

    @property
    def rate(self) -> float:
        """Empty turns per turn."""
        return len(self.empty_turns) / self.turns if self.turns else 0.0


@dataclass(slots=True)
class FormatCount:
    """Sessions, turns and empty turns of one format."""

    sessions: int = 0
    turns: int = 0
    empty: int = 0


@dataclass(slots=True)
class CorpusReport:
    """Counts over a corpus, fed one `scan --json` object at a time."""

    sessions: list[SessionRow] = field(default_factory=list)
    """Every session, in scan order."""
    formats: dict[str, FormatCount] = field(default_factory=dict)
    """Counts by format."""
    roles: Counter[str] = field(default_factory=Counter)
    """Empty turns by role."""
    reasons: Counter[str] = field(default_factory=Counter)
    """Empty turns by reason code."""
    suggestions: Counter[str] = field(default_factory=Counter)
    """Empty turns by suggested label."""
    gaps: Counter[str] = field(default_factory=Counter)
    """Empty turns by bin of the gap before them."""
    skipped_records: int = 0
    """Input records that could not be read, over every session."""
    labels: Counter[str] = field(default_factory=Counter)
    """Annotations by label (every reviewer's latest), once journals are read."""
    annotated_turns: int = 0
    """Empty turns with at least one annotation."""
    agreement: AgreementReport | None = None
    """Agreement between reviewers, when two or more annotated."""

    @property
    def turns(self) -> int:
        """Turns over every session."""
        return sum(count.turns for count in self.formats.values())

    @property
    def empty(self) -> int:
        """Empty turns over every session."""
        return sum(count.empty for count in self.formats.values())

    def add(self, report: Mapping[str, Any]) -> None:
        """Count one session's `scan --json` object."""
        # Kept as the scan gave them: a session of 100,000 empty turns holds them encoded.
        empty_turns = report["empty_turns"]
        if not isinstance(empty_turns, Sequence):
            empty_turns = list(empty_turns)
        counts = self.formats.setdefault(report["format"], FormatCount())
        counts.sessions += 1
        counts.turns += report["turns"]
        counts.empty += len(empty_turns)
        self.skipped_records += report["skipped"]
        for empty in empty_turns:
            self.roles[empty["role"]] += 1
            self.reasons[empty["reason"]] += 1
            self.suggestions[empty["suggestion"] or NO_SUGGESTION] += 1
            self.gaps[gap_bucket(empty.get("gap_before"))] += 1
        self.sessions.append(SessionRow(
            label=report_label(report), path=str(report["path"]), format=report["format"],
            identity=identity_for(report["session_id"], str(report["path"])),
            key=key_for(report["format"], report["session_id"], str(report["path"])),
            turns=report["turns"], empty_turns=empty_turns))

    def add_annotations(self, records: Iterable[dict[str, Any]]) -> None:
        """Attach the journal records of this corpus's sessions: labels and agreement."""
        by_identity = {row.identity: row for row in self.sessions}
        empty_ids = {(row.identity, empty["id"]) for row in self.sessions
                     for empty in row.empty_turns}
        mine = [record for record in records if record.get("session_id") in by_identity]
        for note in annotations_from_records(mine):
            row = by_identity[note.session_id]
            row.annotations.setdefault(note.turn_id, []).append(note)
            self.labels[note.label] += 1
        self.annotated_turns = sum(
            1 for row in self.sessions for turn_id in row.annotations
            if (row.identity, turn_id) in empty_ids)
        report = agreement(mine)
        self.agreement = report if len(report.reviewers) >= 2 else None

    def silent_sessions(self, limit: int = 10) -> list[SessionRow]:
        """The sessions with the highest share of empty turns (ties: more empty turns first)."""
        with_empty = [row for row in self.sessions if row.empty_turns]
        with_empty.sort(key=lambda row: (-row.rate, -len(row.empty_turns), row.label))
        return with_empty[:limit]

    def gap_rows(self) -> list[tuple[str, int]]:
        """Every gap bin in order with its count (zeros kept so the shape reads right)."""
        names = [name for _, name in GAP_BUCKETS] + [NO_GAP]
        return [(name, self.gaps.get(name, 0)) for name in names]
