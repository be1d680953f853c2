"""Finding empty turns: the rules are data (tables of reasons and evidence), not scattered ifs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from replay.core.session.harness import interrupt_of, is_harness_text
from replay.core.session.model import (
    MARKER_KINDS,
    VISIBLE_KINDS,
    Kind,
    Part,
    Session,
    Turn,
    TurnColumns,
)
from replay.core.session.text import empty_wrapper_names, is_blank, one_line
from replay.core.session.turn_ref import placeholder_id, placeholder_name


@dataclass(frozen=True, slots=True)
class DetectionRules:
    """What counts as an empty turn; the defaults are the product's definition."""

    roles: frozenset[str] = frozenset({"user", "assistant"})
    """Roles whose turns are checked."""
    visible_kinds: frozenset[str] = VISIBLE_KINDS
    """Part kinds that are visible content (text only when non-blank)."""
    tool_only_is_empty: bool = False
    """Also stop at assistant turns that only call tools, with no words."""
    min_gap_evidence: float = 30.0
    """Seconds of silence before a turn worth naming as evidence."""
    missing_replies: bool = False
    """Also stop at a person's request that got no reply at all (no assistant turn before the
    next request or the end): Gemini records a cancelled request only as an `info` line, where
    opencode writes an empty aborted message for the same event."""

    def with_options(self, **changes: Any) -> DetectionRules:
        """A copy with some fields changed."""
        return replace(self, **changes)


DEFAULT_RULES = DetectionRules()
"""The product's default definition of an empty turn."""


def is_visible(part: Part, rules: DetectionRules = DEFAULT_RULES) -> bool:
    """True when the part shows something to a person."""
    if part.kind not in rules.visible_kinds:
        return False
    if part.kind == Kind.TEXT:
        return not is_blank(part.text)
    return True


def _tool_only(turn: Turn, rules: DetectionRules) -> bool:
    visible = [part for part in turn.parts if is_visible(part, rules)]
    return bool(visible) and all(p.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT) for p in visible)


def is_empty(turn: Turn, rules: DetectionRules = DEFAULT_RULES) -> bool:
    """True when the turn has no visible content under the rules."""
    if turn.role not in rules.roles:
        return False
    visible, text = rules.visible_kinds, Kind.TEXT
    for part in turn.parts:  # `is_visible`, inline: a scan asks this of every turn
        kind = part.kind
        if kind in visible and (kind != text or not is_blank(part.text)):
            break
    else:
        return True
    return rules.tool_only_is_empty and turn.role == "assistant" and _tool_only(turn, rules)


REPLY_WINDOW = 40
"""How many turns after a request are searched for its reply."""


def request_words(turn: Turn) -> str:
    """What the person typed in a user turn: visible text that is not harness-written."""
    if turn.role != "user" or any(p.kind == Kind.TOOL_RESULT for p in turn.parts):
        return ""
    texts = [p.text for p in turn.parts
             if p.kind == Kind.TEXT and not p.synthetic and not is_blank(p.text)]
    words = "\n".join(text for text in texts if not is_harness_text(text))
    return words.strip()


@dataclass(frozen=True, slots=True)
class NoReply:
    """A request that got no reply: what came instead, up to the next request or the end."""

    events: tuple[str, ...]
    """Notices between the request and what followed (`info: Request cancelled.`)."""
    next_index: int | None
    """Index of the person's next request, or None when the session ends first."""
    event_index: int | None = None
    """Index of the turn holding the first notice, when there is one."""


def missing_reply(session: Session, index: int, *, live: bool = False) -> NoReply | None:
    """The request at `index` when no assistant turn answers it before the next request.

    `live`: the session may still grow, so a request with nothing after it yet is waiting for
    its reply, not missing one; it is missing once a notice (a cancel, an error, an interrupt)
    or the person's next request says no reply is coming.
    """
    turn = session.turns[index]
    if not request_words(turn):
        return None
    events: list[str] = []
    event_index: int | None = None
    for following in session.turns[index + 1 : index + 1 + REPLY_WINDOW]:
        if following.role == "assistant":
            return None
        if following.role == "user" and request_words(following):
            return NoReply(tuple(events), following.index, event_index)
        before = len(events)
        for part in following.parts:
            if part.kind == Kind.ERROR:
                events.append(f"error: {one_line(part.text or part.name or 'unknown', 80)}")
            elif part.kind == Kind.TEXT and following.role == "system" and part.text.strip():
                events.append(f"info: {one_line(part.text, 80)}")
            elif part.kind == Kind.TEXT and (interrupt := interrupt_of(part.text)):
                events.append(interrupt)
        if event_index is None and len(events) > before:
            event_index = following.index
    else:
        if index + 1 + REPLY_WINDOW < len(session.turns):
            return None  # a reply this far away is not this request's; do not guess
    if live and not events:
        return None
    return NoReply(tuple(events), None, event_index)


def no_reply_headline(session: Session, index: int, found: NoReply) -> str:
    """One line for the placeholder of a missing reply: `no reply — info: Request cancelled.
    3 s later`, else the next request, else `nothing after it`."""
    request = session.turns[index]

    def later(position: int) -> str:
        following = session.turns[position]
        if following.time is None or request.time is None:
            return ""
        return f" {format_duration(following.time - request.time)} later"

    if found.events and found.event_index is not None:
        return f"no reply — {found.events[0]}{later(found.event_index)}"
    if found.next_index is not None:
        return f"no reply — next request #{found.next_index + 1}{later(found.next_index)}"
    return "no reply — nothing after it"


@dataclass(frozen=True, slots=True)
class Interruption:
    """The person stopped the reply: Claude Code's interrupt line right after it."""

    marker: int
    """Index of the user turn holding the interrupt line."""
    kind: str
    """`interrupted` or `interrupted for tool use`."""
    resent: int | None
    """Index of the next request when it re-sends the last request word for word."""


def interruption(session: Session, index: int) -> Interruption | None:
    """The interrupt that follows the assistant turn at `index`, if the person stopped it."""
    turns = session.turns
    if turns[index].role != "assistant":
        return None
    for following in turns[index + 1 : index + 1 + REPLY_WINDOW]:
        if following.role == "system":
            continue
        if following.role != "user":
            return None
        kind = next((found for part in following.parts if part.kind == Kind.TEXT
                     and (found := interrupt_of(part.text))), None)
        if kind is None:
            return None
        return Interruption(following.index, kind, _resent(session, index, following.index))
    return None


def _resent(session: Session, index: int, marker: int) -> int | None:
    """The request after `marker` when it repeats, word for word, the request before `index`."""
    turns = session.turns
    before = next((request_words(turn) for turn in reversed(turns[max(0, index - REPLY_WINDOW)
                                                                  : index])
                   if request_words(turn)), "")
    after = next((turn for turn in turns[marker + 1 : marker + 1 + REPLY_WINDOW]
                  if turn.role == "assistant" or request_words(turn)), None)
    if not before or after is None or after.role != "user":
        return None
    return after.index if " ".join(request_words(after).split()) == " ".join(before.split()) \
        else None


def is_stop(session: Session, index: int, rules: DetectionRules = DEFAULT_RULES, *,
            live: bool = False) -> bool:
    """True when the turn at `index` is an empty turn under the rules, or a request whose reply
    is missing (then the stop is the placeholder after it); `live` as in `missing_reply`."""
    turns = session.turns
    if type(turns) is not list and isinstance(turns, TurnColumns):
        return turns.stop_at(index, rules, live=live)
    turn = turns[index]
    if is_empty(turn, rules):
        return True
    return rules.missing_replies and missing_reply(session, index, live=live) is not None



def stop_indices(session: Session, rules: DetectionRules = DEFAULT_RULES) -> list[int]:
    """The index of every stop of the session (empty turns, and requests whose reply is
    missing when the rules say so), from a compact index's columns when it has them."""
    turns = session.turns
    if type(turns) is not list and isinstance(turns, TurnColumns):
        return turns.stops(0, len(turns), rules)
    return [index for index in range(len(turns)) if is_stop(session, index, rules)]

def _kinds(turn: Turn) -> set[str]:
    return {part.kind for part in turn.parts}


def _has_wrapper(turn: Turn) -> bool:
    return any(p.kind == Kind.TEXT and empty_wrapper_names(p.text) for p in turn.parts)


@dataclass(frozen=True, slots=True)
class Reason:
    """One way a turn can be empty: a stable code, a phrase, and when it applies."""

    code: str
    """Stable identifier used in `scan --json` and CSV."""
    phrase: str
    """Plain words for the banner."""
    applies: Callable[[Turn], bool]
    """Predicate over an empty turn."""


REASONS: tuple[Reason, ...] = (
    Reason("compaction-request", "asked for a compaction", lambda t: Kind.COMPACTION in _kinds(t)),
    Reason("aborted", "ended with an error before showing anything",
           lambda t: Kind.ERROR in _kinds(t)),
    Reason("tool-only", "called tools without a word",
           lambda t: bool(_kinds(t) & {Kind.TOOL_CALL, Kind.TOOL_RESULT})),
    Reason("reasoning-only", "reasoned but showed nothing", lambda t: Kind.REASONING in _kinds(t)),
    Reason("empty-wrapper", "sent only an empty wrapper tag", _has_wrapper),
    Reason("blank-text", "sent an empty or blank message", lambda t: Kind.TEXT in _kinds(t)),
    Reason("markers-only", "holds only step or snapshot markers",
           lambda t: bool(_kinds(t)) and _kinds(t) <= MARKER_KINDS),
    Reason("no-content", "has no content at all", lambda t: True),
)
"""Reasons in priority order; the first that applies names the empty turn."""

NO_REPLY = Reason("no-reply", "reply never came: the request got no reply at all",
                  lambda t: False)
"""The reason of a request that got no reply (found only with `missing_replies`)."""

REASON_BY_CODE: dict[str, Reason] = {reason.code: reason
                                     for reason in (*REASONS, NO_REPLY)}


def reason_for(turn: Turn) -> Reason:
    """The first reason in `REASONS` that applies to an empty turn."""
    for reason in REASONS:
        if reason.applies(turn):
            return reason
    return REASONS[-1]


def format_duration(seconds: float) -> str:
    """A short human duration: `38 s`, `14 min`, `2.5 h`, `3 d`."""
    seconds = abs(seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.0f} d"


def format_size(count: int) -> str:
    """A short byte size: `512 B`, `1.0 KB`, `2.3 MB`."""
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / (1024 * 1024):.1f} MB"


def gap_before(session: Session, index: int) -> float | None:
    """Seconds between the previous timed turn and this one."""
    turns = session.turns
    if isinstance(turns, TurnColumns):
        here = turns.time_at(index)
        if here is None:
            return None
        for position in range(index - 1, max(0, index - 50) - 1, -1):
            time = turns.time_at(position)
            if time is not None:
                completed = turns.completed_at(position)
                return max(0.0, here - (completed if completed is not None else time))
        return None
    turn = turns[index]
    if turn.time is None:
        return None
    for previous in reversed(turns[max(0, index - 50) : index]):
        if previous.time is not None:
            end = previous.completed if previous.completed is not None else previous.time
            return max(0.0, turn.time - end)
    return None


def _evidence_compaction(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    return ["compaction" for part in turn.parts if part.kind == Kind.COMPACTION][:1]


def _evidence_error(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    return [f"error: {part.name or part.text or 'unknown'}" for part in turn.parts
            if part.kind == Kind.ERROR]


def describe_reasoning(chars: int, hidden: int) -> str:
    """Reasoning in the words the evidence and the turn view both use: `reasoning: 1,204
    chars`, `reasoning: encrypted (144 B)` (the source keeps it signed or encrypted: the model
    reasoned, unseen), `reasoning: empty`."""
    if chars:
        return f"reasoning: {chars:,} chars"
    if hidden:
        return f"reasoning: encrypted ({format_size(hidden)})"
    return "reasoning: empty"


def _evidence_reasoning(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    parts = [part for part in turn.parts if part.kind == Kind.REASONING]
    if not parts:
        return []
    return [describe_reasoning(sum(part.text_length for part in parts),
                               sum(part.hidden for part in parts))]


def _evidence_wrapper(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    names: list[str] = []
    for part in turn.parts:
        if part.kind == Kind.TEXT:
            names.extend(empty_wrapper_names(part.text))
    return [f"empty <{name}> wrapper" for name in dict.fromkeys(names)]


def _evidence_markers(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    steps = sum(1 for part in turn.parts if part.kind == Kind.STEP)
    found = [f"step markers: {steps}"] if steps else []
    if any(part.kind == Kind.SNAPSHOT for part in turn.parts):
        found.append("snapshot")
    return found


def _evidence_no_parts(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    content = [part for part in turn.parts if part.kind != Kind.ERROR]
    return [] if content else ["no parts"]


def _evidence_tools(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    calls = [p for p in turn.parts if p.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT)]
    if not calls:
        return []
    names = ", ".join(dict.fromkeys(p.name or "tool" for p in calls))
    return [f"tools: {names}"]


def records_completion(session: Session) -> bool:
    """Some assistant turn of the session carries a completion time (then a missing one
    means something)."""
    turns = session.turns
    if isinstance(turns, TurnColumns):
        # Kept while the turns stay as they are (a memo is forgotten when one changes; a
        # turn added makes the count differ): a walk of a million turns is a second, and a
        # screen showing an empty turn asks this at every step.
        kept = turns.memo.get(records_completion)
        if isinstance(kept, tuple) and kept[0] == len(turns):
            return bool(kept[1])
        found = any(turns.completed_at(index) is not None for index in range(len(turns))
                    if turns.role_at(index) == "assistant")
        turns.memo[records_completion] = (len(turns), found)
        return found
    return any(other.completed is not None for other in turns if other.role == "assistant")


def _evidence_completion(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    if turn.role != "assistant" or turn.completed is not None:
        return []
    return [NO_COMPLETION] if records_completion(session) else []


def _evidence_gap(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    gap = gap_before(session, turn.index)
    if gap is None or gap < rules.min_gap_evidence:
        return []
    return [f"gap before: {format_duration(gap)}"]


def _evidence_run_end(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    """How an agent run ended (trajectories), beside an empty turn with no step after it."""
    status = session.meta.get("exit_status")
    if status is None or _step_after(session, turn.index):
        return []
    size = int(session.meta.get("submission", "0") or 0)
    return [f"run ended: {status}", f"submission: {size:,} chars" if size else "no submission"]


def _step_after(session: Session, index: int) -> bool:
    """True when a turn other than a system one follows `index` (walked from it, stopping at
    the first: slicing the rest of the session for every empty turn made scans quadratic)."""
    turns = session.turns
    columns = turns if isinstance(turns, TurnColumns) else None
    for position in range(index + 1, len(turns)):
        role = columns.role_at(position) if columns is not None else turns[position].role
        if role != "system":
            return True
    return False


def _evidence_note(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    """What the harness did with the turn, as its reader tells it."""
    return [turn.note] if turn.note else []


def _evidence_flags(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    found = []
    if turn.is_meta:
        found.append("meta message")
    if turn.agent == "compaction":
        found.append("compaction agent")
    if turn.index == len(session.turns) - 1:
        found.append("last turn of the session")
    return found


def _evidence_no_reply(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    if not rules.missing_replies or is_empty(turn, rules):
        return []
    found = missing_reply(session, turn.index)
    if found is None:
        return []
    evidence = ["no reply", *found.events]
    if found.next_index is None:
        evidence.append("nothing after it")
    else:
        following = session.turns[found.next_index]
        after = (f" {format_duration(following.time - turn.time)} later"
                 if following.time is not None and turn.time is not None else "")
        same = request_words(following) == request_words(turn)
        evidence.append(f"next request #{found.next_index + 1}{after}"
                        + (", word for word the same" if same else ""))
    return evidence


def _evidence_interrupt(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    found = interruption(session, turn.index)
    if found is None:
        return []
    evidence = [f"{found.kind} by the person (#{found.marker + 1})"]
    if found.resent is not None:
        evidence.append(f"request re-sent word for word as #{found.resent + 1}")
    return evidence


STALL_EVIDENCE = 60.0
"""Seconds an empty reply stayed open before that is worth naming."""


def _evidence_open_for(session: Session, turn: Turn, rules: DetectionRules) -> list[str]:
    if turn.role != "assistant" or turn.time is None or turn.completed is None:
        return []
    if any(part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT) for part in turn.parts):
        return []  # a tool call that ran long is work, not a stall
    duration = turn.completed - turn.time
    if duration < STALL_EVIDENCE:
        return []
    return [f"open for {format_duration(duration)} before it completed with nothing"]


Evidence = Callable[[Session, Turn, DetectionRules], list[str]]

EVIDENCE: tuple[Evidence, ...] = (
    _evidence_note,
    _evidence_no_reply,
    _evidence_compaction,
    _evidence_error,
    _evidence_interrupt,
    _evidence_reasoning,
    _evidence_wrapper,
    _evidence_tools,
    _evidence_markers,
    _evidence_no_parts,
    _evidence_open_for,
    _evidence_completion,
    _evidence_gap,
    _evidence_run_end,
    _evidence_flags,
)
"""Evidence collectors in display order; each returns zero or more short phrases."""


NO_COMPLETION = "no completion time"
"""The evidence of an unfinished assistant turn in a session that records completions."""


def evidence_for(session: Session, turn: Turn, rules: DetectionRules = DEFAULT_RULES,
                 records_completion: bool | None = None) -> list[str]:
    """Every piece of evidence shown beside an empty turn.

    `records_completion` says whether the session records completion times, when the
    caller knows better than the turns in `session` (a streamed scan holds only some).
    """
    found: list[str] = []
    for collect in EVIDENCE:
        if collect is _evidence_completion and records_completion is not None:
            unfinished = turn.role == "assistant" and turn.completed is None
            found.extend([NO_COMPLETION] if unfinished and records_completion else [])
        else:
            found.extend(collect(session, turn, rules))
    return found


@dataclass(slots=True)
class EmptyTurn:
    """An empty turn found in a session, as `scan --json` reports it."""

    index: int
    """0-based position in the session's turn list."""
    id: str
    """The source's own message id."""
    role: str
    """`user` or `assistant`."""
    timestamp: str | None
    """ISO 8601 time of the turn."""
    reason: str
    """Stable reason code (see `REASONS`)."""
    evidence: list[str] = field(default_factory=list)
    """Short phrases shown beside the turn."""
    suggestion: str | None = None
    """Suggested label name, when a suggester ran."""
    suggestion_confidence: str | None = None
    """low, medium or high."""
    suggestion_reasons: list[str] = field(default_factory=list)
    """Plain words behind the suggestion."""
    suggestion_rule: str | None = None
    """Name of the suggestion rule that fired, when the suggester names it."""
    gap_before: float | None = None
    """Seconds since the previous timed turn (the distribution `replay report` draws)."""

    def to_json(self) -> dict[str, Any]:
        """The `empty_turns` element of `scan --json`."""
        return {
            "index": self.index,
            "number": self.index + 1,
            "id": self.id,
            "role": self.role,
            "timestamp": self.timestamp,
            "reason": self.reason,
            "evidence": list(self.evidence),
            "suggestion": self.suggestion,
            "gap_before": self.gap_before,
        } | ({"placeholder": placeholder_name(self.index)} if self.is_placeholder else {})

    @property
    def is_placeholder(self) -> bool:
        """True for a missing reply: a stop after the request at `index`, not a turn of it."""
        return self.reason == NO_REPLY.code


Suggester = Callable[
    [Session, EmptyTurn], tuple[str, str, list[str]] | tuple[str, str, list[str], str] | None]
"""Given a session and an empty turn: (label, confidence, reasons[, rule name]) or None."""


def describe_empty(
    session: Session, turn: Turn, rules: DetectionRules = DEFAULT_RULES,
    suggester: Suggester | None = None, records_completion: bool | None = None,
) -> EmptyTurn:
    """Build the report for one empty turn (`records_completion` as in `evidence_for`)."""
    empty = is_empty(turn, rules)
    found = EmptyTurn(
        index=turn.index,
        # A missing reply is no turn of the file: keyed and named after its request (#12+),
        # and it is the assistant's silence.
        id=turn.id if empty else placeholder_id(turn.id),
        role=turn.role if empty else "assistant",
        timestamp=turn.timestamp,
        reason=reason_for(turn).code if empty else NO_REPLY.code,
        evidence=evidence_for(session, turn, rules, records_completion),
        gap_before=gap_before(session, turn.index),
    )
    if suggester is not None:
        suggestion = suggester(session, found)
        if suggestion is not None:
            found.suggestion, found.suggestion_confidence, found.suggestion_reasons = suggestion[:3]
            found.suggestion_rule = suggestion[3] if len(suggestion) > 3 else None
    return found


def find_empty_turns(
    session: Session,
    rules: DetectionRules = DEFAULT_RULES,
    suggester: Suggester | None = None,
    turns: Sequence[Turn] | None = None,
) -> list[EmptyTurn]:
    """Every empty turn of the session (or of `turns`, a slice of it), in order."""
    # Whether the session records completions is asked once, not once per empty reply: a
    # session with thousands of untimed empty replies (markdown histories) was quadratic.
    if turns is None:
        # (On a compact index the stops come from its columns: only those turns read back.)
        stops = stop_indices(session, rules)
        records = records_completion(session) if stops else None
        return [describe_empty(session, session.turns[index], rules, suggester, records)
                for index in stops]
    chosen = [turn for turn in turns if is_stop(session, turn.index, rules)]
    records = records_completion(session) if chosen else None
    return [describe_empty(session, turn, rules, suggester, records) for turn in chosen]
