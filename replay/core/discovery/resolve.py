"""Open a session by its id: the whole id, or a prefix of at least `MIN_PREFIX` characters that
only one discovered session has. A path that exists always wins over an id."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from replay.core.discovery.found import FoundSession

MIN_PREFIX = 6
"""Shortest prefix of an id taken for the id."""
SHOWN_CANDIDATES = 5
"""Candidates named in the line about an ambiguous prefix."""


class SessionNotFound(Exception):
    """Neither a path nor the id (or a prefix) of a discovered session; the message is the
    one line to print."""


class AmbiguousSession(SessionNotFound):
    """A prefix several sessions share; the message names them."""


def looks_like_id(text: str) -> bool:
    """True for text that may be a session id: long enough, and nothing a path has (a
    separator, a dot, a leading `~`) that no agent's ids have."""
    return len(text) >= MIN_PREFIX and not any(mark in text for mark in ("/", os.sep, ".")) \
        and not text.startswith(("~", "-"))


def candidates(text: str, sessions: Sequence[FoundSession]) -> list[FoundSession]:
    """The sessions `text` names: those whose id is `text` (when any), else those whose id or
    file name starts with it."""
    needle = text.casefold()
    exact = [session for session in sessions
             if needle in (name.casefold() for name in _names(session))]
    if exact:
        return exact
    return [session for session in sessions
            if any(name.casefold().startswith(needle) for name in _names(session))]


def _names(session: FoundSession) -> list[str]:
    names = [session.session_id] if session.session_id else []
    stem = session.path.name.split(".", 1)[0] if session.entry.own_file else ""
    if stem and stem not in names:
        names.append(stem)
    return names


def find_session(text: str, sessions: Sequence[FoundSession], looked_in: str) -> FoundSession:
    """The one session `text` names; SessionNotFound (or AmbiguousSession) says why not."""
    found = candidates(text, sessions) if looks_like_id(text) else []
    readable = [session for session in found if session.problem is None] or found
    if len(readable) == 1:
        return readable[0]
    if not readable:
        raise SessionNotFound(f"{text}: no such file or directory, and no session id starts "
                              f"with it (looked in {looked_in})")
    shown = ", ".join(f"{session.session_id or session.path.name} ({session.agent})"
                      for session in readable[:SHOWN_CANDIDATES])
    more = len(readable) - SHOWN_CANDIDATES
    raise AmbiguousSession(f"{text}: {len(readable)} sessions have an id starting so: {shown}"
                           f"{f', and {more} more' if more > 0 else ''}; give more of the id")


def resolve_paths(texts: Sequence[str], env: Mapping[str, str] | None = None
                  ) -> list[tuple[str, FoundSession | None]]:
    """Each text as a path to read, with the session it named when it was an id.

    A text that exists (or is `-`, a URL) stays as it is, and nothing is discovered unless
    some text needs it. Raises SessionNotFound for an id that names no session or several.
    """
    from replay.core.discovery import discover

    results: list[tuple[str, FoundSession | None]] = []
    discovered = None
    for text in texts:
        if text == "-" or "://" in text or os.path.lexists(text) or not looks_like_id(text):
            results.append((text, None))
            continue
        if discovered is None:
            discovered = discover(env)
        session = find_session(text, discovered.sessions, discovered.looked_in)
        results.append((str(session.path), session))
    return results
