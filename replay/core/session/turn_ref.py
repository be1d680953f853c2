"""What a person types to name a turn: `#N` (counted from 1, as the app shows it) or an id.

One parser for every place that takes a turn (`replay label --turn`, the app's `:`), so a
turn has one human name everywhere and a 0-based machine `index` is never taken for it.

A reply that never came (a stop of the `missing_replies` rule) is no turn of the file, so it
takes no number: it is named after the request it failed to answer, `#12+` (the missing reply
after #12), and keyed in journals by `<request id>+no-reply`. Real turns keep their numbers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from replay.core.safe import escape_controls
from replay.core.session.model import Turn, TurnColumns

_NUMBER = re.compile(r"#([0-9]+)", re.ASCII)
_PLACEHOLDER_NUMBER = re.compile(r"#([0-9]+)\+", re.ASCII)

PLACEHOLDER_SUFFIX = "+no-reply"
"""Appended to a request's id to key the reply it never got (journals, `scan --json`, CSV)."""


def placeholder_id(request_id: str) -> str:
    """The id of the missing reply after the request with this id."""
    return f"{request_id}{PLACEHOLDER_SUFFIX}"


def placeholder_request(turn_id: str) -> str | None:
    """The request id a placeholder id stands after, or None for a real turn's id."""
    if turn_id.endswith(PLACEHOLDER_SUFFIX) and len(turn_id) > len(PLACEHOLDER_SUFFIX):
        return turn_id[: -len(PLACEHOLDER_SUFFIX)]
    return None


def placeholder_name(index: int) -> str:
    """`#12+`: the human name of the missing reply after the turn at 0-based `index`."""
    return f"#{index + 1}+"


@dataclass(frozen=True, slots=True)
class TurnRef:
    """A resolved reference: a turn, or the missing reply right after it."""

    index: int
    """0-based index of the turn (of the request, for a missing reply)."""
    placeholder: bool = False
    """The reference names the missing reply after the turn, not the turn."""
_BARE = re.compile(r"[0-9]+", re.ASCII)


class TurnReferenceError(ValueError):
    """A turn reference that names no turn, or names one ambiguously: one line saying why."""


def reference_number(text: str) -> int | None:
    """N for a `#N` reference, else None."""
    found = _NUMBER.fullmatch(text.strip())
    return int(found.group(1)) if found else None


def is_bare_number(text: str) -> bool:
    """True for digits alone (`12`): a number that does not say how it counts."""
    return _BARE.fullmatch(text.strip()) is not None


def resolve_turn(
    turns: Sequence[Turn], text: str, *, bare_numbers: bool = False, prefixes: bool = False
) -> int:
    """The 0-based index of the turn `text` names.

    `#N` is the N-th turn counted from 1; anything else is a turn id, matched exactly. A bare
    number that is no turn's id is refused unless `bare_numbers` (then it counts as `#N`):
    a script holding a 0-based `index` would otherwise name the turn before the one it means.
    With `prefixes`, an id may be shortened to a prefix only one turn's id starts with.

    Raises:
        TurnReferenceError: no such turn, out of range, ambiguous; the message is one line,
            safe for a terminal.
    """
    wanted = text.strip()
    shown = escape_controls(wanted)
    count = len(turns)
    if not wanted:
        raise TurnReferenceError("no turn given: write #N for the N-th turn (from 1) or a turn id")
    number = reference_number(wanted)
    if isinstance(turns, TurnColumns):
        # An index of a big session: look the id up in its ids, never turn by turn.
        def ids(prefix: bool) -> list[int]:
            return turns.ids_with(wanted, prefix=prefix)
    else:
        def ids(prefix: bool) -> list[int]:
            return [turn.index for turn in turns
                    if turn.id == wanted or (prefix and turn.id.startswith(wanted))]
    if number is None and bare_numbers and is_bare_number(wanted) and not ids(False):
        number = int(wanted)
    if number is not None:
        if number == 0:
            raise TurnReferenceError("turns are counted from 1: the first turn is #1")
        if number > count:
            span = f"#1 to #{count}" if count else "none"
            raise TurnReferenceError(f"turn #{number} is out of range: {count:,} turns ({span})")
        return number - 1
    exact = ids(False)
    if exact:
        return exact[0]
    if is_bare_number(wanted):
        raise TurnReferenceError(
            f"{shown!r} is not a turn id; write '#{int(wanted)}' for turn #{int(wanted)} as the "
            f"app counts (from 1); a 0-based index {int(wanted)} from `scan --json` is "
            f"'#{int(wanted) + 1}'")
    if prefixes:
        matches = ids(True)
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise TurnReferenceError(
                f"{len(matches):,} turn ids start with {shown!r}: type more of the id")
    raise TurnReferenceError(f"no turn with id {shown!r} ({count:,} turns)")


def resolve_stop(
    turns: Sequence[Turn], text: str, has_placeholder: Callable[[int], bool], *,
    bare_numbers: bool = False, prefixes: bool = False,
) -> TurnRef:
    """Like `resolve_turn`, also taking `#N+` or `<id>+no-reply` for the missing reply after a
    request; `has_placeholder(index)` says whether the turn at `index` has one.

    Raises:
        TurnReferenceError: as `resolve_turn`, or a placeholder the rules do not find.
    """
    wanted = text.strip()
    number = _PLACEHOLDER_NUMBER.fullmatch(wanted)
    request = placeholder_request(wanted)
    if number is None and request is None:
        return TurnRef(resolve_turn(turns, text, bare_numbers=bare_numbers, prefixes=prefixes))
    if number is not None:
        index = resolve_turn(turns, f"#{number.group(1)}")
    else:
        assert request is not None
        index = resolve_turn(turns, request)
    if not has_placeholder(index):
        raise TurnReferenceError(
            f"{placeholder_name(index)} names the missing reply after #{index + 1}, and "
            f"#{index + 1} is no request left without a reply (or missing-reply stops are off)")
    return TurnRef(index, placeholder=True)


def nearest_empty(empty_indices: Sequence[int], index: int) -> int | None:
    """The empty turn closest to `index` (the later one on a tie), or None when there is none."""
    if not empty_indices:
        return None
    return min(empty_indices, key=lambda candidate: (abs(candidate - index), -candidate))
