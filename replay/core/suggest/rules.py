"""Suggestion rules as one table: the first rule whose label exists and whose test holds wins."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from replay.core.detection.empty import EmptyTurn
from replay.core.session.model import Session, Turn
from replay.core.suggest.human import bare_continuation
from replay.core.suggest.signals import (
    NO_STATS,
    SessionStats,
    Signals,
    SignalsAhead,
    Unsettled,
    session_stats,
)

if TYPE_CHECKING:
    from replay.core.session.labels import LabelSet

LONG_SUMMARY_RATIO = 5.0
"""A following assistant turn this many times the median length may be a context dump..."""

SUMMARY_HEADINGS = 3
"""...when it also has at least this many headings or section names."""

RESUMPTION_GAP = 600.0
"""Seconds of silence before an empty turn that can mean the person came back."""

RESUMPTION_RATIO = 10.0
"""The same silence must also be this many times the session's median gap."""

ABANDON_GAP = 600.0
"""Seconds of silence after an empty assistant turn that suggest the reply just died."""

CONTEXT_COMMANDS = frozenset({"clear", "compact", "reset", "new"})
"""Slash commands that wipe or compress the context."""

ABORT_QUICK = 30.0
"""Seconds into a reply within which the person's stop reads as a reaction to the request
(they saw it go wrong, or had more to say), not to a reply that hung."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One line of the table: suggest `label` with `confidence` when `when` holds."""

    name: str
    """Stable name, saved with annotations so `replay agree --suggester` can count overrules."""
    label: str
    """Label name from the label set."""
    confidence: str
    """low, medium or high."""
    when: Callable[[Signals], bool]
    """Test over the signals of one empty turn."""
    because: str
    """Plain-words reasons, `;`-separated, with `{fact}` fields from `Signals.facts()`."""


def _is_user(s: Signals) -> bool:
    return s.role == "user"


def _is_assistant(s: Signals) -> bool:
    return s.role == "assistant"


def _long_summary(s: Signals) -> bool:
    return s.summary is not None and (
        s.summary.harness
        or (s.summary.ratio >= LONG_SUMMARY_RATIO and s.summary.headings >= SUMMARY_HEADINGS)
    )


UPSET = frozenset({"question-marks", "frustration", "no-reply"})
"""Reactions that make a silence a breakdown rather than an artefact."""


def _upset(s: Signals) -> bool:
    return s.reaction is not None and s.reaction.kind in UPSET


def _long_silence(seconds: float | None, ratio: float) -> bool:
    return seconds is not None and seconds >= RESUMPTION_GAP and ratio >= RESUMPTION_RATIO


def _act(s: Signals, kind: str) -> bool:
    return s.act is not None and s.act.kind == kind


def _reads(s: Signals, kind: str) -> bool:
    return s.reading is not None and s.reading.kind == kind


def _stopped_then_redirected(s: Signals) -> bool:
    """The person stopped the reply soon after it began and then said something new: a
    correction, an added detail, the same request again, a new direction."""
    if not _is_assistant(s) or s.abort is None or s.next is None or not s.next.text:
        return False
    if s.open_for is not None and s.open_for > ABORT_QUICK:
        return False
    if s.next.after is not None and s.next.after >= RESUMPTION_GAP:
        return False  # they came back much later: the stop was not about this request
    return bare_continuation(s.next.text) is None


RULES: tuple[Rule, ...] = (
    # A prompt the harness never sent: no model heard it, so what it meant can only be read
    # from what the person did next.
    Rule("unsent-then-go-on",
         "continue", "medium", lambda s: s.not_sent and _act(s, "go-on"),
         "not sent to the model: aider drops an empty prompt; {act}, so the Enter meant go on"),
    Rule("unsent-then-undo",
         "reflect", "medium", lambda s: s.not_sent and _act(s, "undo"),
         "not sent to the model: aider drops an empty prompt; {act}: a pause to look at the "
         "change, then a step back"),
    Rule("unsent-then-repeat",
         "breakdown", "medium", lambda s: s.not_sent and s.repeat is not None,
         "not sent to the model; the next request repeats {repeat_turn} ({similarity}% alike)"),
    Rule("unsent",
         "other", "medium", lambda s: s.not_sent,
         "not sent to the model: aider drops an empty prompt, so nobody heard it; {act}"),
    Rule("compaction-part",
         "context-reset", "high", lambda s: s.compaction,
         "compaction part"),
    Rule("harness-summary-next",
         "context-reset", "high", lambda s: s.summary is not None and s.summary.harness,
         "the next turn {summary_turn} is the harness's compaction summary"),
    Rule("context-command",
         "context-reset", "medium", lambda s: s.command in CONTEXT_COMMANDS,
         "comes right after the /{command} command"),
    Rule("cut-off-then-upset",
         "breakdown", "medium",
         lambda s: _is_assistant(s) and s.cut_off is not None and _upset(s),
         "the reply was cut off ({cut_off}); the person answered “{reaction}”"),
    Rule("no-reply-then-upset",
         "breakdown", "medium", lambda s: s.no_reply is not None and _upset(s),
         "the request got no reply ({no_reply_events}); the person answered “{reaction}”"),
    Rule("no-reply",
         "artifact", "medium", lambda s: s.no_reply is not None,
         "the request got no reply ({no_reply_events}); {then}"),
    Rule("interrupted",
         "artifact", "high", lambda s: _is_assistant(s) and s.interrupt is not None,
         "{interrupt} by the person ({interrupt_turn}) before it showed anything; {resent}"),
    Rule("command-record",
         "artifact", "medium", lambda s: _is_user(s) and s.command is not None,
         "the harness's record of the /{command} command just before"),
    Rule("harness-output",
         "artifact", "medium", lambda s: _is_user(s) and s.harness is not None,
         "the harness's record of {harness}, not typed by the person"),
    Rule("stopped-then-redirected",
         "breakdown", "medium", _stopped_then_redirected,
         "the person stopped the reply {abort_after} ({abort}); {then}: {redirect}"),
    Rule("error",
         "artifact", "high", lambda s: s.error is not None,
         "error: {error}"),
    Rule("export-cut",
         "artifact", "high", lambda s: _is_assistant(s) and s.export_cut,
         "the last reply holds nothing: the file was saved while it was being written"),
    Rule("unfinished-last",
         "artifact", "high", lambda s: s.no_completion and s.position == "last",
         "last turn of the session; never completed (still being written when saved)"),
    Rule("unfinished",
         "artifact", "medium", lambda s: s.no_completion,
         "assistant reply never completed"),
    Rule("silent-rounds",
         "breakdown", "medium", lambda s: s.silent_rounds >= 2,
         "empty reply number {rounds} in a row, each answered by a complaint that no reply came "
         "or by the same request again (“{next_text}”)"),
    Rule("stalled",
         "artifact", "medium", lambda s: _is_assistant(s) and s.stalled,
         "open for {open_for} with nothing in it; {then}"),
    Rule("reasoned-silently",
         "thinking", "medium", lambda s: _is_assistant(s) and bool(s.reasoning_chars),
         "reasoned for {reasoning} chars but showed nothing"),
    Rule("working",
         "other", "medium",
         # A reasoning block the harness keeps only signed or encrypted is reasoning all the
         # same: such a step is a silent thinking round, as with readable reasoning above.
         lambda s: _is_assistant(s) and bool(s.tools) and not s.hidden_reasoning,
         "called {tools} without a word: the agent at work, nobody fell silent"),
    Rule("empty-pair",
         "artifact", "medium", lambda s: _is_assistant(s) and s.partner is not None,
         "an empty {partner_role} turn sits right beside it: both recorded empty together"),
    Rule("repeat-next",
         "breakdown", "medium", lambda s: s.repeat is not None,
         "the next user message repeats {repeat_turn} ({similarity}% alike)"),
    Rule("confused-next",
         "breakdown", "medium", lambda s: s.confused is not None,
         "the next user message asks “{confused}”: the silence confused them"),
    Rule("upset-next",
         "breakdown", "medium", _upset,
         "the person's next message reads “{reaction}”"),
    Rule("long-gap-before",
         "resumption", "medium", lambda s: _long_silence(s.gap_before, s.gap_before_ratio),
         "gap before: {gap_before} ({gap_before_ratio}x the median gap); {left_open}; {reading}"),
    Rule("plan-before",
         "approval", "medium", lambda s: _is_user(s) and s.ending is not None and s.ending.plan,
         "the previous assistant turn states a plan; the person said nothing; {reading}"),
    Rule("context-dump-next",
         "context-reset", "medium", lambda s: _is_user(s) and _long_summary(s),
         "the reply {summary_turn} is {summary_ratio}x the median length with {headings} "
         "headings: a context dump"),
    Rule("reply-asks",
         "other", "low", lambda s: _is_user(s) and _reads(s, "asks"),
         "{reading}: the model found nothing in it to act on; {left_open}"),
    Rule("question-before",
         "approval", "low",
         lambda s: _is_user(s) and s.ending is not None and s.ending.question,
         "the previous assistant turn asks a question; the person said nothing; {reading}"),
    Rule("reply-carries-on",
         "continue", "medium", lambda s: _is_user(s) and _reads(s, "carries-on"),
         "{reading}: the model took the silence as go on"),
    Rule("bare-go-on-next",
         "continue", "medium", lambda s: _is_user(s) and s.continue_word is not None,
         "the next user message is a bare “{continue_word}”"),
    Rule("encrypted-reasoning",
         "thinking", "medium",
         lambda s: _is_assistant(s) and not s.reasoning_chars and s.hidden_reasoning > 0,
         "reasoned ({hidden} encrypted) but showed nothing"),
    Rule("hidden-reasoning",
         "thinking", "low", lambda s: _is_assistant(s) and s.reasoning_chars == 0,
         "a reasoning block with hidden (signed or encrypted) content and nothing shown"),
    Rule("died-after",
         "artifact", "low",
         lambda s: _is_assistant(s) and _long_silence(s.gap_after, s.gap_after_ratio),
         "nothing happened for {gap_after} after it: the reply seems to have died"),
    Rule("assistant-blank",
         "artifact", "low", _is_assistant,
         "an assistant turn that shows no words and no reasoning"),
    Rule("user-blank",
         "continue", "low", _is_user,
         "a user turn with nothing in it, read as a bare go-on; {reading}"),
    Rule("fallback",
         "other", "low", lambda s: True,
         "no signal points anywhere"),
)
"""The rules in priority order; `suggest` returns the first applicable one."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested interpretation of one empty turn and why."""

    label: str
    """Label name."""
    confidence: str
    """low, medium or high."""
    reasons: list[str] = field(default_factory=list)
    """Plain words behind it, one phrase each."""
    rule: str = ""
    """Name of the rule that gave it."""

    def as_tuple(self) -> tuple[str, str, list[str], str]:
        """The (label, confidence, reasons, rule) shape a `Suggester` returns."""
        return self.label, self.confidence, list(self.reasons), self.rule


def _index_of(empty_turn: EmptyTurn | Turn | int) -> int:
    return empty_turn if isinstance(empty_turn, int) else empty_turn.index


def label_names(labels: Collection[str] | LabelSet | None) -> frozenset[str] | None:
    """The names of an active label set (a `LabelSet` or plain names); None means every label."""
    if labels is None:
        return None
    # Imported here: a scan suggests every label, and label sets bring the TOML parser.
    from replay.core.session.labels import LabelSet

    if isinstance(labels, LabelSet):
        return frozenset(labels.names)
    return frozenset(labels)


def first_rule(signals: Signals, labels: Collection[str] | None = None,
               rules: tuple[Rule, ...] = RULES) -> Rule | None:
    """The first rule whose label is in `labels` (all when None) and whose test holds."""
    for rule in rules:
        if labels is not None and rule.label not in labels:
            continue
        if rule.when(signals):
            return rule
    return None


def suggest(session: Session, empty_turn: EmptyTurn | Turn | int,
            labels: Collection[str] | LabelSet | None = None) -> Suggestion | None:
    """Suggest a label for an empty turn; None when no rule with an active label applies.

    Only the signals the rules read on the way to the first that applies are read
    (`SignalsAhead`, with the session's own figures): the same answer as
    `suggest_from(read_signals(session, index), labels)`."""
    index = _index_of(empty_turn)
    return suggest_from(SignalsAhead(session, index, session_stats(session)),
                        label_names(labels))


def suggest_ahead(session: Session, index: int, stats: SessionStats = NO_STATS,
                  labels: Collection[str] | None = None) -> Suggestion | None:
    """`suggest_from(read_signals(session, index, stats), labels)`, reading only the signals
    the rules ask for on the way to the first that applies (and its reasons name).

    With `NO_STATS` (a streamed scan, before the session is read to its end), None when the
    answer depends on a session-wide figure: the signals must then be read whole
    (`read_signals`) and judged once the figures are known (`Signals.settled`).
    """
    try:
        return suggest_from(SignalsAhead(session, index, stats), labels)
    except Unsettled:
        return None


def suggest_from(signals: Signals, labels: Collection[str] | None = None) -> Suggestion | None:
    """The suggestion of the first rule that applies to these signals (labels as names)."""
    rule = first_rule(signals, labels)
    if rule is None:
        return None
    facts = signals.lazy_facts()  # only the facts its reasons name are put in words
    # Split the template, not the filled text: a quoted message may hold a ";" of its own.
    reasons = [phrase.format_map(facts).strip() for phrase in rule.because.split(";")]
    return Suggestion(rule.label, rule.confidence, [reason for reason in reasons if reason],
                      rule.name)
