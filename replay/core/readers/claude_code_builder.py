"""Builds a Claude Code session line by line: grouping, tool results, events, lazy full parts.

The same builder serves a whole-file read, follow mode (lines fed as they arrive) and the
loader that reads one turn's lines back unshortened, so the three can never disagree. It is
the hot path of `replay scan` on big files, hence the common blocks inlined in `_assistant`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from replay.core.readers.base import read_spans
from replay.core.readers.claude_code_schema import (
    ANY_DECODER,
    DECODER,
    EMPTY_RAW,
    META_DECODER,
    Block,
    Entry,
    Malformed,
    Message,
    Usage,
    entry_from_object,
)
from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time
from replay.core.session.text import PREVIEW_CHARS, shorten

if TYPE_CHECKING:
    from replay.core.index.turn_index import TurnIndex

NAME = "claude-code"
"""The format name of this reader."""

SIDE_PREVIEW_CHARS = 120
"""Characters of reasoning and of tool inputs and outputs kept in memory (prose keeps
`PREVIEW_CHARS`); the rest is read back on demand."""

AGENT_TOOLS = frozenset({"Task", "Agent"})
"""Tools whose call starts a subagent (a sidechain session)."""

_AGENT_ID_TEXT = re.compile(r"\bagentId: ([\w-]+)")
"""How newer versions name the subagent in the text of the Agent tool's result."""

_RECENT_MESSAGES = 4096
"""Assistant messages remembered for grouping; a response's lines come together, so only
the latest ones can still grow."""

_META_LINES = 200
"""Lines looked at for session facts (session id, version, cwd, git branch)."""

_MISSING = msgspec.UNSET
_QUOTE = ord('"')
_OPEN_LIST = ord("[")
_OPEN_OBJECT = ord("{")
_fromisoformat = datetime.fromisoformat


TITLE_RECORDS: dict[str, int] = {"summary": 0, "ai-title": 1, "custom-title": 2}
"""Record types that name the session, by precedence."""
TITLE_KEYS: tuple[str, ...] = ("customTitle", "aiTitle", "title", "summary")
"""Fields of those records that hold the name."""


def prompt_key(text: str) -> bytes:
    """A compact, stable key for a subagent prompt, to link a sidechain to its call."""
    import hashlib  # here: hashlib loads OpenSSL, and a scan links no subagents

    return hashlib.blake2b(text.strip().encode("utf-8", "replace"), digest_size=16).digest()


def _epoch(timestamp: str | None) -> float | None:
    """`parse_time` for the UTC stamps Claude Code writes, skipping its general checks."""
    if timestamp and timestamp[-1] == "Z":
        try:
            return _fromisoformat(timestamp).timestamp()
        except ValueError:
            pass
    return parse_time(timestamp)[1]


def _content_text(value: object) -> str:
    """The text of a decoded tool result content: a string, or a list of blocks."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if not isinstance(value, list):
        return orjson.dumps(value).decode()
    pieces: list[str] = []
    for block in value:
        if isinstance(block, str):
            pieces.append(block)
        elif not isinstance(block, dict):
            continue
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            pieces.append(block["text"])
        elif isinstance(block.get("tool_name"), str):
            pieces.append(block["tool_name"])
        else:
            pieces.append(f"[{block.get('type') or 'block'}]")
    return "\n".join(pieces)


def _full_content(raw: msgspec.Raw) -> str:
    data = memoryview(raw)
    if not data.nbytes:
        return ""
    try:
        return _content_text(orjson.loads(data))
    except orjson.JSONDecodeError:
        return str(data, "utf-8", "replace")


def _string_head(data: memoryview, size: int) -> str | None:
    """Decode the first `size` bytes of a JSON string, stepping back out of a cut escape."""
    for back in range(13):
        try:
            value = orjson.loads(bytes(data[: size - back]) + b'"')
        except orjson.JSONDecodeError:
            continue
        return value if isinstance(value, str) else None
    return None


class _Piece(msgspec.Struct):
    """The first block of a list content, as `_content_text` reads it: its type, and its text
    still encoded (only its head is decoded)."""

    type: Any = None
    text: msgspec.Raw = EMPTY_RAW


_PIECES = msgspec.json.Decoder(list[msgspec.Raw])
_PIECE = msgspec.json.Decoder(_Piece)


def _long_head(data: memoryview | msgspec.Raw, limit: int) -> bool:
    """A JSON string (its encoded bytes) whose decoded head alone is longer than `limit`."""
    view = memoryview(data)
    if view.nbytes <= limit + 2 or view[0] != _QUOTE:
        return False
    head = _string_head(view, min(4 * (limit + 1), view.nbytes))
    return head is not None and len(head) > limit


def _longer_than(raw: msgspec.Raw, limit: int) -> bool:
    """`len(_full_content(raw)) > limit`, deciding from the head of its first text when that
    is long enough (an Agent's result is a report of many kilobytes: decoding it whole was a
    tenth of the builder's instructions on the real-shaped file).

    Exact: the text `_full_content` makes starts with that first text (a list's pieces are
    joined in order), and when the content does not decode (`orjson` is stricter than the
    line's decoder), the text is its bytes, at least one character for each character of
    any string in it. Otherwise (short, or no text first) the content is decoded whole.
    """
    data = memoryview(raw)
    if data.nbytes > limit + 2:
        first = data[0]
        if first == _QUOTE:
            if _long_head(data, limit):
                return True
        elif first == _OPEN_LIST:
            try:
                pieces = _PIECES.decode(data)
                if pieces:
                    head = memoryview(pieces[0])
                    if head[0] == _QUOTE:
                        if _long_head(head, limit):
                            return True
                    elif head[0] == _OPEN_OBJECT:
                        piece = _PIECE.decode(head)
                        if piece.type == "text" and _long_head(piece.text, limit):
                            return True
            except (msgspec.DecodeError, RecursionError):
                pass
    return len(_full_content(raw)) > limit


class ClaudeCodeBuilder:
    """Turns Claude Code JSONL records, fed in order, into one growing `Session`.

    Args:
        path: the file the records come from (kept in every `Source`).
        limit: characters of prose kept per part (reasoning, tool inputs and outputs keep at
            most `SIDE_PREVIEW_CHARS`); None keeps everything whole.
    """

    takes_views = True
    """`feed` takes a memoryview as well as bytes (it only decodes the line): a scan hands it
    views into the chunk read instead of a copy of each line (`iter_lines(views=True)`)."""

    def __init__(self, path: str, limit: int | None = PREVIEW_CHARS) -> None:
        self.session = Session(path=path, format=NAME)
        self.session.loader = partial(load_full_parts, path)
        self.agent_calls: dict[str, str] = {}
        """Subagent id -> id of the Agent/Task call that started it."""
        self.prompt_calls: dict[bytes, str] = {}
        """Prompt key -> id of the Agent/Task call that sent that prompt."""
        self.agent_id: str | None = None
        """The subagent id this file belongs to, when it is a sidechain."""
        self.first_prompt: bytes | None = None
        """Key of the first user prompt, to find the call that started this sidechain."""
        self._path = path
        self._limit = limit
        self._side_limit = None if limit is None else min(limit, SIDE_PREVIEW_CHARS)
        self._messages: dict[str, Turn] = {}
        self._calls: dict[str, tuple[Turn, Part]] = {}
        self._last_assistant: Turn | None = None
        self._need_meta = True
        self._meta_lines = _META_LINES
        self._title_rank = -1
        self.turn_index: TurnIndex | None = None
        """Set when the session's turns are a `TurnIndex`: told of every turn changed after
        it was added, so its columns follow."""
        self._tool_text = True
        self._ending: Turn | None = None
        """The reply whose later lines' times wait in `_endings` (a scan's, `settle_times`)."""
        self._endings: list[str] = []
        self._merged: Callable[[Turn], None] | None = None
        """Told of every reply a later line merged into (`watch_merges`)."""

    acyclic = True
    """Feeding makes no reference cycles (turns, parts and sources only point down): a scan
    need not run the garbage collector over the turns it holds."""

    def watch_merges(self, merged: Callable[[Turn], None] | None) -> None:
        """Have `merged(turn)` called whenever a line joins a reply already begun (its
        message id seen before): a windowed scan checks that the reply was not judged yet,
        since on lines out of order it may come long after (`corpus.scan`). May raise to
        stop the feed."""
        self._merged = merged

    def for_scan(self) -> Callable[[bytes, int, int], None]:
        """Build turns for a scan, which never shows them: tool calls and results keep their
        names, ids and status but no input or output text (nothing a scan reports reads it;
        previewing every payload was a fifth of the builder's time). Returns the scan's own
        feed, `_scan_feed` (returned, not stored: a bound method kept on the builder would
        make a reference cycle of it)."""
        self._tool_text = False
        return self._scan_feed

    # -- reading records -------------------------------------------------------------------

    def _entry(self, line: bytes, lineno: int) -> Entry | None:
        """The record of one line, as both feeds decode it (the same lines rejected, with the
        same warnings); None when it is not one. (`_take` decodes the good lines itself: one
        call fewer per record.)"""
        try:
            return DECODER.decode(line)
        except msgspec.ValidationError:
            return self._lenient(line, lineno)
        except msgspec.DecodeError:
            self.session.warn(f"line {lineno}: not valid JSON")
        except RecursionError:
            self.session.warn(f"line {lineno}: nested too deeply to read")
        return None

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Take one record found at byte `offset`, line `lineno`."""
        self._take(line, offset, lineno, False)

    def _take(self, line: bytes, offset: int, lineno: int, scan: bool) -> None:
        """One record, for the app (`feed`) or, `scan`, for a scan (`_scan_feed` is the same
        steps with the scan's methods): decoded alike, the same warnings and events; only a
        reply's or a prompt's turn is built by the scan's leaner methods."""
        try:
            entry: Entry | None = DECODER.decode(line)
        except (msgspec.DecodeError, RecursionError):  # (ValidationError is a DecodeError)
            entry = self._entry(line, lineno)  # decoded again: only bad lines get here
            if entry is None:
                return
        kind = entry.type
        if self._need_meta and kind is not None:
            self._meta(line)
        if kind == "assistant" or kind == "user":
            message = entry.message
            if message is None or message.content is _MISSING:
                self.session.warn(f"line {lineno}: {kind} record without message content")
            elif kind == "assistant":
                (self._scan_assistant if scan else self._assistant)(
                    entry, message, (offset, len(line)), lineno)
            else:
                (self._scan_user if scan else self._user)(
                    entry, message, (offset, len(line)), lineno)
        else:
            self._other(kind, line, lineno)

    def _other(self, kind: str | None, line: bytes, lineno: int) -> None:
        """A record that is not a turn's: bookkeeping (counted), a title, or no type at all."""
        if kind is None:
            self.session.warn(f"line {lineno}: record without a type")
        else:
            # Summaries, snapshots, progress, hooks, system notes and types added by newer
            # versions: bookkeeping, never turns.
            self.session.events += 1
            if kind in TITLE_RECORDS:
                self._title(kind, line)

    # -- the scan's feed ----------------------------------------------------------------

    def _scan_feed(self, line: bytes, offset: int, lineno: int) -> None:
        """`feed` for a scan: the same turns, parts, warnings and events as far as a scan reads
        them, for less work per record. Left out: the model and token counts of a reply, and
        everything only the linking of subagent sessions needs (a scan reports none): the
        prompts of Agent calls, the agent ids of their results, the first prompt.

        `_take`'s steps with the scan's methods, written out: this runs once per record, and
        the call through `_take` was a tenth of what the builder adds to decoding."""
        try:
            entry: Entry | None = DECODER.decode(line)
        except (msgspec.DecodeError, RecursionError):
            entry = self._entry(line, lineno)
            if entry is None:
                return
        kind = entry.type
        if self._need_meta and kind is not None:
            self._meta(line)
        if kind == "assistant":
            message = entry.message
            if message is None or message.content is _MISSING:
                self.session.warn(f"line {lineno}: {kind} record without message content")
            else:
                self._scan_assistant(entry, message, (offset, len(line)), lineno)
        elif kind == "user":
            message = entry.message
            if message is None or message.content is _MISSING:
                self.session.warn(f"line {lineno}: {kind} record without message content")
            else:
                self._scan_user(entry, message, (offset, len(line)), lineno)
        else:
            self._other(kind, line, lineno)

    def _scan_assistant(self, entry: Entry, message: Message, span: tuple[int, int],
                        lineno: int) -> None:
        """`_assistant` for a scan: no model or tokens, tool calls built inline."""
        turn_id = message.id or entry.uuid or f"line-{lineno}"
        messages = self._messages
        turn = messages.get(turn_id)
        timestamp = entry.timestamp
        if turn is None:
            seconds = _epoch(timestamp)
            # `_new_turn`, with the fields in order (no keyword parsing: once per reply).
            turn = Turn(turn_id, "assistant", [], timestamp, seconds, seconds, None, None, None,
                        False, False, Source(self._path, lineno, (span,)))
            self.session.add(turn)
            messages[turn_id] = turn
            if len(messages) > 2 * _RECENT_MESSAGES:
                self._messages = dict(list(messages.items())[-_RECENT_MESSAGES:])
        else:
            if timestamp is not None:
                # The reply's end: read once its lines stop coming (`settle_times`), not at
                # every line (`_epoch` was a tenth of this method).
                if turn is not self._ending:
                    self.settle_times()
                    self._ending = turn
                self._endings.append(timestamp)
            source = turn.source
            assert source is not None
            source.spans += (span,)
            if self._merged is not None:
                self._merged(turn)
        content = message.content
        parts = turn.parts
        if isinstance(content, str):
            parts.append(self._text_part(Kind.TEXT, content, self._limit))
            return
        limit, side_limit = self._limit, self._side_limit
        for block in content or ():
            kind = block.type
            if kind == "text":
                text = block.text or ""
                if limit is None or len(text) <= limit:
                    parts.append(Part(Kind.TEXT, text))
                else:
                    parts.append(self._text_part(Kind.TEXT, text, limit))
            elif kind == "thinking":
                text = block.thinking or ""
                if not text and block.signature:
                    parts.append(Part(Kind.REASONING, "", hidden=len(block.signature)))
                elif side_limit is None or len(text) <= side_limit:
                    parts.append(Part(Kind.REASONING, text))
                else:
                    parts.append(self._text_part(Kind.REASONING, text, side_limit))
            elif kind == "tool_use":
                name, call_id = block.name, block.id
                # Part(kind, text, name, input, output, status, call_id): no keyword parsing.
                part = Part(Kind.TOOL_CALL, "", sys.intern(name) if name else None, None, None,
                            "pending", call_id)
                parts.append(part)
                if call_id:
                    self._calls[call_id] = (turn, part)
            else:
                part = self._part(block, False)
                parts.append(part)
                if part.call_id and part.kind == Kind.TOOL_CALL:
                    self._calls[part.call_id] = (turn, part)

    def _scan_user(self, entry: Entry, message: Message, span: tuple[int, int],
                   lineno: int) -> None:
        """`_user` for a scan: results put on their calls inline, no subagent links."""
        content = message.content
        synthetic = bool(entry.isMeta)
        parts: list[Part] = []
        owner: Turn | None = None
        if isinstance(content, str):
            parts.append(self._text_part(Kind.TEXT, content, self._limit, synthetic))
        elif content:
            calls = self._calls
            for block in content:
                if block.type != "tool_result":
                    parts.append(self._part(block, synthetic))
                    continue
                call_id = block.tool_use_id
                found = calls.pop(call_id, None) if call_id else None
                if found is None:
                    parts.append(self._result_part(block))
                    continue
                holder, part = found
                part.status = "error" if block.is_error else "completed"
                if part.name in AGENT_TOOLS:
                    # Its output is not kept, but whether it is long is: a shortened part
                    # is read back whole when its turn's words are asked for.
                    limit = self._side_limit
                    if limit is not None and _longer_than(block.content, limit):
                        part.shortened = True
                if holder is not owner:
                    source = holder.source
                    assert source is not None
                    if not source.spans or source.spans[-1] != span:
                        source.spans += (span,)
                    owner = holder
            if owner is not None and not parts:
                return
        orphaned = bool(parts) and all(part.kind == Kind.TOOL_RESULT for part in parts)
        turn = self._new_turn(entry.uuid or f"line-{lineno}", "system" if orphaned else "user",
                              entry, lineno, span)
        turn.parts = parts
        turn.is_meta = synthetic or orphaned
        turn.is_summary = bool(entry.isCompactSummary)

    def finish(self) -> None:
        """Settle what a scan left pending (`settle_times`); else nothing is pending between
        records."""
        self.settle_times()

    def settle_times(self) -> None:
        """Give the reply whose later lines a scan fed last its `completed` time: the latest
        of their times that reads (`_epoch`), as `_assistant` sets it line by line. A scan
        calls this before it reads any turn (`corpus.scan`), and it is called whenever
        another reply's line comes, so at most one reply waits."""
        turn = self._ending
        if turn is None:
            return
        endings = self._endings
        for timestamp in reversed(endings):
            seconds = _epoch(timestamp)
            if seconds is not None:
                turn.completed = seconds
                break
        endings.clear()
        self._ending = None

    def _title(self, kind: str, line: bytes) -> None:
        """A title record: one the person set beats the generated one, which beats a summary
        (summaries at the top of a file may describe an earlier session); the latest of a
        kind wins, except summaries, where the first does."""
        rank = TITLE_RECORDS[kind]
        if rank < self._title_rank or (kind == "summary" and rank == self._title_rank):
            return  # (known before decoding: a long file has thousands of summaries)
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        if not isinstance(record, dict):
            return
        for key in TITLE_KEYS:
            value = record.get(key)
            if isinstance(value, str) and value.strip():
                self.session.title = value.strip()
                self._title_rank = rank
                return

    def _lenient(self, line: bytes, lineno: int) -> Entry | None:
        try:
            return entry_from_object(ANY_DECODER.decode(line))
        except msgspec.DecodeError:
            self.session.warn(f"line {lineno}: not valid JSON")
        except (Malformed, RecursionError) as error:
            self.session.warn(f"line {lineno}: {error}")
        return None

    def _meta(self, line: bytes) -> None:
        try:
            meta = META_DECODER.decode(line)
        except (msgspec.DecodeError, RecursionError):
            return
        session = self.session
        if session.session_id is None and meta.sessionId:
            session.session_id = meta.sessionId
        for key, value in (("version", meta.version), ("cwd", meta.cwd),
                           ("gitBranch", meta.gitBranch)):
            if value and key not in session.meta:
                session.meta[key] = value
        if meta.agentId and self.agent_id is None:
            self.agent_id = meta.agentId
            session.meta["agentId"] = meta.agentId
        self._meta_lines -= 1
        # Older versions never write some facts (gitBranch): stop looking after a while.
        self._need_meta = self._meta_lines > 0 and (
            session.session_id is None or len(session.meta) < 3)

    # -- parts -----------------------------------------------------------------------------

    def _text_part(self, kind: str, text: str, limit: int | None,
                   synthetic: bool = False) -> Part:
        if limit is None or len(text) <= limit:
            return Part(kind, text, synthetic=synthetic)
        head = text[:limit]
        tag = head.find("<")
        if (head if tag < 0 else head[:tag]).strip():
            # Words before any tag: neither the text nor its head is blank, so `shorten`
            # keeps the head (it would find so by taking the tags out of the whole text).
            short: str | None = head
        else:
            short, _ = shorten(text, limit)
        return Part(kind, short or "", synthetic=synthetic, shortened=True, length=len(text))

    def _input(self, raw: msgspec.Raw) -> tuple[str | None, bool]:
        data = memoryview(raw)
        size = data.nbytes
        if size == 0 or not self._tool_text:
            return None, False
        limit = self._side_limit
        if limit is None or size <= limit:
            return str(data, "utf-8", "replace"), False
        # Only the head is decoded: a tool input can be a whole file.
        head = str(data[: 4 * limit], "utf-8", "ignore")
        if size <= 4 * limit and len(head) <= limit:
            return head, False
        return head[:limit], True

    def _output(self, raw: msgspec.Raw) -> tuple[str, bool]:
        """A tool result's content as (text, shortened), decoding a long string only in part."""
        data = memoryview(raw)
        limit = self._side_limit
        if limit is not None and data.nbytes > 3 * limit and data[0] == _QUOTE:
            head = _string_head(data, 3 * limit)
            if head is not None and len(head) >= limit:
                return head[:limit], True
        text = _full_content(raw)
        if limit is None or len(text) <= limit:
            return text, False
        short, _ = shorten(text, limit)
        return short or "", True

    def _part(self, block: Block, synthetic: bool) -> Part:
        kind = block.type
        if kind == "text":
            return self._text_part(Kind.TEXT, block.text or "", self._limit, synthetic)
        if kind == "thinking":
            part = self._text_part(Kind.REASONING, block.thinking or "", self._side_limit)
            if not block.thinking and block.signature:
                part.hidden = len(block.signature)
            return part
        if kind == "tool_use" or kind == "server_tool_use":
            text, cut = self._input(block.input)
            name = sys.intern(block.name) if block.name else None
            if name in AGENT_TOOLS and block.id:
                self._remember_prompt(block)
            return Part(Kind.TOOL_CALL, name=name, input=text, call_id=block.id,
                        status="pending", shortened=cut)
        if kind == "redacted_thinking":
            return Part(Kind.REASONING, "", hidden=len(block.data or ""))
        if kind == "image":
            return Part(Kind.IMAGE, mime=block.source.media_type if block.source else None)
        if kind == "document":
            return Part(Kind.FILE, name=block.title)
        if kind.endswith("_tool_result"):
            return self._result_part(block)
        return Part(Kind.OTHER, name=kind or None)

    def _result_part(self, block: Block) -> Part:
        """A result whose call is unknown: it keeps its own text (and length)."""
        full = _full_content(block.content)
        limit = self._side_limit
        text, cut = (full, False) if limit is None or len(full) <= limit else shorten(full, limit)
        return Part(Kind.TOOL_RESULT, text or "", call_id=block.tool_use_id,
                    status="error" if block.is_error else "completed",
                    shortened=cut, length=len(full) if cut else -1)

    def _remember_prompt(self, block: Block) -> None:
        try:
            arguments = orjson.loads(memoryview(block.input))
        except orjson.JSONDecodeError:
            return
        prompt = arguments.get("prompt") if isinstance(arguments, dict) else None
        if isinstance(prompt, str) and block.id:
            self.prompt_calls[prompt_key(prompt)] = block.id

    # -- turns -----------------------------------------------------------------------------

    def _new_turn(self, turn_id: str, role: str, entry: Entry, lineno: int,
                  span: tuple[int, int]) -> Turn:
        timestamp = entry.timestamp
        seconds = _epoch(timestamp)
        turn = Turn(turn_id, role, timestamp=timestamp, time=seconds,
                    source=Source(self._path, lineno, (span,)))
        return self.session.add(turn)

    def _assistant(self, entry: Entry, message: Message, span: tuple[int, int],
                   lineno: int) -> None:
        turn_id = message.id or entry.uuid or f"line-{lineno}"
        turn = self._messages.get(turn_id)
        usage = message.usage
        source_grew = turn is not None
        if turn is None:
            turn = self._new_turn(turn_id, "assistant", entry, lineno, span)
            turn.completed = turn.time
            if message.model:
                turn.model = sys.intern(message.model)
            if usage is not None:
                turn.tokens = _tokens(usage)
            messages = self._messages
            messages[turn_id] = turn
            if len(messages) > 2 * _RECENT_MESSAGES:
                # Rebuilt now and then: deleting the oldest key one by one is slow in a dict.
                self._messages = dict(list(messages.items())[-_RECENT_MESSAGES:])
        else:
            # One API response arrives as several lines; the last one says when it ended.
            seconds = _epoch(entry.timestamp)
            if seconds is not None:
                turn.completed = seconds
            source = turn.source
            assert source is not None
            source.spans += (span,)
            if self._merged is not None:
                self._merged(turn)
            tokens = turn.tokens
            if usage is not None and (tokens is None or tokens.get("output") != usage.output_tokens
                                      or tokens.get("input") != usage.input_tokens):
                turn.tokens = _tokens(usage)
        content = message.content
        parts = turn.parts
        if isinstance(content, str):
            parts.append(self._text_part(Kind.TEXT, content, self._limit))
            self._last_assistant = turn
            if source_grew and self.turn_index is not None:
                self.turn_index.changed(turn)
            return
        limit, side_limit = self._limit, self._side_limit
        for block in content or ():
            # The three common blocks inline: this loop runs for every assistant line.
            kind = block.type
            if kind == "text":
                text = block.text or ""
                if limit is None or len(text) <= limit:
                    parts.append(Part(Kind.TEXT, text))
                else:
                    parts.append(self._text_part(Kind.TEXT, text, limit))
            elif kind == "thinking":
                text = block.thinking or ""
                if not text and block.signature:
                    # Withheld thinking: only its signature is there, the model did reason.
                    parts.append(Part(Kind.REASONING, "", hidden=len(block.signature)))
                elif side_limit is None or len(text) <= side_limit:
                    parts.append(Part(Kind.REASONING, text))
                else:
                    parts.append(self._text_part(Kind.REASONING, text, side_limit))
            else:
                part = self._part(block, False)
                parts.append(part)
                if part.call_id and part.kind == Kind.TOOL_CALL:
                    self._calls[part.call_id] = (turn, part)
        self._last_assistant = turn
        if source_grew and self.turn_index is not None:
            # A reply's next line long after it (lines out of order): the turn may have
            # left the index's whole tail, whose columns and spans must take the new parts.
            self.turn_index.changed(turn)

    def _user(self, entry: Entry, message: Message, span: tuple[int, int], lineno: int) -> None:
        content = message.content
        synthetic = bool(entry.isMeta)
        parts: list[Part] = []
        owner: Turn | None = None
        if isinstance(content, str):
            parts.append(self._text_part(Kind.TEXT, content, self._limit, synthetic))
            if self.first_prompt is None:
                self.first_prompt = prompt_key(content)
        elif content:
            for block in content:
                if block.type == "tool_result":
                    holder = self._attach(block, entry, parts)
                    if holder is not None and holder is not owner:
                        # Every turn holding one of this line's results records the line.
                        source = holder.source
                        assert source is not None
                        if not source.spans or source.spans[-1] != span:
                            source.spans += (span,)
                        owner = holder
                    if holder is not None and self.turn_index is not None:
                        self.turn_index.changed(holder)
                else:
                    parts.append(self._part(block, synthetic))
            if owner is not None and not parts:
                return
            if self.first_prompt is None and parts and parts[0].kind == Kind.TEXT:
                self.first_prompt = prompt_key(_first_text(content))
        orphaned = bool(parts) and all(part.kind == Kind.TOOL_RESULT for part in parts)
        turn = self._new_turn(entry.uuid or f"line-{lineno}", "system" if orphaned else "user",
                              entry, lineno, span)
        turn.parts = parts
        turn.is_meta = synthetic or orphaned
        turn.is_summary = bool(entry.isCompactSummary)
        if owner is not None and self.turn_index is not None:
            # Read back alone, this line's results would join the turn as orphans.
            self.turn_index.keep(turn)

    def _attach(self, block: Block, entry: Entry, orphans: list[Part]) -> Turn | None:
        """Put a tool result on its call; returns the turn that now holds it."""
        call_id = block.tool_use_id
        # A call has one result: forget it once answered, so big sessions stay small.
        found = self._calls.pop(call_id, None) if call_id else None
        if found is None:
            # Its call is not in the session (after compaction a result can come first): it
            # is the harness's output on its own, never part of an unrelated reply.
            orphans.append(self._result_part(block))
            return None
        turn, part = found
        part.status = "error" if block.is_error else "completed"
        if part.name in AGENT_TOOLS:
            full = _full_content(block.content)
            self._link_agent(part.call_id or "", entry, full)
            limit = self._side_limit
            output, cut = (full, False) if limit is None or len(full) <= limit \
                else shorten(full, limit)
            part.output = output or ""
        elif self._tool_text:
            part.output, cut = self._output(block.content)
        else:
            cut = False
        if cut:
            part.shortened = True
        return turn

    def _link_agent(self, call_id: str, entry: Entry, text: str) -> None:
        agent_id = None
        raw = memoryview(entry.toolUseResult)
        if raw.nbytes:
            try:
                result = orjson.loads(raw)
            except orjson.JSONDecodeError:
                result = None
            if isinstance(result, dict) and isinstance(result.get("agentId"), str):
                agent_id = result["agentId"]
        if agent_id is None:
            match = _AGENT_ID_TEXT.search(text)
            agent_id = match.group(1) if match else None
        if agent_id:
            self.agent_calls[agent_id] = call_id


def _tokens(usage: Usage) -> dict[str, int]:
    counts = {"input": usage.input_tokens, "output": usage.output_tokens,
              "cache_read": usage.cache_read_input_tokens,
              "cache_creation": usage.cache_creation_input_tokens}
    if None in counts.values():
        return {key: value for key, value in counts.items() if value is not None}
    return counts  # type: ignore[return-value]


def _first_text(content: list[Block]) -> str:
    for block in content:
        if block.type == "text" and block.text is not None:
            return block.text
    return ""


def load_full_parts(path: str, turn: Turn) -> list[Part]:
    """Read a turn's lines back and rebuild its parts unshortened.

    Raises:
        ValueError: the lines no longer hold that turn (the file was replaced).
    """
    if turn.source is None or not turn.source.spans:
        return turn.parts
    spans = turn.source.spans
    builder = ClaudeCodeBuilder(path, limit=None)
    lineno = turn.source.line or 0
    for (offset, _), line in zip(spans, read_spans(path, spans), strict=True):
        builder.feed(line, offset, lineno)
    rebuilt = next((other for other in builder.session.turns
                    if other.id == turn.id and other.role == turn.role), None)
    if rebuilt is None:
        raise ValueError(f"{path}: turn {turn.id} is no longer at its recorded place")
    return _matching(turn.parts, rebuilt.parts, path)


def _matching(kept: list[Part], rebuilt: list[Part], path: str) -> list[Part]:
    """The rebuilt parts that correspond, in order, to the parts kept in memory.

    A user line mixing text with results for earlier calls makes the rebuild see those
    results without their calls; they are left out here as they were in the first read.
    """
    found: list[Part] = []
    candidates = iter(rebuilt)
    for part in kept:
        for candidate in candidates:
            if candidate.kind == part.kind and candidate.call_id == part.call_id:
                found.append(candidate)
                break
        else:
            raise ValueError(f"{path}: the parts of a turn changed since it was read")
    return found


def read_back_turn(path: str, spans: tuple[tuple[int, int], ...], records: list[bytes],
                   line: int | None, turn_id: str, role: str) -> Turn:
    """A turn read back from its own records (as a `TurnIndex` materialises one).

    Raises:
        ValueError: the records no longer make that turn (the file was replaced).
    """
    builder = ClaudeCodeBuilder(path)
    lineno = line or 0
    for (offset, _), data in zip(spans, records, strict=True):
        builder.feed(data, offset, lineno)
    for turn in builder.session.turns:
        if turn.id == turn_id and turn.role == role:
            return turn
    raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")


def index_turns(builder: ClaudeCodeBuilder, **sizes: int) -> TurnIndex:
    """Hold the builder's turns in a `TurnIndex` (before any line is fed); `sizes` are its
    `tail` and `cache`."""
    from replay.core.index.turn_index import TurnIndex

    index = TurnIndex(builder.session.path, read_back_turn, **sizes)
    builder.session.turns = index  # type: ignore[assignment]
    builder.turn_index = index
    return index
