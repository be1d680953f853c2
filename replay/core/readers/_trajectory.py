"""What the agent-trajectory readers (mini-swe-agent, SWE-agent) share.

A trajectory is a run of an agent on one task, not a chat: the task is the one user turn,
every model step is an assistant turn with its command as a tool call, and what the
environment answered is that call's output, never a person speaking. The run's `info`
(exit status, submission) closes the session as a system turn and is evidence beside an
empty turn at its end.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from replay.core.readers.base import HEAD_BYTES, Document, Progress, load_document
from replay.core.session.model import Kind, Part, Session, Source, Turn

EXIT_STATUS = "exit_status"
"""`Session.meta` key of the run's exit status (`Submitted`, `LimitsExceeded`, ...)."""
SUBMISSION = "submission"
"""`Session.meta` key of the submission's size in characters (`0` when none)."""

_BASH_BLOCK = re.compile(r"```(?:bash|sh|shell)?[ \t]*\n(.*?)```", re.DOTALL)


def command_in(text: str) -> str | None:
    """The command of a step written as prose with a fenced bash block (the last block)."""
    blocks = _BASH_BLOCK.findall(text)
    return blocks[-1].strip("\n") if blocks else None


def load(path: Path, format_name: str, expected: str,
         stream: frozenset[str] = frozenset()) -> tuple[Document, Session]:
    """The document and a fresh session carrying its warnings (text skipped, empty, cut);
    its top-level arrays named in `stream` are streamed (`json_stream.Elements`)."""
    document = load_document(path, expected, stream=stream or None)
    session = Session(path=str(path), format=format_name)
    document.warn(session)
    return document, session


def text_of(content: object) -> str:
    """A message's content as text: a string, or the text items of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for item in content:
            if isinstance(item, str):
                pieces.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                pieces.append(item["text"])
        return "\n".join(pieces)
    return ""


def settle_info(session: Session, info: object) -> None:
    """Record the run's exit status and submission in the session's meta only (what
    `close_with_info` records there, before the steps are read)."""
    if not isinstance(info, dict):
        return
    status = info.get("exit_status")
    submission = info.get("submission")
    if not isinstance(status, str) and not isinstance(submission, str):
        return
    if isinstance(status, str) and status:
        session.meta[EXIT_STATUS] = status
    session.meta[SUBMISSION] = str(len(submission) if isinstance(submission, str) else 0)


def close_with_info(session: Session, info: object, path: str, pointer: str) -> None:
    """Record the run's exit status and submission (meta, and a closing system turn)."""
    if not isinstance(info, dict):
        return
    status = info.get("exit_status")
    submission = info.get("submission")
    if not isinstance(status, str) and not isinstance(submission, str):
        return
    parts: list[Part] = []
    if isinstance(status, str) and status:
        session.meta[EXIT_STATUS] = status
        parts.append(Part(Kind.TEXT, f"exit status: {status}"))
    size = len(submission) if isinstance(submission, str) else 0
    session.meta[SUBMISSION] = str(size)
    if isinstance(submission, str) and submission.strip():
        parts.append(Part(Kind.PATCH, submission, name="submission"))
    if parts:
        session.add(Turn(id="info", role="system", parts=parts, is_meta=True,
                         source=Source(path, record=pointer)))


def finished(session: Session, info: object, path: Path,
             progress: Progress | None) -> list[Session]:
    """The run read: closed with its `info` (at `/info`), progress said done, as the one
    session of a trajectory file."""
    close_with_info(session, info, str(path), "/info")
    if progress is not None:
        progress(1, 1)
    return [session]


def sniff_keys(head: bytes, patterns: tuple[re.Pattern[bytes], ...],
               accept: Any, path: Path) -> bool:
    """A JSON document: judged whole by `accept` when the head is the file, else by keys."""
    body = head.lstrip()
    if not body.startswith(b"{"):
        return False
    if len(head) < HEAD_BYTES:
        try:
            return bool(accept(orjson.loads(body)))
        except orjson.JSONDecodeError:
            pass
    return all(pattern.search(head) for pattern in patterns)


def tail(path: Path, size: int = 4096) -> bytes:
    """The last bytes of a file (where a document's closing keys are)."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        end = handle.tell()
        handle.seek(max(0, end - size))
        return handle.read()


def run_id(path: Path, document: dict[str, Any]) -> str:
    """The run's id: an `instance_id` the document names, else the file name without
    `.traj` and what follows (runners name the file after the task instance)."""
    for holder in (document, document.get("info")):
        if isinstance(holder, dict) and isinstance(holder.get("instance_id"), str):
            return str(holder["instance_id"])
    return path.name.split(".traj")[0] or path.name
