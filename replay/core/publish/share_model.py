"""A whole session made ready to share: every turn's parts as text, its place on the clock,
its empty-turn reading and annotations, and the timeline strip.

The three renderers (`share_html`, `share_md`, `share_cast`) draw the same `SharedSession`,
so the page, the Markdown and the recording say the same things about the same turns. Turns
are produced one at a time (`SharedSession.turns()`): a 100,000-turn session is never held
twice in memory. Every transcript string passes through `clean` (a `Redactor` under
`--redact`) before any renderer sees it; renderers still escape it for their medium.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from replay.core.annotate.annotations import Annotation, session_identity, session_key
from replay.core.detection.empty import (
    DEFAULT_RULES,
    REASON_BY_CODE,
    DetectionRules,
    EmptyTurn,
    Suggester,
    describe_reasoning,
    find_empty_turns,
    format_duration,
    format_size,
    gap_before,
    missing_reply,
    no_reply_headline,
)
from replay.core.index.navigation import Navigator
from replay.core.session.harness import as_shown
from replay.core.session.labels import LabelSet
from replay.core.session.model import MARKER_KINDS, Kind, Part, Session, TurnColumns

Clean = Callable[[str | None], str]
"""What every transcript string goes through before it is rendered (redaction, or nothing)."""

BIG_SOURCE_BYTES = 32 * 1024 * 1024
"""Past this size of the source, a page would be too heavy to open whole in a browser: turns
are folded and each long part is cut (the page says so at the top)."""

BIG_PART_CHARS = 1_000
"""In a big session, characters kept of each part's text, tool input or tool output."""

TIMELINE_COLUMNS = 240
"""Columns of the timeline strip (a turn per column in shorter sessions)."""

DEFAULT_IDLE_CAP = 2.0
"""Longest pause between two turns at 1x, in seconds (the app's default `idle_cap`)."""


def _identity(text: str | None) -> str:
    return text or ""


@dataclass(slots=True)
class SharedPart:
    """One piece of a turn as shared."""

    kind: str
    """`text`, `reasoning`, `tool` or `marker`."""
    title: str
    """A tool call's fold line (`bash · completed · 2.1 s`), `reasoning: 1,204 chars`, or
    a marker's whole line (`◇ src/app.py`)."""
    body: str = ""
    """Prose, reasoning, or a tool's input."""
    output: str = ""
    """A tool's output."""
    cut: int = 0
    """Characters left out of `body` and `output` (big sessions only)."""
    synthetic: bool = False
    """Injected by the harness, not typed."""


@dataclass(slots=True)
class SharedTurn:
    """One turn as shared."""

    number: int
    """Its `#N`."""
    role: str
    """Who wrote it."""
    timestamp: str | None
    """ISO time from the source."""
    time: float | None
    """Epoch seconds."""
    delay: float
    """Seconds of playback at 1x before the next turn (the app's timing, idle gaps capped)."""
    gap: float | None
    """Seconds since the previous timed turn."""
    parts: list[SharedPart] = field(default_factory=list)
    """Its content, in order."""
    empty: EmptyTurn | None = None
    """Its empty-turn reading, when it is one."""
    ordinal: int = 0
    """1-based place among the empty turns (0 when not empty)."""
    annotations: list[Annotation] = field(default_factory=list)
    """Every reviewer's latest annotation of it."""
    model: str | None = None
    """The model of an assistant turn."""
    placeholder: bool = False
    """The app's placeholder for a reply that never came (`--missing-replies`), after
    request `#number`: no turn of the file."""

    @property
    def name(self) -> str:
        """`12`, or `12+` for the missing reply after request #12 (as the app names it)."""
        return f"{self.number}+" if self.placeholder else str(self.number)

    @property
    def headline(self) -> str:
        """`the user sent an empty or blank message`: the app's banner phrase."""
        if self.empty is None:
            return ""
        if self.placeholder:
            return f"the reply to #{self.number} never came (a placeholder: not in the file)"
        reason = REASON_BY_CODE.get(self.empty.reason)
        return f"the {self.role} {reason.phrase if reason else 'sent nothing'}"


@dataclass(slots=True)
class TimelineCell:
    """One column of the timeline strip."""

    first: int
    """#N of its first turn."""
    last: int
    """#N of its last turn."""
    level: int
    """0-6: how much text its turns hold (log scale, as the app's bars)."""
    empty: list[str] = field(default_factory=list)
    """Names of the empty turns in it (`12`, `12+` for a missing reply)."""
    annotated: bool = False
    """Every empty turn in it is annotated."""


@dataclass(slots=True)
class SharedSession:
    """What every renderer needs of a session, computed once."""

    session: Session
    """The session itself (turns are read from it as they are rendered)."""
    title: str
    """Its label, cleaned."""
    path: str
    """Where it was read from, cleaned."""
    identity: str
    """The id annotations are keyed by."""
    key: str
    """File-name-safe key (the default output name)."""
    empties: list[EmptyTurn]
    """Every empty turn, in order."""
    notes: dict[str, list[Annotation]]
    """Annotations by turn id (notes cleaned)."""
    label_titles: dict[str, str]
    """Title of each label name."""
    idle_cap: float
    """The playback cap used for the delays."""
    clean: Clean = _identity
    """Applied to every transcript string."""
    big: bool = False
    """Too large to show whole: turns folded, long parts cut."""
    part_limit: int | None = None
    """Characters kept of each part's text, input or output (None: all)."""
    navigator: Navigator | None = None
    """The app's navigator over the session, for playback timing."""
    _empty_at: dict[int, tuple[int, EmptyTurn]] = field(default_factory=dict)
    _missing_at: dict[int, tuple[int, EmptyTurn]] = field(default_factory=dict)
    """(ordinal, stop) of each missing reply, by its request's index."""

    @property
    def count(self) -> int:
        """Number of turns."""
        return len(self.session.turns)

    @property
    def annotated(self) -> int:
        """Empty turns with at least one annotation."""
        return sum(1 for empty in self.empties if self.notes.get(empty.id))

    @property
    def notice(self) -> str | None:
        """What a big session's output says about what it left out, or None."""
        if not self.big:
            return None
        return (f"This session is large ({format_size(_source_size(self.session))}): to open "
                f"in a browser, every turn is folded (click to unfold) and each text, tool "
                f"input or output longer than {self.part_limit:,} characters is cut, saying "
                f"how much; the transcript holds it whole.")

    def empty_at(self, index: int) -> tuple[int, EmptyTurn] | None:
        """(ordinal, empty turn) of the turn at `index`, or None."""
        return self._empty_at.get(index)

    def turns(self) -> Iterator[SharedTurn]:
        """Every turn, in order, read one at a time; after a request whose reply never came
        (`--missing-replies`), the app's placeholder for it."""
        for index in range(self.count):
            yield self.turn(index)
            if index in self._missing_at:
                yield self.missing(index)

    def missing(self, index: int) -> SharedTurn:
        """The placeholder for the reply that never came to the request at `index`, saying
        what the app says: not in the file, and what came instead."""
        assert self.navigator is not None
        ordinal, empty = self._missing_at[index]
        found = missing_reply(self.session, index)
        what = no_reply_headline(self.session, index, found) if found is not None else \
            "no reply"
        parts = [SharedPart("marker", "∅ " + self.clean(what)),
                 SharedPart("marker", f"replay shows this placeholder where the reply to "
                                      f"#{index + 1} should be: the file holds no reply to it.")]
        return SharedTurn(number=index + 1, role="assistant", timestamp=None, time=None,
                          delay=self.navigator.delay_after(index, 1.0, self.idle_cap),
                          gap=None, parts=parts, empty=empty, ordinal=ordinal,
                          annotations=self.notes.get(empty.id, []), placeholder=True)

    def turn(self, index: int) -> SharedTurn:
        """The turn at `index`."""
        turn = self.session.turns[index]
        assert self.navigator is not None
        placed = self.empty_at(index)
        shared = SharedTurn(
            number=index + 1, role=turn.role, timestamp=turn.timestamp, time=turn.time,
            delay=self.navigator.delay_after(index, 1.0, self.idle_cap),
            gap=gap_before(self.session, index), model=turn.model,
            parts=[shared_part(part, self.clean, self.part_limit)
                   for part in self.session.full_parts(turn)
                   # Step and snapshot markers only structure a turn: shown where they are
                   # the evidence of an empty one.
                   if placed is not None or part.kind not in MARKER_KINDS])
        if placed is not None:
            shared.ordinal, shared.empty = placed
            shared.annotations = self.notes.get(shared.empty.id, [])
        return shared

    def timeline(self, columns: int = TIMELINE_COLUMNS) -> list[TimelineCell]:
        """The strip across the session: text density per column, empty-turn marks."""
        total = self.count
        if not total:
            return []
        sizes = _text_sizes(self.session)
        width = min(columns, total)
        cells: list[TimelineCell] = []
        weights: list[float] = []
        for x in range(width):
            start = x * total // width
            end = max((x + 1) * total // width, start + 1)
            weights.append(math.log1p(sum(sizes[start:end]) / (end - start)))
            cells.append(TimelineCell(first=start + 1, last=end, level=0))
        peak = max(weights) or 1.0
        for cell, weight in zip(cells, weights, strict=True):
            cell.level = int(weight / peak * 6)
        done: dict[int, bool] = {}
        for empty in self.empties:
            at = min(width - 1, empty.index * width // total)
            cells[at].empty.append(f"{empty.index + 1}{'+' if empty.is_placeholder else ''}")
            done[at] = done.get(at, True) and bool(self.notes.get(empty.id))
        for at, annotated in done.items():
            cells[at].annotated = annotated
        return cells


def _text_sizes(session: Session) -> Sequence[int]:
    turns = session.turns
    if isinstance(turns, TurnColumns):
        return turns.text_sizes(0, len(turns))
    return [sum(part.text_length for part in turn.parts if part.kind == Kind.TEXT)
            for turn in turns]


def _source_size(session: Session) -> int:
    try:
        return os.path.getsize(session.path) if os.path.isfile(session.path) else 0
    except OSError:
        return 0


CLEAN_MARGIN = 2_000
"""Characters past a cut that are still cleaned with the kept part, so a secret that crosses
the cut is recognised whole and none of it is kept (a private key is about 1,700)."""


def _cut(text: str | None, clean: Clean, limit: int | None) -> tuple[str, int]:
    """The text cleaned and, past `limit`, cut: (kept, characters of the source left out).
    Only the kept part and a margin are cleaned: a big session's redaction reads what the
    page shows, not every byte of every tool output."""
    text = text or ""
    if limit is None or len(text) <= limit:
        return clean(text), 0
    cleaned = clean(text[:limit + CLEAN_MARGIN])
    return cleaned[:limit], len(text) - limit


def part_title(part: Part) -> str:
    """`bash · completed · 2.1 s`: a tool call's fold line."""
    pieces = [part.name or "tool"]
    if part.status:
        pieces.append(part.status)
    if part.duration is not None:
        pieces.append(format_duration(part.duration) if part.duration >= 1 else
                      f"{part.duration * 1000:.0f} ms")
    return " · ".join(pieces)


def marker_text(part: Part) -> str:
    """One line for a marker, an error, a file or another small part (as the app shows it)."""
    name = part.name or ""
    if part.kind == Kind.ERROR:
        return f"error: {name or 'unknown'}" + (f" {part.text}" if part.text else "")
    if part.kind == Kind.COMPACTION:
        return f"⟲ compaction{' (auto)' if name == 'auto' else ''}"
    if part.kind == Kind.FILE:
        return f"◇ {name or part.text}"
    if part.kind == Kind.IMAGE:
        return f"▣ image {name}".rstrip()
    if part.kind == Kind.PATCH:
        return f"± patch {part.text or name}".rstrip()
    if part.kind == Kind.STEP:
        return f"· step {name}".rstrip()
    if part.kind == Kind.SNAPSHOT:
        return "· snapshot"
    if part.kind == Kind.AGENT:
        return f"@{name or part.text}"
    if part.kind == Kind.SUBTASK:
        return f"↳ subtask {name}: {part.text}"
    if part.kind == Kind.RETRY:
        return "· retry"
    return f"· {name or part.kind} {part.text[:200]}".rstrip()


def shared_part(part: Part, clean: Clean, limit: int | None) -> SharedPart:
    """A part as shared: its words cleaned and, in a big session, cut to `limit`."""
    if part.kind == Kind.TEXT:
        # A /command or its output as the harness shows it, as the app does (not the tags).
        body, cut = _cut(as_shown(part.text or "") or part.text, clean, limit)
        return SharedPart("text", "", body, cut=cut, synthetic=part.synthetic)
    if part.kind == Kind.REASONING:
        body, cut = _cut(part.text, clean, limit)
        # The words of the app's turn view and of the evidence: one block, one description.
        return SharedPart("reasoning", describe_reasoning(part.text_length, part.hidden),
                          body, cut=cut)
    if part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
        body, cut_in = _cut(part.input, clean, limit)
        output = part.output if part.kind == Kind.TOOL_CALL else part.text
        shown, cut_out = _cut(output, clean, limit)
        title = part_title(part) if part.kind == Kind.TOOL_CALL else \
            f"{part.name or 'tool'} result"
        return SharedPart("tool", clean(title), body, shown, cut=cut_in + cut_out)
    return SharedPart("marker", clean(marker_text(part)))


def share_session(
    session: Session,
    annotations: Sequence[Annotation],
    labels: LabelSet,
    *,
    suggester: Suggester | None = None,
    rules: DetectionRules = DEFAULT_RULES,
    idle_cap: float = DEFAULT_IDLE_CAP,
    clean: Clean | None = None,
    big: bool | None = None,
) -> SharedSession:
    """Read what the renderers need of `session` (empty turns, annotations, timing).

    `big` forces (or prevents) the folded, cut form; by default it is chosen from the size
    of the source (`BIG_SOURCE_BYTES`).
    """
    clean = clean or _identity
    identity = session_identity(session)
    # A missing reply (a rule the app can switch on) is no turn of the file: shown, as the
    # app shows it, as a placeholder after its request.
    empties = [_cleaned_empty(empty, clean)
               for empty in find_empty_turns(session, rules, suggester)]
    notes: dict[str, list[Annotation]] = {}
    for note in sorted(annotations, key=lambda note: (note.reviewer, note.time)):
        if note.session_id == identity and not note.withdrawn:
            notes.setdefault(note.turn_id, []).append(_cleaned_note(note, clean))
    titles = {label.name: label.title for label in labels.labels}
    if big is None:
        big = _source_size(session) > BIG_SOURCE_BYTES
    shared = SharedSession(
        session=session, title=clean(session.label), path=clean(session.path),
        identity=identity, key=session_key(session), empties=empties, notes=notes,
        label_titles=titles, idle_cap=idle_cap, clean=clean, big=big,
        part_limit=BIG_PART_CHARS if big else None,
        navigator=Navigator(session, rules))
    numbered = list(enumerate(empties, start=1))
    shared._empty_at = {empty.index: (ordinal, empty) for ordinal, empty in numbered
                        if not empty.is_placeholder}
    shared._missing_at = {empty.index: (ordinal, empty) for ordinal, empty in numbered
                          if empty.is_placeholder}
    return shared


def _cleaned_empty(empty: EmptyTurn, clean: Clean) -> EmptyTurn:
    """Evidence and suggestion reasons quote the transcript (an error's message): cleaned."""
    if clean is _identity:
        return empty
    from dataclasses import replace

    return replace(empty, evidence=[clean(line) for line in empty.evidence],
                   suggestion_reasons=[clean(line) for line in empty.suggestion_reasons])


def _cleaned_note(note: Annotation, clean: Clean) -> Annotation:
    if not note.note:
        return note
    from dataclasses import replace

    return replace(note, note=clean(note.note))


def evidence_line(empty: EmptyTurn, clean: Clean = _identity) -> str:
    """`empty <conversation_data> wrapper · gap before: 14 min`, or `none`."""
    return clean(" · ".join(empty.evidence)) or "none"


def suggestion_line(empty: EmptyTurn) -> str:
    """`approval (medium: the previous turn states a plan)`, or `none`."""
    if not empty.suggestion:
        return "none"
    why = "; ".join(empty.suggestion_reasons)
    confidence = empty.suggestion_confidence or ""
    detail = ": ".join(piece for piece in (confidence, why) if piece)
    return f"{empty.suggestion} ({detail})" if detail else empty.suggestion


def clock(turn: SharedTurn) -> str:
    """`2026-03-01 10:20:00` from the turn's timestamp, or `no time`."""
    return (turn.timestamp or "no time").replace("T", " ")[:19]


def gap_text(turn: SharedTurn) -> str:
    """`+38 s` since the previous turn, or ``."""
    return f"+{format_duration(turn.gap)}" if turn.gap is not None and turn.gap >= 1 else ""
