"""A `TurnIndex`'s turn ids: 16 bytes for an id that is a uuid, its UTF-8 bytes otherwise.

Most agents name a message by a uuid written as 36 characters (Gemini CLI, Claude Code). As
UTF-8 with an end offset that is 40 bytes a turn, half of what the index holds for a small
message. `IdColumn` keeps such an id as its 16 raw bytes, at a fixed place (no end offset),
and gives back the very string it was given: only the canonical form (lower-case hex, the
four hyphens in place) is packed, since that is the one form the 16 bytes spell back. Any
other id (upper case, braces, no hyphens, `message-3`, `id@line-9`) is kept as it is in a
small dict beside them; when such ids are more than one in `OTHER_SHARE` (a format whose ids
are not uuids), the column becomes plain bytes with end offsets, as it was before.

A search asks which ids hold a piece of text (`holding`) or equal or start with one
(`matching`): packed ids are spelled out a stretch at a time, never all at once.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Iterator, Sequence

UUID_BYTES = 16
SPELLED = 37
"""A packed id spelled out: its 36 characters and a separator."""
_HYPHENS = (8, 13, 18, 23)
_HEX_AT = tuple(position - sum(position > hyphen for hyphen in _HYPHENS)
                for position in range(36))
"""Where each of the 36 characters of a spelled-out uuid comes from in its 32 hex digits
(a hyphen's entry is unused)."""
OTHER_SHARE = 8
"""Packed while at most one id in this many is not a uuid (or while they are few)."""
OTHER_FEW = 1024
STRETCH_IDS = 1 << 15
"""Packed ids spelled out at a time by a search (1.2 MB of text)."""
BYTE_STRETCH = 1 << 20
"""Bytes of plain ids lowered at a time by a search."""


def packed(turn_id: str) -> bytes | None:
    """The 16 bytes of a canonical uuid string (lower-case hex, hyphens at 8, 13, 18 and
    23), or None for any other string."""
    if len(turn_id) != 36 or turn_id[8] != "-" or turn_id[13] != "-" \
            or turn_id[18] != "-" or turn_id[23] != "-":
        return None
    digits = turn_id[:8] + turn_id[9:13] + turn_id[14:18] + turn_id[19:23] + turn_id[24:]
    try:
        raw = bytes.fromhex(digits)
    except ValueError:
        return None
    # `fromhex` also takes upper case and spaces: only what spells back exactly is packed.
    return raw if len(raw) == UUID_BYTES and raw.hex() == digits else None


def spelled(raw: bytes | bytearray | memoryview) -> str:
    """The canonical string of 16 uuid bytes."""
    digits = bytes(raw).hex()
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _spell_stretch(raw: bytes | bytearray) -> bytes:
    """Packed ids spelled out, each in `SPELLED` bytes (the 36 characters, then a newline)."""
    count = len(raw) // UUID_BYTES
    digits = raw.hex().encode("ascii")
    text = bytearray(b"\n" * (SPELLED * count))
    for position in range(36):
        if position in _HYPHENS:
            text[position::SPELLED] = b"-" * count
        else:
            text[position::SPELLED] = digits[_HEX_AT[position]::32]
    return bytes(text)


class _Packed:
    """Ids as 16 bytes each, at index * 16; the others in a dict by index (read as a copy of
    its items: a search runs in a worker thread while the file is still read)."""

    __slots__ = ("raw", "other")

    def __init__(self) -> None:
        self.raw = bytearray()
        self.other: dict[int, str] = {}

    def append(self, turn_id: str) -> None:
        raw = packed(turn_id)
        if raw is None:
            self.other[len(self.raw) // UUID_BYTES] = turn_id
            raw = bytes(UUID_BYTES)
        self.raw += raw

    def get(self, index: int) -> str:
        other = self.other.get(index)
        if other is not None:
            return other
        start = index * UUID_BYTES
        return spelled(self.raw[start:start + UUID_BYTES])

    def nbytes(self) -> int:
        return len(self.raw) + sum(len(value) + 8 for value in self.other.values())

    def _stretches(self, count: int) -> Iterator[tuple[int, bytes]]:
        """(first index, spelled text) of every stretch of the first `count` ids."""
        raw = self.raw
        for first in range(0, count, STRETCH_IDS):
            last = min(count, first + STRETCH_IDS)
            yield first, _spell_stretch(raw[first * UUID_BYTES:last * UUID_BYTES])

    def holding(self, piece: str, count: int) -> Sequence[int]:
        found: array[int] = array("l")  # not a list: a one-letter piece is in most uuids
        wanted = piece.encode("utf-8", "surrogatepass")
        if not wanted:
            return array("l", range(count))
        if len(wanted) <= 36 and not wanted.translate(None, b"0123456789abcdef-"):
            for first, text in self._stretches(count):
                position = text.find(wanted)
                while position >= 0:
                    index, column = divmod(position, SPELLED)
                    if column + len(wanted) <= 36:
                        found.append(first + index)
                        position = text.find(wanted, (index + 1) * SPELLED)
                    else:
                        position = text.find(wanted, position + 1)
        if not self.other:
            return found
        return self._merge(found, (index for index, value in list(self.other.items())
                                   if index < count and piece in value.casefold()))

    def matching(self, text: str, prefix: bool, count: int) -> list[int]:
        found: list[int] = []
        raw = packed(text)
        if raw is not None:  # a whole uuid: its 16 bytes, at an id's place
            position = self.raw.find(raw)
            while 0 <= position < count * UUID_BYTES:
                if not position % UUID_BYTES:
                    found.append(position // UUID_BYTES)
                position = self.raw.find(raw, position + 1)
        elif prefix and text and len(text) < 36:
            wanted = text.encode("utf-8", "surrogatepass")
            for first, spelled_text in self._stretches(count):
                position = spelled_text.find(wanted)
                while position >= 0:
                    index, column = divmod(position, SPELLED)
                    if not column:
                        found.append(first + index)
                    position = spelled_text.find(wanted, (index + 1) * SPELLED)
        return self._merge(found, (
            index for index, value in list(self.other.items())
            if index < count and (value == text or (prefix and value.startswith(text)))))

    def _merge(self, found: Sequence[int], others: Iterable[int]) -> list[int]:
        other = self.other
        merged = [index for index in found if index not in other]  # their bytes are zero
        merged.extend(others)
        merged.sort()
        return merged


class _Plain:
    """Ids as their UTF-8 bytes (lone surrogates passed through), one after another."""

    __slots__ = ("ids", "ends")

    def __init__(self) -> None:
        self.ids = bytearray()
        self.ends = array("I", [0])
        """`ends[i + 1]` is where id i ends."""

    def append(self, turn_id: str) -> None:
        self.ids += turn_id.encode("utf-8", "surrogatepass")
        self.ends.append(len(self.ids))

    def get(self, index: int) -> str:
        return self.ids[self.ends[index]:self.ends[index + 1]].decode("utf-8", "surrogatepass")

    def nbytes(self) -> int:
        return len(self.ids) + self.ends.itemsize * len(self.ends)

    def holding(self, piece: str, count: int) -> Sequence[int]:
        ids = self.ids
        if not ids.isascii():
            return [index for index in range(count) if piece in self.get(index).casefold()]
        if not piece.isascii():
            return []  # an ASCII id casefolds to ASCII
        # ASCII: lower-casing is the casefold and keeps every byte's place. A stretch of ids
        # at a time (whole ids, about `BYTE_STRETCH` bytes): lowering all at once copied the
        # ids twice (30 MB for 417,000 uuids, at each key typed into the search prompt).
        wanted = piece.encode("ascii")
        found: array[int] = array("l")
        ends = self.ends
        first = 0
        while first < count:
            last = max(first + 1, bisect.bisect_right(ends, ends[first] + BYTE_STRETCH, first,
                                                      count + 1) - 1)
            start = ends[first]
            lowered = bytes(ids[start:ends[last]]).lower()
            position = lowered.find(wanted)
            while position >= 0:
                index = bisect.bisect_right(ends, start + position, first, last + 1) - 1
                if position + start + len(wanted) <= ends[index + 1]:
                    found.append(index)
                position = lowered.find(wanted, position + 1)
            first = last
        return found

    def matching(self, text: str, prefix: bool, count: int) -> list[int]:
        wanted = text.encode("utf-8", "surrogatepass")
        found: list[int] = []
        if not wanted:
            return found
        ids, ends = self.ids, self.ends
        position = ids.find(wanted, 0, ends[count])
        while position >= 0:
            index = bisect.bisect_right(ends, position, 0, count + 1) - 1
            if ends[index] == position and (prefix or ends[index + 1] - position == len(wanted)):
                found.append(index)
            position = ids.find(wanted, position + 1, ends[count])
        return found


class IdColumn:
    """The ids of a `TurnIndex`'s turns, in order (appended once each)."""

    __slots__ = ("_store", "_count")

    def __init__(self) -> None:
        self._store: _Packed | _Plain = _Packed()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, turn_id: str) -> None:
        """Add the next turn's id."""
        store = self._store
        store.append(turn_id)
        self._count += 1
        if isinstance(store, _Packed) and len(store.other) > OTHER_FEW \
                and len(store.other) * OTHER_SHARE > self._count:
            plain = _Plain()
            for index in range(self._count):
                plain.append(store.get(index))
            self._store = plain  # one assignment: a reader holds the old store or the new

    def __getitem__(self, index: int) -> str:
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self._store.get(index)

    @property
    def packed(self) -> bool:
        """True while uuids are held as 16 bytes."""
        return isinstance(self._store, _Packed)

    def holding(self, piece: str) -> Sequence[int]:
        """Indices, in order, of the ids whose casefold holds `piece` (a casefolded needle)."""
        return self._store.holding(piece, self._count)

    def matching(self, text: str, *, prefix: bool) -> list[int]:
        """Indices, in order, of the ids equal to `text` (or starting with it, `prefix`)."""
        return self._store.matching(text, prefix, self._count)

    def nbytes(self) -> int:
        """Bytes the ids take."""
        return self._store.nbytes()
