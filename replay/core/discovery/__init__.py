"""The sessions on this machine: every agent's own folders, found without being told.

Each agent module glances at its places (a stat and the first bytes of each file, or one
query of a database) and returns `FoundSession`s; nothing is read in full here. Counting
turns is `counts`' business (the same scan as `replay scan`), opening one by id `resolve`'s.

May import every earlier stage (it uses the readers to glance and the corpus scan to
count); nothing in the core imports it: only the commands and the UI.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from replay.core.discovery import claude, codex, gemini, opencode
from replay.core.discovery.found import FoundSession
from replay.core.discovery.places import (
    AGENT_TITLES,
    AGENTS,
    CLAUDE,
    CODEX,
    GEMINI,
    OPENCODE,
    Place,
    discovery_roots,
    looked_in,
    places,
)

__all__ = [
    "AGENTS",
    "AGENT_TITLES",
    "Discovery",
    "FoundSession",
    "Place",
    "discover",
    "discover_sessions",
    "discovery_roots",
    "looked_in",
    "places",
]


@dataclass(slots=True)
class Discovery:
    """What a look at every place found."""

    sessions: list[FoundSession] = field(default_factory=list)
    """Newest first (last written, else started); unreadable files among them."""
    places: list[Place] = field(default_factory=list)
    """Every place looked at."""

    @property
    def looked_in(self) -> str:
        """The places, for a line saying where nothing was found."""
        return ", ".join(place.describe() for place in self.places)


def discover(env: Mapping[str, str] | None = None, agents: Iterable[str] | None = None
             ) -> Discovery:
    """Every session in every agent's standard place (or those of `agents`), newest first.

    A place that does not exist adds nothing; a file that cannot be read is a session with
    its `problem` set, never an error.
    """
    wanted = set(agents) if agents is not None else set(AGENTS)
    looked = [place for place in places(env) if place.agent in wanted]
    found: list[FoundSession] = []
    for place in looked:
        if place.agent == GEMINI:
            continue  # last: the other agents' folders name Gemini's hash folders
        if place.agent == CLAUDE:
            found.extend(claude.find(place))
        elif place.agent == CODEX:
            found.extend(codex.find(place))
        elif place.agent == OPENCODE:
            found.extend(opencode.find(place))
    known = {session.project for session in found if session.project}
    for place in looked:
        if place.agent == GEMINI:
            found.extend(gemini.find(place, known))
    found.sort(key=lambda session: (session.newest, str(session.path), session.entry.key),
               reverse=True)
    return Discovery(found, looked)


def discover_sessions(env: Mapping[str, str] | None = None,
                      agents: Iterable[str] | None = None) -> list[FoundSession]:
    """Every session found on this machine, newest first (`discover(...).sessions`)."""
    return discover(env, agents).sessions


def matches(session: FoundSession, text: str) -> bool:
    """True when `text` (case-insensitive) is in the session's title, project, id or agent."""
    needle = text.casefold()
    return any(needle in value.casefold() for value in (
        session.title or "", session.project or "", session.session_id or "", session.agent,
        AGENT_TITLES.get(session.agent, ""), str(session.path)))


def since(sessions: Iterable[FoundSession], moment: datetime) -> list[FoundSession]:
    """The sessions written at or after `moment`."""
    cutoff = moment.timestamp()
    return [session for session in sessions if session.newest >= cutoff]
