"""A session's turns held as compact columns, whole turns read back from the file on demand.

A big line-based session (789,000 one-line turns) costs about a kilobyte a turn as `Turn`,
`Part` and `Source` objects. `TurnIndex` keeps, per turn, what the app asks of every turn
(role, which part kinds show something, flags, times, text size, id, the byte spans of its
records: under a hundred bytes) and materialises a whole `Turn` by feeding its records to a
fresh builder, with a small cache around the reviewer's position. The latest turns stay
whole while the builder may still change them; a builder that changes an older turn says so
(`changed`), and its columns are taken again.

It is a `Sequence[Turn]`: callers that read `session.turns[i]` work unchanged. Loops over
every turn use the column queries instead (`stops`, `role_at`, `id_at`, `time_at`, ...).
"""

from __future__ import annotations

import bisect
import heapq
import math
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import overload

from replay.core.detection.empty import REPLY_WINDOW, DetectionRules, is_empty, request_words
from replay.core.index.file_stamp import FileStamp
from replay.core.index.float_column import NanColumn
from replay.core.index.id_column import IdColumn
from replay.core.index.needle_bytes import (
    Found,
    holds,
    line_end,
    lines_holding,
    search_start,
    shown_lines_holding,
    shown_piece,
)
from replay.core.index.turn_marks import Indices, mark, mark_where, marked
from replay.core.session import lifted
from replay.core.session.harness import interrupt_of, is_harness_text
from replay.core.session.model import Kind, Part, Source, Turn, TurnColumns
from replay.core.session.text import empty_wrapper_names, is_blank

Rebuild = Callable[[str, tuple[tuple[int, int], ...], list[bytes], int | None, str, str], Turn]
"""(path, spans, the records at those spans, first line, turn id, role) -> the turn those
records make."""

_KINDS: tuple[str, ...] = (
    Kind.TEXT, Kind.REASONING, Kind.TOOL_CALL, Kind.TOOL_RESULT, Kind.FILE, Kind.IMAGE,
    Kind.PATCH, Kind.SUBTASK, Kind.AGENT, Kind.COMPACTION, Kind.STEP, Kind.SNAPSHOT,
    Kind.ERROR, Kind.RETRY, Kind.OTHER,
)
KIND_BITS: dict[str, int] = {kind: 1 << number for number, kind in enumerate(_KINDS)}
"""One bit per part kind."""
_TOOLS = KIND_BITS[Kind.TOOL_CALL] | KIND_BITS[Kind.TOOL_RESULT]

ROLES: tuple[str, ...] = ("user", "assistant", "system")
_ROLE_CODE = {role: code for code, role in enumerate(ROLES)}

META, SUMMARY, REQUEST, WRAPPER, NOTICE = 1, 2, 4, 8, 16
"""Flag bits: the harness marked it meta; a compaction summary; a request a person typed
(`request_words` not empty); a text part holding an empty wrapper tag; a notice that a
reply is not coming (an error, a system line, an interrupt: see `missing_reply`)."""

TAIL = 64
"""Latest turns kept whole: a builder still adds parts and records to them."""
CACHE = 512
"""Turns kept whole once read back (the reviewer's neighbourhood)."""


def _mask(kinds: frozenset[str]) -> int:
    mask = 0
    for kind in kinds:
        mask |= KIND_BITS.get(kind, 0)
    return mask


class TurnIndex(TurnColumns):
    """The turns of one session file: columns for every turn, whole turns on demand."""

    def __init__(self, path: str, rebuild: Rebuild, *, tail: int = TAIL,
                 cache: int = CACHE, named: bool = False) -> None:
        self.path = path
        self._named = named
        """Turns name their record too (`Source.record`, a JSON pointer into a document):
        the rebuild names it again, and it is kept."""
        """The file the turns' records are read back from."""
        self._rebuild = rebuild
        self._tail_size = max(tail, 1)
        self._cache_size = max(cache, 1)
        self._tail: dict[int, Turn] = {}
        """The latest turns, whole, by index. A turn leaves it only once its columns are
        written, so a reader in another thread finds every turn one way or the other."""
        self._base = 0
        """Turns before this index have columns."""
        self._count = 0
        self._role = array("b")
        self._shown = array("H")
        """Kinds with a part that shows something (text: when not blank)."""
        self._kinds = array("H")
        """Kinds of every part."""
        self._flags = array("B")
        self._time = NanColumn()
        self._completed = NanColumn()
        """Epoch seconds (NaN: none); nothing held while a format records none."""
        self._size = array("I")
        """Characters of text parts (the timeline's density)."""
        self._line = array("i")
        self._span_at = array("I", [0])
        self._offsets = array("q")
        self._lengths = array("I")
        self._ids = IdColumn()
        """Turn ids (a uuid in 16 bytes)."""
        self._moved: dict[int, tuple[tuple[int, int], ...]] = {}
        """Spans of a turn that grew after later turns were indexed."""
        self._kept: dict[int, Turn] = {}
        """Turns that cannot be read back from their own records alone: kept whole."""
        self._keep: set[int] = set()
        self._cache: OrderedDict[int, Turn] = OrderedDict()
        self._lock = threading.Lock()
        self._searching = threading.Lock()
        """Held by `lines_with`: one search at a time."""
        self._fd: int | None = None
        """The file, open while turns are read back (an open per turn costs more than the
        read); its records stay readable if the file is replaced."""
        self.stamp = FileStamp.take(path)
        """The file as it was when its turns were read (None: not a file one can look
        at): a turn is read back only from that file (`FileStamp.differs`)."""
        self.on_rewritten: Callable[[str], object] | None = None
        """Told once, with the reason, when the file turns out rewritten since it was read
        (the app reads it again); it may be called from any thread."""
        self._rewritten: str | None = None
        self._masks: dict[frozenset[str], int] = {}
        self._found: Found | None = None
        """The last `lines_with` answer, by needle and the file's size and time."""
        self.memo: dict[object, object] = {}
        self.materialised = 0
        """Turns read back from the file so far (for tests and benchmarks)."""

    # ------------------------------------------------------------------ growing

    def append(self, turn: Turn) -> None:
        """Add the next turn (`Session.add`); the oldest whole one becomes columns."""
        self._tail[turn.index] = turn
        self._count = turn.index + 1
        if len(self._tail) > self._tail_size:
            oldest = next(iter(self._tail))
            self._compact(self._tail[oldest])
            del self._tail[oldest]

    def keep(self, turn: Turn) -> None:
        """Keep this turn whole: its records alone do not make it (a line mixing a prompt
        with results for earlier calls)."""
        if turn.index < self._base:
            self._kept[turn.index] = turn
        else:
            self._keep.add(turn.index)

    def in_tail(self, index: int) -> bool:
        """True while the turn is whole in the tail (no columns written for it yet): a
        builder may change it without telling the index."""
        return index in self._tail

    def changed(self, turn: Turn) -> None:
        """The builder changed a turn it added earlier (a reply's next line, a tool result)."""
        index = turn.index
        self.memo.clear()
        if index in self._tail or not 0 <= index < self._base:
            return  # whole in the tail: nothing indexed yet
        with self._lock:
            self._cache.pop(index, None)
        if index in self._kept:
            self._kept[index] = turn
            return
        self._columns(index, turn)

    def _compact(self, turn: Turn) -> None:
        index = self._base
        assert turn.index == index, "turns are compacted in order"
        keep = index in self._keep
        values = None if keep else self._values(turn)
        if values is None:
            self._kept[index] = turn  # cannot be read back from its records: kept whole
            self._keep.discard(index)
            values = (0, 0, 0, 0, math.nan, math.nan, 0, -1)
        role, shown, kinds, flags, time, completed, size, line = values
        # Appended straight (this runs once per turn of a 789,000-turn file).
        self._role.append(role)
        self._shown.append(shown)
        self._kinds.append(kinds)
        self._flags.append(flags)
        self._time.append(time)
        self._completed.append(completed)
        self._size.append(size)
        self._line.append(line)
        self._ids.append(turn.id)
        spans = () if index in self._kept or turn.source is None else turn.source.spans
        for offset, length in spans:
            self._offsets.append(offset)
            self._lengths.append(length)
        self._span_at.append(len(self._offsets))
        self._base = index + 1

    def _columns(self, index: int, turn: Turn) -> None:
        """Take the columns of a turn again from its whole form (the builder changed it)."""
        values = self._values(turn)
        if values is None:
            self._kept[index] = turn
            return
        role, shown, kinds, flags, time, completed, size, line = values
        self._role[index] = role
        self._shown[index] = shown
        self._kinds[index] = kinds
        self._flags[index] = flags
        self._time[index] = time
        self._completed[index] = completed
        self._size[index] = size
        self._line[index] = line
        assert turn.source is not None
        self._set_spans(index, turn.source.spans)

    def _values(self, turn: Turn) -> tuple[int, int, int, int, float, float, int, int] | None:
        """(role, shown, kinds, flags, time, completed, text size, line) of a turn, or None
        when the columns cannot hold it (a part kind or role they cannot name, no records
        of this file to read it back from)."""
        role = _ROLE_CODE.get(turn.role)
        source = turn.source
        if role is None or source is None or source.path != self.path \
                or (source.record is not None and not self._named) or not source.spans:
            return None
        shown = kinds = flags = size = 0
        user = role == 0
        # `request_words(turn)` not empty, worked out in the same pass: a user turn with no
        # tool result and a typed, visible text that is not the harness's.
        request = False
        for part in turn.parts:
            kind = part.kind
            bit = KIND_BITS.get(kind)
            if bit is None:
                return None
            kinds |= bit
            if kind == Kind.TEXT:
                size += part.text_length
                text = part.text
                if not is_blank(text):
                    shown |= bit
                    if user and not request and not part.synthetic \
                            and not is_harness_text(text):
                        request = True
                if "<" in text and empty_wrapper_names(text):
                    flags |= WRAPPER
            else:
                shown |= bit
        if request and not kinds & KIND_BITS[Kind.TOOL_RESULT]:
            flags |= REQUEST
        if turn.is_meta:
            flags |= META
        if turn.is_summary:
            flags |= SUMMARY
        if kinds & (KIND_BITS[Kind.ERROR] | KIND_BITS[Kind.TEXT]) and _notice(turn):
            flags |= NOTICE
        return (role, shown, kinds, flags,
                math.nan if turn.time is None else turn.time,
                math.nan if turn.completed is None else turn.completed,
                min(size, 0xFFFFFFFF), -1 if source.line is None else source.line)

    def _set_spans(self, index: int, spans: tuple[tuple[int, int], ...]) -> None:
        start, end = self._span_at[index], self._span_at[index + 1]
        if index == self._base - 1:
            # The newest indexed turn: its spans are the last ones, rewrite them in place.
            self._moved.pop(index, None)
            del self._offsets[start:], self._lengths[start:]
            for offset, length in spans:
                self._offsets.append(offset)
                self._lengths.append(length)
            self._span_at[index + 1] = len(self._offsets)
        elif self._spans_from_columns(start, end) != spans:
            self._moved[index] = spans

    def _spans_from_columns(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        return tuple(zip(self._offsets[start:end], self._lengths[start:end], strict=True))

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
        return self._whole(self._position(key))

    def __iter__(self) -> Iterator[Turn]:
        for index in range(len(self)):
            yield self._whole(index)

    def _position(self, key: int) -> int:
        index = key + len(self) if key < 0 else key
        if not 0 <= index < len(self):
            raise IndexError(f"turn {key} is out of range ({len(self)} turns)")
        return index

    def whole_now(self, index: int) -> Turn | None:
        """The turn when it is whole in memory (tail, kept or cached), else None."""
        whole = self._whole_object(index)
        if whole is not None:
            return whole
        with self._lock:
            return self._cache.get(index)

    def _whole(self, index: int) -> Turn:
        whole = self._whole_object(index)
        if whole is not None:
            return whole
        with self._lock:
            cached = self._cache.get(index)
            if cached is not None:
                self._cache.move_to_end(index)
                return cached
        turn = self._read_back(index)
        with self._lock:
            self._cache[index] = turn
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return turn

    def spans_at(self, index: int) -> tuple[tuple[int, int], ...]:
        """Byte (offset, length) of every record of the turn."""
        whole = self._whole_object(index)
        if whole is not None:
            return whole.source.spans if whole.source is not None else ()
        moved = self._moved.get(index)
        if moved is not None:
            return moved
        return self._spans_from_columns(self._span_at[index], self._span_at[index + 1])

    def _whole_object(self, index: int) -> Turn | None:
        turn = self._tail.get(index)
        return turn if turn is not None else self._kept.get(index)

    def _read_back(self, index: int) -> Turn:
        spans = self.spans_at(index)
        line = self._line[index]
        first_line = None if line < 0 else line
        turn_id, role = self.id_at(index), ROLES[self._role[index]]
        self.materialised += 1
        try:
            turn = self._rebuild(self.path, spans, self._records(spans), first_line, turn_id,
                                 role)
        except (OSError, ValueError) as error:
            # The file changed under the app (replaced, truncated): say so in the turn.
            turn = Turn(turn_id, role, parts=[Part(
                Kind.ERROR, f"this turn could not be read back from {self.path}: {error}",
                name="unreadable")])
            turn.time, turn.completed = self.time_at(index), self.completed_at(index)
        turn.index = index
        record = turn.source.record if self._named and turn.source is not None else None
        turn.source = Source(self.path, first_line, spans, record)
        return turn

    def _records(self, spans: tuple[tuple[int, int], ...]) -> list[bytes]:
        with self._lock:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDONLY)
            fd = self._fd
        self._check_stamp(fd, spans)
        # (A record read as its skeleton, its huge strings left in the file, is read back so.)
        records = [lifted.read_back(self.path, offset, length) or os.pread(fd, length, offset)
                   for offset, length in spans]
        if any(len(record) != length for record, (_, length) in zip(records, spans, strict=True)):
            raise ValueError("the file is shorter than when it was read")
        return records

    def _check_stamp(self, fd: int, spans: tuple[tuple[int, int], ...] = ()) -> None:
        """Raise ValueError (and tell `on_rewritten`, once) when the file read back from is
        not the one the turns were read from: records of the same shape rewritten at the
        same offsets would read back as valid, other text."""
        if self.stamp is None:
            return
        why = self._rewritten or self.stamp.differs(os.fstat(fd), fd, spans)
        if why is None:
            return
        told, self._rewritten = self._rewritten, why
        if told is None and self.on_rewritten is not None:
            self.on_rewritten(why)
        raise ValueError(why)

    def close(self) -> None:
        """Let go of the file (turns read back later open it again)."""
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    # ------------------------------------------------------------------ columns

    def role_at(self, index: int) -> str:
        """The turn's role."""
        whole = self._whole_object(index)
        return whole.role if whole is not None else ROLES[self._role[index]]

    def id_at(self, index: int) -> str:
        """The turn's id."""
        whole = self._whole_object(index)
        if whole is not None:
            return whole.id
        return self._ids[index]

    def time_at(self, index: int) -> float | None:
        """Epoch seconds of the turn, if known."""
        whole = self._whole_object(index)
        if whole is not None:
            return whole.time
        value = self._time[index]
        return None if math.isnan(value) else value

    def completed_at(self, index: int) -> float | None:
        """Epoch seconds the reply finished, if recorded."""
        whole = self._whole_object(index)
        if whole is not None:
            return whole.completed
        value = self._completed[index]
        return None if math.isnan(value) else value

    def text_size_at(self, index: int) -> int:
        """Characters of the turn's text parts (before any shortening)."""
        whole = self._whole_object(index)
        if whole is not None:
            return sum(p.text_length for p in whole.parts if p.kind == Kind.TEXT)
        return self._size[index]

    def text_sizes(self, start: int, end: int) -> array[int]:
        """`text_size_at` of the turns [start, end), at once (the timeline's bars)."""
        end = min(end, len(self))
        limit = max(start, min(end, self._base))
        sizes = self._size[start:limit]
        for index in set(self._kept):
            if start <= index < limit:
                sizes[index - start] = min(self.text_size_at(index), 0xFFFFFFFF)
        sizes.extend(min(self.text_size_at(index), 0xFFFFFFFF) for index in range(limit, end))
        return sizes

    def kinds_at(self, index: int) -> frozenset[str]:
        """The kinds of the turn's parts."""
        whole = self._whole_object(index)
        if whole is not None:
            return frozenset(part.kind for part in whole.parts)
        bits = self._kinds[index]
        return frozenset(kind for kind, bit in KIND_BITS.items() if bits & bit)

    def is_request_at(self, index: int) -> bool:
        """True when the turn is a request a person typed (`request_words` not empty)."""
        whole = self._whole_object(index)
        if whole is not None:
            return bool(request_words(whole))
        return bool(self._flags[index] & REQUEST)

    def empty_at(self, index: int, rules: DetectionRules) -> bool:
        """`detect.is_empty` of the turn, from the columns."""
        whole = self._whole_object(index)
        if whole is not None:
            return is_empty(whole, rules)
        if ROLES[self._role[index]] not in rules.roles:
            return False
        shown = self._shown[index] & self._mask(rules.visible_kinds)
        if not shown:
            return True
        return (rules.tool_only_is_empty and self._role[index] == 1
                and not shown & ~_TOOLS)

    def stop_at(self, index: int, rules: DetectionRules, *, live: bool = False) -> bool:
        """`detect.is_stop` of the turn (an empty turn, or a request with no reply)."""
        if self.empty_at(index, rules):
            return True
        return rules.missing_replies and self.unanswered_at(index, live=live)

    def _is_notice(self, index: int) -> bool:
        whole = self._whole_object(index)
        if whole is not None:
            return _notice(whole)
        return bool(self._flags[index] & NOTICE)

    def unanswered_at(self, index: int, *, live: bool = False) -> bool:
        """`detect.missing_reply(..., live=live) is not None`, from the roles and flags."""
        if not self.is_request_at(index):
            return False
        total = len(self)
        end = min(total, index + 1 + REPLY_WINDOW)
        notices = False
        for following in range(index + 1, end):
            role = self.role_at(following)
            if role == "assistant":
                return False
            if role == "user" and self.is_request_at(following):
                return True
            notices = notices or self._is_notice(following)
        if index + 1 + REPLY_WINDOW < total:
            return False
        return notices or not live

    def stops(self, start: int, end: int, rules: DetectionRules, *,
              live: bool = False) -> Indices:
        """Indices of the empty turns (stops) among [start, end)."""
        if rules.missing_replies:
            return Indices(index for index in range(start, end)
                           if self.stop_at(index, rules, live=live))
        # The columns straight, for the 789,000 turns of a big session (`stop_at` per turn
        # is four times slower); whole turns (kept, or still in the tail) one by one.
        limit = min(end, self._base)
        kept = self._kept
        mask = self._mask(rules.visible_kinds)
        roles = {code for code, role in enumerate(ROLES) if role in rules.roles}
        tool_only = rules.tool_only_is_empty
        shown_of, role_of = self._shown, self._role
        found = Indices()
        for index in range(start, limit):
            role = role_of[index]
            if role in roles:
                shown = shown_of[index] & mask
                if (not shown or (tool_only and role == 1 and not shown & ~_TOOLS)) \
                        and index not in kept:
                    found.append(index)
        whole = sorted(index for index in list(kept) if start <= index < limit
                       and self.stop_at(index, rules))
        if whole:
            found = Indices(heapq.merge(found, whole))
        found.extend(index for index in range(max(start, limit), end)
                     if self.stop_at(index, rules))
        return found

    def tally(self, add: Callable[[float | None, bool, bool, int], None]) -> None:
        """Feed every turn's (time, assistant, completed, text size) to `add`, in order
        (`StatsTally.add_values`: the suggester's session-wide figures)."""
        limit = self._base
        whole = set(self._kept)
        times, completed, roles, sizes = self._time, self._completed, self._role, self._size
        isnan = math.isnan
        for index in range(limit):
            if index in whole:
                turn = self._kept[index]
                assistant = turn.role == "assistant"
                add(turn.time, assistant, assistant and turn.completed is not None,
                    self.text_size_at(index) if assistant else 0)
                continue
            time = times[index]
            assistant = roles[index] == 1
            add(None if isnan(time) else time, assistant,
                assistant and not isnan(completed[index]), sizes[index] if assistant else 0)
        for index in range(limit, len(self)):
            assistant = self.role_at(index) == "assistant"
            add(self.time_at(index), assistant,
                assistant and self.completed_at(index) is not None,
                self.text_size_at(index) if assistant else 0)

    def _mask(self, kinds: frozenset[str]) -> int:
        mask = self._masks.get(kinds)
        if mask is None:
            mask = self._masks[kinds] = _mask(kinds)
        return mask

    def find_id(self, turn_id: str) -> int | None:
        """The index of the first turn with this id."""
        found = self.ids_with(turn_id, prefix=False, limit=1)
        return found[0] if found else None

    def ids_with(self, text: str, *, prefix: bool, limit: int | None = None) -> list[int]:
        """Indices of turns whose id is `text` (or starts with it, with `prefix`)."""
        found = [index for index in self._ids.matching(text, prefix=prefix)
                 if index not in self._kept] if text else []
        if limit is not None and len(found) >= limit:
            return found[:limit]
        for index in (*sorted(self._kept), *sorted(self._tail)):
            turn_id = self.id_at(index)
            if turn_id == text or (prefix and turn_id.startswith(text)):
                found.append(index)
        found.sort()
        return found[:limit] if limit is not None else found

    SHOWS_HARNESS = True
    """The turns may hold harness commands, searched as the screen shows them
    (`shown_lines_holding`): a line-based agent's records."""

    def lines_with(self, needle: str) -> Sequence[int] | None:
        """`_lines_with`, one search at a time: the prompt's count and `n`'s find ask the
        same in a row, often at once, and the second then reads the kept answer rather than
        the file beside the first (twice the memory: 81 -> 96 MB on 417,000 records)."""
        with self._searching:
            return self._lines_with(needle)

    def _lines_with(self, needle: str) -> Sequence[int] | None:
        """Indices of the turns that may hold `needle` (as `Navigator.search` matches it), in
        order: every turn whose search text holds it is among them. None when raw bytes
        cannot tell (the needle is only separators or a piece of the made-up `[block]`)."""
        # the shown piece: a harness command's glue, as the screen shows it
        shape = (shown_piece(needle),) if self.SHOWS_HARNESS else ()
        start = search_start(self.path, needle, self._found, *shape, len(self))
        if start is None:
            return None
        if start.kept is not None:
            return start.kept
        self._found = None  # another needle's answer: let it go before this one is found
        piece = start.piece
        # One byte a turn, the candidates marked in it as they are found: a one-letter
        # needle is in nearly every turn, and every list of them (the holding lines' turns,
        # the ids, the roles) was a million ints, 8 MB, at the prompt's every key.
        # (The turns as they are now: the file may still be read in another thread.)
        total = len(self)
        found = bytearray(total)
        try:
            starts = lines_holding(self.path, piece)
            shown_starts = shown_lines_holding(self.path, needle) if self.SHOWS_HARNESS \
                else None
            if shown_starts:  # rare (a harness command's name): merged into the sorted array
                starts = array("q", sorted(shown_starts.union(starts)))
            if starts:
                self._mark_overlapping(found, starts)
        except (OSError, ValueError):
            return None
        del starts
        # whole already: looked at as they are
        mark(found, (index for index in (*self._kept, *self._tail) if index < total))
        # What a search looks through that a record may not hold as such: the id (made up
        # for a record without one) and the role (`system` for a line of orphan results).
        mark(found, (index for index in self._ids_holding(piece) if index < total))
        for code, role in enumerate(ROLES):
            if piece in role:
                mark_where(found, self._role[:min(self._base, total)].tobytes(), code)
        self._mark_made_up(found, piece)
        result = marked(found)
        self._found = (start.key, result)
        return result

    def _mark_overlapping(self, found: bytearray, starts: array[int]) -> None:
        """Mark the columned turns one of whose records shares a line with one of the lines
        starting at `starts` (sorted)."""
        offsets, lengths, span_at = self._offsets, self._lengths, self._span_at
        kept, moved = self._kept, self._moved
        within = _Overlaps(self.path, starts)
        try:
            for index in range(min(self._base, len(found))):
                if index in kept or index in moved:
                    continue
                for span in range(span_at[index], span_at[index + 1]):
                    if holds(starts, offsets[span]) or within(offsets[span], lengths[span]):
                        found[index] = 1
                        break
            for index in [index for index in list(moved) if index < len(found)]:
                if any(holds(starts, offset) or within(offset, length)
                       for offset, length in self.spans_at(index)):
                    found[index] = 1
        finally:
            within.close()

    def _mark_made_up(self, found: bytearray, piece: str) -> None:
        """Mark the turns whose search text holds words the reader made up that hold `piece`
        (none here; `DocumentTurnIndex` names some)."""

    def _ids_holding(self, piece: str) -> Sequence[int]:
        """Indices of the columned turns whose id, casefolded, holds `piece`."""
        return self._ids.holding(piece)

    def nbytes(self) -> int:
        """Bytes held by the columns (not the whole turns kept)."""
        columns = (self._role, self._shown, self._kinds, self._flags, self._time,
                   self._completed, self._size, self._line, self._span_at, self._offsets,
                   self._lengths)
        return sum(column.itemsize * len(column) for column in columns) + self._ids.nbytes()


class _Overlaps:
    """Whether a record's bytes share a line with one of the lines holding a needle: a
    JSON-lines record is a line of its own (found by its start alone, or, after a byte-order
    mark, within the file's first line), but an element of a JSON document starts inside a
    line and may span many. Line ends are read as they are needed; the last one read is
    kept, since records are asked in the file's order (all of them: a dict of every end
    read was 23 MB for "er" over 417,000 one-line records, the app's search peak)."""

    def __init__(self, path: str, starts: array[int]) -> None:
        self._path = path
        self._starts = starts
        self._last = (-1, 0)
        """(which of `starts`, the end of its line): the last line end read."""
        self._fd: int | None = None

    def __call__(self, offset: int, length: int) -> bool:
        starts = self._starts
        after = bisect.bisect_right(starts, offset)
        if after < len(starts) and starts[after] < offset + length:
            return True  # a line holding it starts inside the record
        if not after:
            return False
        line, end = self._last
        if line != after - 1:
            if self._fd is None:
                self._fd = os.open(self._path, os.O_RDONLY)
            end = line_end(self._fd, starts[after - 1])
            self._last = (after - 1, end)
        return end > offset  # the line holding it runs into the record

    def close(self) -> None:
        """Close the file, if it was opened."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _notice(turn: Turn) -> bool:
    """True when `missing_reply` counts the turn as a notice that no reply is coming."""
    for part in turn.parts:
        if part.kind == Kind.ERROR:
            return True
        if part.kind == Kind.TEXT and (
                (turn.role == "system" and part.text.strip())
                or ("[Request interrupted" in part.text and interrupt_of(part.text))):
            return True
    return False


class TurnSlice(Sequence[Turn]):
    """A slice of turns read when reached (a look 40 turns ahead usually stops at one): of a
    `TurnIndex`, or of any sequence that reads its turns back (an Aider chat's columns)."""

    __slots__ = ("_index", "_range")

    def __init__(self, index: Sequence[Turn], positions: range) -> None:
        self._index = index
        self._range = positions

    def __len__(self) -> int:
        return len(self._range)

    @overload
    def __getitem__(self, key: int) -> Turn: ...

    @overload
    def __getitem__(self, key: slice) -> Sequence[Turn]: ...

    def __getitem__(self, key: int | slice) -> Turn | Sequence[Turn]:
        if isinstance(key, slice):
            return TurnSlice(self._index, self._range[key])
        return self._index[self._range[key]]

    def __iter__(self) -> Iterator[Turn]:
        for position in self._range:
            yield self._index[position]

    def __reversed__(self) -> Iterator[Turn]:
        for position in reversed(self._range):
            yield self._index[position]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, TurnSlice)):
            return len(self) == len(other) and all(a is b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
