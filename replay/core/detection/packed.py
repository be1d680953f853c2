"""Frozen-shape values (dataclasses of scalars, tuples and other such dataclasses) packed
into one bytes object, and unpacked back equal.

A streamed scan judges each empty turn as it passes but can settle its suggestion and
evidence only at the session's end (the session-wide figures). Holding the report and the
signals of every empty turn as objects until then costs over a kilobyte each (a slotted
dataclass of 35 fields, its nested facts, the ints and strings they point to); a file that
is mostly empty turns (a ShareGPT data set of blank replies, 40 bytes each in the file)
then took ten times its size. Packed with `marshal`, the same values take 150-250 bytes;
`PackedList` compresses them a batch at a time, and neighbours' reports are much alike.

A dataclass is written as a list `[code, *field values]` (the values themselves never hold
lists), so tuples and lists tell themselves apart; codes are given as classes are met and
mean nothing outside this process.
"""

from __future__ import annotations

import dataclasses
import marshal
import operator
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

from replay.core.detection.empty import REASON_BY_CODE, EmptyTurn

_CODES: dict[type, int] = {}
_CLASSES: list[type] = []
_FIELDS: list[tuple[str, ...]] = []
_VALUES: list[Callable[[Any], tuple[Any, ...]]] = []
"""Per code: the values of the fields `_FIELDS` names, as a tuple (one C call)."""
_POSITIONAL: list[bool] = []
"""Per code: True when the class takes its fields in order (none is keyword-only)."""
_ATOMS = (str, int, float, bool, type(None), bytes)
_ATOM_TYPES = frozenset(_ATOMS)
"""`_ATOMS` by exact type: a set look-up, where `isinstance` tries each in turn (a scan packs
the forty-odd values of every empty turn's signals)."""


def _code(cls: type) -> int:
    code = _CODES.get(cls)
    if code is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"cannot pack a {cls.__name__}")
        fields = [field for field in dataclasses.fields(cls) if field.init]
        names = tuple(field.name for field in fields)
        code = _CODES[cls] = len(_CLASSES)
        _CLASSES.append(cls)
        _FIELDS.append(names)
        getter = operator.attrgetter(*names) if names else (lambda _: ())
        _VALUES.append(getter if len(names) != 1 else (lambda value, one=getter: (one(value),)))
        _POSITIONAL.append(not any(field.kw_only for field in fields))
    return code


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOM_TYPES:
        return value
    if kind is tuple:
        return tuple([_plain(item) for item in value])
    if isinstance(value, _ATOMS):
        return value
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    if isinstance(value, list):
        raise TypeError("cannot pack a list inside a packed value (use a tuple)")
    code = _CODES.get(kind)
    if code is None:
        code = _code(kind)
    return [code, *map(_plain, _VALUES[code](value))]


def _rich(value: Any) -> Any:
    kind = type(value)
    if kind is list:
        code = value[0]
        if _POSITIONAL[code]:
            return _CLASSES[code](*map(_rich, value[1:]))
        return _CLASSES[code](**{name: _rich(item) for name, item in zip(
            _FIELDS[code], value[1:], strict=True)})
    if kind is tuple:
        return tuple([_rich(item) for item in value])
    return value


def pack(*values: Any) -> bytes:
    """The values as bytes (`unpack` gives them back); TypeError for a value of another
    shape (a list, a set, an object that is not a dataclass)."""
    return marshal.dumps(tuple(_plain(value) for value in values))


def unpack(data: bytes) -> tuple[Any, ...]:
    """The values `pack` was given, as new objects equal to them."""
    return tuple(_rich(value) for value in marshal.loads(data))


BATCH = 256
"""Values compressed together by `PackedList`."""


class PackedList:
    """Values appended one by one and held packed, a batch compressed at a time; read back
    once, in order, each batch let go as it is read."""

    def __init__(self) -> None:
        self._batches: list[bytes] = []
        self._open: list[Any] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, *values: Any) -> None:
        """Add one entry of `values` (shaped as `pack` takes them)."""
        self._open.append(tuple(_plain(value) for value in values))
        self._count += 1
        if len(self._open) >= BATCH:
            self._close()

    def _close(self) -> None:
        # Only a full batch is closed: batch `n` holds entries `n * BATCH` on (`at`).
        if self._open:
            self._batches.append(zlib.compress(marshal.dumps(self._open), 1))
            self._open = []

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        """Every entry in order, as new objects (the list keeps them). The open batch is read
        as it is (see `drain`)."""
        closed, opened = list(self._batches), list(self._open)
        for batch in closed:
            for entry in marshal.loads(zlib.decompress(batch)):
                yield tuple(_rich(value) for value in entry)
        for entry in opened:
            yield tuple(_rich(value) for value in entry)

    def at(self, position: int) -> tuple[Any, ...]:
        """Entry `position` (from 0), as new objects."""
        if not 0 <= position < self._count:
            raise IndexError(f"entry {position} of {self._count}")
        batch, within = divmod(position, BATCH)
        if batch < len(self._batches):
            entry = marshal.loads(zlib.decompress(self._batches[batch]))[within]
        else:
            entry = self._open[position - len(self._batches) * BATCH]
        return tuple(_rich(value) for value in entry)

    def drain(self) -> Iterator[tuple[Any, ...]]:
        """Every entry in order, as new objects; the list is empty afterwards.

        The open batch is read as it is, not compressed to be decompressed at once: a
        history of many short chats drains once per chat, each holding fewer than `BATCH`
        entries (24,085 needless zlib calls on a 25 MB Aider history)."""
        batches, opened = self._batches, self._open
        self._batches, self._open, self._count = [], [], 0
        batches.reverse()
        while batches:
            for entry in marshal.loads(zlib.decompress(batches.pop())):
                yield tuple(_rich(value) for value in entry)
        opened.reverse()
        while opened:
            yield tuple(_rich(value) for value in opened.pop())


_ROLES_AND_REASONS = {name: name for name in ("user", "assistant", "system", *REASON_BY_CODE)}
"""Roles and reasons as one string each (unpacked, every report would have its own)."""


def _fields(empty: EmptyTurn) -> tuple[Any, ...]:
    return (empty.index, empty.id, empty.role, empty.timestamp, empty.reason,
            tuple(empty.evidence), empty.suggestion, empty.suggestion_confidence,
            tuple(empty.suggestion_reasons), empty.suggestion_rule, empty.gap_before)


def _empty(fields: tuple[Any, ...]) -> EmptyTurn:
    (index, turn_id, role, timestamp, reason, evidence, suggestion, confidence, reasons,
     rule, gap) = fields
    return EmptyTurn(index=index, id=turn_id, role=_ROLES_AND_REASONS.get(role, role),
                     timestamp=timestamp, reason=_ROLES_AND_REASONS.get(reason, reason),
                     evidence=list(evidence), suggestion=suggestion,
                     suggestion_confidence=confidence, suggestion_reasons=list(reasons),
                     suggestion_rule=rule, gap_before=gap)


class PackedEmpties(Sequence[EmptyTurn]):
    """A scan's empty turns, packed: read as a list of `EmptyTurn`s, each made anew when
    read (a report of 300,000 empty turns holds them in a few megabytes, not a hundred)."""

    def __init__(self) -> None:
        self._packed = PackedList()

    def append(self, empty: EmptyTurn) -> None:
        """Add the next empty turn."""
        self._packed.append(_fields(empty))

    def __len__(self) -> int:
        return len(self._packed)

    @overload
    def __getitem__(self, key: int) -> EmptyTurn: ...

    @overload
    def __getitem__(self, key: slice) -> list[EmptyTurn]: ...

    def __getitem__(self, key: int | slice) -> EmptyTurn | list[EmptyTurn]:
        if isinstance(key, slice):
            return [self[position] for position in range(*key.indices(len(self)))]
        return _empty(self._packed.at(key + len(self) if key < 0 else key)[0])

    def __iter__(self) -> Iterator[EmptyTurn]:
        for (fields,) in self._packed:
            yield _empty(fields)

    def drain(self) -> Iterator[EmptyTurn]:
        """Every empty turn in order, each batch let go as it is read; empty afterwards."""
        for (fields,) in self._packed.drain():
            yield _empty(fields)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, PackedEmpties)):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
