"""Which turn each Gemini message id names, in a few bytes a message.

A Gemini CLI recording writes a message again, in full, each time it changes (the last write
of an id wins, in the place of the first), and a `$rewindTo` marker discards the messages
from an id on: the builder must find the turn of an id it has seen, and tell a live id from
one a rewind dropped. A `dict[str, int]` did that at about 110 bytes a message (the id
string, an int, the slot), more than a 100-byte message itself in the app.

`MessageIds` keeps no id strings. Every message turn's id is already held by the session's
turns (a `TurnIndex` holds them as bytes); a hash table of 8-byte slots (32 bits of the id's
hash, the turn's index) finds candidates and the turn's own id confirms one. Turn ids of
messages are unique (an id that comes back after a rewind gets a made-up one), so at most
one candidate is confirmed. A byte per turn says whether its message is live, and under
which key: its own id, or (rare: an id back after a rewind) the id it was written with,
kept in a small dict.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

_EMPTY = 0
_LOW = 0xFFFFFFFF

DEAD, LIVE, LIVE_RENAMED = 0, 1, 2
"""A turn's state: not a live message (dropped by a rewind, or no message at all); live
under its own id; live under the id it was written with (`renamed`)."""


class MessageIds:
    """Message id → turn index for a Gemini builder (live ids, and every id used)."""

    __slots__ = ("_id_of", "_slots", "_used", "_state", "_renamed")

    def __init__(self, id_of: Callable[[int], str]) -> None:
        self._id_of = id_of
        """The id of the turn at an index (the session's turns answer it)."""
        self._slots = array("Q", bytes(8 * 64))
        """Open addressing: 0 is empty, else `hash32 << 32 | (index + 1)`."""
        self._used = 0
        self._state = bytearray()
        """One byte per turn index: `DEAD`, `LIVE` or `LIVE_RENAMED`."""
        self._renamed: dict[str, int] = {}
        """Live keys that are not their turn's id (an id back after a rewind: its turn is
        `id@line-N`), to the turn's index."""

    def __len__(self) -> int:
        """How many turn ids are held (live or not)."""
        return self._used

    def clear(self) -> None:
        """Forget every id (the document is read again, whole)."""
        self._slots = array("Q", bytes(8 * 64))
        self._used = 0
        self._state = bytearray()
        self._renamed.clear()

    # ------------------------------------------------------------------ the table

    @staticmethod
    def _hash(key: str) -> int:
        return (hash(key) >> 16) & _LOW or 1  # never 0: a slot of hash 0 would look empty

    def _find(self, key: str) -> int | None:
        """The index of the message turn whose id is `key`, live or not."""
        slots, mask, wanted = self._slots, len(self._slots) - 1, self._hash(key)
        at = wanted & mask
        while slot := slots[at]:
            if slot >> 32 == wanted:
                index = (slot & _LOW) - 1
                if self._id_of(index) == key:
                    return index
            at = (at + 1) & mask
        return None

    def _insert(self, slots: array[int], code: int, index: int) -> None:
        mask = len(slots) - 1
        at = code & mask
        while slots[at]:
            at = (at + 1) & mask
        slots[at] = code << 32 | (index + 1)

    def _grow(self) -> None:
        old = self._slots
        slots = array("Q", bytes(16 * len(old)))
        for slot in old:
            if slot:
                self._insert(slots, slot >> 32, (slot & _LOW) - 1)
        self._slots = slots

    # ------------------------------------------------------------------ the builder's questions

    def live(self, key: str) -> int | None:
        """The turn index of the live message written with id `key`, or None."""
        renamed = self._renamed.get(key)
        if renamed is not None:
            return renamed
        index = self._find(key)
        if index is not None and self._state[index] == LIVE:
            return index
        return None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.live(key) is not None

    def used(self, key: str) -> bool:
        """True when `key` is the id of a message turn, live or not (after `live` said no:
        an id a rewind dropped, or a made-up id)."""
        return self._find(key) is not None

    def add(self, key: str, turn_id: str, index: int) -> None:
        """A new message turn: its id `turn_id`, live under `key` (its own id, or the id it
        was written with when that one was used before)."""
        if 3 * (self._used + 1) > 2 * len(self._slots):
            self._grow()
        self._insert(self._slots, self._hash(turn_id), index)
        self._used += 1
        state = self._state
        if len(state) <= index:
            state.extend(bytes(index + 1 - len(state)))
        if key == turn_id:
            state[index] = LIVE
        else:
            state[index] = LIVE_RENAMED
            self._renamed[key] = index

    def rewind(self, target: str) -> tuple[bool, int]:
        """Drop the live messages from `target`'s on (from the first when `target` is not
        live): (whether it was live, how many were dropped)."""
        index = self.live(target)
        start = 0 if index is None else index
        state = self._state
        tail = len(state) - start
        dropped = tail - state.count(DEAD, start) if tail > 0 else 0
        if tail > 0:
            state[start:] = bytes(tail)
        for key in [key for key, at in self._renamed.items() if at >= start]:
            del self._renamed[key]
        return index is not None, dropped
