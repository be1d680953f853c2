"""SWE-agent trajectories (`.traj`): `{"trajectory": [{action, observation, thought,
response, execution_time, ...}], "history": [{role, content, message_type, ...}], "info":
{exit_status, submission, ...}}`.

Read as a trajectory (see `_trajectory.py`): the system prompt and the task come from
`history` (its first system message and its first non-demonstration user message), then
each `trajectory` step is an assistant turn whose text is the `thought` and whose tool call
is the `action` (named by its first word, as SWE-agent's commands are: `open`, `edit`,
`submit`, or a shell command), with the `observation` as its output and `execution_time`
as its duration. A step with neither thought nor action is an empty turn. `info` closes
the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers._trajectory import (
    close_with_info,
    load,
    run_id,
    settle_info,
    sniff_keys,
    text_of,
)
from replay.core.readers.base import Progress, Reader, ReaderError
from replay.core.readers.json_stream import ARRAYS, Elements
from replay.core.session.model import Kind, Part, Session, Source, Turn

NAME = "swe-agent"
EXPECTED = "a SWE-agent trajectory ({trajectory: [{action, observation, ...}], history, info})"
_HEAD_SIGNS = (re.compile(rb'"trajectory"\s*:\s*\['), re.compile(rb'"action"\s*:'),
               re.compile(rb'"observation"\s*:'))


def _accept(document: object) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("trajectory"), list):
        return False
    steps = document["trajectory"]
    return all(isinstance(step, dict) and ("action" in step or "observation" in step)
               for step in steps[:5]) and ("history" in document or "info" in document)


def _sniff(path: Path, head: bytes) -> bool:
    return sniff_keys(head, _HEAD_SIGNS, _accept, path)


def _opening(session: Session, history: object) -> None:
    """The system prompt and the task, from the history's first messages."""
    if not isinstance(history, ARRAYS):
        session.warn("no `history` list: the task is not known", skipped=False)
        return
    wanted = {"system": True, "user": True}
    for index, message in enumerate(history):
        if not any(wanted.values()):
            break
        if not isinstance(message, dict) or message.get("is_demo") is True:
            continue
        role = message.get("role")
        if isinstance(role, str) and wanted.get(role):  # a list or object is no role
            wanted[role] = False
            text = text_of(message.get("content"))
            if role == "user":
                session.title = _issue_title(text)
            session.add(Turn(id=f"history-{index}", role=str(role),
                             parts=[Part(Kind.TEXT, text)], is_meta=role == "system",
                             source=Source(session.path, record=f"/history/{index}")))


def _issue_title(task: str) -> str | None:
    """The first line of the issue in SWE-agent's task template (after `ISSUE:`)."""
    lines = task.splitlines()
    for number, line in enumerate(lines):
        if line.strip() == "ISSUE:":
            found = next((rest.strip() for rest in lines[number + 1:] if rest.strip()), "")
            return found[:69] + "…" if len(found) > 70 else found or None
    return None


def _step(session: Session, step: object, index: int,
          span: tuple[int, int] | None = None) -> None:
    source = Source(session.path, record=f"/trajectory/{index}",
                    spans=(span,) if span is not None else ())
    if not isinstance(step, dict):
        session.warn(f"step {index}: a {type(step).__name__}, expected an object")
        return
    thought = step.get("thought")
    if not isinstance(thought, str):
        thought = text_of(step.get("response"))
    parts = [Part(Kind.TEXT, thought)]
    action = step.get("action")
    if isinstance(action, str) and action.strip():
        observation = step.get("observation")
        duration = step.get("execution_time")
        parts.append(Part(
            Kind.TOOL_CALL, name=action.split(None, 1)[0], input=action,
            output=observation if isinstance(observation, str) else text_of(observation),
            status="completed",
            duration=float(duration) if isinstance(duration, (int, float))
            and not isinstance(duration, bool) else None,
        ))
    session.add(Turn(id=f"step-{index}", role="assistant", parts=parts, source=source))


def stream(path: Path, index: dict[str, int] | None = None) -> Iterator[Session | None]:
    """The one session of a `.traj` file, yielded before its first turn, then None every 64
    steps (`Reader.stream`: a scan judges each step once, in a window of its turns, instead
    of indexing the run and parsing every step again to judge it). With `index` (a
    `TurnIndex`'s `tail` and `cache`, or none) the steps are held in an index when the
    document is streamed."""
    document, session = load(path, NAME, EXPECTED, STREAMED)
    value: Any = document.value
    if value is None:
        yield session
        return
    if not isinstance(value, dict) or not isinstance(value.get("trajectory"), ARRAYS):
        raise ReaderError(f"{path}: no `trajectory` list; expected {EXPECTED}")
    session.session_id = run_id(path, value)
    info = value.get("info")
    if isinstance(info, dict) and isinstance(info.get("swe_agent_version"), str):
        session.meta["swe_agent_version"] = info["swe_agent_version"]
    # The run's outcome is known before its steps: an empty step judged in a window sees
    # it, as a scan of the whole session does.
    settle_info(session, info)
    steps = value["trajectory"]
    own = steps.span if isinstance(steps, Elements) else None
    if index is not None and own is not None:
        from replay.core.index.document_index import DocumentTurnIndex

        # Columns per step, each step read back from its own element when shown.
        session.turns = DocumentTurnIndex(  # type: ignore[assignment]
            session.path, read_back, named=True, **index)
    yield session
    _opening(session, value.get("history"))
    for number, step in enumerate(steps):
        _step(session, step, number, own(number) if own else None)
        if not number & 63:
            yield None
    close_with_info(session, info, str(path), "/info")


def _read(path: Path, progress: Progress | None, sizes: dict[str, int] | None) -> list[Session]:
    """The one session of a `.traj` file; with `sizes`, its steps held in an index."""
    sessions = [session for session in stream(path, sizes) if session is not None]
    if progress is not None:
        progress(1, 1)
    return sessions


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """The one session of a `.traj` file."""
    return _read(path, progress, None)


def read_indexed(path: Path, progress: Progress | None = None, **sizes: int) -> list[Session]:
    """`read`, the steps in a `TurnIndex` (`Reader.read_indexed`: the app on a big file);
    `sizes` are its `tail` and `cache`."""
    return _read(path, progress, sizes)


def read_back(path: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
              line: int | None, turn_id: str, role: str) -> Turn:
    """A step's turn made again from its trajectory element (as `TurnIndex` rebuilds one).

    Raises:
        ValueError: the element no longer makes that turn (the file was replaced).
    """
    number = turn_id.removeprefix("step-")
    if not number.isdigit() or len(records) != 1:
        raise ValueError(f"{path}: turn {turn_id} is not a step of one record")
    session = Session(path=path, format=NAME)
    _step(session, orjson.loads(records[0]), int(number), spans[0])
    turn = session.turns[0] if session.turns else None
    if turn is None or turn.id != turn_id or turn.role != role:
        raise ValueError(f"{path}: step {turn_id} is no longer at its recorded place")
    return turn


def _iter(path: Path) -> Iterator[Session]:
    """The session read one at a time (`Reader.iter_sessions`, for what reads sessions but
    does not scan them in a window): its steps in an index, so a long run holds the columns
    of its steps, not every observation (1.66x the file)."""
    yield from _read(path, None, {})


STREAMED = frozenset({"trajectory", "history"})
"""The arrays read a record at a time (a long run's steps are most of the file)."""


READER = Reader(
    name=NAME,
    title="SWE-agent trajectory",
    sniff=_sniff,
    read=read,
    read_indexed=read_indexed,
    iter_sessions=_iter,
    stream=stream,
    single_session=True,
    priority=81,
)
