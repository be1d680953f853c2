"""Gemini CLI chat recordings (`~/.gemini/tmp/<project>/chats/session-*.json[l]`).

Two shapes exist. Older versions rewrite one JSON document
`{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`; newer ones append JSONL
records: a metadata line (`sessionId`, `projectHash`, ...), message records (a message is
written again in full each time its tool calls, results or tokens change: the last write of
an id wins, in the place of the first), `{"$set": {...}}` metadata patches (a
`$set.messages` list is the model's rewritten history after compression or masking) and
`{"$rewindTo": id}` markers (the person rewound the chat to before that message).

Each message is one turn: `user` → user, `gemini` → assistant (thoughts become reasoning
parts, tool calls become tool-call parts with their results), `info`/`warning`/`error` →
system turns (an error one carries an error part). For the reviewer nothing recorded is
dropped: messages that only appear in a `$set.messages` history are added as meta turns,
existing ones are left as first recorded (masking would hide their outputs), and a rewind
adds a system turn saying how many messages Gemini CLI discarded, leaving them in place.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay.core.readers.base import (
    Progress,
    Reader,
    as_list,
    first_json_line,
    json_object_line,
    json_text,
    parse_document,
    read_line_session,
    read_spans,
    shorten_part,
)
from replay.core.readers.gemini_ids import MessageIds
from replay.core.readers.json_stream import ARRAYS, Elements, NotStreamable, stream_document
from replay.core.session.model import Kind, Part, Session, Source, Turn, first_prompt, parse_time

if TYPE_CHECKING:
    from replay.core.index.turn_index import TurnIndex

MESSAGE_TYPES: dict[str, str] = {
    "user": "user",
    "gemini": "assistant",
    "model": "assistant",
    "info": "system",
    "warning": "system",
    "error": "system",
}
"""Gemini message `type` → turn role."""

STATUS: dict[str, str] = {
    "success": "completed",
    "error": "error",
    "cancelled": "error",
    "executing": "running",
    "scheduled": "pending",
    "validating": "pending",
    "awaiting_approval": "pending",
}
"""Gemini tool-call statuses in the vocabulary of `Part.status`."""

_HEADER_SNIFF = (re.compile(rb'"sessionId"\s*:'), re.compile(rb'"projectHash"\s*:'))
_MESSAGE_SNIFF = re.compile(rb'"type"\s*:\s*"gemini"')


def _genai_parts(content: Any, *, synthetic: bool = False) -> list[Part]:
    """Parts of a `PartListUnion`: a string, one part object, or a list of either."""
    items = content if isinstance(content, list) else [content]
    parts: list[Part] = []
    for item in items:
        if isinstance(item, str):
            if item:
                parts.append(Part(Kind.TEXT, text=item, synthetic=synthetic))
        elif not isinstance(item, dict):
            continue
        elif isinstance(item.get("text"), str):
            kind = Kind.REASONING if item.get("thought") is True else Kind.TEXT
            parts.append(Part(kind, text=item["text"], synthetic=synthetic))
        elif isinstance(item.get("inlineData"), dict):
            mime = str(item["inlineData"].get("mimeType") or "")
            kind = Kind.IMAGE if mime.startswith("image/") else Kind.FILE
            parts.append(Part(kind, name=mime or "inline data", synthetic=synthetic))
        elif isinstance(item.get("fileData"), dict):
            name = item["fileData"].get("fileUri") or item["fileData"].get("mimeType")
            parts.append(Part(Kind.FILE, name=str(name or "file"), synthetic=synthetic))
        elif isinstance(item.get("functionCall"), dict):
            call = item["functionCall"]
            parts.append(Part(Kind.TOOL_CALL, name=str(call.get("name") or "tool"),
                              input=json_text(call.get("args")), call_id=_text_id(call),
                              synthetic=synthetic))
        elif isinstance(item.get("functionResponse"), dict):
            reply = item["functionResponse"]
            parts.append(Part(Kind.TOOL_RESULT, name=str(reply.get("name") or "tool"),
                              text=_response_text(reply.get("response")),
                              call_id=_text_id(reply), synthetic=synthetic))
        elif item:
            parts.append(Part(Kind.OTHER, name=next(iter(item)), synthetic=synthetic))
    return parts


def _response_text(response: Any) -> str:
    """The useful text of a `functionResponse.response` (`output`, `error` or the JSON)."""
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            if isinstance(response.get(key), str):
                return str(response[key])
    return "" if response is None else json_text(response)


def _result_text(result: Any, display: Any) -> str | None:
    """What a tool call returned: its function responses, else what the CLI displayed."""
    texts: list[str] = []
    for item in result if isinstance(result, list) else [result]:
        if isinstance(item, dict) and isinstance(item.get("functionResponse"), dict):
            texts.append(_response_text(item["functionResponse"].get("response")))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif isinstance(item, str):
            texts.append(item)
    if any(texts):
        return "\n".join(texts)
    if isinstance(display, str):
        return display
    if isinstance(display, dict):
        diff = display.get("fileDiff")
        return diff if isinstance(diff, str) else json_text(display)
    return None


def _tool_part(call: dict[str, Any]) -> Part:
    name = call.get("name") or call.get("displayName") or "tool"
    args = call.get("args")
    return Part(
        Kind.TOOL_CALL,
        name=str(name),
        input=None if args is None else json_text(args),
        output=_result_text(call.get("result"), call.get("resultDisplay")),
        status=STATUS.get(str(call.get("status")), None if call.get("status") is None
                          else str(call.get("status"))),
        call_id=call.get("id") if isinstance(call.get("id"), str) else None,
    )


def _tokens(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    names = {"input": "input", "output": "output", "cached": "cache_read",
             "thoughts": "reasoning", "tool": "tool", "total": "total"}
    tokens = {name: value[key] for key, name in names.items()
              if isinstance(value.get(key), int) and not isinstance(value.get(key), bool)}
    return tokens or None


def _text_id(value: dict[str, Any]) -> str | None:
    """An `id` field when it is a string (other versions and hand edits vary)."""
    found = value.get("id")
    return found if isinstance(found, str) else None


def message_parts(message: dict[str, Any], *, synthetic: bool = False) -> list[Part]:
    """Every part of one Gemini message, in the order the CLI showed them."""
    kind = message.get("type")
    parts: list[Part] = []
    for thought in as_list(message.get("thoughts")):
        if isinstance(thought, dict):
            subject, description = thought.get("subject"), thought.get("description")
            text = "\n".join(str(piece) for piece in (subject, description) if piece)
            parts.append(Part(Kind.REASONING, text=text, synthetic=synthetic))
    content = message.get("content")
    if kind == "user" and message.get("displayContent"):
        content = message["displayContent"]
    if kind == "error":
        text = "\n".join(p.text for p in _genai_parts(content) if p.kind == Kind.TEXT)
        parts.append(Part(Kind.ERROR, name="error", text=text, synthetic=synthetic))
    else:
        parts.extend(_genai_parts(content, synthetic=synthetic))
    for call in as_list(message.get("toolCalls")):
        if isinstance(call, dict):
            parts.append(_tool_part(call))
    return parts


class ElementStarts:
    """Where each message of a streamed document starts: a turn read back from its element
    is named `/messages/N` again (`N` found from its offset)."""

    __slots__ = ("starts",)

    def __init__(self) -> None:
        self.starts = array("q")

    def position(self, offset: int) -> int | None:
        """The element's place in the document's `messages`, None when none starts there."""
        at = bisect.bisect_left(self.starts, offset)
        return at if at < len(self.starts) and self.starts[at] == offset else None


class GeminiBuilder:
    """Builds one Gemini session from the lines of a JSONL recording or a JSON document.

    A message written again changes the turn of its first write: the turn is fetched from
    `session.turns` by index, which may be a `TurnIndex` holding only columns (the app).
    """

    keeps_no_line = True
    """`feed` keeps nothing of a line (it decodes it and keeps its span): the app may hand
    it views into one read buffer (`base.lines_for`)."""

    def __init__(self, path: str, *, whole: bool = False) -> None:
        self.session = Session(path=path, format="gemini")
        """The session being built."""
        self.session.loader = functools.partial(load_full_parts, path)
        self._whole = whole
        self._ids = MessageIds(self._turn_id)
        """The turn of each live message by its own id (rewinds drop ids), and every
        message turn's id used (an id a rewind dropped comes back under a made-up one)."""
        self.elements = ElementStarts()
        """Offsets of a streamed document's messages (kept by a `TurnIndex`'s read-back)."""
        self.turn_index: TurnIndex | None = None
        """Set when the session's turns are a `TurnIndex`: told of every turn written again,
        and of the turns its records alone do not make (kept whole)."""
        self._index_sizes: dict[str, int] = {}
        self._document_failed = False
        self._mode: str | None = None
        self._count = 0
        self.reads_itself = False
        """True once the first line shows a JSON document: `read_line_session` feeds no
        more lines (`finish` reads the document)."""

    def _turn_id(self, index: int) -> str:
        """The id of the turn at `index` (from the index's columns when it has them)."""
        if self.turn_index is not None:
            return self.turn_index.id_at(index)
        return self.session.turns[index].id

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Take one line: a JSONL record, or a line of a pretty-printed document."""
        if self._mode is None:
            self._mode = "lines" if _complete_object(line) else "document"
        if self._mode == "document":
            # The CLI rewrites a document whole; `finish` reads it back in one piece, so
            # the lines after this one are not read (a message of 50 MB is one line of a
            # pretty-printed document: read as a line, it was held, or decoded, for nothing).
            self.reads_itself = True
            return
        record = json_object_line(self.session, line, lineno)
        if record is None:
            return
        self._record(record, (offset, len(line)), lineno)

    def finish(self) -> None:
        """For a JSON document, read and parse the whole file as it is now."""
        if self._mode != "document":
            return
        if self._finish_streamed():
            return
        try:
            with open(self.session.path, "rb") as handle:
                content = handle.read()
            loaded = parse_document(content)
        except OSError as error:
            self.session.warn(f"could not read the document: {error.strerror or error}")
            return
        except ValueError as error:
            if not self._document_failed:
                self._document_failed = True
                self.session.warn(f"the JSON document is malformed: {error}")
            return
        if loaded.truncated or loaded.empty:
            if not self._document_failed:
                self._document_failed = True
                loaded.warn(self.session)
            return
        document = loaded.value
        if not isinstance(document, dict):
            self.session.warn("the JSON document is not an object")
            return
        self._clear()
        for note in loaded.notes:
            if note not in self.session.warnings:
                self.session.warn(note, skipped=False)
        line = content.count(b"\n", 0, loaded.start) + 1
        self._header(document, (loaded.start, loaded.end - loaded.start), line, "/messages")

    def _finish_streamed(self) -> bool:
        """The document read a message at a time (`json_stream`), each message's span its
        own; False when it is not one clean document (then it is read whole, as before)."""
        try:
            document, start, _ = stream_document(Path(self.session.path),
                                                 frozenset({"messages"}))
            with open(self.session.path, "rb") as handle:
                line = handle.read(start).count(b"\n") + 1
        except (NotStreamable, OSError):
            return False
        if not isinstance(document, dict):
            return False
        self._clear()
        try:
            self._header(document, (0, 0), line, "/messages")
        except OSError:
            # Cut shorter while its messages were read (`FileChanged`): the CLI rewrites
            # its document whole, so it is read again whole, as it is now.
            self._clear()
            return False
        return True

    def _clear(self) -> None:
        """Forget the turns so far (the document is read again, whole)."""
        if self.turn_index is not None:
            if len(self.turn_index):
                index_turns(self, **self._index_sizes)  # a fresh, empty index
        else:
            self.session.turns.clear()
        self._ids.clear()
        self._count = 0
        self.elements.starts = array("q")

    def _record(self, record: dict[str, Any], span: tuple[int, int], lineno: int) -> None:
        if isinstance(record.get("$rewindTo"), str):
            self._rewind(record["$rewindTo"], span, lineno)
        elif isinstance(record.get("$set"), dict):
            self.session.events += 1
            self._metadata(record["$set"], span, lineno, "/$set/messages", added_meta=True)
        elif isinstance(record.get("id"), str) and ("type" in record or "content" in record):
            self._message(record, span, lineno, None)
        elif "sessionId" in record or "projectHash" in record:
            self._header(record, span, lineno, "/messages")
        else:
            self.session.events += 1

    def _header(self, record: dict[str, Any], span: tuple[int, int], lineno: int,
                pointer: str) -> None:
        self.session.events += 1
        self._metadata(record, span, lineno, pointer, added_meta=False)

    def _metadata(self, values: dict[str, Any], span: tuple[int, int], lineno: int,
                  pointer: str, *, added_meta: bool) -> None:
        session_id = values.get("sessionId")
        if isinstance(session_id, str) and session_id:
            self.session.session_id = session_id
        summary = values.get("summary")
        if isinstance(summary, str) and summary.strip():
            self.session.title = summary.strip()
        for key in ("projectHash", "startTime", "kind"):
            if isinstance(values.get(key), str):
                self.session.meta[key] = values[key]
        messages = values.get("messages")
        if not isinstance(messages, ARRAYS):
            return
        own = messages.span if isinstance(messages, Elements) else None
        for position, message in enumerate(messages):
            if own is not None:
                span = own(position)  # a streamed message: its own bytes
                if pointer == "/messages":
                    self.elements.starts.append(span[0])
            if not isinstance(message, dict):
                self.session.warn(f"line {lineno}: message {position} is not an object")
                continue
            record = f"{pointer}/{position}"
            if added_meta:
                # A rewritten history: only messages never recorded before are news.
                known = message.get("id")
                if known not in self._ids:
                    self._message(message, span, lineno, record, meta=True)
            else:
                self._message(message, span, lineno, record)

    def _message(self, message: dict[str, Any], span: tuple[int, int], lineno: int,
                 record: str | None, *, meta: bool = False) -> None:
        kind = message.get("type")
        role = MESSAGE_TYPES.get(kind if isinstance(kind, str) else "", "system")
        own = message.get("id")
        turn_id = own if isinstance(own, str) and own else f"message-{self._count}"
        self._count += 1
        parts = message_parts(message, synthetic=meta)
        if not self._whole:
            parts = [shorten_part(part) for part in parts]
        timestamp, seconds = parse_time(message.get("timestamp"))
        known = self._ids.live(turn_id)
        if known is None:
            if self._ids.used(turn_id):
                # An id seen before a rewind comes back: keep turn ids unique.
                turn_id = f"{turn_id}@line-{lineno}"
            turn = self.session.add(Turn(id=turn_id, role=role))
            # Live under its own id (a made-up one is its turn id, renamed or not).
            self._ids.add(own if isinstance(own, str) and own else turn_id, turn_id,
                          turn.index)
        else:
            turn = self.session.turns[known]
            if known < len(self.session.turns) - 1:
                self.session.revise()  # an earlier message written again
        turn.role = role
        turn.parts = parts
        if role == "user" and not meta and self.session.title is None:
            # Gemini CLI names a session by its first prompt (a `summary` replaces it).
            self.session.title = first_prompt([turn])
        turn.timestamp, turn.time = timestamp, seconds
        turn.model = message.get("model") if isinstance(message.get("model"), str) else None
        turn.tokens = _tokens(message.get("tokens"))
        turn.is_meta = meta or (role == "system" and kind not in ("info", "warning", "error"))
        turn.source = Source(self.session.path, line=lineno, spans=(span,), record=record)
        # A message inside a bigger record (a document read whole, a header line or a
        # rewritten history holding many): its span is that whole record, kept whole.
        self._changed(turn, keep=record is not None and self.elements.position(span[0]) is None)

    def _changed(self, turn: Turn, *, keep: bool = False) -> None:
        """Tell the index (if any) of a turn written again, or that its record alone does
        not make it (`keep`: a message of a rewritten history, whose span is the whole
        `$set` line; a rewind's notice)."""
        index = self.turn_index
        if index is None:
            return
        if keep:
            index.keep(turn)
        index.changed(turn)

    def _rewind(self, target: str, span: tuple[int, int], lineno: int) -> None:
        """Mark a rewind; the discarded messages stay for the reviewer, out of the id map."""
        self.session.events += 1
        found, dropped = self._ids.rewind(target)
        what = f"message {target}" if found else "the start"
        notice = self.session.add(Turn(
            id=f"rewind-{lineno}", role="system", is_meta=True,
            parts=[Part(Kind.TEXT, synthetic=True,
                        text=f"Rewound to {what}: Gemini CLI discarded {dropped} "
                             "messages from there on.")],
            source=Source(self.session.path, line=lineno, spans=(span,)),
        ))
        self._changed(notice, keep=True)  # the count is no record's


def read_back_turn(elements: ElementStarts, path: str, spans: tuple[tuple[int, int], ...],
                   records: list[bytes], line: int | None, turn_id: str, role: str) -> Turn:
    """A turn read back from its own record (as a `TurnIndex` materialises one): a JSONL
    message record, or a streamed document's message (named `/messages/N` again), with the
    id it had.

    Raises:
        ValueError: the record no longer makes that turn (the file was replaced).
    """
    builder = GeminiBuilder(path)
    lineno = line or 0
    [(offset, length)], [data] = spans, records
    if elements.starts:
        position = elements.position(offset)
        message = orjson.loads(data)
        if position is None or not isinstance(message, dict):
            raise ValueError(f"{path}: no message starts at byte {offset} any more")
        builder._message(message, (offset, length), lineno, f"/messages/{position}")
    else:
        builder.feed(data, offset, lineno)
    turns = builder.session.turns
    if len(turns) != 1 or turns[0].role != role:
        raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")
    turn = turns[0]
    turn.id = turn_id
    return turn


def index_turns(builder: GeminiBuilder, **sizes: int) -> TurnIndex:
    """Hold the builder's turns in a `TurnIndex` (before any line is fed); `sizes` are its
    `tail` and `cache`."""
    from replay.core.index.turn_index import TurnIndex

    index = TurnIndex(builder.session.path,
                      functools.partial(read_back_turn, builder.elements), named=True, **sizes)
    builder.session.turns = index  # type: ignore[assignment]
    builder.turn_index = index
    builder._index_sizes = sizes
    return index


def _complete_object(line: bytes) -> bool:
    """True when a line holds a whole JSON object (a JSONL record, not a document's start)."""
    stripped = bytes(line).strip()  # a view into a read buffer too
    if not (stripped.startswith(b"{") and stripped.endswith(b"}")):
        return False
    try:
        return isinstance(orjson.loads(stripped), dict)
    except orjson.JSONDecodeError:
        return False


def _pointer(document: Any, pointer: str | None) -> Any:
    for step in (pointer or "").split("/")[1:]:
        if isinstance(document, list) and step.isdigit() and int(step) < len(document):
            document = document[int(step)]
        elif isinstance(document, dict) and step in document:
            document = document[step]
        else:
            raise ValueError(f"no {pointer} in the record")
    return document


def load_full_parts(path: str, turn: Turn) -> list[Part]:
    """Read a message back from its record and rebuild its parts without shortening."""
    if turn.source is None or not turn.source.spans:
        return turn.parts
    chunk = read_spans(path, turn.source.spans[:1])[0]
    value = orjson.loads(chunk)
    try:
        message = _pointer(value, turn.source.record)
    except ValueError:
        message = value  # a streamed document's message: its span is the message itself
    parts = message_parts(message, synthetic=turn.is_meta) if isinstance(message, dict) else []
    if [part.kind for part in parts] != [part.kind for part in turn.parts]:
        raise ValueError(f"{path}: the record of message {turn.id} changed since it was read")
    return parts


def sniff(path: Path, head: bytes) -> bool:
    """True for a Gemini recording: a header with sessionId and projectHash, or its messages."""
    start = head.lstrip()[:1]
    if start != b"{":
        return False
    if all(pattern.search(head) for pattern in _HEADER_SNIFF):
        return True
    line = first_json_line(head)
    if line is None or not _MESSAGE_SNIFF.search(line):
        return False
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return isinstance(record, dict) and record.get("type") == "gemini" and "id" in record


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """Read one recording (either shape) into one session."""
    return [read_line_session(path, GeminiBuilder(str(path)), progress)]


def read_indexed(path: Path, progress: Progress | None = None) -> list[Session]:
    """`read`, the turns held as columns (`index_turns`): the app and the scan on a big
    recording (a message of 120 bytes costs about 1 KB as a whole turn, 60 as columns)."""
    from replay.core.index.heap import keep_big_blocks_mapped

    keep_big_blocks_mapped()  # the columns grow by `realloc`: no holes left in the heap
    builder = GeminiBuilder(str(path))
    index_turns(builder)
    return [read_line_session(path, builder, progress)]


READER = Reader(
    name="gemini",
    title="Gemini CLI chat recording",
    sniff=sniff,
    read=read,
    builder=GeminiBuilder,
    index_turns=index_turns,
    read_indexed=read_indexed,
    scan_indexed=True,
    single_session=True,
    priority=30,
)
"""The Gemini CLI format."""
