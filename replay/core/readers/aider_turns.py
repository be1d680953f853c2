"""One Aider chat's turns held as a few bytes of columns each, whole turns read again from
the chat's exchanges when asked for.

A chat of 50 MB is about a million turns: as `Turn` objects that is over a gigabyte, and
even read back by blocks, every loop over the turns (the navigator's stops, the timeline's
sizes, the suggester's figures) re-read the chat. `ExchangeTurns` keeps, per turn, what those
loops ask (role, which part kinds show something, request and notice flags, text size: 8
bytes), and reads a whole turn back by reading its *exchange* again (a prompt up to the
next: `aider._Marks` says where each starts and what a read from there needs), a few
hundred turns kept around the reviewer's position.

It fills while the chat is read (a worker adds each turn, the screen reads the ones it has):
the newest turns stay whole until a later one exists, since Aider's builder changes only
its last turn (a token count, a `^C`, the text of a cut reply). Turn ids are made, not
held: a chat's turn `n` is `"{chat number}-{n + 1}"`, as the builder names them.
"""

from __future__ import annotations

import bisect
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import Protocol, overload

from replay.core.detection.empty import REPLY_WINDOW, DetectionRules
from replay.core.index.needle_bytes import (
    Found,
    line_end,
    lines_holding_by_chunk,
    search_start,
    shown_lines_holding,
)
from replay.core.index.turn_index import (
    KIND_BITS,
    NOTICE,
    REQUEST,
    ROLES,
    TurnIndex,
    TurnSlice,
)
from replay.core.index.turn_marks import Indices, mark, mark_range, mark_where, marked
from replay.core.readers.file_window import WindowFile
from replay.core.session.model import Kind, Part, Turn, TurnColumns

TAIL = 8
"""Newest turns kept whole while the chat is read (only the last can still change)."""
CACHE = 512
"""Turns kept whole once read back (the reviewer's neighbourhood)."""
CACHE_CHARS = 64 << 20
"""Characters of text kept in those turns at most (a chat of a few 50 MB replies)."""

_TEXT, _ERROR = KIND_BITS[Kind.TEXT], KIND_BITS[Kind.ERROR]
_TOOLS = KIND_BITS[Kind.TOOL_CALL] | KIND_BITS[Kind.TOOL_RESULT]
_ROLE_CODE = {role: code for code, role in enumerate(ROLES)}
MADE_UP = ("keyboardinterrupt", "unreadable")
"""Words a search finds in a turn that its lines need not hold: the name of an error part
(casefolded), which a `^C again to exit` line does not spell."""


class Marks(Protocol):
    """Where each exchange of the chat starts (`aider._Marks`)."""

    offsets: array[int]
    firsts: array[int]

    def __len__(self) -> int: ...


ReadBack = Callable[[int, int], tuple[list[Turn], bool]]
"""(exchange, turns wanted) -> the chat's turns from the start of that exchange (-1: the
chat's own start), read again from the file, and whether they are the whole exchange. Not
whole: the read stopped once it had the turns wanted (the next exchange's start is not known
yet), so its last turn may be unfinished."""


class ExchangeTurns(TurnColumns):
    """The turns of one Aider chat: 8 bytes of columns each, whole turns on demand."""

    def __init__(self, path: str, number: int, marks: Marks, read_back: ReadBack) -> None:
        self.path = path
        self._named = False  # `TurnIndex._values` asks: no turn names a record
        self._number = number
        self._marks = marks
        self._read_back = read_back
        self._count = 0
        self._base = 0
        """Turns before this index have columns (and are final)."""
        self._tail: dict[int, Turn] = {}
        self._role = array("b")
        self._shown = array("H")
        self._flags = array("B")
        self._size = array("I")
        self._times: dict[int, float] = {}
        """The few turns with a time (the banner's header time)."""
        self._done = False
        self._cache: OrderedDict[int, Turn] = OrderedDict()
        self._cached_chars = 0
        self._lock = threading.Lock()
        self._searching = threading.Lock()
        """Held by `lines_with`: one search at a time."""
        self._masks: dict[frozenset[str], int] = {}
        self._found: Found | None = None
        self._cr: tuple[tuple[int, int], bool] | None = None
        self.memo: dict[object, object] = {}
        self.exchanges_read = 0
        """Exchanges read back from the file so far (for tests and benchmarks)."""

    # ------------------------------------------------------------------ growing

    def append(self, turn: Turn) -> None:
        """Add the next turn (`Session.add`); the one before the newest few becomes final."""
        self._tail[turn.index] = turn
        self._count = turn.index + 1
        self.memo.clear()
        while len(self._tail) > TAIL:
            self._settle()

    def changed(self, turn: Turn) -> None:
        """The builder changed a turn it added (its newest: still whole here)."""
        self.memo.clear()
        if turn.index < self._base:  # not expected of Aider's builder: take it again
            self._columns(turn, at=turn.index)

    def finish(self) -> None:
        """Every turn is read: the newest ones are final too."""
        while self._tail:
            self._settle()
        self._done = True

    @property
    def done(self) -> bool:
        """True once the whole chat has been read."""
        return self._done

    def _settle(self) -> None:
        index = self._base
        turn = self._tail[index]
        self._columns(turn)
        self._base = index + 1
        del self._tail[index]  # after its columns: a reader finds it one way or the other

    def _columns(self, turn: Turn, at: int | None = None) -> None:
        values = TurnIndex._values(self, turn)  # type: ignore[arg-type]  # the same columns
        if values is None:  # an error part a read-back made, or no source: as shown
            role, shown, flags, size = _ROLE_CODE.get(turn.role, 2), _ERROR, 0, 0
        else:
            role, shown, _, flags, _, _, size, _ = values
        if turn.time is not None:
            self._times[turn.index] = turn.time
        if at is None:
            self._role.append(role)
            self._shown.append(shown)
            self._flags.append(flags)
            self._size.append(size)
        else:
            self._role[at], self._shown[at], self._flags[at], self._size[at] = \
                role, shown, flags, size

    def last_offset(self) -> int:
        """Where the newest turn starts in the file (how far the chat has been read)."""
        turn = self._tail.get(self._count - 1)
        if turn is None or turn.source is None or not turn.source.spans:
            return 0
        return turn.source.spans[0][0]

    # ------------------------------------------------------------------ sequence

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    @overload
    def __getitem__(self, key: int) -> Turn: ...

    @overload
    def __getitem__(self, key: slice) -> Sequence[Turn]: ...

    def __getitem__(self, key: int | slice) -> Turn | Sequence[Turn]:
        if isinstance(key, slice):
            return TurnSlice(self, range(len(self))[key])
        index = key + self._count if key < 0 else key
        if not 0 <= index < self._count:
            raise IndexError(f"turn {key} is out of range ({self._count} turns)")
        return self._whole(index)

    def __iter__(self) -> Iterator[Turn]:
        for index in range(len(self)):
            yield self._whole(index)

    def _whole(self, index: int) -> Turn:
        turn = self._tail.get(index)
        if turn is not None:
            return turn
        with self._lock:
            turn = self._cache.get(index)
            if turn is not None:
                self._cache.move_to_end(index)
                return turn
        return self._read_exchange(index)

    def whole_now(self, index: int) -> Turn | None:
        """The turn when it is whole in memory (newest, or read back lately), else None."""
        turn = self._tail.get(index)
        if turn is not None:
            return turn
        with self._lock:
            return self._cache.get(index)

    def _exchange_of(self, index: int) -> int:
        """The exchange holding the turn at `index` (-1: the chat's start, before a mark)."""
        return bisect.bisect_right(self._marks.firsts, index) - 1

    def _read_exchange(self, index: int) -> Turn:
        """Read the turn's exchange again; keep its final turns."""
        exchange = self._exchange_of(index)
        marks = self._marks
        first = marks.firsts[exchange] if exchange >= 0 else 0
        self.exchanges_read += 1
        try:
            turns, whole = self._read_back(exchange, index + 2 - first)
        except (OSError, ValueError) as error:
            return self._unreadable(index, f"this turn could not be read back from "
                                           f"{self.path}: {error}")
        # Final: every turn of a whole exchange; of a read stopped early, those before the
        # last one read (only the newest turn can still change).
        final = min(len(turns) if whole else len(turns) - 1, self._base - first)
        after = marks.firsts[exchange + 1] if exchange + 1 < len(marks) else self._count
        if (whole and len(turns) != after - first) or index - first >= final \
                or any(turn.index != first + n for n, turn in enumerate(turns[:final])):
            return self._unreadable(index, f"{self.path}: this chat's turns changed since "
                                           "the file was read")
        wanted = turns[index - first]
        with self._lock:
            for turn in turns[:final]:
                if turn is not wanted:
                    self._keep(turn)
            self._keep(wanted)  # last: the one asked for is never let go at once
        return wanted

    def _keep(self, turn: Turn) -> None:
        """Cache a turn read back (under the lock), letting the oldest go past the bounds."""
        old = self._cache.pop(turn.index, None)
        if old is not None:
            self._cached_chars -= _chars(old)
        self._cache[turn.index] = turn
        self._cached_chars += _chars(turn)
        while len(self._cache) > 1 and (len(self._cache) > CACHE
                                        or self._cached_chars > CACHE_CHARS):
            _, oldest = self._cache.popitem(last=False)
            self._cached_chars -= _chars(oldest)

    def _unreadable(self, index: int, why: str) -> Turn:
        turn = Turn(id=self.id_at(index), role=self.role_at(index),
                    parts=[Part(Kind.ERROR, why, name="unreadable")])
        turn.index = index
        return turn

    # ------------------------------------------------------------------ columns

    def role_at(self, index: int) -> str:
        """The turn's role."""
        turn = self._tail.get(index)
        return turn.role if turn is not None else ROLES[self._role[index]]

    def id_at(self, index: int) -> str:
        """The turn's id, as the builder names it."""
        return f"{self._number}-{index + 1}"

    def time_at(self, index: int) -> float | None:
        """Epoch seconds of the turn (the banner's header time), if known."""
        turn = self._tail.get(index)
        return turn.time if turn is not None else self._times.get(index)

    def completed_at(self, index: int) -> float | None:
        """Aider writes no time a reply finished."""
        turn = self._tail.get(index)
        return turn.completed if turn is not None else None

    def text_size_at(self, index: int) -> int:
        """Characters of the turn's text parts."""
        turn = self._tail.get(index)
        if turn is not None:
            return sum(p.text_length for p in turn.parts if p.kind == Kind.TEXT)
        return self._size[index]

    def text_sizes(self, start: int, end: int) -> array[int]:
        """`text_size_at` of the turns [start, end), at once (the timeline's bars)."""
        end = min(end, len(self))
        limit = max(start, min(end, self._base))
        sizes = self._size[start:limit]
        sizes.extend(min(self.text_size_at(index), 0xFFFFFFFF) for index in range(limit, end))
        return sizes

    def _mask(self, kinds: frozenset[str]) -> int:
        mask = self._masks.get(kinds)
        if mask is None:
            mask = 0
            for kind in kinds:
                mask |= KIND_BITS.get(kind, 0)
            self._masks[kinds] = mask
        return mask

    def _values(self, index: int) -> tuple[int, int, int]:
        """(role, shown, flags) of a turn, from its columns or its whole form."""
        turn = self._tail.get(index)
        if turn is None:
            return self._role[index], self._shown[index], self._flags[index]
        values = TurnIndex._values(self, turn)  # type: ignore[arg-type]
        if values is None:
            return _ROLE_CODE.get(turn.role, 2), _ERROR, 0
        return values[0], values[1], values[3]

    def empty_at(self, index: int, rules: DetectionRules) -> bool:
        """`detect.is_empty` of the turn, from the columns."""
        role, shown, _ = self._values(index)
        if ROLES[role] not in rules.roles:
            return False
        shown &= self._mask(rules.visible_kinds)
        if not shown:
            return True
        return rules.tool_only_is_empty and role == 1 and not shown & ~_TOOLS

    def unanswered_at(self, index: int, *, live: bool = False) -> bool:
        """`detect.missing_reply(..., live=live) is not None`, from the roles and flags."""
        role, _, flags = self._values(index)
        if not flags & REQUEST:
            return False
        total = len(self)
        notices = False
        for following in range(index + 1, min(total, index + 1 + REPLY_WINDOW)):
            role, _, flags = self._values(following)
            if role == 1:
                return False
            if role == 0 and flags & REQUEST:
                return True
            notices = notices or bool(flags & NOTICE)
        if index + 1 + REPLY_WINDOW < total:
            return False
        return notices or not live

    def stop_at(self, index: int, rules: DetectionRules, *, live: bool = False) -> bool:
        """`detect.is_stop` of the turn (an empty turn, or a request with no reply)."""
        if self.empty_at(index, rules):
            return True
        return rules.missing_replies and self.unanswered_at(index, live=live)

    def stops(self, start: int, end: int, rules: DetectionRules, *,
              live: bool = False) -> Indices:
        """Indices of the empty turns (stops) among [start, end)."""
        end = min(end, len(self))
        if rules.missing_replies:
            return Indices(index for index in range(start, end)
                           if self.stop_at(index, rules, live=live))
        limit = max(start, min(end, self._base))
        mask = self._mask(rules.visible_kinds)
        roles = {code for code, role in enumerate(ROLES) if role in rules.roles}
        tool_only = rules.tool_only_is_empty
        shown_of, role_of = self._shown, self._role
        found = Indices()
        for index in range(start, limit):  # the columns straight: a million turns
            role = role_of[index]
            if role in roles:
                shown = shown_of[index] & mask
                if not shown or (tool_only and role == 1 and not shown & ~_TOOLS):
                    found.append(index)
        found.extend(index for index in range(limit, end) if self.stop_at(index, rules))
        return found

    def tally(self, add: Callable[[float | None, bool, bool, int], None]) -> None:
        """Feed every turn's (time, assistant, completed, text size) to `add`, in order."""
        roles, sizes, times = self._role, self._size, self._times
        for index in range(min(self._base, len(self))):
            assistant = roles[index] == 1
            add(times.get(index), assistant, False, sizes[index] if assistant else 0)
        for index in range(self._base, len(self)):
            assistant = self.role_at(index) == "assistant"
            add(self.time_at(index), assistant,
                assistant and self.completed_at(index) is not None,
                self.text_size_at(index) if assistant else 0)

    def ids_with(self, text: str, *, prefix: bool, limit: int | None = None) -> list[int]:
        """Indices of turns whose id is `text` (or starts with it, with `prefix`)."""
        head = f"{self._number}-"
        number = text[len(head):]
        found: list[int] = []
        if text.startswith(head) and number.isdigit() and number.isascii() \
                and not number.startswith("0"):
            found = [int(number) - 1] if int(number) <= len(self) else []
            if prefix:  # "1-2" is also the start of "1-20".."1-29", "1-200".., in order
                found = []
                scale = 1
                while (low := int(number) * scale) <= len(self):
                    found.extend(range(low - 1, min((int(number) + 1) * scale - 1, len(self))))
                    scale *= 10
                found.sort()
        elif prefix and (head.startswith(text) or text == head):
            found = list(range(len(self)))
        return found[:limit] if limit is not None else found

    def lines_with(self, needle: str) -> Sequence[int] | None:
        """`_lines_with`, one at a time (as `TurnIndex.lines_with`)."""
        with self._searching:
            return self._lines_with(needle)

    def _lines_with(self, needle: str) -> Sequence[int] | None:
        """Indices of the turns that may hold `needle` (as `Navigator.search` matches it):
        every turn of each exchange one of whose lines holds it, in order. None when the
        file's bytes cannot tell."""
        start = search_start(self.path, needle, self._found, needle, len(self))
        if start is None:
            return None
        if start.kept is not None:
            return start.kept
        self._found = None  # another needle's answer: let it go before this one is found
        piece = start.piece
        marks, total = self._marks, len(self)
        # One byte a turn, not a set of a million ints, and the holding lines a chunk at a
        # time (a one-letter needle is in most lines and exchanges: 60 MB more while the
        # search prompt counted).
        found = bytearray(total)
        try:
            extra = sorted(shown_lines_holding(self.path, needle))
            for starts in chain(lines_holding_by_chunk(self.path, piece), [extra]):
                for exchange in self._exchanges_holding(starts):
                    first = marks.firsts[exchange] if exchange >= 0 else 0
                    after = min(marks.firsts[exchange + 1] if exchange + 1 < len(marks)
                                else total, total)
                    mark_range(found, first, after)
        except (OSError, ValueError):
            return None
        mark(found, (index for index in (*self._tail, *self._ids_holding(piece))
                     if index < total))
        base = min(self._base, total)
        for code, role in enumerate(ROLES):
            if piece in role:
                mark_where(found, self._role[:base].tobytes(), code)
        if any(piece in word for word in MADE_UP):
            shown = self._shown[:base]
            mark_where(found, bytes(1 if value & _ERROR else 0 for value in shown), 1)
        result = marked(found)
        self._found = (start.key, result)
        return result

    def _ids_holding(self, piece: str) -> Iterator[int]:
        """Indices of the turns whose id (`{chat}-{n + 1}`) holds `piece`."""
        chat, dash, after = piece.partition("-")
        if not all(part.isascii() and (part.isdigit() or not part)
                   for part in (chat, after)) or "-" in after:
            return  # ids are digits, a dash, digits
        number = str(self._number)
        if not dash:  # digits: in the chat's number (every id), or in the turn's
            yield from (index for index in range(len(self))
                        if piece in number or piece in str(index + 1))
        elif number.endswith(chat):
            yield from (index for index in range(len(self))
                        if str(index + 1).startswith(after))

    def _exchanges_holding(self, starts: Sequence[int]) -> Iterator[int]:
        """The exchanges one of the lines starting at `starts` (sorted) runs through, in
        order, each once."""
        offsets = self._marks.offsets
        spans = self._lone_cr()  # a line (to its line feed) may run into later exchanges
        fd = os.open(self.path, os.O_RDONLY) if spans else None
        done = -2
        ends = -1
        """Where the exchange `done` ends: lines before it are in exchanges given already
        (none yet)."""
        try:
            for start in starts:
                if start < ends and fd is None:
                    continue  # (most lines of a needle's are in the exchange just given)
                exchange = bisect.bisect_right(offsets, start) - 1
                last = exchange
                if fd is not None and exchange + 1 < len(offsets):
                    last = bisect.bisect_right(offsets, line_end(fd, start)) - 1
                for number in range(max(exchange, done + 1), last + 1):
                    yield number
                done = max(done, last)
                ends = offsets[done + 1] if done + 1 < len(offsets) else _NEVER
        finally:
            if fd is not None:
                os.close(fd)

    def _lone_cr(self) -> bool:
        """The file has a CR that is not half a CRLF (old Mac line ends: a line, as
        `lines_holding` reads it to its line feed, is then many of the chat's lines)."""
        status = os.stat(self.path)
        key = (status.st_size, status.st_mtime_ns)
        if self._cr is None or self._cr[0] != key:
            found = False
            with WindowFile(self.path) as file:
                last = b""
                for _, data in file.windows(0, None, 1 << 20):
                    data = last + data
                    lone = data.count(b"\r") - data.count(b"\r\n") - data.endswith(b"\r")
                    if lone > 0:
                        found = True
                        break
                    last = data[-1:]
            self._cr = (key, found)
        return self._cr[1]

    def nbytes(self) -> int:
        """Bytes held by the columns (not the whole turns kept)."""
        columns = (self._role, self._shown, self._flags, self._size)
        return sum(column.itemsize * len(column) for column in columns)


_NEVER = 1 << 62
"""An offset past any file's end."""


def _chars(turn: Turn) -> int:
    return sum(len(part.text) for part in turn.parts)

