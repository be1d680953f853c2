"""A review queue: the empty turns of many sessions as one stream, filtered and maybe sampled."""

from __future__ import annotations

import hashlib
import os
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from replay.core.annotate.annotations import default_journal_path, session_identity
from replay.core.annotate.queue_sources import SessionRef, SourceProblem, iter_refs
from replay.core.detection.empty import DEFAULT_RULES, DetectionRules, Suggester, find_empty_turns
from replay.core.session.model import Session

__all__ = [
    "AnnotatedReader",
    "QueueEntry",
    "QueueFilters",
    "QueueMemo",
    "QueueSession",
    "ReviewQueue",
    "allocate",
    "build_queue",
    "index_corpus",
    "index_session",
    "load_annotated",
    "resolve_position",
    "sample_entries",
]


@dataclass(frozen=True, slots=True)
class QueueSession:
    """One session of the queue, known without keeping it in memory."""

    ref: SessionRef
    """How to read it again."""
    label: str
    """Its title, id or file name."""
    format: str
    """Reader name."""
    identity: str
    """The session id written into journal records (`session_identity`)."""
    journal: str
    """Its default annotation journal."""
    turns: int
    """Number of turns when it was indexed."""


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One empty turn to review."""

    session: int
    """Position of its session in `ReviewQueue.sessions`."""
    index: int
    """0-based turn index in that session."""
    turn_id: str
    """The turn's own id (what annotations are keyed by)."""
    role: str
    """`user` or `assistant`."""
    reason: str
    """Why it is empty (reason code)."""
    suggestion: str | None = None
    """The suggested label, when the suggester had one."""

    @property
    def number(self) -> int:
        """The `#N` a person sees."""
        return self.index + 1


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """Which empty turns go into the queue, and how many of them."""

    reasons: frozenset[str] = frozenset()
    """Only these reason codes (every one when empty)."""
    suggestion: str | None = None
    """Only turns with this suggested label."""
    format: str | None = None
    """Only sessions of this format."""
    sample: int | None = None
    """Draw this many turns (stratified by format and reason) instead of taking all."""
    seed: int = 0
    """Seed of the draw: the same seed over the same corpus draws the same turns."""

    def keeps(self, entry: QueueEntry, session: QueueSession) -> bool:
        """True when the entry passes the reason, suggestion and format filters."""
        return ((not self.reasons or entry.reason in self.reasons)
                and (self.suggestion is None or entry.suggestion == self.suggestion)
                and (self.format is None or session.format == self.format))


@dataclass(slots=True)
class ReviewQueue:
    """Entries in review order (session by session, turn by turn) and the moves over them."""

    sessions: list[QueueSession]
    """Sessions holding at least one entry, in queue order."""
    entries: list[QueueEntry]
    """Every entry, ordered by (session, index)."""
    complete: bool = True
    """False while sessions are still being read and added (`extend`): the queue so far is
    its final beginning, more may follow."""
    _keys: list[tuple[int, int]] = field(init=False, default_factory=list)
    _by_turn: dict[tuple[int, str], int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self._keys = [(entry.session, entry.index) for entry in self.entries]
        if self._keys != sorted(self._keys):
            raise ValueError("queue entries must be ordered by session, then turn")
        self._by_turn = {(entry.session, entry.turn_id): position
                         for position, entry in enumerate(self.entries)}

    def __len__(self) -> int:
        return len(self.entries)

    def extend(self, session: QueueSession, entries: Sequence[QueueEntry]) -> int:
        """Add the next session and its entries (any `session` number; ordered by index) at
        the end of a growing queue; returns the session's number in the queue."""
        number = len(self.sessions)
        self.sessions.append(session)
        for entry in sorted(entries, key=lambda e: e.index):
            self._by_turn[(number, entry.turn_id)] = len(self.entries)
            self._keys.append((number, entry.index))
            self.entries.append(QueueEntry(number, entry.index, entry.turn_id, entry.role,
                                           entry.reason, entry.suggestion))
        return number

    def first_unannotated(self, annotated: Callable[[QueueEntry], bool]) -> int | None:
        """The first entry `annotated` says is not annotated (no wrapping round)."""
        return next((position for position, entry in enumerate(self.entries)
                     if not annotated(entry)), None)

    def position_of(self, session: int, index: int) -> int | None:
        """The queue position of the entry at this turn, or None when it is not in the queue."""
        position = bisect_left(self._keys, (session, index))
        if position < len(self._keys) and self._keys[position] == (session, index):
            return position
        return None

    def position_of_turn(self, session: int, turn_id: str) -> int | None:
        """The queue position of a turn by its id (indices may shift when a file grows)."""
        return self._by_turn.get((session, turn_id))

    def next_after(self, session: int, index: int) -> int | None:
        """The first entry after this turn, in this session or a later one."""
        position = bisect_right(self._keys, (session, index))
        return position if position < len(self._keys) else None

    def previous_before(self, session: int, index: int) -> int | None:
        """The last entry before this turn, in this session or an earlier one."""
        position = bisect_left(self._keys, (session, index))
        return position - 1 if position > 0 else None

    def last_at_or_before(self, session: int, index: int) -> int | None:
        """The entry at this turn, else the last one before it (None before the first)."""
        position = bisect_right(self._keys, (session, index))
        return position - 1 if position > 0 else None

    def entries_of(self, session: int) -> range:
        """Queue positions of one session's entries."""
        return range(bisect_left(self._keys, (session, -1)),
                     bisect_left(self._keys, (session + 1, -1)))

    def next_unannotated(self, after: int, annotated: Callable[[QueueEntry], bool]) -> int | None:
        """The first entry after position `after` (wrapping round, `after` itself last) that
        `annotated` says is not annotated; None when every one is."""
        total = len(self.entries)
        for offset in range(1, total + 1):
            position = (after + offset) % total
            if not annotated(self.entries[position]):
                return position
        return None


def index_session(
    ref: SessionRef, session: Session, rules: DetectionRules = DEFAULT_RULES,
    suggester: Suggester | None = None,
) -> tuple[QueueSession, list[QueueEntry]]:
    """What the queue keeps of a session once it is let go: a summary and its empty turns."""
    summary = QueueSession(ref=ref, label=session.label, format=session.format,
                           identity=session_identity(session),
                           journal=str(default_journal_path(session)), turns=len(session.turns))
    entries = [QueueEntry(0, empty.index, empty.id, empty.role, empty.reason, empty.suggestion)
               for empty in find_empty_turns(session, rules, suggester)]
    return summary, entries


def build_queue(
    indexed: Iterable[tuple[QueueSession, Sequence[QueueEntry]]], filters: QueueFilters
) -> ReviewQueue:
    """The queue over indexed sessions: filtered, sampled, sessions without entries left out.

    Each session's entries carry any `session` number; they are renumbered in queue order.
    """
    sessions: list[QueueSession] = []
    candidates: list[tuple[QueueSession, QueueEntry]] = []
    for session, entries in indexed:
        kept = [entry for entry in entries if filters.keeps(entry, session)]
        candidates.extend((session, entry) for entry in kept)
    if filters.sample is not None:
        candidates = sample_entries(candidates, filters.sample, filters.seed)
    numbers: dict[str, int] = {}
    entries_out: list[QueueEntry] = []
    for session, entry in candidates:
        number = numbers.get(session.ref.name)
        if number is None:
            number = numbers[session.ref.name] = len(sessions)
            sessions.append(session)
        entries_out.append(QueueEntry(number, entry.index, entry.turn_id, entry.role,
                                      entry.reason, entry.suggestion))
    return ReviewQueue(sessions, entries_out)


def _draw_score(seed: int, session: QueueSession, entry: QueueEntry) -> str:
    """A reproducible pseudo-random rank of one turn: independent of where the corpus lies on
    disk when the session has its own id, and of the order the paths were given in."""
    text = f"{seed}\x00{session.format}\x00{session.identity}\x00{entry.turn_id}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def allocate(sizes: dict[tuple[str, str], int], total: int) -> dict[tuple[str, str], int]:
    """How many turns to draw from each stratum: proportional to its size (largest
    remainders), at least one from every stratum when `total` allows it."""
    population = sum(sizes.values())
    if total >= population:
        return dict(sizes)
    strata = sorted(sizes)
    quota = {key: total * sizes[key] / population for key in strata}
    counts = {key: int(quota[key]) for key in strata}
    if total >= len(strata):
        # A rare reason is the one a proportional draw would miss: keep one of each.
        counts = {key: max(1, count) for key, count in counts.items()}
    while sum(counts.values()) < total:
        key = max((k for k in strata if counts[k] < sizes[k]),
                  key=lambda k: (quota[k] - counts[k], sizes[k]))
        counts[key] += 1
    while sum(counts.values()) > total:
        floor = 1 if total >= len(strata) else 0
        key = max((k for k in strata if counts[k] > floor),
                  key=lambda k: (counts[k] - quota[k], counts[k]))
        counts[key] -= 1
    return counts


def sample_entries(
    candidates: list[tuple[QueueSession, QueueEntry]], size: int, seed: int
) -> list[tuple[QueueSession, QueueEntry]]:
    """A reproducible sample of `size` turns, stratified by format and reason, in the
    candidates' order."""
    if size < 0:
        raise ValueError("a sample size cannot be negative")
    strata: dict[tuple[str, str], list[int]] = {}
    for position, (session, entry) in enumerate(candidates):
        strata.setdefault((session.format, entry.reason), []).append(position)
    counts = allocate({key: len(members) for key, members in strata.items()}, size)
    chosen: set[int] = set()
    for key, members in strata.items():
        ranked = sorted(members, key=lambda p: _draw_score(seed, *candidates[p]))
        chosen.update(ranked[:counts[key]])
    return [candidate for position, candidate in enumerate(candidates) if position in chosen]


def load_annotated(
    queue: ReviewQueue, reviewer: str, journal: str | None = None
) -> tuple[dict[int, set[str]], list[str]]:
    """The turn ids this reviewer has annotated, by queue session, read from each session's
    journal (or the one `journal` for all); plus a line per journal that could not be read."""
    reading = AnnotatedReader(reviewer, journal)
    annotated = {number: reading.of(session) for number, session in enumerate(queue.sessions)}
    return annotated, reading.problems


class AnnotatedReader:
    """Reads the turn ids a reviewer annotated, session by session (a queue that grows asks
    for each session as it is added); each journal is read once."""

    def __init__(self, reviewer: str, journal: str | None = None) -> None:
        self.reviewer = reviewer
        self.journal = journal
        """One journal for every session, else each session's own."""
        self.problems: list[str] = []
        """A line per journal that could not be read."""
        self._records: dict[str, list[dict[str, object]]] = {}

    def of(self, session: QueueSession) -> set[str]:
        """The annotated turn ids of one queue session."""
        from replay.core.annotate.annotations import annotations_from_records
        from replay.core.annotate.journal import Journal, JournalError

        path = self.journal or session.journal
        if path not in self._records:
            try:
                self._records[path] = Journal(path).load().records if os.path.exists(path) \
                    else []
            except JournalError as error:
                self.problems.append(str(error))
                self._records[path] = []
        notes = annotations_from_records(self._records[path], session_id=session.identity,
                                         reviewer=self.reviewer)
        return {note.turn_id for note in notes}


def resolve_position(queue: ReviewQueue, session_name: str, turn_id: str,
                     ordinal: int) -> int | None:
    """The queue position of a saved place: the same turn when it is still in the queue,
    else the saved ordinal (clamped); None for an empty queue."""
    if not queue.entries:
        return None
    for number, session in enumerate(queue.sessions):
        if session.ref.name == session_name:
            found = queue.position_of_turn(number, turn_id)
            if found is not None:
                return found
            break
    return max(0, min(len(queue.entries) - 1, ordinal))


class QueueMemo(Protocol):
    """What a queue already knows of a session file (`corpus.cache.QueueMemo`: kept between
    runs while the file is unchanged)."""

    def known(self, ref: SessionRef) -> tuple[QueueSession, list[QueueEntry]] | None:
        """The session's summary and entries, when they are known; else None."""

    def keep(self, ref: SessionRef, indexed: tuple[QueueSession, list[QueueEntry]]) -> None:
        """Remember what was just read of a session `known` did not know."""


def index_corpus(
    paths: list[Path], format: str | None = None, rules: DetectionRules = DEFAULT_RULES,
    suggester: Suggester | None = None, problem: Callable[[SourceProblem], None] | None = None,
    memo: QueueMemo | None = None,
) -> Iterator[tuple[QueueSession, list[QueueEntry]]]:
    """Each session under the paths, read, indexed and let go, one at a time (a session the
    `memo` knows is not read; one it does not is kept there once read)."""
    for ref, read in iter_refs(paths, format, problem):
        found = memo.known(ref) if memo is not None else None
        if found is not None:
            yield found
            continue
        session = read()
        if session is None:
            continue
        indexed = index_session(ref, session, rules, suggester)
        if memo is not None:
            memo.keep(ref, indexed)
        yield indexed
