"""`--local`: every discovered session as a path `scan`, `report` and `review` can read."""

from __future__ import annotations

from collections.abc import Mapping

from replay.core.discovery import discover


def local_paths(env: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """The paths of every readable discovered session, oldest first (a database holding many
    once), and one `skipped PATH: why` line for each file that cannot be read."""
    found = discover(env).sessions
    paths: list[str] = []
    problems: list[str] = []
    for session in reversed(found):  # discovery lists newest first
        if session.problem is not None:
            problems.append(session.problem)
        else:
            paths.append(str(session.path))
    return list(dict.fromkeys(paths)), problems
