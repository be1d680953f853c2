"""Moving through a session: empty-turn index, search, role filter, go-to, playback timing."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

from replay.core.detection.empty import (
    DEFAULT_RULES,
    REPLY_WINDOW,
    DetectionRules,
    is_empty,
    is_stop,
)
from replay.core.index.turn_marks import Indices
from replay.core.session import lifted
from replay.core.session.harness import as_shown
from replay.core.session.model import Kind, Part, Session, Turn, TurnColumns

SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
"""Playback speeds offered by + and -."""

FIXED_STEP = 1.0
"""Seconds per turn at 1x when the session has no usable timestamps."""


def turn_search_text(turn: Turn, parts: Sequence[Part] | None = None) -> str:
    """The text a search looks through: id, role, model and every part's words (of `parts`
    when given: the turn's parts read back whole)."""
    pieces = [turn.id, turn.role]
    pieces.extend(text for part in (turn.parts if parts is None else parts)
                  if (text := part_search_text(part)))
    return "\n".join(pieces)


WholeParts = Callable[[Turn], Sequence[Part]]
"""The parts of a turn with its shortened texts read back whole (`Session.full_parts`)."""


def turn_holds(turn: Turn, needle: str, cancelled: Callable[[], bool] | None = None,
               whole: WholeParts | None = None) -> bool:
    """True when the turn's search text holds `needle` (casefolded), its texts left in their
    file (`lifted`) looked through a run at a time, not decoded whole (and no further once
    `cancelled` says so: False).

    A part a reader shortened (`Part.shortened`: any text over `PREVIEW_CHARS` held in
    memory is cut to its head) is looked through whole when `whole` reads it back: a word
    past a long message's head is in the turn as the screen shows it unfolded."""
    if _holds(turn, turn.parts, needle, cancelled):
        return True
    if whole is None or not any(part.shortened for part in turn.parts):
        return False
    if cancelled is not None and cancelled():
        return False
    parts = whole(turn)
    return parts is not turn.parts and _holds(turn, parts, needle, cancelled)


def _holds(turn: Turn, parts: Sequence[Part], needle: str,
           cancelled: Callable[[], bool] | None) -> bool:
    if needle in turn_search_text(turn, parts).casefold():
        return True
    for part in parts:  # (a loop: no closure made for each turn of a count)
        if _in_file_holds(part, needle, cancelled):
            return True
    return False


def part_holds(part: Part, needle: str) -> bool:
    """`turn_holds` of one part."""
    return needle in part_search_text(part).casefold() or _in_file_holds(part, needle)


def _in_file_holds(part: Part, needle: str,
                    cancelled: Callable[[], bool] | None = None) -> bool:
    """True when a text of the part left in its file holds `needle` (False when the file no
    longer holds it, or once `cancelled` says so)."""
    try:
        return any(lifted.contains(value, needle, cancelled)
                   for value in (part.text, part.input, part.output) if lifted.holds(value))
    except OSError:
        return False


_TAGGED = re.compile(r"\s*<")
"""A text that may be a harness command (it starts with a tag)."""


def part_search_text(part: Part) -> str:
    """The words of one part a search looks through: its text as the screen shows it (a
    harness command as `/clear args`, `! ls`, `⎿ output`: `as_shown`; any other text as
    written), name, input and output."""
    text = part.text
    if text and part.kind == Kind.TEXT and _TAGGED.match(text):
        text = as_shown(text) or text
    return "\n".join(piece for piece in (text, part.name, part.input, part.output) if piece)


def first_text(turn: Turn) -> str:
    """The first non-blank text of a turn, for previews."""
    for part in turn.parts:
        if part.kind == Kind.TEXT and part.text.strip():
            return part.text
    return ""


@dataclass(slots=True)
class Navigator:
    """Index of a session's empty turns and the moves a reviewer makes over it."""

    session: Session
    """The session navigated."""
    rules: DetectionRules = DEFAULT_RULES
    """What counts as empty."""
    live: bool = False
    """The session is followed as it grows: a request waits for its reply until a notice or
    the next request says none is coming (see `missing_reply`)."""
    empty_indices: Indices = field(init=False, default_factory=Indices)
    """Sorted indices of the stops among the turns indexed so far: empty turns, and requests
    whose missing reply is a stop (the stop is the placeholder after the request)."""
    placeholders: set[int] = field(init=False, default_factory=set)
    """The stops of `empty_indices` that are missing replies, by their request's index."""
    _indexed: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.refresh()

    @property
    def count(self) -> int:
        """Number of turns."""
        return len(self.session.turns)

    def refresh(self, changed_from: int | None = None,
                upto: int | None = None) -> Sequence[int]:
        """Index turns added (or changed from `changed_from`) since the last call.

        `upto` leaves the turns from that index on unindexed (a live turn still being
        written is no empty turn yet); the next call looks at them again.
        Returns the indices of empty turns newly found.
        """
        start = self._indexed if changed_from is None else min(changed_from, self._indexed)
        if self.rules.missing_replies:
            # Whether a request got a reply depends on the turns after it: look again at the
            # recent ones when more arrive.
            start = max(0, start - REPLY_WINDOW)
        known: set[int] = set()
        if start < self._indexed:
            cut = bisect_left(self.empty_indices, start)
            if changed_from is None:
                known = set(self.empty_indices[cut:])  # looked at again, not changed
            del self.empty_indices[cut:]
            self.placeholders = {i for i in self.placeholders if i < start}
        turns = self.session.turns
        end = len(turns) if upto is None else max(0, min(upto, len(turns)))
        found: Sequence[int]
        if isinstance(turns, TurnColumns):
            found = turns.stops(start, end, self.rules, live=self.live)
        else:
            found = [i for i in range(start, end)
                     if is_stop(self.session, i, self.rules, live=self.live)]
        self.empty_indices.extend(found)
        if self.rules.missing_replies:
            # A request is never empty itself (it holds the person's words): a stop there is
            # the missing reply after it.
            empty_at = turns.empty_at if isinstance(turns, TurnColumns) else \
                (lambda at, rules: is_empty(turns[at], rules))
            self.placeholders.update(i for i in found if not empty_at(i, self.rules))
        self._indexed = max(start, end)
        return found if not known else [i for i in found if i not in known]

    def is_empty_at(self, index: int) -> bool:
        """True when the turn at `index` is empty."""
        position = bisect_left(self.empty_indices, index)
        return position < len(self.empty_indices) and self.empty_indices[position] == index

    def is_placeholder(self, index: int) -> bool:
        """True when the stop at `index` is the missing reply after that request."""
        return index in self.placeholders

    def is_empty_turn_at(self, index: int) -> bool:
        """True when the turn at `index` itself is empty (not a request missing its reply)."""
        return index not in self.placeholders and self.is_empty_at(index)

    def next_empty(self, index: int) -> int | None:
        """The first empty turn after `index`."""
        position = bisect_right(self.empty_indices, index)
        return self.empty_indices[position] if position < len(self.empty_indices) else None

    def previous_empty(self, index: int) -> int | None:
        """The last empty turn before `index`."""
        position = bisect_left(self.empty_indices, index)
        return self.empty_indices[position - 1] if position > 0 else None

    def empty_ordinal(self, index: int) -> int | None:
        """1-based number of the empty turn at `index` among all empty turns."""
        position = bisect_left(self.empty_indices, index)
        if position < len(self.empty_indices) and self.empty_indices[position] == index:
            return position + 1
        return None

    def step(self, index: int, delta: int, role: str | None = None) -> int:
        """Move `delta` turns (only through turns of `role` when given), clamped to the ends."""
        turns = self.session.turns
        if not turns:
            return 0
        if role is None:
            return max(0, min(len(turns) - 1, index + delta))
        direction = 1 if delta > 0 else -1
        position = index
        remaining = abs(delta)
        role_at = turns.role_at if isinstance(turns, TurnColumns) else \
            (lambda at: turns[at].role)
        while remaining:
            candidate = position + direction
            while 0 <= candidate < len(turns) and role_at(candidate) != role:
                candidate += direction
            if not 0 <= candidate < len(turns):
                break
            position = candidate
            remaining -= 1
        return position

    def search(self, query: str, start: int, forward: bool = True,
               cancelled: Callable[[], bool] | None = None) -> int | None:
        """The next turn (wrapping) whose text contains `query`, case-insensitively; None
        when none does (or when `cancelled` says to stop, asked before each turn read)."""
        stop = cancelled or _never
        needle = query.casefold()
        turns = self.session.turns
        if not needle or not turns:
            return None
        total = len(turns)
        direction = 1 if forward else -1
        whole = self.whole_parts  # (one bound method, not one a turn)
        candidates = turns.lines_with(query) if isinstance(turns, TurnColumns) else None
        if candidates is not None:
            # Only turns whose records hold the words can match: read those back, in order.
            # (Sorted: split where `start` falls, read in place, not sliced: a one-letter
            # needle has nearly every turn of a 417,000-turn session as a candidate.)
            low, cut = bisect_left(candidates, start), bisect_right(candidates, start)
            positions = chain(range(cut, len(candidates)), range(low)) if forward else \
                chain(range(low - 1, -1, -1), range(len(candidates) - 1, cut - 1, -1))
            order = chain(map(candidates.__getitem__, positions), [start] if low < cut else [])
            return next((index for index in order if not stop()
                         and turn_holds(turns[index], needle, stop, whole)), None)
        for offset in range(1, total + 1):
            index = (start + direction * offset) % total
            if stop():
                return None
            if turn_holds(turns[index], needle, stop, whole):
                return index
        return None

    def whole_parts(self, turn: Turn) -> list[Part]:
        """The turn's parts with its shortened texts read back from the source, those left
        in their file kept there (`Session.full_parts`, `in_file`): what a search of a
        shortened turn looks through."""
        return self.session.full_parts(turn, in_file=True)

    @staticmethod
    def next_hit(hits: Sequence[int], start: int, forward: bool = True) -> int | None:
        """The hit after `start` in `hits` (sorted; before it when not `forward`), wrapping,
        `start` itself last: what `search` finds, from a `matches` list already at hand."""
        if not hits:
            return None
        if forward:
            return hits[bisect_right(hits, start) % len(hits)]
        return hits[bisect_left(hits, start) - 1]

    def matches(self, query: str, cancelled: Callable[[], bool] | None = None) -> Indices:
        """Every turn whose text contains `query`, case-insensitively, in order (four bytes
        a match: `e` is in most of a million turns), as far as `cancelled` lets it go."""
        return Indices(self.iter_matches(query, cancelled))

    def iter_matches(self, query: str,
                     cancelled: Callable[[], bool] | None = None) -> Iterator[int]:
        """`matches`, one turn at a time: a counter can show how many so far, and stop
        (`cancelled`, asked before each turn is read: a huge indexed session reads each
        candidate back from its file)."""
        stop = cancelled or _never
        needle = query.casefold()
        if not needle:
            return
        turns = self.session.turns
        whole = self.whole_parts  # (one bound method, not one a turn)
        candidates = turns.lines_with(query) if isinstance(turns, TurnColumns) else None
        for index in range(len(turns)) if candidates is None else candidates:
            if stop():
                return
            if turn_holds(turns[index], needle, stop, whole) and not stop():
                yield index

    def delay_after(self, index: int, speed: float, idle_cap: float) -> float:
        """Seconds to wait before showing the turn after `index` during playback.

        Follows the real clock between the two turns, compresses idle gaps to `idle_cap`
        (as asciinema's idle limit does), and falls back to a fixed rate without timestamps.
        """
        turns = self.session.turns
        speed = max(speed, 0.01)
        if index + 1 >= len(turns):
            return FIXED_STEP / speed
        if isinstance(turns, TurnColumns):
            here, after = turns.time_at(index), turns.time_at(index + 1)
        else:
            here, after = turns[index].time, turns[index + 1].time
        if here is None or after is None:
            return FIXED_STEP / speed
        gap = max(0.0, after - here)
        return min(max(gap, 0.05), idle_cap) / speed


def _never() -> bool:
    return False


def faster(speed: float) -> float:
    """The next speed up, capped at the fastest."""
    for candidate in SPEEDS:
        if candidate > speed + 1e-9:
            return candidate
    return SPEEDS[-1]


def slower(speed: float) -> float:
    """The next speed down, capped at the slowest."""
    for candidate in reversed(SPEEDS):
        if candidate < speed - 1e-9:
            return candidate
    return SPEEDS[0]
