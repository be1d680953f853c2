"""One parser for what a person types to name a turn (`#N` from 1, or an id)."""

from __future__ import annotations

import pytest

from replay.core.session.model import Turn
from replay.core.session.turn_ref import TurnReferenceError, nearest_empty, resolve_turn


def _turns(*ids: str) -> list[Turn]:
    turns = [Turn(id=turn_id, role="user") for turn_id in ids]
    for index, turn in enumerate(turns):
        turn.index = index
    return turns


TURNS = _turns("msg_a1", "msg_b2", "7", "msg_b3")


@pytest.mark.parametrize(("text", "index"), [
    ("#1", 0), (" #4 ", 3), ("msg_b2", 1),
    # A digit-only id is an id: it is matched exactly before anything else.
    ("7", 2),
])
def test_numbers_from_one_and_exact_ids(text: str, index: int) -> None:
    assert resolve_turn(TURNS, text) == index


@pytest.mark.parametrize(("text", "message"), [
    ("", "no turn given: write #N for the N-th turn (from 1) or a turn id"),
    ("#0", "turns are counted from 1: the first turn is #1"),
    ("#5", "turn #5 is out of range: 4 turns (#1 to #4)"),
    ("3", "'3' is not a turn id; write '#3' for turn #3 as the app counts (from 1); "
          "a 0-based index 3 from `scan --json` is '#4'"),
    ("msg_b", "no turn with id 'msg_b' (4 turns)"),
    ("#²", "no turn with id '#²' (4 turns)"),
    ("x\x1b]0;owned\x07", "no turn with id 'x␛[ESC]]0;owned[BEL]' (4 turns)"),
])
def test_refusals_are_one_safe_line(text: str, message: str) -> None:
    with pytest.raises(TurnReferenceError) as caught:
        resolve_turn(TURNS, text)
    assert str(caught.value) == message


def test_the_app_takes_bare_numbers_and_unique_prefixes() -> None:
    assert resolve_turn(TURNS, "3", bare_numbers=True, prefixes=True) == 2
    # An id wins over a position even where bare numbers are positions.
    assert resolve_turn(TURNS, "7", bare_numbers=True) == 2
    assert resolve_turn(TURNS, "msg_a", prefixes=True) == 0
    with pytest.raises(TurnReferenceError, match="2 turn ids start with 'msg_b'"):
        resolve_turn(TURNS, "msg_b", prefixes=True)
    with pytest.raises(TurnReferenceError, match="out of range"):
        resolve_turn(TURNS, "9", bare_numbers=True)


def test_nearest_empty_prefers_the_later_on_a_tie() -> None:
    assert nearest_empty([], 3) is None
    assert nearest_empty([1, 5], 3) == 5
    assert nearest_empty([1, 6], 3) == 1
