"""Signals around an empty turn: small pure functions of (session, index) that rules read.

Each signal looks only at the turn itself and a bounded window of neighbours, so a session of
100,000 turns costs the same per empty turn as a short one. Session-wide figures (median gap,
median assistant text length) are computed once per session and cached without keeping the
session alive.
"""

from __future__ import annotations

import re
import weakref
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import TypeVar

from replay.core.detection.empty import (
    Interruption,
    NoReply,
    format_duration,
    format_size,
    interruption,
    is_empty,
    is_visible,
    missing_reply,
)
from replay.core.detection.empty import gap_before as _detect_gap_before
from replay.core.session import whole_text
from replay.core.session.harness import is_harness_text, wrapper_of
from replay.core.session.model import MARKER_KINDS, Kind, Session, Turn, TurnColumns
from replay.core.session.text import empty_wrapper_names, strip_empty_wrappers
from replay.core.suggest.human import (
    NextAct,
    Reading,
    bare_continuation,
    export_cut,
    next_act,
    not_sent,
    person_abort,
    redirect_kind,
    reply_reading,
)
from replay.core.suggest.memo import MISSING, memo_of
from replay.core.suggest.patterns import LazyPattern

_Answer = TypeVar("_Answer")

WINDOW = 40
"""How many turns either side a neighbour signal looks at."""

USER_LOOKBACK = 10
"""How many earlier user messages a repeated instruction is compared with."""

USER_LOOKBACK_TURNS = 500
"""How far back (in turns) those earlier user messages are searched for."""

REPEAT_THRESHOLD = 0.6
"""Similarity at or above which the next user message counts as a repeat."""

REPEAT_MIN_WORDS = 4
"""Shorter messages ("continue", "yes") are not instructions that can be repeated."""

TEXT_SAMPLE = 400
"""Characters of a message compared for similarity: the start carries the instruction, and
this is what a shortened turn keeps in memory, so no comparison reads the file again."""


# ---------------------------------------------------------------- session-wide figures


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Figures computed once per session and shared by every empty turn of it."""

    turns: int
    """Number of turns when the figures were computed."""
    median_gap: float | None
    """Median seconds between consecutive timed turns."""
    median_text: float | None
    """Median length in characters of assistant turns that have text."""
    records_completion: bool
    """Some assistant turn carries a completion time, so a missing one means something."""


_STATS: weakref.WeakKeyDictionary[Session, SessionStats] = weakref.WeakKeyDictionary()


def _text_chars(turn: Turn) -> int:
    return sum(part.text_length for part in turn.parts if part.kind == Kind.TEXT)


class StatsTally:
    """Session-wide figures gathered turn by turn, in order (a streamed scan keeps no session
    whole): a float or two per turn, never the turns."""

    def __init__(self) -> None:
        self.turns = 0
        self._gaps = array("d")
        self._lengths = array("q")
        self._previous: float | None = None
        self._records_completion = False
        self.first: float | None = None
        """The time of the first timed turn (`Session.started`), once one is counted."""

    def add(self, turn: Turn) -> None:
        """Count the next turn of the session."""
        self.turns += 1
        if turn.time is not None:
            if self._previous is not None:
                self._gaps.append(max(0.0, turn.time - self._previous))
            else:
                self.first = turn.time
            self._previous = turn.time
        if turn.role == "assistant":
            self._records_completion = self._records_completion or turn.completed is not None
            chars = 0
            for part in turn.parts:  # `_text_chars`, inline: this runs once per turn
                if part.kind == Kind.TEXT:
                    chars += part.text_length
            if chars:
                self._lengths.append(chars)

    def add_values(self, time: float | None, assistant: bool, completed: bool,
                   chars: int) -> None:
        """Count the next turn from its figures (`add` without the turn: an index's columns)."""
        self.turns += 1
        if time is not None:
            if self._previous is not None:
                self._gaps.append(max(0.0, time - self._previous))
            else:
                self.first = time
            self._previous = time
        if assistant:
            self._records_completion = self._records_completion or completed
            if chars:
                self._lengths.append(chars)

    def stats(self) -> SessionStats:
        """The figures of the turns counted so far."""
        return SessionStats(
            turns=self.turns,
            median_gap=_median(self._gaps) if self._gaps else None,
            median_text=_median(self._lengths) if self._lengths else None,
            records_completion=self._records_completion,
        )


def _median(values: Iterable[float]) -> float:
    """`statistics.median`, as it computes it (importing `statistics` costs every start of
    replay a few milliseconds, for this one function)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _compute_stats(session: Session) -> SessionStats:
    tally = StatsTally()
    turns = session.turns
    if isinstance(turns, TurnColumns):
        turns.tally(tally.add_values)
        return tally.stats()
    for turn in turns:
        tally.add(turn)
    return tally.stats()


def session_stats(session: Session) -> SessionStats:
    """Cached session-wide figures, refreshed when a followed session has grown by a tenth."""
    stats = _STATS.get(session)
    grown = stats is not None and len(session.turns) > stats.turns + max(50, stats.turns // 10)
    if stats is None or grown:
        stats = _compute_stats(session)
        _STATS[session] = stats
    return stats


# ---------------------------------------------------------------- text helpers


def _harness(turn: Turn, text: str) -> bool:
    """Harness-written text in a user turn: never a person's words."""
    return turn.role == "user" and is_harness_text(text)


def _words_of(session: Session, turn: Turn, *, full: bool, harness: bool = False) -> str:
    """What the person or model wrote in a turn: typed text only, empty wrappers removed, and
    (unless `harness`) without the harness's own lines (interrupts, command output).

    A text left in its file (`lifted`) gives what it would give held in memory: the head a reader
    keeps of a text it shortened (`whole_text.as_held`: with `full` False a pasted text's
    words past its head are not the turn's), the whole text (read a run at a time) of one it
    keeps whole."""
    parts = session.full_parts(turn) if full else turn.parts
    texts = [
        whole_text.decoded(text) for text in (whole_text.as_held(part.text) for part in parts
                                              if part.kind == Kind.TEXT and not part.synthetic
                                              and part.text)
        if harness or not _harness(turn, text)
    ]
    return strip_empty_wrappers("\n".join(texts)).strip()


def _has_words(turn: Turn) -> bool:
    return any(
        part.kind == Kind.TEXT and not part.synthetic and is_visible(part)
        and not _harness(turn, part.text)
        for part in turn.parts
    )


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())[:TEXT_SAMPLE]


_WORD = LazyPattern(r"[a-z0-9_./-]+")


class _Prepared:
    """What `similarity` compares of one message, made once however often it is compared."""

    __slots__ = ("blank", "words", "distinct", "counts")

    def __init__(self, text: str) -> None:
        sample = _normalise(text)
        self.blank = not sample
        self.words: list[str] = _WORD.findall(sample)
        self.distinct = set(self.words)
        self.counts: Counter[str] | None = None

    def counted(self) -> Counter[str]:
        """The words with their repeats (made the first time a comparison needs them)."""
        if self.counts is None:
            self.counts = Counter(self.words)
        return self.counts


def similarity(first: str, second: str, floor: float = 0.0) -> float:
    """How alike two messages are (0 to 1): the better of word-sequence ratio and word overlap.

    Scores below `floor` may come back lower than exact: the costly sequence match is skipped
    when its cheap upper bound cannot reach `floor`.
    """
    return _similar(_Prepared(first), _Prepared(second), floor)


def _similar(first: _Prepared, second: _Prepared, floor: float) -> float:
    """`similarity` of two prepared messages."""
    if first.blank or second.blank:
        return 0.0
    # Words, not characters: two unrelated sentences share many letters but few words.
    words_a, words_b = first.words, second.words
    set_a, set_b = first.distinct, second.distinct
    shared = set_a & set_b
    union = len(set_a) + len(set_b) - len(shared)
    jaccard = len(shared) / union if union else 0.0
    if jaccard >= 1.0:
        return jaccard
    # `SequenceMatcher.quick_ratio` (twice the words the two share, counted with repeats,
    # over both lengths) without building the matcher: most pairs stop here.
    length = len(words_a) + len(words_b)
    if length:
        counts_a, counts_b = first.counted(), second.counted()
        common = 0
        for word in shared:
            common += min(counts_a[word], counts_b[word])
        bound = 2.0 * common / length
    else:
        bound = 1.0
    if bound <= jaccard or bound < floor:
        return jaccard
    from difflib import SequenceMatcher  # here: most scans never get this far

    matcher = SequenceMatcher(None, words_a, words_b, autojunk=False)
    return max(matcher.ratio(), jaccard)


class _Said:
    """A user turn's words, as the signals about the next message read them."""

    __slots__ = ("text", "enough", "_prepared")

    def __init__(self, text: str) -> None:
        self.text = text
        """`_words_of` the turn (typed text, harness lines and empty wrappers left out)."""
        self.enough = len(text.split()) >= REPEAT_MIN_WORDS
        """Long enough to be an instruction that can be repeated."""
        self._prepared: _Prepared | None = None

    def prepared(self) -> _Prepared:
        """The words as `similarity` compares them."""
        if self._prepared is None:
            self._prepared = _Prepared(self.text)
        return self._prepared


SAID_KEPT = 4000
"""Characters of a message's words at most for them to be kept (a pasted file is read
again when asked for: what is kept stays small)."""


def _said(session: Session, turn: Turn) -> _Said:
    """The words of a user turn, kept for a settled turn (see `memo`)."""
    memo = memo_of(session)
    index = turn.index
    settled = index < memo.settled() and 0 <= index
    if settled:
        found = memo.answers.get(("said", index))
        if found is not MISSING:
            return found  # type: ignore[no-any-return]
    said = _Said(_words_of(session, turn, full=False))
    if settled and len(said.text) <= SAID_KEPT:
        memo.answers.put(("said", index), said)
    return said


def _looks_ahead_settled(session: Session, index: int) -> bool:
    """Every turn a look ahead from `index` reads (`WINDOW` turns) is settled: an answer about
    `index` that reads no further may be kept."""
    return 0 <= index and index + 1 + WINDOW <= memo_of(session).settled()


def _kept_look_ahead(session: Session, index: int, kind: str,
                     compute: Callable[[Session, int], _Answer]) -> _Answer:
    """`compute(session, index)`, kept in the session's memo under `(kind, index)` once every
    turn its look ahead reads is settled (a later call then reads it back)."""
    keep = _looks_ahead_settled(session, index)
    if keep:
        found = memo_of(session).answers.get((kind, index))
        if found is not MISSING:
            return found  # type: ignore[no-any-return]
    answer = compute(session, index)
    if keep:
        memo_of(session).answers.put((kind, index), answer)
    return answer


# ---------------------------------------------------------------- structural signals


def _turn(session: Session, index: int) -> Turn:
    return session.turns[index]


def compaction(session: Session, index: int) -> bool:
    """The turn holds a compaction marker or request, or was written by the compaction agent."""
    turn = _turn(session, index)
    return turn.agent == "compaction" or any(p.kind == Kind.COMPACTION for p in turn.parts)


def error_name(session: Session, index: int) -> str | None:
    """The name of the error attached to the turn (`MessageAbortedError`), if any."""
    for part in _turn(session, index).parts:
        if part.kind == Kind.ERROR:
            return part.name or part.text or "error"
    return None


def no_completion(session: Session, index: int) -> bool:
    """An assistant turn without a completion time in a session that records them."""
    turn = _turn(session, index)
    return (
        turn.role == "assistant"
        and turn.completed is None
        and session_stats(session).records_completion
    )


def reasoning_chars(session: Session, index: int) -> int | None:
    """Characters of reasoning in the turn; None when it has no reasoning part at all."""
    parts = [p for p in _turn(session, index).parts if p.kind == Kind.REASONING]
    if not parts:
        return None
    return sum(part.text_length for part in parts)


def markers_only(session: Session, index: int) -> bool:
    """The turn holds only step, snapshot or retry markers."""
    kinds = {part.kind for part in _turn(session, index).parts}
    return bool(kinds) and kinds <= MARKER_KINDS


def no_parts(session: Session, index: int) -> bool:
    """The turn has no parts at all."""
    return not _turn(session, index).parts


def empty_wrapper(session: Session, index: int) -> str | None:
    """The name of the first empty wrapper tag the turn holds (`conversation_data`)."""
    for part in _turn(session, index).parts:
        if part.kind == Kind.TEXT:
            names = empty_wrapper_names(part.text)
            if names:
                return names[0]
    return None


# ---------------------------------------------------------------- temporal signals


def median_gap(session: Session, index: int) -> float | None:
    """The session's median gap between consecutive turns, in seconds."""
    return session_stats(session).median_gap


def gap_before(session: Session, index: int) -> float | None:
    """Seconds of silence between the end of the previous timed turn and this one."""
    return _detect_gap_before(session, index)


def gap_after(session: Session, index: int) -> float | None:
    """Seconds between the end of this turn and the next timed turn."""
    turn = _turn(session, index)
    end = turn.completed if turn.completed is not None else turn.time
    if end is None:
        return None
    for following in session.turns[index + 1 : index + 1 + WINDOW]:
        if following.time is not None:
            return max(0.0, following.time - end)
    return None


# ---------------------------------------------------------------- neighbour signals


@dataclass(frozen=True, slots=True)
class Ending:
    """How the assistant turn just before an empty turn ended."""

    index: int
    """Index of that assistant turn."""
    plan: bool
    """It ends by stating what it will do next."""
    question: bool
    """It ends with a question."""


_NUMBERED = LazyPattern(r"^\s*\d{1,2}[.)]\s+\S", re.MULTILINE)
_PLAN_WORDS = LazyPattern(
    r"\b(?:I'll|I will|I'm going to|I am going to|I plan to|I propose|I'd like to|"
    r"Next,? I(?:'ll| will)|Let me(?! know)|Plan:|Next steps?:|Here's the plan|"
    r"The plan is|My plan)",
    re.IGNORECASE,
)
_TRAILING_DECORATION = LazyPattern(r"[\s*_`)\]\"'”’]+$")
PLAN_TAIL = 500
"""How much of the end of a message is searched for a plan."""


def _ending_of(text: str) -> tuple[bool, bool]:
    tail = text[-PLAN_TAIL:]
    question = _TRAILING_DECORATION.sub("", tail).endswith("?")
    plan = len(_NUMBERED.findall(tail)) >= 2 or _PLAN_WORDS.search(tail) is not None
    return plan, question


def previous_ending(session: Session, index: int) -> Ending | None:
    """The plan or question the assistant left just before this turn, when it ended in words.

    Only the nearest non-empty turn before counts, and only when its last visible part is
    text: an assistant turn that ends with a tool call is still working, not waiting.
    """
    for position in range(index - 1, max(-1, index - 1 - WINDOW), -1):
        turn = session.turns[position]
        visible = [part for part in turn.parts if is_visible(part)]
        if not visible:
            continue
        if turn.role != "assistant" or visible[-1].kind != Kind.TEXT:
            return None
        plan, question = _ending_of(_words_of(session, turn, full=True))
        return Ending(position, plan, question) if plan or question else None
    return None


@dataclass(frozen=True, slots=True)
class Summary:
    """The next assistant turn with words, measured as a possible context summary."""

    index: int
    """Index of that assistant turn."""
    ratio: float
    """Its text length over the session's median assistant text length."""
    headings: int
    """Markdown headings and summary section names (Goal, Progress, Next steps...) in it."""
    harness: bool
    """The harness marks it as a compaction summary."""
    chars: int = field(default=0, compare=False)
    """Its text length, from which `ratio` is taken."""


_HEADING = LazyPattern(
    r"^(?:\s{0,3}#{1,6}\s+\S"
    r"|\s*\*\*[^*\n]{2,80}\*\*:?\s*$"
    r"|\s*(?:goals?|constraints|progress|key decisions|decisions|(?:immediate )?next steps"
    r"|critical context|relevant files|status|discoveries|instructions|accomplished"
    r"|current state|summary|open questions)\s*:?\s*$)",
    re.IGNORECASE | re.MULTILINE,
)


def count_headings(text: str) -> int:
    """Markdown headings, bold title lines and bare section names in a text."""
    return len(_HEADING.findall(text))


def next_summary(session: Session, index: int,
                 stats: SessionStats | None = None) -> Summary | None:
    """The next assistant turn with words, unless the person speaks first."""
    stats = stats or session_stats(session)
    found = _summary_turn(session, index)
    if found is None:
        return None
    turn, chars, headings = found
    ratio = chars / stats.median_text if stats.median_text else 1.0
    return Summary(turn.index, ratio, headings, turn.is_summary, chars)


def _summary_turn(session: Session, index: int) -> tuple[Turn, int, int] | None:
    """`next_summary`'s turn, its text length and headings (what the session-wide figures
    do not change)."""
    for turn in session.turns[index + 1 : index + 1 + WINDOW]:
        if turn.role == "user" and _has_words(turn):
            return None
        if turn.role != "assistant" or not _has_words(turn):
            continue
        return turn, _text_chars(turn), count_headings(_words_of(session, turn, full=True))
    return None


@dataclass(frozen=True, slots=True)
class Repeat:
    """The next user message says again what an earlier one said."""

    index: int
    """Index of the next user turn."""
    earlier: int
    """Index of the earlier user turn it repeats."""
    similarity: float
    """How alike the two are, 0 to 1."""


def _next_user(session: Session, index: int) -> Turn | None:
    keep = _looks_ahead_settled(session, index)
    if keep:
        found = memo_of(session).answers.get(("next", index))
        if found is not MISSING:
            return None if found is None else session.turns[found]
    following = None
    for turn in session.turns[index + 1 : index + 1 + WINDOW]:
        if turn.role == "user" and _has_words(turn):
            following = turn
            break
    if keep:
        memo_of(session).answers.put(("next", index),
                                     None if following is None else following.index)
    return following


def _user_with_words(turn: Turn) -> bool:
    return turn.role == "user" and _has_words(turn)


def _earlier_users(session: Session, index: int) -> list[int]:
    """The last `USER_LOOKBACK` user turns with words before `index` (at most
    `USER_LOOKBACK_TURNS` back), nearest first: from the memo's log for settled turns."""
    low = max(0, index - USER_LOOKBACK_TURNS)
    memo = memo_of(session)
    middle = max(low, min(index, memo.settled()))
    turns = session.turns
    nearest = [position for position in range(index - 1, middle - 1, -1)
               if _user_with_words(turns[position])]
    if len(nearest) < USER_LOOKBACK and middle > low:
        nearest += memo.users.nearest(turns, middle, low, USER_LOOKBACK - len(nearest),
                                      _user_with_words)
    return nearest[:USER_LOOKBACK]


def repeated_instruction(session: Session, index: int) -> Repeat | None:
    """The next user message when it repeats one of the last few user messages before."""
    return _kept_look_ahead(session, index, "repeat", _repeat)


def _repeat(session: Session, index: int) -> Repeat | None:
    following = _next_user(session, index)
    if following is None:
        return None
    said = _said(session, following)
    if not said.enough:
        return None
    best: Repeat | None = None
    turns = session.turns
    for position in _earlier_users(session, index):
        earlier = _said(session, turns[position])
        if earlier.enough:
            score = _similar(said.prepared(), earlier.prepared(), REPEAT_THRESHOLD)
            if score >= REPEAT_THRESHOLD and (best is None or score > best.similarity):
                best = Repeat(following.index, position, score)
                if score >= 1.0:
                    break  # nothing farther back can be more alike (the nearest one wins)
    return best


def empty_partner(session: Session, index: int) -> int | None:
    """Index of an adjacent empty turn of the other role (assistant then user, or vice versa)."""
    role = _turn(session, index).role
    if not is_empty(_turn(session, index)):
        return None
    for position in (index + 1, index - 1):
        if 0 <= position < len(session.turns):
            other = session.turns[position]
            if other.role in ("user", "assistant") and other.role != role and is_empty(other):
                return position
    return None


def position(session: Session, index: int) -> str | None:
    """`first` or `last` when the turn opens or closes the conversation, else None."""
    conversation = ("user", "assistant")
    if not any(t.role in conversation for t in session.turns[max(0, index - WINDOW) : index]):
        if index < WINDOW:
            return "first"
    if index == len(session.turns) - 1:
        return "last"
    return None


def next_user_continues(session: Session, index: int) -> str | None:
    """The next user message's words when it is a bare continuation ("continue", "go on")."""
    following = _next_user(session, index)
    if following is None:
        return None
    return bare_continuation(_said(session, following).text)


_CONFUSED = LazyPattern(
    r"^\W*(?:hello|hi|hey)\W*\?|\b(?:are you (?:still )?there|still there|you there|anyone there|"
    r"what happened|did you (?:stop|freeze|crash)|you stopped|no (?:answer|reply|response)|"
    r"(?:nothing|empty) (?:came back|happened|reply|response)|why (?:did you stop|no answer)|"
    r"hello\?)",
    re.IGNORECASE,
)


def next_user_confused(session: Session, index: int) -> str | None:
    """The phrase in the next user message that checks whether anyone is there ("hello?")."""
    following = _next_user(session, index)
    if following is None:
        return None
    match = _CONFUSED.search(_said(session, following).text[:300])
    return " ".join(match.group(0).split()) if match else None


_COMMAND = LazyPattern(r"<command-name>\s*/?([\w:-]+)\s*</command-name>|^\s*/([\w:-]+)\s*$")


def command_before(session: Session, index: int) -> str | None:
    """The slash command (`clear`, `compact`) in the user turn just before, if there is one."""
    for turn in reversed(session.turns[max(0, index - 3) : index]):
        if turn.role != "user":
            break  # the agent spoke since: the command is not what this turn records
        match = _COMMAND.search(_words_of(session, turn, full=False, harness=True))
        if match:
            return match.group(1) or match.group(2)
    return None


def harness_wrapper(session: Session, index: int) -> str | None:
    """What the harness recorded when an empty user turn is one of its wrappers (bash-mode or
    local command output), in plain words."""
    turn = _turn(session, index)
    if turn.role != "user":
        return None
    for part in turn.parts:
        if part.kind == Kind.TEXT:
            family = wrapper_of(part.text)
            if family is not None:
                return family.what
    return None


def tool_names(session: Session, index: int) -> tuple[str, ...]:
    """Names of the tools the turn called (a tool-only turn under the optional rule)."""
    names = (p.name or "tool" for p in _turn(session, index).parts
             if p.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT))
    return tuple(dict.fromkeys(names))


def interrupted(session: Session, index: int) -> Interruption | None:
    """Claude Code's interrupt line right after the reply: the person stopped it."""
    return interruption(session, index)


def reasoning_hidden(session: Session, index: int) -> int:
    """Bytes of encrypted or redacted reasoning in the turn (the model reasoned unseen)."""
    return sum(p.hidden for p in _turn(session, index).parts if p.kind == Kind.REASONING)


def open_for(session: Session, index: int) -> float | None:
    """Seconds between an assistant reply's creation and its completion."""
    turn = _turn(session, index)
    if turn.role != "assistant" or turn.time is None or turn.completed is None:
        return None
    return max(0.0, turn.completed - turn.time)


@dataclass(frozen=True, slots=True)
class NextMessage:
    """The person's next message after an empty turn, as the banner shows it."""

    index: int
    """Index of that user turn."""
    text: str
    """Its words, harness lines left out."""
    after: float | None
    """Seconds from the end of the empty turn to it."""


def next_message(session: Session, index: int) -> NextMessage | None:
    """What the person wrote next, if they wrote anything within the window."""
    following = _next_user(session, index)
    if following is None:
        return None
    turn = _turn(session, index)
    end = turn.completed if turn.completed is not None else turn.time
    after = following.time - end if following.time is not None and end is not None else None
    return NextMessage(following.index, _said(session, following).text, after)


# What a person writes when the reply did not come or went wrong, in the languages agent users
# most often write in. Short on purpose: punctuation and repetition carry the rest.
_NO_REPLY = LazyPattern(
    r"\b(?:no (?:reply|answer|response|output)|didn'?t (?:answer|reply|respond)|"
    r"(?:you )?(?:said|wrote) nothing|nothing came back|empty (?:reply|response|answer)|"
    r"where(?:'s| is) (?:the|your) (?:reply|answer|response)|"
    r"sin respuesta|no (?:respondiste|contestas|responde)|no hay respuesta|"
    r"pas de réponse|aucune réponse|tu ne réponds|keine antwort|antwortest nicht|"
    r"sem resposta|não respondeu|nenhuma resposta|nessuna risposta|non rispondi)\b"
    r"|нет ответа|не отвечаешь|没有回复|没回复|没反应|没有回答|不回答"
    r"|返事がない|応答なし|返信がない",
    re.IGNORECASE,
)
_FRUSTRATION = LazyPattern(
    r"\b(?:wtf|what the (?:hell|fuck)|fuck\w*|shit|damn(?:it)?|seriously|come on|useless|"
    r"stupid|ridiculous|are you kidding|"
    r"joder|mierda|en serio|otra vez|no funciona|putain|merde|sérieux|ça marche pas|"
    r"verdammt|scheiße|scheisse|ernsthaft|schon wieder|porra|caralho|de novo|"
    r"cazzo|sul serio|di nuovo)\b"
    r"|\bagain\s*[?!]|блин|чёрт|черт|опять|серьёзно|какого|搞什么|怎么回事|什么鬼|卧槽|ふざけ|なんで",
    re.IGNORECASE,
)
_MARKS = LazyPattern(r"[?？!！]")
_LETTERS = LazyPattern(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class Reaction:
    """How the person's next message reads: puzzled, angry, or missing a reply."""

    kind: str
    """`no-reply` (a complaint that nothing came), `frustration` or `question-marks`."""
    quote: str
    """The start of that message, for the reason text."""


def _reaction_of(text: str) -> str | None:
    sample = text[:400]
    if _NO_REPLY.search(sample):
        return "no-reply"
    letters = _LETTERS.findall(sample)
    marks = len(_MARKS.findall(sample))
    if marks >= 2 and (len(letters) <= 3 or sample.rstrip().endswith(("???", "？？？"))):
        return "question-marks"
    if _FRUSTRATION.search(sample):
        return "frustration"
    upper = sum(1 for c in letters if c.isupper())
    if len(letters) >= 12 and upper / len(letters) >= 0.7:
        return "frustration"  # shouting, in any alphabet with case
    return None


def reaction(session: Session, index: int) -> Reaction | None:
    """The person's next message when it is a row of question marks, an angry line or a
    complaint that no reply came."""
    return _kept_look_ahead(session, index, "reaction", _reaction)


def _reaction(session: Session, index: int) -> Reaction | None:
    following = _next_user(session, index)
    if following is None:
        return None
    text = _said(session, following).text
    kind = _reaction_of(text)
    if kind is None:
        return None
    quote = " ".join(text.split())
    return Reaction(kind, quote[:60] + ("…" if len(quote) > 60 else ""))


def _shows_nothing(turn: Turn) -> bool:
    return turn.role == "assistant" and is_empty(turn)


def silent_rounds(session: Session, index: int) -> int:
    """Empty replies in a row, up to this one, each answered by a complaint that no reply came
    or by the same request again (0 when this one is not)."""
    def answered_badly(position: int) -> bool:
        found = reaction(session, position)
        return (found is not None and found.kind == "no-reply") or \
            repeated_instruction(session, position) is not None

    if not _shows_nothing(_turn(session, index)) or not answered_badly(index):
        return 0
    count = 1
    seen_user = 0
    for position in range(index - 1, max(-1, index - 1 - WINDOW), -1):
        turn = session.turns[position]
        if turn.role == "user" and _has_words(turn):
            seen_user += 1
            if seen_user > 1:
                break  # the previous empty reply must be the one that complaint answered
            continue
        if _shows_nothing(turn):
            if not answered_badly(position):
                break
            count += 1
            seen_user = 0
        elif turn.role == "assistant":
            break
    return count


# ---------------------------------------------------------------- all signals together


@dataclass(frozen=True, slots=True)
class Signals:
    """Every signal around one empty turn, as the rules read them."""

    index: int
    role: str
    compaction: bool
    error: str | None
    no_completion: bool
    reasoning_chars: int | None
    markers_only: bool
    no_parts: bool
    wrapper: str | None
    median_gap: float | None
    gap_before: float | None
    gap_after: float | None
    ending: Ending | None
    summary: Summary | None
    repeat: Repeat | None
    partner: int | None
    position: str | None
    continue_word: str | None
    confused: str | None
    command: str | None
    harness: str | None = None
    interrupt: Interruption | None = None
    hidden_reasoning: int = 0
    open_for: float | None = None
    next: NextMessage | None = None
    reaction: Reaction | None = None
    silent_rounds: int = 0
    tools: tuple[str, ...] = ()
    no_reply: NoReply | None = None

    @property
    def cut_off(self) -> str | None:
        """How the reply was cut short, in words, when it was."""
        if self.interrupt is not None:
            return f"{self.interrupt.kind} by the person"
        if self.error is not None:
            return f"error: {self.error}"
        if self.stalled:
            return f"open for {format_duration(self.open_for or 0.0)} with nothing in it"
        if self.no_completion:
            return "never completed"
        return None

    @property
    def stalled(self) -> bool:
        """An assistant reply that stayed open for long and ended with nothing."""
        return (self.open_for is not None and self.open_for >= STALL_SECONDS
                and not self.tools)

    unfinished: bool = False
    """An assistant turn without a completion time (`no_completion` when the session records
    them)."""
    not_sent: bool = False
    """The harness never sent this prompt to the model (Aider drops empty input)."""
    act: NextAct | None = None
    """What the person did next, for a prompt nobody heard."""
    reading: Reading | None = None
    """How the next reply took an empty message the model received."""
    abort: str | None = None
    """The error of a reply the person stopped (`MessageAbortedError`, `KeyboardInterrupt`)."""
    export_cut: bool = False
    """The file was saved while this (last) reply was being written."""

    @property
    def left_open(self) -> str:
        """What the agent left open just before, in words ("" when nothing)."""
        ending = self.ending
        if ending is None:
            return ""
        if ending.question:
            return f"the agent's last words #{ending.index + 1} asked a question"
        return f"the agent's last words #{ending.index + 1} stated a plan"

    def settled(self, stats: SessionStats) -> Signals:
        """These signals with the session-wide figures replaced by `stats`: a streamed scan
        reads the neighbours while they pass and learns the session's medians at its end."""
        summary = self.summary
        if summary is not None:
            ratio = summary.chars / stats.median_text if stats.median_text else 1.0
            summary = replace(summary, ratio=ratio)
        # `dataclasses.replace` without its walk over the fields in Python (once per empty
        # turn of a streamed scan): every value read at once, three of them replaced.
        values = list(_SIGNAL_VALUES(self))
        values[_MEDIAN_GAP] = stats.median_gap
        values[_SUMMARY] = summary
        values[_NO_COMPLETION] = self.unfinished and stats.records_completion
        return Signals(*values)

    @property
    def gap_before_ratio(self) -> float:
        """Gap before over the median gap (0 when either is unknown)."""
        gap = self.gap_before
        return 0.0 if gap is None else _ratio(gap, self.median_gap)

    @property
    def gap_after_ratio(self) -> float:
        """Gap after over the median gap (0 when either is unknown)."""
        gap = self.gap_after
        return 0.0 if gap is None else _ratio(gap, self.median_gap)

    def facts(self) -> dict[str, str]:
        """Signal values in plain words, for the `because` templates of rules."""
        return {name: fact(self) for name, fact in _FACTS.items()}

    def lazy_facts(self) -> dict[str, str]:
        """`facts()`, each made when first read: a rule's reasons name a few of them."""
        return _LazyFacts(self)


_SIGNAL_NAMES = tuple(item.name for item in fields(Signals))
_SIGNAL_VALUES = attrgetter(*_SIGNAL_NAMES)
"""Every field of a `Signals` at once, in order (as its constructor takes them)."""
_MEDIAN_GAP = _SIGNAL_NAMES.index("median_gap")
_SUMMARY = _SIGNAL_NAMES.index("summary")
_NO_COMPLETION = _SIGNAL_NAMES.index("no_completion")


_READ_AS = {"carries-on": "carries on with the work", "asks": "asks what was wanted",
            "restarts": "starts over"}


STALL_SECONDS = 600.0
"""An empty reply open this long before completing has stalled."""


_FACTS: dict[str, Callable[[Signals], str]] = {
    "role": lambda s: s.role,
    "error": lambda s: s.error or "",
    "reasoning": lambda s: f"{s.reasoning_chars or 0:,}",
    "wrapper": lambda s: s.wrapper or "",
    "gap_before": lambda s: format_duration(s.gap_before or 0.0),
    "gap_before_ratio": lambda s: f"{s.gap_before_ratio:.0f}",
    "gap_after": lambda s: format_duration(s.gap_after or 0.0),
    "gap_after_ratio": lambda s: f"{s.gap_after_ratio:.0f}",
    "summary_ratio": lambda s: f"{s.summary.ratio:.0f}" if s.summary else "",
    "headings": lambda s: str(s.summary.headings) if s.summary else "",
    "summary_turn": lambda s: f"#{s.summary.index + 1}" if s.summary else "",
    "repeat_turn": lambda s: f"#{s.repeat.earlier + 1}" if s.repeat else "",
    "similarity": lambda s: f"{s.repeat.similarity * 100:.0f}" if s.repeat else "",
    "partner_role": lambda s: "user" if s.role == "assistant" else "assistant",
    "continue_word": lambda s: s.continue_word or "",
    "confused": lambda s: s.confused or "",
    "command": lambda s: s.command or "",
    "harness": lambda s: s.harness or "",
    "interrupt": lambda s: s.interrupt.kind if s.interrupt else "",
    "interrupt_turn": lambda s: f"#{s.interrupt.marker + 1}" if s.interrupt else "",
    "resent": lambda s: (f"the request is re-sent word for word as #{s.interrupt.resent + 1}"
        if s.interrupt and s.interrupt.resent is not None else ""),
    "hidden": lambda s: format_size(s.hidden_reasoning),
    "open_for": lambda s: format_duration(s.open_for or 0.0),
    "next_text": lambda s: _quote(s.next.text) if s.next else "",
    "then": lambda s: (f"the person wrote “{_quote(s.next.text)}” "
        + (f"{format_duration(s.next.after)} later"
        if s.next.after is not None else "next")) if s.next else "",
    "next_after": lambda s: (format_duration(s.next.after)
        if s.next and s.next.after is not None else "soon"),
    "reaction": lambda s: s.reaction.quote if s.reaction else "",
    "cut_off": lambda s: s.cut_off or "",
    "rounds": lambda s: str(s.silent_rounds),
    "no_reply_events": lambda s: (" · ".join(s.no_reply.events) or "nothing recorded"
        if s.no_reply else ""),
    "tools": lambda s: ", ".join(s.tools[:3]) + (" …" if len(s.tools) > 3 else ""),
    "act": lambda s: s.act.describe() if s.act else "",
    "act_text": lambda s: s.act.text if s.act else "",
    "left_open": lambda s: s.left_open,
    "reading": lambda s: (f"the reply #{s.reading.index + 1} {_READ_AS[s.reading.kind]} "
        f"(“{s.reading.quote}”)") if s.reading else "",
    "abort": lambda s: s.abort or "",
    "redirect": lambda s: redirect_kind(s.next.text, s.repeat is not None)
        if s.next else "",
    "abort_after": lambda s: (f"{format_duration(s.open_for)} in"
        if s.open_for is not None else "before it showed anything"),
}
"""Each fact of `Signals.facts()` and how it is put in words."""


class _LazyFacts(dict[str, str]):
    """`Signals.facts()` as a dict that puts each fact in words when it is first read."""

    __slots__ = ("_signals",)

    def __init__(self, signals: Signals) -> None:
        super().__init__()
        self._signals = signals

    def __missing__(self, name: str) -> str:
        value = self[name] = _FACTS[name](self._signals)
        return value


def _quote(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat[:limit] + ("…" if len(flat) > limit else "")


def _ratio(value: float | None, median: float | None) -> float:
    if value is None or median is None:
        return 0.0
    return value / max(median, 1.0)


def _unfinished(turn: Turn) -> bool:
    return turn.role == "assistant" and turn.completed is None


_Reader = Callable[[Session, int, Turn, SessionStats], object]

_READERS: dict[str, _Reader] = {
    "index": lambda session, index, turn, stats: index,
    "role": lambda session, index, turn, stats: turn.role,
    "compaction": lambda session, index, turn, stats: compaction(session, index),
    "error": lambda session, index, turn, stats: error_name(session, index),
    "no_completion": lambda session, index, turn, stats: (
        _unfinished(turn) and stats.records_completion),
    "reasoning_chars": lambda session, index, turn, stats: reasoning_chars(session, index),
    "markers_only": lambda session, index, turn, stats: markers_only(session, index),
    "no_parts": lambda session, index, turn, stats: no_parts(session, index),
    "wrapper": lambda session, index, turn, stats: empty_wrapper(session, index),
    "median_gap": lambda session, index, turn, stats: stats.median_gap,
    "gap_before": lambda session, index, turn, stats: gap_before(session, index),
    "gap_after": lambda session, index, turn, stats: gap_after(session, index),
    "ending": lambda session, index, turn, stats: previous_ending(session, index),
    "summary": lambda session, index, turn, stats: next_summary(session, index, stats),
    "repeat": lambda session, index, turn, stats: repeated_instruction(session, index),
    "partner": lambda session, index, turn, stats: empty_partner(session, index),
    "position": lambda session, index, turn, stats: position(session, index),
    "continue_word": lambda session, index, turn, stats: next_user_continues(session, index),
    "confused": lambda session, index, turn, stats: next_user_confused(session, index),
    "command": lambda session, index, turn, stats: command_before(session, index),
    "harness": lambda session, index, turn, stats: harness_wrapper(session, index),
    "interrupt": lambda session, index, turn, stats: interrupted(session, index),
    "hidden_reasoning": lambda session, index, turn, stats: reasoning_hidden(session, index),
    "open_for": lambda session, index, turn, stats: open_for(session, index),
    "next": lambda session, index, turn, stats: next_message(session, index),
    "reaction": lambda session, index, turn, stats: reaction(session, index),
    "silent_rounds": lambda session, index, turn, stats: silent_rounds(session, index),
    "tools": lambda session, index, turn, stats: tool_names(session, index),
    "no_reply": lambda session, index, turn, stats: (
        missing_reply(session, index) if not is_empty(turn) else None),
    "unfinished": lambda session, index, turn, stats: _unfinished(turn),
    "not_sent": lambda session, index, turn, stats: not_sent(session, index),
    "act": lambda session, index, turn, stats: next_act(session, index),
    "reading": lambda session, index, turn, stats: reply_reading(session, index),
    "abort": lambda session, index, turn, stats: person_abort(session, index),
    "export_cut": lambda session, index, turn, stats: export_cut(session, index),
}
"""How each field of `Signals` is read, in the order `read_signals` reads them: the one
definition both the whole read and a lazy one (`SignalsAhead`) use."""

assert set(_READERS) == set(_SIGNAL_NAMES), "every signal has its reader"


def read_signals(session: Session, index: int, stats: SessionStats | None = None) -> Signals:
    """Compute every signal for the empty turn at `index` (with the session's own figures
    unless `stats` is given)."""
    stats = stats or session_stats(session)
    turn = session.turns[index]
    return Signals(**{name: read(session, index, turn, stats)
                      for name, read in _READERS.items()})


# ---------------------------------------------------------------- signals read when asked


class Unsettled(Exception):  # noqa: N818 (a signal, not an error: caught by its reader)
    """A session-wide figure was asked for before the session was read to its end."""


class _NoStats:
    """Session-wide figures not known yet: reading any of them raises `Unsettled`."""

    __slots__ = ()

    @property
    def median_gap(self) -> float | None:
        raise Unsettled("median_gap")

    @property
    def median_text(self) -> float | None:
        raise Unsettled("median_text")

    @property
    def records_completion(self) -> bool:
        raise Unsettled("records_completion")


NO_STATS: SessionStats = _NoStats()  # type: ignore[assignment]
"""Stand-in for a session's figures while a streamed scan still reads it."""


class _SummaryAhead:
    """A `Summary` whose `ratio` waits for the session's median text length."""

    __slots__ = ("index", "headings", "harness", "chars", "_stats")

    def __init__(self, turn: Turn, chars: int, headings: int, stats: SessionStats) -> None:
        self.index = turn.index
        self.headings = headings
        self.harness = turn.is_summary
        self.chars = chars
        self._stats = stats

    @property
    def ratio(self) -> float:
        median = self._stats.median_text
        return self.chars / median if median else 1.0


def _summary_ahead(session: Session, index: int, turn: Turn, stats: SessionStats) -> object:
    found = _summary_turn(session, index)
    return None if found is None else _SummaryAhead(*found, stats)


class SignalsAhead(Signals):
    """The signals around one empty turn, each read the first time it is asked for (the
    rules usually decide after a few of them).

    The same values as `read_signals` at the same moment: each field is read by the same
    function (`_READERS`). With `NO_STATS`, a value that needs a session-wide figure raises
    `Unsettled` instead (its summary's `ratio` only when read)."""

    __slots__ = ("_session", "_turn", "_stats")

    def __init__(self, session: Session, index: int,  # noqa: D107 (the class says it)
                 stats: SessionStats | None = None) -> None:
        set_field = object.__setattr__
        set_field(self, "_session", session)
        set_field(self, "_turn", session.turns[index])
        set_field(self, "_stats", stats or session_stats(session))
        set_field(self, "index", index)

    def __getattr__(self, name: str) -> object:
        # Only a field not read yet gets here (a slot never set).
        read = _READERS.get(name)
        if read is None or name.startswith("_"):
            raise AttributeError(name)
        session, turn, stats = self._session, self._turn, self._stats
        if name == "summary" and stats is NO_STATS:
            value = _summary_ahead(session, self.index, turn, stats)
        else:
            value = read(session, self.index, turn, stats)
        object.__setattr__(self, name, value)
        return value
