"""Generic chat messages into turns, as the chat-json, chat-jsonl and sharegpt readers share.

A message is an OpenAI-style object `{role, content, tool_calls?, tool_call_id?, name?, id?}`:
`content` is a string, a list of parts (`text`, `input_text`, `output_text`, `image_url`,
Anthropic `tool_use` / `tool_result` / `thinking` blocks, ...), or null when the message only
calls tools. Gemini-API style `parts` and Responses-API items (`function_call`,
`function_call_output`, `reasoning`) are accepted too, since agent harnesses mix them.

Rules:
- `user` / `assistant` / `system` (and `developer`) messages become turns; other names for
  them (`human`, `model`, `ai`, ...) are mapped.
- A `tool` (or `function`) message is not a turn: its content becomes the output of the
  matching tool call (`tool_call_id`, else the first unanswered call) of the latest assistant
  turn, or a tool-result part of that turn when no call matches. A user message that holds
  only tool results is handled the same way.
- A reasoning item belongs to the assistant step it precedes.
- An assistant message with content `""` or null and no tool calls is an empty turn.
- Turn ids are the message's own `id`, else `m<index>` (index in the source list or file).
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson

from replay.core.readers.base import (
    BOM,
    HEAD_BYTES,
    Document,
    ReaderError,
    UnreadablePath,
    iter_lines,
    load_document,
    read_head,
)
from replay.core.readers.json_stream import ARRAYS, EVERY_ARRAY, Elements
from replay.core.readers.top_members import line_spans
from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time

ROLES: dict[str, str] = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "model": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "gpt": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
    "observation": "tool",
}
"""Source role names mapped to turn roles; `tool` means 'tool output, not a turn'."""

TIME_KEYS: tuple[str, ...] = ("timestamp", "created_at", "createdAt", "created", "time")
"""Message fields that may hold its time (ISO text or epoch seconds/ms)."""

ID_KEYS: tuple[str, ...] = ("id", "session_id", "sessionId", "conversation_id", "uuid")
"""Envelope fields that may hold a session id."""

MESSAGE_KEYS: tuple[str, ...] = ("content", "tool_calls", "function_call", "parts")
"""A dict with a `role` and one of these is a chat message."""

TEXT_TYPES = frozenset({"text", "input_text", "output_text", "summary_text"})
IMAGE_TYPES = frozenset({"image_url", "input_image", "image", "output_image"})
FILE_TYPES = frozenset({"file", "input_file", "document", "input_audio", "audio"})
REASONING_TYPES = frozenset({"reasoning", "thinking", "redacted_thinking", "reasoning_text"})
CALL_ITEM_TYPES = frozenset({"function_call", "custom_tool_call", "tool_call"})
RESULT_ITEM_TYPES = frozenset(
    {"function_call_output", "custom_tool_call_output", "tool_call_output", "tool_result"}
)


def dump(value: object) -> str:
    """JSON text of a value, never raising (odd values fall back to `str`)."""
    if isinstance(value, str):
        return value
    try:
        return orjson.dumps(value).decode()
    except (TypeError, ValueError):
        pass
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def scalar_id(value: object) -> str | None:
    """A usable id from a string or integer field, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int):
        return str(value)
    return None


def is_message(value: object) -> bool:
    """True for a dict shaped like a chat message (`role` plus content or tool calls)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)
        and any(key in value for key in MESSAGE_KEYS)
    )


def looks_like_messages(value: object) -> bool:
    """True for a list whose first few items include a chat message."""
    if not isinstance(value, ARRAYS) or not value:
        return False
    return any(is_message(item) for item in value[:10])


def find_messages(value: object, max_depth: int = 4) -> tuple[str, list[Any]] | None:
    """(JSON pointer, list) of the conversation inside an envelope, or None.

    The `messages` list wins, else the first list of messages found breadth first at most
    `max_depth` objects deep, so harness variants such as `{"conversation": {"messages": [...]}}`
    are found by shape.
    """
    queue: deque[tuple[object, str, int]] = deque([(value, "", 0)])
    while queue:
        current, pointer, depth = queue.popleft()
        if not isinstance(current, dict):
            continue
        messages = current.get("messages")
        if isinstance(messages, ARRAYS) and (not messages or looks_like_messages(messages)):
            return f"{pointer}/messages", messages
        if depth >= max_depth:
            continue
        for key, child in current.items():
            child_pointer = f"{pointer}/{_escape_pointer(key)}"
            if looks_like_messages(child):
                return child_pointer, child  # type: ignore[return-value]
            if isinstance(child, dict):
                queue.append((child, child_pointer, depth + 1))
    return None


def _escape_pointer(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


Conversation = tuple[dict[str, Any] | None, str, list[Any]]
"""(envelope or None, JSON pointer of the message list, messages)."""


def find_conversations(document: object) -> list[Conversation] | None:
    """Every conversation of a JSON document, or None if it holds none."""
    if looks_like_messages(document):
        return [(None, "", document)]  # type: ignore[list-item]
    if isinstance(document, dict):
        found = find_messages(document)
        return None if found is None else [(document, found[0], found[1])]
    if isinstance(document, ARRAYS):
        conversations: list[Conversation] = []
        for number, item in enumerate(document):
            if isinstance(item, dict) and (found := find_messages(item)) is not None:
                conversations.append((item, f"/{number}{found[0]}", found[1]))
        return conversations or None
    return None


def envelope_id(envelope: dict[str, Any] | None) -> str | None:
    """The session id an envelope gives, if any."""
    if envelope is None:
        return None
    for key in ID_KEYS:
        found = scalar_id(envelope.get(key))
        if found is not None:
            return found
    return None


def envelope_text(envelope: dict[str, Any] | None, *keys: str) -> str | None:
    """The first non-empty string among some envelope fields."""
    if envelope is None:
        return None
    for key in keys:
        value = envelope.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def plain_text(content: object) -> str:
    """The text of a tool output: a string, or the text parts of a list, else its JSON."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for item in content:
            if isinstance(item, str):
                texts.append(item)
            elif isinstance(item, dict) and isinstance(item.get("text"), str):
                texts.append(item["text"])
            else:
                texts.append(dump(item))
        return "\n".join(texts)
    return dump(content)


def _url(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("url", "file_id", "filename", "uri"):
            if isinstance(value.get(key), str):
                return value[key]  # type: ignore[no-any-return]
    return None


def _text_field(item: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and isinstance(value.get("value"), str):
            return value["value"]  # type: ignore[no-any-return]
    return ""


def _typed_part(kind: str, item: dict[str, Any]) -> Part:
    """One content block with a `type` into a part."""
    if kind in TEXT_TYPES:
        return Part(Kind.TEXT, _text_field(item, "text"))
    if kind == "refusal":
        return Part(Kind.TEXT, _text_field(item, "refusal", "text"))
    if kind in REASONING_TYPES:
        text = _text_field(item, "thinking", "text", "reasoning")
        if not text and isinstance(item.get("summary"), list):
            text = plain_text(item["summary"])
        return Part(Kind.REASONING, text)
    if kind in IMAGE_TYPES:
        return Part(Kind.IMAGE, name=_url(item.get(kind)) or _url(item.get("image_url"))
                    or _url(item.get("url")))
    if kind in FILE_TYPES:
        return Part(Kind.FILE, name=_url(item.get(kind)) or _url(item.get("filename")) or kind)
    if kind in ("tool_use", "server_tool_use") or kind in CALL_ITEM_TYPES:
        return _call_item(item)
    if kind in RESULT_ITEM_TYPES:
        content = item.get("content", item.get("output"))
        return Part(Kind.TOOL_RESULT, plain_text(content),
                    call_id=scalar_id(item.get("tool_use_id")) or scalar_id(item.get("call_id")),
                    status="error" if item.get("is_error") is True else "completed")
    return Part(Kind.OTHER, _text_field(item, "text"), name=kind)


def _gemini_part(item: dict[str, Any]) -> Part | None:
    """A Gemini-API part (`text`, `functionCall`, `functionResponse`, `inlineData`)."""
    if isinstance(item.get("text"), str):
        return Part(Kind.REASONING if item.get("thought") is True else Kind.TEXT, item["text"])
    call = item.get("functionCall")
    if isinstance(call, dict):
        return Part(Kind.TOOL_CALL, name=scalar_id(call.get("name")), input=dump(call.get("args")),
                    call_id=scalar_id(call.get("id")))
    response = item.get("functionResponse")
    if isinstance(response, dict):
        return Part(Kind.TOOL_RESULT, dump(response.get("response")),
                    name=scalar_id(response.get("name")), call_id=scalar_id(response.get("id")))
    for key in ("inlineData", "fileData"):
        data = item.get(key)
        if isinstance(data, dict):
            mime = data.get("mimeType")
            is_image = isinstance(mime, str) and mime.startswith("image/")
            return Part(Kind.IMAGE if is_image else Kind.FILE, name=_url(data.get("fileUri")))
    return None


def content_parts(content: object, session: Session, where: str) -> list[Part]:
    """The parts of a message's `content` (or `parts`), warning about blocks it cannot read."""
    if content is None:
        return []
    if isinstance(content, str):
        return [Part(Kind.TEXT, content)]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        session.warn(f"{where}: content is a {type(content).__name__}, expected text or a list",
                     skipped=False)
        return []
    parts: list[Part] = []
    for item in content:
        if isinstance(item, str):
            parts.append(Part(Kind.TEXT, item))
            continue
        if not isinstance(item, dict):
            session.warn(f"{where}: content block is a {type(item).__name__}", skipped=False)
            continue
        kind = item.get("type")
        if isinstance(kind, str) and kind:
            parts.append(_typed_part(kind, item))
            continue
        part = _gemini_part(item)
        if part is None:
            session.warn(f"{where}: content block without a type", skipped=False)
            continue
        parts.append(part)
    return parts


def _call_item(item: dict[str, Any]) -> Part:
    """A tool call from an OpenAI `tool_calls` entry, a Responses item or a `tool_use` block."""
    function = item.get("function")
    custom = item.get("custom")
    source = function if isinstance(function, dict) else custom if isinstance(custom, dict) \
        else item
    arguments = next((source[key] for key in ("arguments", "input", "args") if key in source), None)
    return Part(
        Kind.TOOL_CALL,
        name=scalar_id(source.get("name")) or scalar_id(item.get("name")),
        input=None if arguments is None else dump(arguments),
        call_id=scalar_id(item.get("id")) or scalar_id(item.get("call_id")),
        status="pending",
    )


def tool_call_parts(message: dict[str, Any], session: Session, where: str) -> list[Part]:
    """Parts for `tool_calls` (and the older `function_call`) of a message."""
    parts: list[Part] = []
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict):
                parts.append(_call_item(call))
            else:
                session.warn(f"{where}: tool call is a {type(call).__name__}", skipped=False)
    elif calls is not None:
        session.warn(f"{where}: tool_calls is a {type(calls).__name__}, expected a list",
                     skipped=False)
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        parts.append(_call_item(legacy))
    return parts


class ChatBuilder:
    """Builds one session from chat messages fed in order."""

    def __init__(self, session: Session, model: str | None = None) -> None:
        """Start filling `session`; `model` (the envelope's) serves messages that name none."""
        self.session = session
        self.model = model
        self.ids: set[str] = set()
        """Turn ids given so far, but for those made up as `m<index>` (see `_made`)."""
        self._made = bytearray()
        """1 at `index` when that message's turn got the made-up id `m<index>`: a byte per
        message instead of a string per turn (a scan of millions of messages)."""
        self.changed: Callable[[Turn], None] | None = None
        """Told when a turn added earlier changes (a `TurnIndex` takes its columns again)."""
        self.keep: Callable[[Turn], None] | None = None
        """Told of a turn that its own records alone would not make again (a `TurnIndex`
        keeps it whole)."""
        self.last_assistant: Turn | None = None
        self.pending_reasoning: list[Part] = []
        self.pending_source: Source | None = None
        self.pending_spans: tuple[tuple[int, int], ...] = ()
        self.pending_index = 0
        self.provisional: Turn | None = None
        """A reasoning-only turn made by `finish`; the next assistant step may still claim it."""

    def _turn_id(self, message: dict[str, Any], index: int) -> str:
        """The message's own id, else `m<index>`; `@m<index>` added to an id already given."""
        found = scalar_id(message.get("id"))
        if found is None:
            turn_id = f"m{index}"
            if turn_id not in self.ids and not self._was_made(turn_id):
                if len(self._made) <= index:
                    self._made.extend(bytes(index + 1 - len(self._made)))
                self._made[index] = 1
                return turn_id
        else:
            turn_id = found
        if turn_id in self.ids or self._was_made(turn_id):
            turn_id = f"{turn_id}@m{index}"
        self.ids.add(turn_id)
        return turn_id

    def _was_made(self, turn_id: str) -> bool:
        """True when `turn_id` is a made-up `m<index>` id already given."""
        digits = turn_id[1:]
        if turn_id[:1] != "m" or not digits.isascii() or not digits.isdigit() \
                or str(int(digits)) != digits:
            return False
        index = int(digits)
        return index < len(self._made) and self._made[index] == 1

    def _forget_id(self, turn_id: str) -> None:
        """`turn_id` is free again (a provisional turn takes another)."""
        if self._was_made(turn_id):
            self._made[int(turn_id[1:])] = 0
        else:
            self.ids.discard(turn_id)

    def _changed(self, turn: Turn) -> None:
        if self.changed is not None:
            self.changed(turn)

    @staticmethod
    def _absorb(turn: Turn, spans: tuple[tuple[int, int], ...]) -> None:
        """Record that more source records (by byte span) make up a turn."""
        if turn.source is not None and spans:
            known = turn.source.spans
            turn.source.spans = known + tuple(span for span in spans if span not in known)

    def _take_pending(self) -> tuple[list[Part], tuple[tuple[int, int], ...]]:
        parts, spans = self.pending_reasoning, self.pending_spans
        self.pending_reasoning, self.pending_spans = [], ()
        return parts, spans

    def _new_turn(self, role: str, message: dict[str, Any], index: int, parts: list[Part],
                  source: Source) -> Turn:
        if role == "assistant" and self.pending_reasoning:
            reasoning, spans = self._take_pending()
            parts = [*reasoning, *parts]
            source = Source(source.path, line=self.pending_source.line if self.pending_source
                            else source.line, spans=spans + source.spans, record=source.record)
        elif self.pending_reasoning:
            self.finish()
        provisional, self.provisional = self.provisional, None
        if (role == "assistant" and provisional is not None and self.session.turns
                and self.session.turns[-1] is provisional):
            # Follow mode: the step the reasoning preceded has arrived; together they are one turn.
            self.session.turns.pop()
            self._forget_id(provisional.id)
            provisional.id = self._turn_id(message, index)
            provisional.parts.extend(parts)
            self._absorb(provisional, source.spans)
            turn = provisional
        else:
            turn = Turn(id=self._turn_id(message, index), role=role, parts=parts, source=source)
        for key in TIME_KEYS:
            if key in message:
                turn.timestamp, turn.time = parse_time(message[key])
                if turn.timestamp is not None:
                    break
        if role == "assistant":
            model = message.get("model")
            turn.model = model if isinstance(model, str) else self.model
            self.last_assistant = turn
        return self.session.add(turn)

    def _attach_results(self, results: list[Part], message: dict[str, Any], index: int,
                        source: Source) -> None:
        """Give tool outputs to their calls in the latest assistant turn."""
        target = self.last_assistant
        leftovers: list[Part] = []
        for result in results:
            call = self._matching_call(target, result.call_id) if target is not None else None
            if call is not None:
                call.output = result.text
                call.status = result.status or "completed"
            else:
                leftovers.append(result)
        if target is not None and len(leftovers) < len(results):
            self._absorb(target, source.spans)
            self._changed(target)
        if not leftovers:
            return
        if target is not None and self.session.turns and self.session.turns[-1] is target:
            target.parts.extend(leftovers)
            self._absorb(target, source.spans)
            self._changed(target)
        else:
            # Output with no call before it: shown as harness output, never as a person's turn.
            turn = self._new_turn("system", message, index, leftovers, source)
            if target is not None and len(leftovers) < len(results) and self.keep is not None:
                # One record split between two turns: neither is made again from its records
                # alone (the call's outputs would go to the other one).
                self.keep(target)
                self.keep(turn)

    @staticmethod
    def _matching_call(turn: Turn, call_id: str | None) -> Part | None:
        calls = [p for p in turn.parts if p.kind == Kind.TOOL_CALL]
        if call_id is not None:
            return next((p for p in calls if p.call_id == call_id), None)
        return next((p for p in calls if p.output is None), None)

    def add(self, message: object, index: int, source: Source) -> None:
        """Read one message (or Responses-API item); bad ones are counted and skipped."""
        where = f"message {index}"
        if not isinstance(message, dict):
            self.session.warn(f"{where}: a {type(message).__name__}, expected an object")
            return
        raw_role = message.get("role")
        if not isinstance(raw_role, str):
            self._add_item(message, index, source, where)
            return
        role = ROLES.get(raw_role.lower())
        if role is None:
            self.session.warn(f"{where}: unknown role {raw_role[:40]!r}")
            return
        body = message.get("content")
        if body is None and "parts" in message:
            body = message.get("parts")
        parts = content_parts(body, self.session, where)
        if role == "tool":
            self.provisional = None
            text = plain_text(body)
            call_id = scalar_id(message.get("tool_call_id")) or scalar_id(message.get("call_id"))
            result = Part(Kind.TOOL_RESULT, text, name=scalar_id(message.get("name")),
                          call_id=call_id, status="completed")
            results = [p for p in parts if p.kind == Kind.TOOL_RESULT] or [result]
            self._attach_results(results, message, index, source)
            return
        if role == "user" and parts and all(p.kind == Kind.TOOL_RESULT for p in parts):
            self.provisional = None
            self._attach_results(parts, message, index, source)
            return
        reasoning = [message.get(key) for key in ("reasoning_content", "reasoning", "thinking")]
        thoughts = [Part(Kind.REASONING, text) for text in reasoning if isinstance(text, str)]
        parts = thoughts + parts
        if role == "assistant":
            parts += tool_call_parts(message, self.session, where)
        self._new_turn(role, message, index, parts, source)

    def _add_item(self, item: dict[str, Any], index: int, source: Source, where: str) -> None:
        """A role-less record: a Responses-API item, or bookkeeping counted as an event."""
        kind = item.get("type")
        if not isinstance(kind, str):
            self.session.events += 1
            return
        if kind in CALL_ITEM_TYPES:
            call = _call_item(item)
            last = self.session.turns[-1] if self.session.turns else None
            if last is not None and last is self.last_assistant:
                reasoning, spans = self._take_pending()
                last.parts.extend([*reasoning, call])
                self._absorb(last, spans + source.spans)
                self._changed(last)
                self.provisional = None
            else:
                self._new_turn("assistant", item, index, [call], source)
        elif kind in RESULT_ITEM_TYPES:
            self.provisional = None
            self._attach_results([_typed_part(kind, item)], item, index, source)
        elif kind in REASONING_TYPES:
            if not self.pending_reasoning:
                self.pending_source = source
                self.pending_index = index
            self.pending_reasoning.append(_typed_part(kind, item))
            self.pending_spans += source.spans
        else:
            self.session.events += 1

    def finish(self) -> None:
        """Reasoning with no step after it is a turn of its own (it thought, showed nothing).

        In follow mode more records may come: the turn stays provisional, and the next
        assistant step (or more reasoning) joins it instead of making another turn.
        """
        if not self.pending_reasoning or self.pending_source is None:
            return
        provisional = self.provisional
        if provisional is not None and self.session.turns and self.session.turns[-1] is provisional:
            reasoning, spans = self._take_pending()
            provisional.parts.extend(reasoning)
            self._absorb(provisional, spans)
            self._changed(provisional)
            return
        source = Source(self.pending_source.path, line=self.pending_source.line,
                        record=self.pending_source.record)
        turn = self._new_turn("assistant", {}, self.pending_index, [], source)
        self.provisional = turn


Convert = Callable[[object, Session, int], object | None]
"""A record's value as a chat message (ShareGPT's `{from, value}`), or None to skip it (it
warned); `(value, session, index)`."""


class RecordBuilder:
    """Builds one session from the records of one conversation, each fed as its bytes with
    its offset (a JSON document's messages by span, `span_feed`): what `fill_session` makes
    of the parsed list, one record at a time, so a scan keeps a window of turns and the app
    a `TurnIndex`."""

    def __init__(self, session: Session, model: str | None, pointer: str,
                 convert: Convert | None = None,
                 opening: Callable[[ChatBuilder], None] | None = None) -> None:
        """`pointer` locates the list (records are `pointer/index`); `opening` adds what
        comes before the first record (ShareGPT's `system` string)."""
        self.session = session
        self.chat = ChatBuilder(session, model)
        self.pointer = pointer
        self.convert = convert
        self.opening = opening
        self.number_at: Callable[[int, int | None], int] | None = None
        """For a `TurnIndex`: the record number at an offset (`span_feed.element_number`)."""

    def fresh(self, path: str) -> RecordBuilder:
        """A new builder of this conversation's records, without the opening (a turn read
        back from its records: `span_feed.read_back`)."""
        fresh = RecordBuilder(Session(path=path, format=self.session.format), self.chat.model,
                              self.pointer, self.convert)
        fresh.number_at = self.number_at
        return fresh

    def index_turns(self, **sizes: int) -> Any:
        """Hold the turns in a `TurnIndex` (before any record is fed), read back by span."""
        from replay.core.readers.span_feed import read_back

        assert self.number_at is not None, "a TurnIndex needs the records' numbers"
        return index_chat_turns(self.session, self.chat, read_back(self.fresh, self.number_at),
                                named=True, **sizes)

    def _open(self) -> None:
        opening, self.opening = self.opening, None
        if opening is not None:
            opening(self.chat)

    def feed(self, record: bytes, offset: int, number: int) -> None:
        """Read record `number` (from 1) of the list, found at byte `offset`."""
        self._open()
        index = number - 1
        value = orjson.loads(record)
        if self.convert is not None:
            value = self.convert(value, self.session, index)
            if value is None:
                return
        source = Source(self.session.path, spans=((offset, len(record)),),
                        record=f"{self.pointer}/{index}")
        self.chat.add(value, index, source)

    def finish(self) -> None:
        """Settle reasoning that no step followed; keep only the records' starts for the
        read-back (every record is fed)."""
        self._open()
        self.chat.finish()
        compact = getattr(self.number_at, "compact", None)
        if compact is not None:
            compact()


def index_chat_turns(session: Session, chat: ChatBuilder, rebuild: Any, *,
                     named: bool = False, **sizes: int) -> Any:
    """Hold a chat builder's turns in a `TurnIndex` (before anything is fed): the builder
    tells it of turns it changes and of those to keep whole. `sizes`: its tail and cache."""
    from replay.core.index.turn_index import TurnIndex

    index = TurnIndex(session.path, rebuild, named=named, **sizes)
    session.turns = index  # type: ignore[assignment]
    chat.changed, chat.keep = index.changed, index.keep
    return index


def fill_session(session: Session, envelope: dict[str, Any] | None, messages: list[Any],
                 pointer: str, line: int | None = None,
                 spans: tuple[tuple[int, int], ...] = ()) -> Session:
    """Add every message of one conversation to a session; `pointer` locates the list.

    `line` and `spans` locate the record holding the conversation in a JSON-lines file.
    """
    builder = ChatBuilder(session, envelope_text(envelope, "model"))
    # Streamed messages each know their bytes: the raw view reads that one record back.
    own = messages.span if isinstance(messages, Elements) and not spans else None
    for index, message in enumerate(messages):
        source = Source(session.path, line=line, spans=(own(index),) if own else spans,
                        record=f"{pointer}/{index}")
        builder.add(message, index, source)
    builder.finish()
    return session


def load_json(path: Path, expected: str) -> Document:
    """The JSON document at `path` (text lines around it skipped with a note; empty or cut
    off: no value); a one-line ReaderError when it is not JSON at all. Its top-level arrays
    are streamed (`json_stream.Elements`: one record parsed at a time)."""
    return load_document(path, expected, stream=EVERY_ARRAY)


def file_head(path: Path) -> bytes:
    """The head of a file (see `read_head`); a one-line UnreadablePath when it cannot be read."""
    try:
        return read_head(path)
    except OSError as error:
        raise UnreadablePath.of(path, error) from None


def json_lines(path: Path) -> list[tuple[object, int, int, int]]:
    """(value, offset, length, lineno) for every non-blank line; `INVALID` marks non-JSON lines."""
    try:
        handle = open(path, "rb")
    except OSError as error:
        raise UnreadablePath.of(path, error) from None
    found: list[tuple[object, int, int, int]] = []
    with handle:
        try:
            for line, offset, lineno in iter_lines(handle):
                found.append((parse_line(line), offset, len(line), lineno))
        except OSError as error:
            raise UnreadablePath.of(path, error) from None
    return found


INVALID = object()
"""Marker for a line that is not JSON."""


def parse_line(line: bytes) -> object:
    """One JSONL record, or `INVALID`."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return INVALID


Spans = tuple[tuple[int, int], ...]
"""(offset, length) byte spans of source records."""


def sessions_by_line(path: Path, read_record: Callable[[object, int, int, Spans], Session | None],
                     problem: str, what: str) -> list[Session]:
    """One session per JSON line holding a whole conversation, as `read_record` reads it.

    `read_record(value, number, lineno, spans)` gets every line (`INVALID` if not JSON) and
    returns None to refuse it; refused lines are warned about (`line <n>: <problem>`) on the
    first session, and a file with no accepted line is a ReaderError naming `what`.
    """
    sessions: list[Session] = []
    problems: list[str] = []
    for number, (value, offset, length, lineno) in enumerate(json_lines(path), start=1):
        session = read_record(value, number, lineno, ((offset, length),))
        if session is None:
            problems.append(f"line {lineno}: {problem}")
        else:
            sessions.append(session)
    if not sessions:
        raise ReaderError(f"{path}: no line holds a {what}")
    for text in problems:
        sessions[0].warn(text)
    return sessions


def head_document(head: bytes) -> object:
    """The whole document when the head holds the whole file and it parses, else `INVALID`."""
    if len(head) >= HEAD_BYTES:
        return INVALID
    return parse_line(head.removeprefix(BOM))


def first_record(head: bytes) -> object:
    """The first line of a head parsed as JSON, or `INVALID`.

    A line that opens an object, a list or a string and does not close it there (a
    one-line document cut where the head ends) is `INVALID` without parsing it, a copy of
    the line and the copy orjson's error keeps of it."""
    for start, end in line_spans(head, 20)[:20]:
        if start < end:
            if head.startswith(BOM, start, end):
                start += len(BOM)
            opened = _NOT_BLANK.search(head, start, end)
            if opened is not None and _CLOSING.get(head[opened.start()], head[end - 1]) \
                    != head[end - 1]:
                return INVALID
            return parse_line(head[start:end])
    return INVALID


_NOT_BLANK = re.compile(rb"[^ \t\n\r]")
"""What JSON does not take for white space."""
_CLOSING = {ord("{"): ord("}"), ord("["): ord("]"), ord('"'): ord('"')}
"""The last byte of a JSON text that starts with each of these."""


def has_inner_line_end(head: bytes) -> bool:
    """`b"\\n" in head.strip()` without the copy `strip` makes (of a 16 MiB head)."""
    first = _NOT_STRIPPED.search(head)
    if first is None:
        return False
    last = len(head)
    while head[last - 1] in _STRIPPED:
        last -= 1
    return head.find(b"\n", first.start(), last) >= 0


_STRIPPED = b" \t\n\r\x0b\x0c"
"""What `bytes.strip` strips."""
_NOT_STRIPPED = re.compile(rb"[^ \t\n\r\x0b\x0c]")


def starts_like_json(head: bytes) -> bool:
    """True when the first non-blank byte opens an object or a list."""
    first = _NOT_STRIPPED.search(head, len(BOM) if head.startswith(BOM) else 0)
    return first is not None and head[first.start()] in b"{["


_LIST_OF_OBJECTS = re.compile(r"\[\s*\{")
_DECODER = json.JSONDecoder()


def head_has_item(head: bytes, accept: Callable[[object], bool], tries: int = 50) -> bool:
    """True when some list in a (possibly cut) head starts with an object `accept` likes.

    Used to sniff documents larger than the head: each of the first `tries` `[{` openings
    is decoded as far as its first object, so the shape is checked, not mere key names.

    As if the whole head were decoded (UTF-8, bad bytes left out) and each object decoded
    from there, but without decoding the head: each opening is found in the bytes and only
    its object's bytes are decoded (`_item_bytes`); a one-line document of 16 MiB is one
    object that does not end in the head, and was a text of 16 MiB (64 MiB of CJK) or more.
    """
    count = 0
    for match in _OPENING.finditer(head):
        if _LIST_OF_OBJECTS.fullmatch(head[match.start():match.end()]
                                      .decode("utf-8", errors="ignore")) is None:
            continue  # (bytes this pattern lets in that decode to no `[{` opening)
        if count >= tries:
            break
        count += 1
        start = match.end() - 1
        stop = _item_end(head, start)
        if stop is None:
            continue  # an object that does not end in the head: no decoding reads it
        try:
            item, _end = _DECODER.raw_decode(str(memoryview(head)[start:stop], "utf-8",
                                                 "ignore"))
        except (ValueError, RecursionError):
            continue
        if accept(item):
            return True
    return False


_OPENING = re.compile(rb"\[(?:\s|[\x1c-\x1f]|[\x80-\xff])*\{")
"""What may decode to a `[{` opening (`_LIST_OF_OBJECTS`): white space of either kind
(Unicode's is bytes over 0x7f) and bytes a decoding leaves out (all over 0x7f)."""
_ANY = msgspec.json.Decoder(msgspec.Raw)
_TRAILING = re.compile(r"trailing characters \(byte (\d+)\)")


def _item_end(head: bytes, start: int) -> int | None:
    """Where the bytes of the head that hold the JSON value starting at `start` end (the
    head's end when msgspec cannot tell where the value ends); None when it surely does not
    end in the head (msgspec finds it cut short: no parse reads it)."""
    try:
        _ANY.decode(memoryview(head)[start:])
    except msgspec.DecodeError as error:
        message = str(error)
        ended = _TRAILING.search(message)
        if ended is not None:
            return start + int(ended.group(1))
        if "truncated" in message and (b"}" not in head[-16:] or _HIGH_SURROGATE.search(
                head, len(head) - 16) is None):
            # (msgspec says so too of an object that ends with a lone `\\ud800` in the last
            # bytes, which Python's json reads: decoded when it may)
            return None
    except RecursionError:
        pass
    return len(head)


_HIGH_SURROGATE = re.compile(rb"\\u[dD][89abAB]")


def sniff_document(head: bytes, find: Callable[[object], object | None],
                   accept: Callable[[object], bool]) -> bool:
    """True when a head looks like a document that `find` finds something in.

    A head that is the whole file is parsed and judged by `find`; a cut one by whether some
    list in it starts with an item `accept` likes (`head_has_item`).
    """
    if len(head) < HEAD_BYTES:
        document = head_document(head)
        return document is not INVALID and find(document) is not None
    return head_has_item(head, accept)
