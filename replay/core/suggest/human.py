"""What a person's empty turn, or a reply the person stopped, meets around it.

An empty prompt means different things by what happened to it: Aider never sends one (its
`Coder.preproc_user_input` returns at once on empty input), so no model heard it and only the
person's next act tells what the Enter was for; Cursor and Claude Code do send it, and the
reply shows how the model took it. A reply the person stopped (Esc, ^C) is their act too: what
they say next tells whether they stopped it to correct, add to or repeat the request.

Each signal is a small pure function of (session, index) looking at a bounded window, like
those of `signals`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replay.core.detection.empty import is_visible
from replay.core.session import whole_text
from replay.core.session.harness import is_harness_text
from replay.core.session.model import EXPORT_CUT, NOT_SENT, Kind, Session, Turn
from replay.core.session.text import strip_empty_wrappers
from replay.core.suggest.patterns import LazyPattern

WINDOW = 40
"""How many turns after the empty one are searched."""

ABORT_ERRORS = frozenset({"MessageAbortedError", "KeyboardInterrupt", "turn_aborted",
                          "AbortError"})
"""Error names a harness gives a reply the person stopped (Esc in opencode, ^C in Aider, an
interrupted Codex turn)."""

_CONTINUE_WORDS = frozenset({
    "continue", "go on", "keep going", "proceed", "ok", "okay", "go ahead", "carry on",
    "resume", "next", "yes", "yes please", "go", "sure", "k", "please continue",
    "continue please", "ok continue", "yes continue", "keep at it",
})
_DOTS = LazyPattern(r"^\s*(?:\.{1,3}|…)\s*$")


def bare_continuation(text: str) -> str | None:
    """The continuation word when a whole message is only "continue", "go on", "ok"... or a
    lone "." (how Aider users say go on)."""
    if _DOTS.match(text):
        return text.strip()
    words = " ".join(re.sub(r"[^\w\s']", " ", text.lower()).split())
    return words if words in _CONTINUE_WORDS else None


def _typed(turn: Turn) -> str:
    """The person's own words in a user turn (no harness lines, no expanded attachments)."""
    texts = [whole_text.decoded(text) for text in
             (whole_text.as_held(p.text) for p in turn.parts
              if p.kind == Kind.TEXT and not p.synthetic and p.text)
             if not is_harness_text(text)]
    return strip_empty_wrappers("\n".join(texts)).strip()


def _quote(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return flat[:limit] + ("…" if len(flat) > limit else "")


# ---------------------------------------------------------------- what the harness did


def not_sent(session: Session, index: int) -> bool:
    """The reader says the harness never sent this prompt to the model."""
    return session.turns[index].note == NOT_SENT


def export_cut(session: Session, index: int) -> bool:
    """The reader says the file was saved while this reply was being written."""
    return session.turns[index].note == EXPORT_CUT


# ---------------------------------------------------------------- what the person did next


@dataclass(frozen=True, slots=True)
class NextAct:
    """What the person did after a prompt nobody heard."""

    kind: str
    """`go-on` (a bare go-on, "."), `undo` (/undo), `command` (another /command), `shell`
    (`!cmd`), `request` (a new request) or `leave` (nothing more: the session ends)."""
    text: str
    """The words of that act (empty for `leave`)."""
    index: int | None
    """Index of its turn (None for `leave`)."""
    blanks: int = 0
    """Further empty prompts pressed before it."""

    def describe(self) -> str:
        """The act in plain words, for reasons."""
        again = (f" after {self.blanks} more empty prompt{'s' if self.blanks > 1 else ''}"
                 if self.blanks else "")
        if self.kind == "leave":
            return f"the person left{again}: nothing more was typed in this session"
        what = {"go-on": "sent", "undo": "ran", "command": "ran", "shell": "ran",
                "request": "sent the request"}[self.kind]
        return f"the person {what} “{_quote(self.text)}”{again}"


def next_act(session: Session, index: int) -> NextAct | None:
    """The person's next act after a prompt the harness never sent (None for other turns)."""
    if not not_sent(session, index):
        return None
    blanks = 0
    for turn in session.turns[index + 1 : index + 1 + WINDOW]:
        if turn.role != "user":
            continue
        if turn.note == NOT_SENT:
            blanks += 1
            continue
        text = _typed(turn)
        if not text:
            continue
        head = text.split(maxsplit=1)[0].lower()
        if bare_continuation(text):
            kind = "go-on"
        elif head == "/undo":
            kind = "undo"
        elif head.startswith("/"):
            kind = "command"
        elif head.startswith("!"):
            kind = "shell"
        else:
            kind = "request"
        return NextAct(kind, text, turn.index, blanks)
    if index + 1 + WINDOW < len(session.turns):
        return None  # too far to tell
    return NextAct("leave", "", None, blanks)


# ---------------------------------------------------------------- how the reply read it


@dataclass(frozen=True, slots=True)
class Reading:
    """How the agent's next reply took a person's empty message."""

    kind: str
    """`carries-on` (picks up the work or fixes what failed), `asks` (notices nothing was
    said and asks what is wanted) or `restarts` (starts over, recaps)."""
    index: int
    """Index of that reply."""
    quote: str
    """Its opening words."""


_READINGS: tuple[tuple[str, LazyPattern], ...] = (
    ("asks", LazyPattern(
        r"\b(?:(?:your|the|an?) (?:message|prompt|input) (?:was|is|seems|appears)? ?"
        r"(?:to be )?(?:empty|blank)|(?:empty|blank) (?:message|prompt|input)|"
        r"didn'?t (?:include|send|type|write) (?:any|a|anything)|"
        r"(?:what|how) (?:would you like|can i help|do you want|should i do)|"
        r"(?:mensaje|mensagem) (?:vac[ií]o|vazia)|o que (?:voc[eê] )?(?:deseja|gostaria))",
        re.IGNORECASE)),
    ("restarts", LazyPattern(
        r"\b(?:start(?:ing)? (?:over|again|fresh|from scratch)|from the (?:top|beginning)|"
        r"(?:let me|to) recap|recap(?:ping)?|where we left off|picking (?:it |this )?(?:back )?"
        r"up|welcome back|resum(?:e|ing) (?:the|our|where)|recomeç|empezar de nuevo|"
        r"重新开始|从头)", re.IGNORECASE)),
    ("carries-on", LazyPattern(
        r"^\W*(?:ok(?:ay)?|great|sure|alright|got it|understood|continuing|proceeding|"
        r"(?:i'?ll|let me|i will) (?:continue|proceed|carry on|go ahead|keep going|fix|"
        r"retry|try again|correct)|(?:i'?m |i am )?(?:sorry|apologies)|my apologies|"
        r"i apologi[sz]e|peço desculpas|desculpe|lo siento|disculpa|entendido|claro|"
        r"vou (?:continuar|corrigir|tentar)|voy a (?:continuar|corregir))\b", re.IGNORECASE)),
)

READ_CHARS = 300
"""How much of the reply's opening is read."""


def reply_reading(session: Session, index: int) -> Reading | None:
    """How the next reply read an empty message the model received, when it says so in its
    opening words (None when the person speaks first, or nothing in it tells)."""
    turn = session.turns[index]
    if turn.role != "user" or not_sent(session, index):
        return None
    for following in session.turns[index + 1 : index + 1 + WINDOW]:
        if following.role == "user" and _typed(following):
            return None
        if following.role != "assistant":
            continue
        texts = [p.text for p in session.full_parts(following)
                 if p.kind == Kind.TEXT and is_visible(p)]
        if not texts:
            continue
        opening = " ".join(" ".join(texts).split())[:READ_CHARS]
        for kind, pattern in _READINGS:
            if pattern.search(opening):
                return Reading(kind, following.index, _quote(opening, 60))
        return None
    return None


# ---------------------------------------------------------------- replies the person stopped


def person_abort(session: Session, index: int) -> str | None:
    """The error name when the person stopped this reply before it showed anything."""
    turn = session.turns[index]
    if turn.role != "assistant":
        return None
    for part in turn.parts:
        if part.kind == Kind.ERROR and (part.name or "") in ABORT_ERRORS:
            return part.name
    return None


_CORRECTION = LazyPattern(
    r"^\W*(?:no\b|nope|wait|stop|don'?t|do not|instead|actually|undo|revert|not that|wrong|"
    r"never ?mind|cancel|rather|hold on|espera|não|nao\b|mejor|en vez)", re.IGNORECASE)


def redirect_kind(next_text: str, repeats: bool) -> str:
    """What the message after a stopped reply does with the request, in words."""
    if repeats:
        return "the same request again"
    if _CORRECTION.search(next_text):
        return "a correction"
    return "more detail or a new direction"
