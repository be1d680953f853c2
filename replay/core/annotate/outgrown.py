"""Annotations whose turn is no longer empty: labelled while its reply was still being written.

While a session is followed, a turn can be shown as empty and then receive its content (a
reply whose text came after its reasoning, a missing reply that came after all). A label
saved in that window is kept, never dropped silently: the journal gets a copy of it marked
`turn_has_content` (`Annotation.has_content`), the app says so on the turn, `export` writes
the `turn_now_has_content` column and `agree` leaves such labels out, saying how many.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from replay.core.session.model import Session, Turn, TurnColumns
from replay.core.session.turn_ref import placeholder_request


def turn_finder(session: Session) -> Callable[[str], Turn | None]:
    """Look turns up by id (a compact index is asked, never read whole)."""
    turns = session.turns
    if isinstance(turns, TurnColumns):
        def by_id(turn_id: str) -> Turn | None:
            found = turns.ids_with(turn_id, prefix=False, limit=1)
            return turns[found[0]] if found else None
        return by_id
    return {turn.id: turn for turn in turns}.get


def now_with_content(session: Session, turn_ids: Iterable[str],
                     empty_ids: Iterable[str]) -> set[str]:
    """The annotated ids (turns, or `<request id>+no-reply`) that the session still holds
    but that are no longer empty (`empty_ids`: the empty turns found now, missing replies
    included). An id the session no longer holds at all is not among them: nothing is
    known about its content."""
    empty = set(empty_ids)
    wanted = [turn_id for turn_id in turn_ids if turn_id not in empty]
    if not wanted:
        return set()
    find = turn_finder(session)
    found: set[str] = set()
    for turn_id in wanted:
        request = placeholder_request(turn_id)
        if find(request if request is not None else turn_id) is not None:
            found.add(turn_id)
    return found


__all__ = ["now_with_content", "turn_finder"]
