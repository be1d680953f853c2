"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), read line by line.

How records become turns (the Codex TUI's view of a session):

* A **user turn** is one prompt. Codex writes it twice, as a `response_item` message with
  role user and as an `event_msg` `user_message`; the two are merged into one turn, in
  whichever order they come (every real rollout writes the item first), compared on their
  whole texts (a turn keeps a shortened prompt's head: the whole waits with it).
* Injected context is not the person's words: role `developer`/`system` messages and role
  user items that open with a known harness wrapper (`<environment_context>`,
  `# AGENTS.md instructions`, ...) become **system turns** with `is_meta=True`. Sanitised
  files hide the wrapper, so a second rule applies: in a file that writes `user_message`
  events, a role user item that never gets its event is injected context too; it stays a
  user turn only until the evidence arrives (the next event or assistant tool call or
  message), then becomes a system turn in place.
* An **assistant turn** is one step as the TUI shows it: the consecutive assistant-side
  items (reasoning, tool calls with their outputs, web searches, ...) up to and including
  the next assistant message. The message closes the turn; the next item opens a new one,
  so a reasoning item always lands in the step it precedes. System turns do not end a
  step (the TUI does not show them). A user prompt, `task_complete`, `turn_aborted` or
  `compacted` ends the step with whatever it has: reasoning followed directly by a prompt
  is a reasoning-only turn, which is empty.
* Tool outputs attach to their call by `call_id` (the call's `output` and `status`); a call
  without an output keeps `status="pending"`.
* Everything else is an **event** (`session.events`): `session_meta`, `turn_context`,
  bookkeeping `event_msg`s (token counts, task start/end, agent message and reasoning
  copies, command ends). `turn_aborted` also adds a `turn_aborted` error part to the
  current assistant turn, and a `compacted` line also adds a system summary turn.

Older versions are accepted: lines without the `{timestamp, type, payload}` envelope (bare
response items, a first line holding the session meta, `record_type` state lines).
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from replay.core.readers.base import (
    HEAD_BYTES,
    Progress,
    Reader,
    as_list,
    json_object_line,
    json_text,
    read_line_session,
    read_spans,
    shorten_part,
)
from replay.core.readers.top_members import LONG_LINE, line_spans, member_string, members
from replay.core.session import lifted, whole_text
from replay.core.session.model import Kind, Part, Session, Source, Turn, parse_time
from replay.core.session.text import is_blank, shorten

if TYPE_CHECKING:
    from msgspec import Raw

    from replay.core.index.turn_index import TurnIndex

ENVELOPE_TYPES: frozenset[str] = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
"""Outer `type`s of the `{timestamp, type, payload}` envelope known so far."""

CALL_TYPES: dict[str, str] = {
    "function_call": "",
    "custom_tool_call": "",
    "local_shell_call": "local_shell",
    "web_search_call": "web_search",
    "image_generation_call": "image_generation",
    "tool_search_call": "tool_search",
    "mcp_tool_call": "",
}
"""Response items that are tool calls, with a fallback tool name."""

OUTPUT_TYPES: frozenset[str] = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
        "mcp_tool_call_output",
    }
)
"""Response items that carry the result of an earlier call."""

RESPONSE_ITEM_TYPES: frozenset[str] = frozenset(
    {"message", "reasoning", "ghost_snapshot", "compaction", "compaction_summary", "other"}
    | set(CALL_TYPES)
    | OUTPUT_TYPES
)
"""Payload types that may also appear bare (without an envelope) in older rollouts."""

_INJECTED = re.compile(
    r"\s*(?:<environment_context|<user_instructions|<INSTRUCTIONS|# AGENTS\.md instructions"
    r"|<permissions instructions|<developer_instructions|<collaboration_mode|<turn_aborted"
    r"|<skill\b|<personality_spec|<model_switch|<subagent_notification)"
)
"""Openings of role-user items that the harness writes, not the person."""

_REDACTED = re.compile(r"\[REDACTED_[A-Z_]+ len=(\d+) sha=([0-9a-f]+)\]")
"""Placeholder of sanitised rollouts; item and event copies share its len and sha."""

_ENVELOPE_SNIFF = re.compile(
    rb'"type"\s*:\s*"(?:session_meta|response_item|event_msg|turn_context|compacted)"'
)
_BARE_SNIFF = re.compile(rb'"type"\s*:\s*"(?:input_text|output_text|summary_text)"')
_STATE_SNIFF = re.compile(rb'\{\s*"record_type"\s*:')
"""An old state line's start (matched at a line's start within a head: `match(head, i, j)`)."""

_STATUS = {"completed": "completed", "in_progress": "running", "searching": "running",
           "failed": "error", "incomplete": "error"}
"""Codex item statuses in the vocabulary of `Part.status`."""

HELD_PROMPTS = 8
"""Whole texts of shortened prompts kept while they wait for their other copy (the item or
the event): the latest ones, the copies being a record or a few apart."""
HELD_CHARS = 8 << 20
"""Characters those texts may take together; the latest one is kept whatever its size (a
text left in its file (`lifted`) is a placeholder of a few dozen characters)."""


def _content_parts(content: Any, *, synthetic: bool = False) -> list[Part]:
    """Parts of a message's `content`: a string or a list of typed items."""
    if isinstance(content, str):
        return [Part(Kind.TEXT, text=content, synthetic=synthetic)]
    parts: list[Part] = []
    for item in as_list(content):
        if isinstance(item, str):
            parts.append(Part(Kind.TEXT, text=item, synthetic=synthetic))
            continue
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("input_image", "image"):
            url = item.get("image_url")
            name = url if isinstance(url, str) and not url.startswith("data:") else "image"
            parts.append(Part(Kind.IMAGE, name=name, synthetic=synthetic))
        elif kind == "input_file":
            parts.append(Part(Kind.FILE, name=str(item.get("filename") or "file"),
                              synthetic=synthetic))
        elif isinstance(item.get("text"), str):
            parts.append(Part(Kind.TEXT, text=item["text"], synthetic=synthetic))
        elif isinstance(item.get("refusal"), str):
            parts.append(Part(Kind.TEXT, text=item["refusal"], synthetic=synthetic))
    return parts


def _plain(parts: Iterable[Part]) -> str:
    return "\n".join(part.text for part in parts if part.kind == Kind.TEXT)


def _same_prompt(event_text: str, item_text: str) -> bool:
    """True when a `user_message` event and a role user item hold the same prompt."""
    if lifted.holds(event_text) or lifted.holds(item_text):
        # A prompt left in its file: compared on the whole texts, as when read whole.
        if whole_text.same_or_within(event_text, item_text):
            return True
    left, right = event_text.strip(), item_text.strip()
    if left == right or (left and left in right):
        return True
    a, b = _REDACTED.search(left), _REDACTED.search(right)
    return bool(a and b and a.groups() == b.groups())


def _output(value: Any) -> tuple[str, str, float | None]:
    """(text, status, seconds) of a tool output in any of the shapes Codex has written."""
    status, seconds = "completed", None
    if isinstance(value, str) and value.startswith("{\"output\""):
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            decoded = None
        if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
            meta = decoded.get("metadata")
            if isinstance(meta, dict) and isinstance(meta.get("duration_seconds"), (int, float)):
                seconds = float(meta["duration_seconds"])
            return decoded["output"], status, seconds
    if isinstance(value, dict):
        if value.get("success") is False:
            status = "error"
        inner = value.get("content", value.get("content_items"))
        value = inner if inner is not None else value
    if isinstance(value, list):
        texts = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                texts.append(item["text"])
            elif isinstance(item, dict) and "image_url" in item:
                texts.append("[image]")
            else:
                texts.append(json_text(item))
        return "\n".join(texts), status, seconds
    if value is None:
        return "", status, seconds
    return json_text(value), status, seconds


def _call_part(kind: str, item: dict[str, Any]) -> Part:
    """A TOOL_CALL part for a call-like response item."""
    name = item.get("name")
    if not isinstance(name, str) or not name:
        name = CALL_TYPES.get(kind) or kind
    call_id = item.get("call_id") or item.get("id")
    if kind == "function_call":
        arguments: Any = item.get("arguments")
    elif kind == "custom_tool_call":
        arguments = item.get("input")
    elif kind == "local_shell_call" or kind == "web_search_call":
        arguments = item.get("action")
        if isinstance(arguments, dict) and isinstance(arguments.get("command"), list):
            arguments = " ".join(str(word) for word in arguments["command"])
        elif isinstance(arguments, dict) and isinstance(arguments.get("query"), str):
            arguments = arguments["query"]
    elif kind == "image_generation_call":
        arguments = item.get("revised_prompt")
    else:
        arguments = item.get("arguments", item.get("input"))
    if kind in ("web_search_call", "image_generation_call"):
        # These run on the server: the item itself is the result.
        status = _STATUS.get(str(item.get("status")), "completed")
    else:
        status = "pending"
    return Part(
        Kind.TOOL_CALL,
        name=name,
        input=None if arguments is None else json_text(arguments),
        status=status,
        call_id=call_id if isinstance(call_id, str) else None,
    )


def _reasoning_part(item: dict[str, Any]) -> Part:
    """A REASONING part: the summary texts, else raw content, else "" (encrypted only)."""
    texts = [str(entry["text"]) for entry in as_list(item.get("summary"))
             if isinstance(entry, dict) and isinstance(entry.get("text"), str)]
    if not texts:
        texts = [str(entry["text"]) for entry in as_list(item.get("content"))
                 if isinstance(entry, dict) and isinstance(entry.get("text"), str)]
    encrypted = item.get("encrypted_content")
    hidden = len(encrypted) if not texts and isinstance(encrypted, str) else 0
    return Part(Kind.REASONING, text="\n\n".join(texts), hidden=hidden)


class ModelChanges:
    """The model in use from each line on (`turn_context`, the session meta): the model of
    an assistant turn read back from its own records, which do not name it."""

    __slots__ = ("_lines", "_models")

    def __init__(self) -> None:
        self._lines = array("q")
        self._models: list[str | None] = []

    def set(self, lineno: int, model: str | None) -> None:
        """The model is `model` from line `lineno` on."""
        if not self._models or self._models[-1] != model:
            self._lines.append(lineno)
            self._models.append(model)

    def before(self, lineno: int) -> str | None:
        """The model in use when line `lineno` was read (set by an earlier line)."""
        at = bisect.bisect_left(self._lines, lineno) - 1
        return self._models[at] if at >= 0 else None


MAX_WAIT = 1_024
"""Turns a scan's window waits at most for a turn a later record may still change
(`CodexBuilder.settled`)."""


class CodexBuilder:
    """Builds one Codex session from rollout lines fed in order (see the module docstring).

    Turns are named by index where the builder may come back to them (a call's late output,
    a token count): a turn it changes is fetched again from `session.turns`, which may be a
    `TurnIndex` holding only columns (the app) or a scan's window (a turn let go is not
    changed: it was judged already).
    """

    def __init__(self, path: str, *, whole: bool = False) -> None:
        self.session = Session(path=path, format="codex")
        """The session being built."""
        self.session.loader = functools.partial(load_full_parts, path)
        self._whole = whole
        self._open: Turn | None = None
        self._last_assistant: Turn | None = None
        self._calls: dict[str, int] = {}
        """The turn and part of the latest call with each call id: `turn << 32 | part`."""
        self._pending: dict[int, tuple[Turn, list[tuple[int, int]]]] = {}
        """Spans added to turns since the last new turn, by turn index (written to their
        `source.spans` before the next turn is added, so a `TurnIndex` taking a turn's
        columns sees them all)."""
        self.models = ModelChanges()
        """The model from each line on (kept by a `TurnIndex`'s read-back)."""
        self.turn_index: TurnIndex | None = None
        """Set when the session's turns are a `TurnIndex`: told of every turn changed after
        it left the index's tail."""
        self._unconfirmed: list[Turn] = []
        self._awaiting_item: Turn | None = None
        self._prompts: dict[int, str] = {}
        """The whole text of a shortened prompt waiting for its other copy, by turn index:
        its turn holds only the head, and the copy holds the whole (an event after its item
        is compared with the item's whole text, not with a 400-character head)."""
        self._events_mode = False
        self._model: str | None = None
        self._ids: set[str] = set()
        self._forked_at: float | None = None
        """When this rollout was forked from another (its history up to then is a copy)."""
        self._fork_turn: Turn | None = None
        self._inherited = 0
        self._merged: Callable[[Turn], None] | None = None
        """Told of every turn whose content a later record changed (`watch_merges`)."""

    def settled(self) -> int:
        """How many turns from the first no later record is expected to change (a windowed
        scan judges a turn only when the turns it reads are settled): those before the open
        step (its next item joins it), the latest reply (a `turn_aborted` ends it) and the
        first prompt not yet confirmed (its `user_message` event, or none, decides whether it
        is injected context). Each is a few turns back in real rollouts; one farther back than
        `MAX_WAIT` turns is not waited for (a scan holding every turn of a file that never
        confirms its prompts): should a record still change it, `watch_merges` tells."""
        count = len(self.session.turns)
        floor = count - MAX_WAIT
        first = self._unconfirmed[0] if self._unconfirmed else None
        for turn in (self._open, self._last_assistant, first):
            if turn is not None and floor <= turn.index < count:
                count = turn.index
        return count

    def watch_merges(self, merged: Callable[[Turn], None] | None) -> None:
        """Have `merged(turn)` called whenever a record changes what an earlier turn shows:
        a step's next item (the step stays open across injected-context turns), a prompt
        demoted to injected context, a `turn_aborted`, the fork notice's count. A windowed
        scan checks that the turn was not judged yet (`corpus.scan`). May raise to stop the
        feed. (A tool output or a token count changes nothing a scan reads: not told.)"""
        self._merged = merged

    # -- the LineBuilder protocol -------------------------------------------------------

    def feed(self, line: bytes, offset: int, lineno: int) -> None:
        """Take one rollout line."""
        record = json_object_line(self.session, line, lineno)
        if record is None:
            return
        span = (offset, len(line))
        kind = record.get("type")
        payload = record.get("payload")
        stamp = record.get("timestamp")
        if self._forked_at is not None and self._inherited_record(stamp):
            return
        if isinstance(payload, dict) and isinstance(kind, str):
            self._dispatch(kind, payload, stamp, span, lineno)
        elif isinstance(kind, str) and kind in RESPONSE_ITEM_TYPES:
            self._dispatch("response_item", record, stamp, span, lineno)
        elif "record_type" in record:
            self.session.events += 1
        elif kind is None and "id" in record and ("instructions" in record or "git" in record
                                                  or "timestamp" in record):
            self._dispatch("session_meta", record, stamp, span, lineno)
        elif isinstance(kind, str):
            self.session.events += 1
        else:
            self.session.warn(f"line {lineno}: no record type")

    def _inherited_record(self, stamp: Any) -> bool:
        """True for a record a fork copied from its parent (stamped before the fork): it is
        the parent's history, read there; here it is only counted."""
        seconds = parse_time(stamp)[1]
        if seconds is None or self._forked_at is None or seconds >= self._forked_at:
            return False
        self._inherited += 1
        self.session.events += 1
        if self._fork_turn is not None:
            parent = self.session.meta.get("forked_from", "?")
            fork = self._live(self._fork_turn)
            fork.parts[0].text = (
                f"Forked from session {parent}: its {self._inherited:,} earlier records are "
                "the parent's history, read with the parent and not repeated here.")
            self._changed(fork)
            if self._merged is not None:
                self._merged(fork)
        self.session.meta["inherited_records"] = str(self._inherited)
        return True

    def finish(self) -> None:
        """Write the spans of every turn that grew since the last call."""
        self._flush()

    def _flush(self) -> None:
        for turn, spans in self._pending.values():
            if turn.source is not None:
                turn.source.spans = tuple(spans)
        self._pending.clear()

    def _live(self, turn: Turn) -> Turn:
        """The turn as it is now: the object itself, unless a `TurnIndex` holds it as
        columns (then its whole form, read back with every change so far)."""
        index = self.turn_index
        if index is None or index.in_tail(turn.index):
            return turn
        return index[turn.index]

    def _changed(self, turn: Turn) -> None:
        """Tell the index (if any) that a turn it may hold as columns changed."""
        index = self.turn_index
        if index is None:
            return
        if not index.in_tail(turn.index):
            pending = self._pending.pop(turn.index, None)
            if pending is not None and turn.source is not None:
                turn.source.spans = tuple(pending[1])
        index.changed(turn)

    # -- records ------------------------------------------------------------------------

    def _dispatch(self, kind: str, payload: dict[str, Any], stamp: Any,
                  span: tuple[int, int], lineno: int) -> None:
        if kind == "response_item":
            self._item(payload, stamp, span, lineno)
        elif kind == "event_msg":
            self._event(payload, stamp, span, lineno)
        elif kind == "session_meta":
            self._meta(payload, lineno)
            self._lineage(payload, stamp, span, lineno)
        elif kind == "turn_context":
            self.session.events += 1
            model = payload.get("model")
            if isinstance(model, str) and model:
                self._model = model
                self.models.set(lineno, model)
                self.session.meta["model"] = model
        elif kind == "compacted":
            self._compacted(payload, stamp, span, lineno)
        else:
            self.session.events += 1

    def _lineage(self, payload: dict[str, Any], stamp: Any, span: tuple[int, int],
                 lineno: int) -> None:
        """A fork names its parent (`forked_from_id`), a subagent thread the thread that
        spawned it (`source.subagent.thread_spawn.parent_thread_id`)."""
        meta = self.session.meta
        source = payload.get("source")
        subagent = source.get("subagent") if isinstance(source, dict) else None
        spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
        if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
            meta.setdefault("parent_thread", spawn["parent_thread_id"])
            role = spawn.get("agent_role")
            if isinstance(role, str):
                meta.setdefault("agent_role", role)
        forked = payload.get("forked_from_id")
        if not isinstance(forked, str) or not forked or "forked_from" in meta \
                or self.session.turns:
            return
        meta["forked_from"] = forked
        self._forked_at = parse_time(payload.get("timestamp", stamp))[1] or parse_time(stamp)[1]
        turn = self._new_turn("system", lineno, stamp)
        turn.is_meta = True
        self._extend(turn, [Part(Kind.TEXT, synthetic=True, text=(
            f"Forked from session {forked}: nothing of its history is repeated here."))], span)
        self._fork_turn = turn
        if self.turn_index is not None:
            self.turn_index.keep(turn)  # its text counts records that are no turn's

    def _meta(self, payload: dict[str, Any], lineno: int) -> None:
        self.session.events += 1
        session_id = payload.get("id")
        if self.session.session_id is None and isinstance(session_id, str):
            self.session.session_id = session_id
        for key in ("cli_version", "originator", "cwd", "source", "model_provider", "model"):
            value = payload.get(key)
            if isinstance(value, str) and value and key not in self.session.meta:
                self.session.meta[key] = value
        git = payload.get("git")
        if isinstance(git, dict) and isinstance(git.get("branch"), str):
            self.session.meta.setdefault("git_branch", git["branch"])
        model = self.session.meta.get("model")
        if self._model is None and model:
            self._model = model
            self.models.set(lineno, model)

    def _item(self, item: dict[str, Any], stamp: Any, span: tuple[int, int],
              lineno: int) -> None:
        kind = item.get("type")
        if not isinstance(kind, str):
            self.session.events += 1
        elif kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._step(_content_parts(item.get("content")), item, stamp, span, lineno,
                           closes=True)
            elif role == "user":
                self._user_item(item, stamp, span, lineno)
            else:
                self._system(_content_parts(item.get("content"), synthetic=True), item,
                             stamp, span, lineno)
        elif kind == "reasoning":
            # Reasoning opens (or joins) the step it precedes; alone it proves no prompt.
            self._step([_reasoning_part(item)], item, stamp, span, lineno, settles=False)
        elif kind in CALL_TYPES or kind.endswith("_call"):
            self._step([_call_part(kind, item)], item, stamp, span, lineno)
        elif kind in OUTPUT_TYPES or kind.endswith("_output"):
            self._tool_output(item, stamp, span, lineno)
        else:
            # ghost snapshots, encrypted compaction items and types newer than this reader
            self.session.events += 1

    def _event(self, payload: dict[str, Any], stamp: Any, span: tuple[int, int],
               lineno: int) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            self._user_event(payload, stamp, span, lineno)
            return
        self.session.events += 1
        if kind == "token_count":
            self._tokens(payload, span)
        elif kind == "turn_aborted":
            target = self._open or self._last_assistant
            if target is not None:
                target = self._live(target)
                reason = payload.get("reason")
                target.parts.append(Part(Kind.ERROR, name="turn_aborted",
                                         text=reason if isinstance(reason, str) else ""))
                self._add_span(target, span)
                self._changed(target)
                if self._merged is not None:
                    self._merged(target)
            self._close()
        elif kind == "task_complete":
            self._close()
        elif kind == "thread_name_updated":
            # The name the person (or Codex) gave the thread; the latest one wins.
            name = payload.get("thread_name", payload.get("name"))
            if isinstance(name, str) and name.strip():
                self.session.title = name.strip()

    def _compacted(self, payload: dict[str, Any], stamp: Any, span: tuple[int, int],
                   lineno: int) -> None:
        self.session.events += 1
        self._close()
        kept = payload.get("replacement_history")
        count = len(kept) if isinstance(kept, list) else 0
        parts = [Part(Kind.COMPACTION, name="compacted",
                      text=f"history replaced by {count} items" if count else "")]
        message = payload.get("message")
        if isinstance(message, str) and not is_blank(message):
            parts.append(Part(Kind.TEXT, text=message, synthetic=True))
        turn = self._new_turn("system", lineno, stamp)
        turn.is_summary = True
        turn.is_meta = True
        self._extend(turn, parts, span)

    # -- turn assembly ------------------------------------------------------------------

    def _new_turn(self, role: str, lineno: int, stamp: Any, own_id: Any = None) -> Turn:
        """A new turn, named by the item's own id when it has a fresh one, else its line."""
        fresh = isinstance(own_id, str) and own_id and own_id not in self._ids
        turn_id = own_id if fresh else f"line-{lineno}"
        self._ids.add(turn_id)
        timestamp, seconds = parse_time(stamp)
        turn = Turn(id=turn_id, role=role, timestamp=timestamp, time=seconds,
                    source=Source(self.session.path, line=lineno))
        self._flush()  # the index may take the columns of its oldest whole turn now
        return self.session.add(turn)

    def _add_span(self, turn: Turn, span: tuple[int, int]) -> None:
        pending = self._pending.get(turn.index)
        if pending is None or pending[0] is not turn:
            spans = list(turn.source.spans) if turn.source is not None else []
            pending = self._pending[turn.index] = (turn, spans)
        pending[1].append(span)

    def _extend(self, turn: Turn, parts: list[Part], span: tuple[int, int]) -> None:
        for part in parts:
            turn.parts.append(part if self._whole else shorten_part(part))
        self._add_span(turn, span)

    def _close(self) -> None:
        self._open = None

    def _settle_unconfirmed(self) -> None:
        """Assistant work began: unconfirmed prompts are settled one way or the other."""
        if self._events_mode:
            for turn in self._unconfirmed:
                self._demote(turn)
        self._unconfirmed.clear()
        self._awaiting_item = None
        self._prompts.clear()

    def _hold(self, turn: Turn, text: str) -> None:
        """Keep the whole text of a prompt whose turn holds only its head."""
        if not any(part.shortened for part in turn.parts):
            return
        held = self._prompts
        held[turn.index] = text
        while len(held) > 1 and (len(held) > HELD_PROMPTS
                                 or sum(map(len, held.values())) > HELD_CHARS):
            del held[next(iter(held))]

    def _prompt_text(self, turn: Turn) -> str:
        """The whole text of a waiting prompt (its turn's text when it was not shortened)."""
        held = self._prompts.get(turn.index)
        return held if held is not None else _plain(self._live(turn).parts)

    def _demote(self, turn: Turn) -> None:
        turn = self._live(turn)
        demote(turn)
        self._changed(turn)
        if self._merged is not None:
            self._merged(turn)

    def _step(self, parts: list[Part], item: dict[str, Any], stamp: Any,
              span: tuple[int, int], lineno: int, *, closes: bool = False,
              settles: bool = True) -> None:
        """Add an assistant-side item to the open step, opening one when needed."""
        if settles:
            self._settle_unconfirmed()
        joins = self._open is not None
        if self._open is None:
            self._open = self._new_turn("assistant", lineno, stamp, item.get("id"))
            self._open.model = self._model
        turn = self._live(self._open)
        if joins and self._merged is not None:
            self._merged(turn)
        first = len(turn.parts)
        self._extend(turn, parts, span)
        for number, part in enumerate(parts, first):
            if part.kind == Kind.TOOL_CALL and part.call_id:
                self._calls[part.call_id] = turn.index << 32 | number
        self._last_assistant = turn
        if closes:
            turn.completed = parse_time(stamp)[1]
            self._close()
        self._changed(turn)

    def _tool_output(self, item: dict[str, Any], stamp: Any, span: tuple[int, int],
                     lineno: int) -> None:
        text, status, seconds = _output(item.get("output"))
        call_id = item.get("call_id")
        known = self._calls.get(call_id) if isinstance(call_id, str) else None
        if known is None:
            orphan = Part(Kind.TOOL_RESULT, text=text, status=status,
                          call_id=call_id if isinstance(call_id, str) else None)
            self._step([orphan], item, stamp, span, lineno)
            return
        found = self._known_call(known, call_id)
        if found is None:
            return  # a scan let that turn go: it was judged already
        part, turn = found
        cut_text, cut = (text, False) if self._whole else shorten(text)
        part.output = cut_text
        part.shortened = part.shortened or cut
        part.status = status
        if seconds is not None:
            part.duration = seconds
        self._add_span(turn, span)
        self._changed(turn)

    def _known_call(self, known: int, call_id: Any) -> tuple[Part, Turn] | None:
        """The call part `_calls` names, and its turn (None when a scan let the turn go)."""
        index, number = known >> 32, known & 0xFFFFFFFF
        try:
            turn = self.session.turns[index]
        except IndexError:
            return None
        parts = turn.parts
        if number < len(parts) and parts[number].call_id == call_id:
            return parts[number], turn
        for part in reversed(parts):  # not where it was: the last call of that id
            if part.kind == Kind.TOOL_CALL and part.call_id == call_id:
                return part, turn
        return None

    def _tokens(self, payload: dict[str, Any], span: tuple[int, int]) -> None:
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        target = self._open or self._last_assistant
        if target is None or not isinstance(usage, dict):
            return
        # The count is one of the turn's records: a turn read back from them has it.
        target = self._live(target)
        self._add_span(target, span)
        names = {"input_tokens": "input", "cached_input_tokens": "cache_read",
                 "output_tokens": "output", "reasoning_output_tokens": "reasoning",
                 "total_tokens": "total"}
        tokens = target.tokens if target.tokens is not None else {}
        for source_name, name in names.items():
            value = usage.get(source_name)
            if isinstance(value, int) and not isinstance(value, bool):
                tokens[name] = tokens.get(name, 0) + value
        target.tokens = tokens
        self._changed(target)

    def _system(self, parts: list[Part], item: dict[str, Any], stamp: Any,
                span: tuple[int, int], lineno: int) -> None:
        """Injected context: a meta system turn; the TUI hides it, so the open step goes on."""
        turn = self._new_turn("system", lineno, stamp, item.get("id"))
        turn.is_meta = True
        self._extend(turn, parts, span)

    def _user_item(self, item: dict[str, Any], stamp: Any, span: tuple[int, int],
                   lineno: int) -> None:
        parts = _content_parts(item.get("content"))
        text = _plain(parts)
        if _INJECTED.match(text):
            for part in parts:
                part.synthetic = True
            self._system(parts, item, stamp, span, lineno)
            return
        awaiting = self._awaiting_item
        if awaiting is not None and _same_prompt(self._prompt_text(awaiting), text):
            awaiting = self._live(awaiting)
            self._awaiting_item = None
            self._prompts.pop(awaiting.index, None)
            self._add_span(awaiting, span)
            self._changed(awaiting)
            return
        self._close()
        turn = self._new_turn("user", lineno, stamp, item.get("id"))
        self._extend(turn, parts, span)
        self._hold(turn, text)
        self._unconfirmed.append(turn)
        self._last_assistant = None

    def _user_event(self, payload: dict[str, Any], stamp: Any, span: tuple[int, int],
                    lineno: int) -> None:
        self._events_mode = True
        message = payload.get("message")
        text = message if isinstance(message, str) else ""
        match = None
        for turn in reversed(self._unconfirmed):
            if _same_prompt(text, self._prompt_text(turn)):
                match = turn
                break
        for turn in self._unconfirmed:
            self._prompts.pop(turn.index, None)
            if turn is not match:
                self._demote(turn)
        self._unconfirmed.clear()
        if match is not None:
            match = self._live(match)
            self._add_span(match, span)
            self._changed(match)
            return
        # The event came first (or alone): it is the prompt, and its item may follow.
        self._close()
        parts = _content_parts(text) if text else []
        for image in as_list(payload.get("images")):
            name = image if isinstance(image, str) and not image.startswith("data:") else "image"
            parts.append(Part(Kind.IMAGE, name=name))
        for image in as_list(payload.get("local_images")):
            parts.append(Part(Kind.IMAGE, name=str(image)))
        turn = self._new_turn("user", lineno, stamp)
        self._extend(turn, parts, span)
        self._hold(turn, text)
        self._awaiting_item = turn
        self._last_assistant = None


def demote(turn: Turn) -> None:
    """A prompt that never got its `user_message` event: injected context, a system turn."""
    turn.role = "system"
    turn.is_meta = True
    for part in turn.parts:
        part.synthetic = True


def read_back_turn(models: ModelChanges, path: str, spans: tuple[tuple[int, int], ...],
                   records: list[bytes], line: int | None, turn_id: str, role: str) -> Turn:
    """A turn read back from its own records (as a `TurnIndex` materialises one): fed to a
    fresh builder, then given what only the whole file told (a prompt demoted to injected
    context, the model in use, the id it had).

    Raises:
        ValueError: the records no longer make that turn (the file was replaced).
    """
    builder = CodexBuilder(path)
    lineno = line or 0
    for (offset, _), data in zip(spans, records, strict=True):
        builder.feed(data, offset, lineno)
    builder.finish()
    turns = builder.session.turns
    if len(turns) != 1:
        raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")
    turn = turns[0]
    if role == "system" and turn.role == "user":
        demote(turn)
    if turn.role != role:
        raise ValueError(f"{path}: turn {turn_id} is no longer at its recorded place")
    if role == "assistant":
        turn.model = models.before(lineno)
    turn.id = turn_id
    return turn


def index_turns(builder: CodexBuilder, **sizes: int) -> TurnIndex:
    """Hold the builder's turns in a `TurnIndex` (before any line is fed); `sizes` are its
    `tail` and `cache`."""

    from replay.core.index.turn_index import TurnIndex

    index = TurnIndex(builder.session.path, functools.partial(read_back_turn, builder.models),
                      **sizes)
    builder.session.turns = index  # type: ignore[assignment]
    builder.turn_index = index
    return index


def load_full_parts(path: str, turn: Turn) -> list[Part]:
    """Read a turn's records back and rebuild its parts without shortening."""
    if turn.source is None or not turn.source.spans:
        return turn.parts
    spans = turn.source.spans
    builder = CodexBuilder(path, whole=True)
    chunks = read_spans(path, spans)
    for number, (chunk, (offset, _)) in enumerate(zip(chunks, spans, strict=True), 1):
        builder.feed(chunk, offset, number)
    builder.finish()
    parts = [part for rebuilt in builder.session.turns for part in rebuilt.parts]
    if [part.kind for part in parts] != [part.kind for part in turn.parts]:
        raise ValueError(f"{path}: the records of turn {turn.id} changed since they were read")
    return parts


def sniff(path: Path, head: bytes) -> bool:
    """True for a rollout: an enveloped record, an old meta/state line or bare items."""
    # Each line as its span of the head: a document on one line is not copied.
    spans = [span for span in line_spans(head, 8)[:8] if span[0] < span[1]]
    if not spans or head[spans[0][0]:spans[0][0] + 1] != b"{":
        return False
    for start, end in spans[:5]:
        if _ENVELOPE_SNIFF.search(head, start, min(end, start + 4096)) \
                and head.find(b'"payload"', start, end) >= 0:
            return True
        if _STATE_SNIFF.match(head, start, end):
            return True
    start, end = spans[0]
    if end - start > LONG_LINE:
        found = members(head, start, end)
        if found is not None and not _may_be_rollout(found, head, start, end):
            return False  # (what the whole parse below would say: told without it)
    line = head[start:end]
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(first, dict):
        return False
    if "type" not in first and "id" in first and ("instructions" in first or "git" in first):
        return True
    kind = first.get("type")
    return isinstance(kind, str) and kind in RESPONSE_ITEM_TYPES and bool(
        _BARE_SNIFF.search(line) or "call_id" in first
    )


def _may_be_rollout(found: dict[str, Raw], head: bytes, start: int, end: int) -> bool:
    """`sniff`'s verdict on a long first line from its top-level members (`top_members`):
    False only where parsing it whole says False too (a line that does not parse is False)."""
    if "type" not in found:
        return "id" in found and ("instructions" in found or "git" in found)
    kind = member_string(found["type"])
    return kind is not None and kind in RESPONSE_ITEM_TYPES and bool(
        _BARE_SNIFF.search(head, start, end) or "call_id" in found)


SPAWN_WORDS = ("spawn", "agent")
"""A tool call whose name holds one of these may start a subagent thread."""
MAX_SIBLINGS = 2_000
"""Rollout files looked at beside a session for its subagent threads."""


def _thread_parent(path: Path) -> str | None:
    """The `parent_thread_id` a rollout's first record names, if it is a subagent thread."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(HEAD_BYTES)
        record = orjson.loads(first)
    except (OSError, orjson.JSONDecodeError):
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    source = payload.get("source") if isinstance(payload, dict) else None
    subagent = source.get("subagent") if isinstance(source, dict) else None
    spawn = subagent.get("thread_spawn") if isinstance(subagent, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return parent if isinstance(parent, str) else None


def link_threads(path: Path, session: Session) -> None:
    """Hang the subagent threads this session spawned (their own rollouts, in the same
    folder, naming it as `parent_thread_id`) under the tool call that started each: the call
    whose input or output names the thread, else the spawning calls in order."""
    calls = [part for turn in session.turns for part in turn.parts
             if part.kind == Kind.TOOL_CALL and part.call_id
             and any(word in (part.name or "").lower() for word in SPAWN_WORDS)]
    if not calls or session.session_id is None:
        return
    try:
        siblings = sorted(path.parent.glob("rollout-*.jsonl"))[:MAX_SIBLINGS]
    except OSError:
        return
    children = []
    for sibling in siblings:
        if sibling != path and _thread_parent(sibling) == session.session_id:
            children.append(read_line_session(sibling, CodexBuilder(str(sibling))))
    children.sort(key=lambda child: child.started or 0.0)
    free = list(calls)
    for child in children:
        named = next((call for call in calls if child.session_id and child.session_id in
                      f"{call.input or ''}{call.output or ''}"), None)
        call = named or (free[0] if free else None)
        if call is None:
            continue
        if call in free:
            free.remove(call)
        child.parent_call = call.call_id
        session.sidechains.append(child)


def read(path: Path, progress: Progress | None = None) -> list[Session]:
    """Read one rollout file into one session, with the subagent threads it spawned."""
    builder = CodexBuilder(str(path))
    session = read_line_session(path, builder, progress)
    link_threads(path, session)
    return [session]


READER = Reader(
    name="codex",
    title="Codex CLI rollout JSONL",
    sniff=sniff,
    read=read,
    builder=CodexBuilder,
    index_turns=index_turns,
    single_session=True,
    windowed=True,
    priority=30,
)
"""The Codex CLI format."""
