"""mini-swe-agent trajectories: `{"info": {...}, "messages": [...], "trajectory_format":
"mini-swe-agent-1"}` (`.traj.json`; v2 writes `mini-swe-agent-1.1`).

`messages` is an OpenAI-style chat between the agent and its environment, so a chat reader
would show every command output as a person's turn. Read as a trajectory instead (see
`_trajectory.py`): the system prompt is a system turn, the first user message is the task
(the one user turn), each assistant message is a model step whose fenced bash block (or
`tool_calls`, with tool-calling models) is a `bash` tool call, and every later user or
`tool` message is that call's output (the environment speaking; a reply to a step with no
command, such as a format error, is a system turn). `info.exit_status` and
`info.submission` close the session.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers._trajectory import (
    close_with_info,
    command_in,
    load,
    run_id,
    settle_info,
    sniff_keys,
    tail,
    text_of,
)
from replay.core.readers.base import Progress, Reader, ReaderError
from replay.core.readers.chat import scalar_id, tool_call_parts
from replay.core.readers.json_stream import ARRAYS, Elements
from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time

NAME = "mini-swe-agent"
EXPECTED = "a mini-swe-agent trajectory ({info, messages, trajectory_format})"
_FORMAT = re.compile(rb'"trajectory_format"\s*:\s*"mini-swe-agent')
_HEAD_SIGNS = (re.compile(rb'"messages"\s*:\s*\['),
               re.compile(rb'"mini_version"|minisweagent\.|"trajectory_format"'))


def _accept(document: object) -> bool:
    return (isinstance(document, dict) and isinstance(document.get("messages"), list)
            and str(document.get("trajectory_format", "")).startswith("mini-swe-agent"))


def _sniff(path: Path, head: bytes) -> bool:
    if sniff_keys(head, _HEAD_SIGNS, _accept, path):
        return True
    # The format name is written last: a large file shows it only at its end.
    return (head.lstrip().startswith(b"{") and b'"messages"' in head
            and _FORMAT.search(tail(path)) is not None)


class _Steps:
    """Turns of one trajectory, message by message."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.task_seen = False
        self.step: Turn | None = None

    def add(self, message: object, index: int, span: tuple[int, int] | None = None) -> None:
        where = f"/messages/{index}"
        if not isinstance(message, dict):
            self.session.warn(f"message {index}: a {type(message).__name__}, expected an object")
            return
        role = message.get("role")
        spans = (span,) if span is not None else ()
        source = Source(self.session.path, record=where, spans=spans)
        text = text_of(message.get("content"))
        timestamp, seconds = parse_time(message.get("timestamp"))
        if role == "assistant":
            self._step(message, text, index, source)
        elif role == "system" or (role == "user" and self.task_seen):
            if role == "user" and self._answer(text, None, spans):
                return
            self._turn(index, "system", [Part(Kind.TEXT, text, synthetic=role == "user")],
                       source, is_meta=role == "user")
        elif role == "user":
            self.task_seen = True
            self._turn(index, "user", [Part(Kind.TEXT, text)], source)
        elif role == "tool":
            if not self._answer(text, scalar_id(message.get("tool_call_id")), spans):
                self._turn(index, "system", [Part(Kind.TOOL_RESULT, text)], source)
        else:
            # v2 ends with an `exit` message (its `extra` holds the exit status): harness.
            self.session.events += 1
            return
        if self.session.turns:
            last = self.session.turns[-1]
            if last.timestamp is None and timestamp is not None:
                last.timestamp, last.time = timestamp, seconds

    def _step(self, message: dict[str, Any], text: str, index: int, source: Source) -> None:
        parts: list[Part] = []
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            parts.append(Part(Kind.REASONING, reasoning))
        parts.append(Part(Kind.TEXT, text))
        calls = tool_call_parts(message, self.session, f"message {index}")
        if not calls and (command := command_in(text)) is not None:
            calls = [Part(Kind.TOOL_CALL, name="bash", input=command, status="pending")]
        parts.extend(calls)
        turn = self._turn(index, "assistant", parts, source)
        turn.model = message.get("model") if isinstance(message.get("model"), str) else None
        self.step = turn

    def _answer(self, text: str, call_id: str | None, spans: tuple[tuple[int, int], ...]) -> bool:
        """Give the environment's reply to the step's open call (its record's span joins the
        step's); False when none is open."""
        if self.step is None or not self.session.turns or self.session.turns[-1] is not self.step:
            return False
        for part in self.step.parts:
            if part.kind == Kind.TOOL_CALL and part.output is None and (
                    call_id is None or part.call_id in (None, call_id)):
                part.output, part.status = text, _status(text)
                if spans and self.step.source is not None and self.step.source.spans:
                    self.step.source.spans += spans
                return True
        return False

    def _turn(self, index: int, role: str, parts: list[Part], source: Source,
              *, is_meta: bool = False) -> Turn:
        return self.session.add(Turn(id=f"m{index}", role=role, parts=parts, source=source,
                                     is_meta=is_meta))


_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")


def _status(output: str) -> str:
    """`error` when the observation reports a non-zero return code."""
    found = _RETURNCODE.search(output[:200])
    return "error" if found and found.group(1) != "0" else "completed"


def stream(path: Path, index: dict[str, int] | None = None) -> Iterator[Session | None]:
    """The one session of a trajectory file, yielded before its first turn, then None every
    few messages (`Reader.stream`: a scan keeps a window of its turns). With `index` (the
    `tail` and `cache` sizes, or none) its turns are held in a `TurnIndex` (columns, each
    turn rebuilt from its messages' spans) when the document is streamed."""
    document, session = load(path, NAME, EXPECTED, frozenset({"messages"}))
    value = document.value
    if value is None:
        yield session
        return
    if not isinstance(value, dict) or not isinstance(value.get("messages"), ARRAYS):
        raise ReaderError(f"{path}: no `messages` list; expected {EXPECTED}")
    info = value.get("info")
    if isinstance(info, dict):
        config = info.get("config")
        model = config.get("model") if isinstance(config, dict) else None
        name = model.get("model_name") if isinstance(model, dict) else None
        if isinstance(name, str):
            session.meta["model"] = name
        for key in ("mini_version", "instance_id"):
            if isinstance(info.get(key), str):
                session.meta[key] = info[key]
    # The run's outcome is known before its steps (an empty step judged before the end of
    # a windowed scan sees it, as a scan of the whole session does).
    settle_info(session, info)
    session.session_id = run_id(path, value)
    messages = value["messages"]
    span = messages.span if isinstance(messages, Elements) else None
    if index is not None and span is not None:
        from replay.core.index.document_index import DocumentTurnIndex

        session.turns = DocumentTurnIndex(  # type: ignore[assignment]
            session.path, read_back, named=True, made_up={Kind.TOOL_CALL: "bash"}, **index)
    yield session
    steps = _Steps(session)
    for number, message in enumerate(messages):
        steps.add(message, number, span(number) if span is not None else None)
        if not number & 63:
            yield None
    close_with_info(session, info, str(path), "/info")


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """The one session of a trajectory file."""
    sessions = [session for session in stream(path) if session is not None]
    if progress is not None:
        progress(1, 1)
    return sessions


def read_indexed(path: Path, progress: Progress | None = None, **sizes: int) -> list[Session]:
    """`read`, the turns in a `TurnIndex` (`Reader.read_indexed`: the app on a big file);
    `sizes` are its `tail` and `cache`."""
    sessions = [session for session in stream(path, sizes) if session is not None]
    if progress is not None:
        progress(1, 1)
    return sessions


def read_back(path: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
              line: int | None, turn_id: str, role: str) -> Turn:
    """A turn made again from its messages (the step and the environment's replies to it),
    as `TurnIndex` rebuilds one.

    Raises:
        ValueError: the messages no longer make that turn (the file was replaced).
    """
    first = int(turn_id[1:]) if turn_id[:1] == "m" and turn_id[1:].isdigit() else -1
    session = Session(path=path, format=NAME)
    steps = _Steps(session)
    steps.task_seen = role != "user"  # only the first user message is the task
    for number, (span, record) in enumerate(zip(spans, records, strict=True)):
        steps.add(orjson.loads(record), first + number, span)
    for turn in session.turns:
        if turn.id == turn_id and turn.role == role:
            return turn
    raise ValueError(f"{path}: message {turn_id} is no longer at its recorded place")


READER = Reader(
    name=NAME,
    title="mini-swe-agent trajectory",
    sniff=_sniff,
    read=read,
    single_session=True,
    stream=stream,
    read_indexed=read_indexed,
    priority=80,
)
