"""What the signals learnt about a session's turns, kept from one empty turn to the next.

A scan judges its empty turns in order, and neighbouring empty turns ask the same questions:
who spoke next, what they wrote, which earlier messages they might repeat. On a file of
mostly empty turns (a ShareGPT export with a blank reply every other message) asking them
again for each empty turn walked hundreds of turns each time. `TurnMemo` keeps the answers:

- `answers`: a signal's answer for one turn, by (question, index);
- `UserLog`: the indices of the user turns with words over a stretch of turns, so the last few
  before a turn are found by bisection instead of a walk back.

Only *settled* turns are kept: a followed session's last turns may still grow (the rest of a
response, a provisional reasoning step replaced), so an answer is kept only when every turn it
read lies before the last `UNSETTLED` ones. Answers are bounded (two generations of
`GENERATION` each) and the log keeps a stretch of `USER_LOG_SPAN` turns' worth, so a
session of a million turns holds no more than a short one. A memo belongs to one session and
to one turn sequence: when `session.turns` is replaced, the memo starts again. Settled turns
may still be rewritten (a Gemini message written again, an opencode event for an earlier
message, a followed file's turn that changed): the reader then bumps `session.revision`
(`Session.revise`), and the memo starts again too.
"""

from __future__ import annotations

import weakref
from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from replay.core.session.model import Session, Turn

UNSETTLED = 2
"""The last turns of a session, which may still change while it is being written."""

GENERATION = 1024
"""Answers kept per generation (the newest two generations are kept): the questions about
one empty turn reach a few dozen turns back, so a few hundred empty turns' answers are
plenty, and a session in the app keeps no more than that whatever its length."""

MISSING: Any = object()
"""`Recent.get`'s answer for a key it does not hold (None is an answer)."""


class Recent:
    """A dict of the newest answers: when one generation is full it becomes the old one, and
    the generation before it is dropped."""

    __slots__ = ("_new", "_old")

    def __init__(self) -> None:
        self._new: dict[Hashable, Any] = {}
        self._old: dict[Hashable, Any] = {}

    def get(self, key: Hashable) -> Any:
        """The answer kept for `key`, else `MISSING`."""
        found = self._new.get(key, MISSING)
        if found is MISSING:
            found = self._old.get(key, MISSING)
        return found

    def put(self, key: Hashable, value: Any) -> None:
        """Keep an answer."""
        if len(self._new) >= GENERATION:
            self._old, self._new = self._new, {}
        self._new[key] = value

    def __len__(self) -> int:
        return len(self._new) + len(self._old)


USER_LOG_SPAN = 2048
"""Turns of user-turn indices the log keeps behind the newest stretch asked about."""


class UserLog:
    """The indices of the turns that pass a test (user turns with words) over a stretch
    [start, end) of settled turns, kept in order, extended as the questions move on."""

    __slots__ = ("start", "end", "found")

    def __init__(self) -> None:
        self.start = 0
        self.end = 0
        self.found: list[int] = []

    def nearest(self, turns: Any, index: int, low: int, count: int,
                test: Callable[[Turn], bool]) -> list[int]:
        """Up to `count` indices of turns in [low, index) that pass `test`, nearest first;
        every turn below `index` settled. Reads only turns it has not read yet, and going
        back only as far as it must (as a walk back would)."""
        if index < self.start:
            self.start = self.end = index  # before what is held: start again here
            self.found = []
        elif index > self.end:
            # Back from `index` as a walk would, until enough are found or the stretch held
            # is reached (which then runs up to `index`).
            stop = max(low, self.end)
            newer, position = _walk_back(turns, index, stop, count, test)
            if position > self.end or self.end < low:
                self.start, self.end, self.found = position, index, newer
            else:
                self.found.extend(newer)
                self.end = index
        found = self.found
        position = bisect_left(found, index)
        nearest: list[int] = []
        while position > 0 and len(nearest) < count:
            position -= 1
            if found[position] < low:
                break
            nearest.append(found[position])
        if len(nearest) < count and self.start > low:
            # Back past the start of the stretch, until enough are found (or `low`).
            earlier, start = _walk_back(turns, self.start, low, count - len(nearest), test)
            nearest.extend(reversed(earlier))
            found[:0] = earlier
            self.start = start
        if low - self.start > 2 * USER_LOG_SPAN:  # let go of what is far behind
            keep = low - USER_LOG_SPAN
            del found[:bisect_left(found, keep)]
            self.start = keep
        return nearest


def _walk_back(turns: Any, index: int, stop: int, count: int,
               test: Callable[[Turn], bool]) -> tuple[list[int], int]:
    """The indices in [stop, index) of turns passing `test`, walking back from `index` until
    `count` are found (in order), and the lowest index read (`index` when none was)."""
    found: list[int] = []
    position = index
    # One slice, read backwards: a turn window answers a slice at once, an index at a time
    # through Python. (A window that let go of the slice's start is read turn by turn: the
    # walk may stop before it gets there.)
    stretch: Iterable[Turn]
    try:
        stretch = reversed(turns[stop:index])
    except IndexError:
        stretch = (turns[at] for at in range(index - 1, stop - 1, -1))
    for turn in stretch:
        if len(found) >= count:
            break
        position -= 1
        if test(turn):
            found.append(position)
    found.reverse()
    return found, position


class TurnMemo:
    """Everything kept about one session's turns (see the module's docstring)."""

    __slots__ = ("turns", "revision", "answers", "users")

    def __init__(self, turns: object, revision: int = 0) -> None:
        self.turns = turns
        """The turn sequence the answers are about."""
        self.revision = revision
        """The session's `revision` the answers are about."""
        self.answers = Recent()
        self.users = UserLog()

    def settled(self) -> int:
        """Turns below this index no longer change."""
        return len(self.turns) - UNSETTLED  # type: ignore[arg-type]


_MEMOS: weakref.WeakKeyDictionary[Session, TurnMemo] = weakref.WeakKeyDictionary()


_last: list[Any] = [None, None]
"""The session asked about last (a weak reference) and its memo: the signals of one empty
turn ask for the memo dozens of times."""


def memo_of(session: Session) -> TurnMemo:
    """The session's memo (a new one when its turns were replaced or rewritten)."""
    last, memo = _last
    if (last is not None and last() is session and memo.turns is session.turns
            and memo.revision == session.revision):
        return memo  # type: ignore[no-any-return]
    memo = _MEMOS.get(session)
    if memo is None or memo.turns is not session.turns or memo.revision != session.revision:
        memo = TurnMemo(session.turns, session.revision)
        _MEMOS[session] = memo
    _last[0], _last[1] = weakref.ref(session), memo
    return memo


def forget(session: Session) -> None:
    """Drop what is kept about a session (tests, or a caller that changed its turns)."""
    _MEMOS.pop(session, None)
    _last[0] = _last[1] = None
