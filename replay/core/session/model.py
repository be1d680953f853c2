"""The one shape every transcript format is read into: sessions, turns and parts."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from replay.core.session import lifted


class Kind:
    """Part kinds; a reader maps each source block to one of these."""

    TEXT = "text"
    """Prose written by the person or the model (may be `synthetic`)."""
    REASONING = "reasoning"
    """Thinking or reasoning text; not visible content."""
    TOOL_CALL = "tool_call"
    """A tool invocation; `input` holds its arguments and `output` its result when known."""
    TOOL_RESULT = "tool_result"
    """A tool result whose call is not in the same turn."""
    FILE = "file"
    """An attached or referenced file; `name` is the file name or URL."""
    IMAGE = "image"
    """An image block."""
    PATCH = "patch"
    """A patch or diff applied to files."""
    SUBTASK = "subtask"
    """A request to run a subagent."""
    AGENT = "agent"
    """A mention of an agent by the person (`@build`)."""
    COMPACTION = "compaction"
    """A compaction marker or request."""
    STEP = "step"
    """A step start or finish marker."""
    SNAPSHOT = "snapshot"
    """A file-system snapshot marker."""
    ERROR = "error"
    """An error attached to the turn; `name` is the error type."""
    RETRY = "retry"
    """A retry marker."""
    OTHER = "other"
    """A block of a type this version of replay does not know; `name` is the source type."""


VISIBLE_KINDS: frozenset[str] = frozenset(
    {
        Kind.TEXT,
        Kind.TOOL_CALL,
        Kind.TOOL_RESULT,
        Kind.FILE,
        Kind.IMAGE,
        Kind.PATCH,
        Kind.SUBTASK,
        Kind.AGENT,
    }
)
"""Kinds that count as visible content (text only when non-blank)."""

MARKER_KINDS: frozenset[str] = frozenset({Kind.STEP, Kind.SNAPSHOT, Kind.RETRY})
"""Kinds that only mark structure."""


@dataclass(slots=True)
class Part:
    """One ordered piece of a turn."""

    kind: str
    """One of the `Kind` constants."""
    text: str = ""
    """Prose, reasoning, error message, or tool output for a TOOL_RESULT."""
    name: str | None = None
    """Tool name, file name or URL, error type, step reason, or unknown source type."""
    input: str | None = None
    """Tool input, as JSON text or plain text."""
    output: str | None = None
    """Tool output for a TOOL_CALL whose result is known."""
    status: str | None = None
    """Tool state: pending, running, completed or error."""
    call_id: str | None = None
    """The source's id for a tool call, linking calls, results and subagents."""
    synthetic: bool = False
    """Added by the harness (expanded attachment, injected context), not typed by a person."""
    duration: float | None = None
    """Seconds the tool call took, when the source says."""
    mime: str | None = None
    """Media type of a FILE or IMAGE part (`text/plain`, `image/png`), when the source says."""
    shortened: bool = False
    """True when text/input/output were cut to save memory; `Session.full_parts` reads them back."""
    length: int = -1
    """Length of `text` before shortening; -1 when `text` is whole."""
    hidden: int = 0
    """Bytes of reasoning the source holds encrypted or redacted (Codex `encrypted_content`,
    a Claude thinking block that is only a signature): the model reasoned, nobody can read it."""

    @property
    def text_length(self) -> int:
        """Length of the full text, whether or not it was shortened (or left in its file)."""
        if lifted.holds(self.text):
            return lifted.length(self.text)
        return self.length if self.length >= 0 else len(self.text)


@dataclass(slots=True)
class Source:
    """Where a turn came from, so the UI can show the raw record."""

    path: str
    """The file (or database, or directory) holding the record."""
    line: int | None = None
    """1-based line of the first record, for line-based formats."""
    spans: tuple[tuple[int, int], ...] = ()
    """Byte (offset, length) of every record that makes up the turn."""
    record: str | None = None
    """A locator for non-line sources: a JSON pointer, a table row, a file name."""


NOT_SENT = "not sent to the model"
"""A turn's note on an empty prompt: Aider drops empty input before it reaches the model."""

EXPORT_CUT = "export cut: the file was saved while this reply was being written"
"""A turn's note on a trailing reply that holds nothing (a SpecStory export taken mid-reply)."""


@dataclass(slots=True, eq=False)
class Turn:
    """One message as the source tool presents it to a person."""

    id: str
    """The source's own message id, or a stable derived one."""
    role: str
    """`user`, `assistant` or `system`."""
    parts: list[Part] = field(default_factory=list)
    """Ordered content; possibly shortened, see `Part.shortened`."""
    timestamp: str | None = None
    """ISO 8601 time the source gives for the turn."""
    time: float | None = None
    """`timestamp` as epoch seconds, for gaps and playback."""
    completed: float | None = None
    """Epoch seconds when an assistant reply finished, when the source records it."""
    model: str | None = None
    """Model that wrote an assistant turn."""
    tokens: dict[str, int] | None = None
    """Token counts the source records (input, output, reasoning, cache_read, ...)."""
    agent: str | None = None
    """Agent or mode that produced the turn (opencode `build`, `plan`, `compaction`)."""
    is_summary: bool = False
    """The turn is a compaction summary written by the harness."""
    is_meta: bool = False
    """The harness marked the message as meta (injected, not typed)."""
    source: Source | None = None
    """Where the turn came from."""
    index: int = -1
    """Position in `Session.turns`; set by `Session.add`."""
    note: str | None = None
    """What the harness did with the turn, in plain words, when only the reader can tell
    (Aider never sends an empty prompt: `not sent to the model`)."""


def parse_time(value: object) -> tuple[str | None, float | None]:
    """Read an ISO string or epoch number (s or ms) into (ISO string, epoch seconds).

    Returns (None, None) for anything else, never raising.
    """
    if isinstance(value, bool) or value is None:
        return None, None
    if isinstance(value, (int, float)):
        seconds = float(value) / 1000.0 if value > 1e11 else float(value)
        try:
            moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None, None
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"), seconds
    if isinstance(value, str) and value:
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            return value, None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        try:
            return value, moment.timestamp()
        except (OverflowError, OSError, ValueError):
            return value, None
    return None, None


class TurnColumns(Sequence[Turn]):
    """Turns held compactly and read whole on demand (`replay.core.index.turn_index.TurnIndex`):
    what loops over every turn ask of its columns instead of reading each turn back."""

    memo: dict[object, object]
    """Answers kept about the turns (the first prompt), forgotten whenever one changes."""

    @abstractmethod
    def append(self, turn: Turn) -> None:
        """Add the next turn."""
        raise NotImplementedError

    @abstractmethod
    def role_at(self, index: int) -> str:
        """The turn's role."""
        raise NotImplementedError

    @abstractmethod
    def id_at(self, index: int) -> str:
        """The turn's id."""
        raise NotImplementedError

    @abstractmethod
    def time_at(self, index: int) -> float | None:
        """Epoch seconds of the turn, if known."""
        raise NotImplementedError

    @abstractmethod
    def completed_at(self, index: int) -> float | None:
        """Epoch seconds the reply finished, if recorded."""
        raise NotImplementedError

    @abstractmethod
    def text_size_at(self, index: int) -> int:
        """Characters of the turn's text parts."""
        raise NotImplementedError

    @abstractmethod
    def text_sizes(self, start: int, end: int) -> Sequence[int]:
        """`text_size_at` of the turns [start, end), at once."""
        raise NotImplementedError

    @abstractmethod
    def stop_at(self, index: int, rules: Any, *, live: bool = False) -> bool:
        """`detect.is_stop` of the turn under `rules` (a `DetectionRules`)."""
        raise NotImplementedError

    @abstractmethod
    def empty_at(self, index: int, rules: Any) -> bool:
        """`detect.is_empty` of the turn under `rules`."""
        raise NotImplementedError

    @abstractmethod
    def stops(self, start: int, end: int, rules: Any, *, live: bool = False) -> Sequence[int]:
        """Indices of the stops among [start, end)."""
        raise NotImplementedError

    @abstractmethod
    def ids_with(self, text: str, *, prefix: bool, limit: int | None = None) -> list[int]:
        """Indices of turns whose id is `text` (or starts with it, with `prefix`)."""
        raise NotImplementedError

    @abstractmethod
    def tally(self, add: Callable[[float | None, bool, bool, int], None]) -> None:
        """Feed every turn's (time, assistant, completed, text size) to `add`, in order."""
        raise NotImplementedError

    @abstractmethod
    def lines_with(self, needle: str) -> Sequence[int] | None:
        """Turns whose records hold `needle` in their raw bytes (None: cannot tell)."""
        raise NotImplementedError


def turn_id(turns: Sequence[Turn], index: int) -> str:
    """The id of the turn at `index`, without reading a compactly held turn back."""
    return turns.id_at(index) if isinstance(turns, TurnColumns) else turns[index].id


PartsLoader = Callable[[Turn], list[Part]]
"""Reads the full parts of a turn back from its source."""


KEPT_WARNINGS = 50
"""Warnings a session keeps verbatim; after them, one `MORE_PROBLEMS` line."""

MORE_PROBLEMS = "more problems not listed"
"""The last warning of a session that met more than `KEPT_WARNINGS` problems."""


@dataclass(slots=True, eq=False, weakref_slot=True)
class Session:
    """One conversation: the ordered turns plus what the reader learnt on the way."""

    path: str
    """File, directory or database the session was read from."""
    format: str
    """Name of the reader that read it (`opencode`, `claude-code`, ...)."""
    session_id: str | None = None
    """The source's own session id."""
    title: str | None = None
    """A human title when the source has one."""
    turns: list[Turn] = field(default_factory=list)
    """User, assistant and system turns in order."""
    skipped: int = 0
    """Input records that could not be read."""
    warnings: list[str] = field(default_factory=list)
    """One line per problem met while reading (bad lines are counted, not fatal)."""
    events: int = 0
    """Bookkeeping records seen (summaries, snapshots, progress, token counts)."""
    meta: dict[str, str] = field(default_factory=dict)
    """Facts about the session: tool version, cwd, git branch, originator."""
    sidechains: list[Session] = field(default_factory=list)
    """Subagent sessions started from this one."""
    parent_call: str | None = None
    """For a sidechain: the tool call id (or turn id) in the parent that started it."""
    loader: PartsLoader | None = None
    """Reads back full parts for turns whose parts were shortened."""
    revision: int = field(default=0, repr=False)
    """Bumped each time a reader rewrites a turn it added before the last (`revise`): what
    was worked out about earlier turns (the suggester's memo) may no longer hold."""

    def revise(self) -> None:
        """Say that a turn before the last one was rewritten (a Gemini message written again,
        an opencode event for an earlier message, a followed file's turn that changed)."""
        self.revision += 1

    def add(self, turn: Turn) -> Turn:
        """Append a turn and record its index."""
        turn.index = len(self.turns)
        self.turns.append(turn)
        return turn

    def warn(self, message: str, *, skipped: bool = True) -> None:
        """Record a problem; the first 50 are kept verbatim, the rest only counted."""
        if skipped:
            self.skipped += 1
        if len(self.warnings) < KEPT_WARNINGS:
            self.warnings.append(message)
        elif len(self.warnings) == KEPT_WARNINGS:
            self.warnings.append(MORE_PROBLEMS)

    def full_parts(self, turn: Turn, *, in_file: bool = False) -> list[Part]:
        """Parts of a turn with every shortened text read back from the source.

        A text left in its file (`lifted`) is decoded whole, unless `in_file`: then it stays
        a placeholder, for a view that reads it a piece at a time (`lifted.source`)."""
        parts = turn.parts
        if self.loader is not None and any(part.shortened for part in parts):
            try:
                parts = self.loader(turn)
            except (OSError, ValueError):
                pass
        if in_file or not any(lifted.holds(part.text) or lifted.holds(part.input)
                              or lifted.holds(part.output) for part in parts):
            return parts
        return [_decoded(part) for part in parts]

    @property
    def started(self) -> float | None:
        """Epoch seconds of the first timed turn."""
        turns = self.turns
        if isinstance(turns, TurnColumns):
            return next((found for index in range(len(turns))
                         if (found := turns.time_at(index)) is not None), None)
        for turn in turns:
            if turn.time is not None:
                return turn.time
        return None

    @property
    def label(self) -> str:
        """A short name for lists and headers: the source's title, else the first real
        prompt, else the id, else the file name."""
        if self.title:
            return self.title
        prompt = first_prompt(self.turns)
        if prompt:
            return prompt
        if self.session_id:
            return self.session_id
        return self.path.rsplit("/", 1)[-1]


def _decoded(part: Part) -> Part:
    """A copy of the part with its texts left in the file decoded (as they were read, when
    the file no longer holds them: their heads, marked as shortened)."""
    part = replace(part)
    for name in ("text", "input", "output"):
        value = getattr(part, name)
        if lifted.holds(value):
            try:
                setattr(part, name, lifted.materialise(value))
                if name == "text":
                    part.length = -1
            except OSError:
                setattr(part, name, lifted.visible(value))
                part.shortened = True
    return part


PROMPT_TURNS = 500
"""How many turns from the start `first_prompt` looks through."""


def first_prompt(turns: list[Turn], limit: int = 70) -> str | None:
    """The first line a person typed (not injected context, not a line opening with a tag
    such as `<command-name>` or `<pr_description>`), cut to `limit` characters; None when
    the session has none."""
    if isinstance(turns, TurnColumns):
        # Asked on every redraw of the header: kept, and only user turns are read back.
        key = ("first_prompt", limit, min(len(turns), PROMPT_TURNS))
        if key not in turns.memo:
            turns.memo.clear()
            turns.memo[key] = first_prompt(
                [turns[index] for index in range(min(len(turns), PROMPT_TURNS))
                 if turns.role_at(index) == "user"], limit)
        return turns.memo[key]  # type: ignore[return-value]
    for turn in turns[:PROMPT_TURNS]:
        if turn.role != "user" or turn.is_meta:
            continue
        for part in turn.parts:
            if part.kind != Kind.TEXT or part.synthetic:
                continue
            line = next((line.strip() for line in part.text.splitlines()
                         if line.strip() and not line.lstrip().startswith("<")), "")
            if line:
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return None


def no_conversation(session: Session) -> str | None:
    """What a session with no turn holds when its file was not empty: `no conversation: only
    1 bookkeeping record, no message` (a summary, a snapshot, a progress note: `scan` lists it
    with the warnings, the app says it where the turns would be, in 80 columns). None when
    there are turns or nothing was read at all (an empty file says so in its own warning)."""
    if session.turns or not session.events:
        return None
    count = session.events
    noun = "bookkeeping record" if count == 1 else "bookkeeping records"
    return f"no conversation: only {count:,} {noun}, no message"
