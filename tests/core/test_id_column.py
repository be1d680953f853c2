"""`index/id_column.py`: uuids packed in 16 bytes give back the very id they were given, every
other id is kept as it is, and the search questions answer as a walk over the strings."""

from __future__ import annotations

import gc
import tracemalloc
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.core.index import id_column
from replay.core.index.id_column import IdColumn, packed, spelled

_UUIDS = st.builds(lambda number: str(uuid.UUID(int=number)), st.integers(0, (1 << 128) - 1))
_NEAR_UUIDS = st.one_of(
    _UUIDS.map(str.upper),                         # upper case
    _UUIDS.map(lambda text: "{" + text + "}"),     # braces
    _UUIDS.map(lambda text: text.replace("-", "")),  # no hyphens
    _UUIDS.map(lambda text: text[:10].upper() + text[10:]),  # mixed case
    _UUIDS.map(lambda text: text[:35] + "g"),      # not hex
    _UUIDS.map(lambda text: text[:8] + " " + text[9:]),  # `fromhex` takes spaces
    _UUIDS.map(lambda text: text[:8] + text[9:] + "-"),  # a hyphen moved
    _UUIDS.map(lambda text: text + "@line-9"),     # an id back after a rewind
    _UUIDS.map(lambda text: text[:-1]),            # cut short
)
_OTHERS = st.one_of(
    st.text(max_size=40),  # anything, lone surrogates included
    st.sampled_from(["", "message-3", "rewind-12", "00000000-0000-0000-0000-000000000000",
                     "ça-va-ñ", "\ud800x", "a" * 36]),
)
IDS = st.lists(st.one_of(_UUIDS, _UUIDS, _NEAR_UUIDS, _OTHERS), max_size=80)


def _column(ids: list[str]) -> IdColumn:
    column = IdColumn()
    for turn_id in ids:
        column.append(turn_id)
    return column


@settings(max_examples=300, deadline=None)
@given(IDS)
def test_every_id_comes_back_exactly(ids: list[str]) -> None:
    column = _column(ids)
    assert len(column) == len(ids)
    assert [column[index] for index in range(len(ids))] == ids
    for turn_id in ids:
        raw = packed(turn_id)
        if raw is not None:
            assert spelled(raw) == turn_id
            assert str(uuid.UUID(bytes=raw)) == turn_id


@settings(max_examples=200, deadline=None)
@given(IDS, st.data())
def test_searches_answer_as_a_walk_over_the_ids(ids: list[str], data: st.DataObject) -> None:
    column = _column(ids)
    pieces = ["a", "e", "-", "0", "4a", "-0", "00000000", "message", "ç", "#"]
    for turn_id in ids[:4]:
        if turn_id:
            start = data.draw(st.integers(0, len(turn_id) - 1))
            pieces.append(turn_id[start:start + data.draw(st.integers(1, 12))].casefold())
            pieces.append(turn_id)
    for piece in pieces:
        assert list(column.holding(piece)) == [
            index for index, turn_id in enumerate(ids) if piece in turn_id.casefold()], piece
        assert column.matching(piece, prefix=False) == [
            index for index, turn_id in enumerate(ids) if turn_id == piece], piece
        assert column.matching(piece, prefix=True) == [
            index for index, turn_id in enumerate(ids) if turn_id.startswith(piece)], piece


def test_stretches_edges_and_the_switch_to_plain_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(id_column, "STRETCH_IDS", 3)  # ids across stretch edges
    monkeypatch.setattr(id_column, "OTHER_FEW", 4)
    ids = [str(uuid.UUID(int=number * 2654435761 << 64)) for number in range(20)]
    column = _column(ids)
    assert column.packed
    for piece in ("e", "0000-", ids[7][30:], ids[11][:9]):
        assert list(column.holding(piece)) == [i for i, own in enumerate(ids) if piece in own]
        assert column.matching(piece, prefix=True) == [
            i for i, own in enumerate(ids) if own.startswith(piece)]
    others = [f"message-{number}" for number in range(10)]
    for turn_id in others:  # more than one id in 8 is not a uuid: plain bytes from here on
        column.append(turn_id)
    assert not column.packed
    assert [column[index] for index in range(len(column))] == ids + others
    assert column.matching("message-3", prefix=False) == [23]


def _held(count: int) -> tuple[int, int]:
    gc.collect()
    tracemalloc.start()
    try:
        column = IdColumn()
        for number in range(count):
            column.append(str(uuid.UUID(int=number * 2654435761)))
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert column[count - 1] == str(uuid.UUID(int=(count - 1) * 2654435761))
    return held, column.nbytes()


def test_a_uuid_id_takes_16_bytes() -> None:
    """As UTF-8 with its end offset a uuid took 40 bytes (36 + 4), in a bytearray grown by
    `+=` (up to an eighth more)."""
    small, _ = _held(10_000)
    big, nbytes = _held(60_000)
    assert (big - small) / 50_000 < 19, (big - small) / 50_000
    assert nbytes == 16 * 60_000
