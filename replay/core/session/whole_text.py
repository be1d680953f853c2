"""The text rules on a text left in its file, judged on the whole of it, a run at a time.

A reader that leaves a huge string in its file (`lifted`) holds a placeholder: the text's
first characters and where the rest lies. Judging the placeholder would judge the head, so
that a file of 75 MB of blank lines in `<conversation_data>` would give a turn that is not
empty where the same text held in memory gives an empty one. The rules here read the whole
text from the file a run of `RUN_CHARS` characters at a time (never decoded whole at once)
and give what `text_rules` and `harness_rules` give on the decoded text:

* `skeleton` is the text with every stretch between two angle brackets cut to its first and
  last `KEEP_CHARS` characters (white space runs cut to `SPACE_KEEP` at each end first), the
  middle turned into one character of its class (white space, name characters, other). Tags
  are the stretches inside `<` and `>`, and every rule on tags, blankness and the harness's
  lines looks only at the ends of a stretch, at white space as white space, and at the tags:
  the rules give the same on the skeleton as on the text (a tag name longer than
  `KEEP_CHARS` characters is the one exception). A skeleton holds every angle bracket: a text
  of dense markup keeps about its size.
* `one_line`, `shorten` and `same_or_within` read only the runs they need.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from replay.core.session import harness_rules, lifted, text_rules
from replay.core.session.harness_rules import Wrapper
from replay.core.session.lifted import Rope

RUN_CHARS = 1 << 18
"""Characters read from the file at a time."""
KEEP_CHARS = 256
"""Characters a skeleton keeps at each end of a stretch between two angle brackets."""
SPACE_KEEP = 8
"""Characters a skeleton keeps at each end of a run of white space."""
CARRY_CHARS = 1 << 20
"""A `<` with no `>` after it this far is text (`_tokens`: only a tag longer than this is
judged otherwise than in the decoded text)."""
_KEPT_SKELETONS = 32

_BRACKETS = re.compile(r"[<>]")
_NAME_CHARS = re.compile(r"[\w.:-]+")
_NOT_SPACE = re.compile(r"\S")
_SKELETONS: dict[str, str] = {}
"""The skeletons made last, by the placeholder text they are of (a turn's text is judged by
several rules one after the other)."""
_HELD: dict[str, str] = {}
"""The heads `as_held` kept last, alike."""


def rope_of(text: str) -> Rope:
    """The whole text a string stands for (itself when it holds no placeholder)."""
    rope = lifted.source(text)
    return Rope([text]) if rope is None else rope


def runs(text: str, size: int | None = None) -> Iterator[str]:
    """The whole text, a run of `size` characters at a time."""
    for _, piece in rope_of(text).pieces(size or RUN_CHARS):
        yield piece


def decoded(text: str) -> str:
    """The whole text, decoded a run at a time (`lifted.materialise` decodes it in one go,
    at up to 13 times its size)."""
    if not lifted.holds(text):
        return text
    return "".join(runs(text))


def as_held(text: str) -> str:
    """The text as a reader holding it in memory would have it: a placeholder cut before its
    end (the reader shortened the text) is the head the reader keeps of the decoded text
    (`shorten` at the cut's length, what `text_rules.shorten` keeps); any other text is
    itself (`decoded` gives the whole of a placeholder)."""
    if not lifted.is_cut(text):
        return text
    kept = _HELD.get(text)
    if kept is None:
        kept = _shorten(text, len(text))[0] or ""
        if len(_HELD) >= _KEPT_SKELETONS:
            del _HELD[next(iter(_HELD))]
        _HELD[text] = kept
    return kept


# ---------------------------------------------------------------- the skeleton


class _Stretch:
    """The characters between two angle brackets as the skeleton keeps them."""

    __slots__ = ("head", "middle", "tail")

    def __init__(self) -> None:
        self.head = ""
        self.tail = ""
        self.middle: set[str] = set()
        """Classes of the characters left out: `space`, `name`, `other`."""

    def add(self, chars: str) -> None:
        if not chars:
            return
        chars = _spaces_cut(chars)
        if len(self.head) < KEEP_CHARS:
            room = KEEP_CHARS - len(self.head)
            self.head += chars[:room]
            chars = chars[room:]
        self.tail += chars
        if len(self.tail) > 4 * KEEP_CHARS:
            self._fold(self.tail[:-KEEP_CHARS])
            self.tail = self.tail[-KEEP_CHARS:]

    def _fold(self, chars: str) -> None:
        if chars.isspace():
            self.middle.add("space")
        elif _NAME_CHARS.fullmatch(chars):
            self.middle.add("name")
        else:
            self.middle.add("other")

    def text(self) -> str:
        if len(self.tail) > KEEP_CHARS:
            self._fold(self.tail[:-KEEP_CHARS])
            self.tail = self.tail[-KEEP_CHARS:]
        if not self.middle:
            return self.head + self.tail
        if self.middle == {"space"}:
            mark = " "
        elif self.middle == {"name"}:
            mark = "x"
        else:
            mark = "~"
        return self.head + mark + self.tail


def _spaces_cut(chars: str) -> str:
    """Every run of white space longer than `2 * SPACE_KEEP` cut to its ends."""
    if len(chars) <= 2 * SPACE_KEEP:
        return chars
    return _long_spaces().sub(_space_ends, chars)


_LONG_SPACES: list[re.Pattern[str]] = []


def _long_spaces() -> re.Pattern[str]:
    if not _LONG_SPACES or _LONG_SPACES[0].pattern != rf"\s{{{2 * SPACE_KEEP + 1},}}":
        _LONG_SPACES[:] = [re.compile(rf"\s{{{2 * SPACE_KEEP + 1},}}")]
    return _LONG_SPACES[0]


def _space_ends(match: re.Match[str]) -> str:
    found = match.group(0)
    return found[:SPACE_KEEP] + found[-SPACE_KEEP:]


def skeleton(text: str) -> str:
    """The text as the rules on tags and the harness's lines need it (see the module)."""
    if not lifted.holds(text):
        return text
    kept = _SKELETONS.get(text)
    if kept is not None:
        return kept
    out: list[str] = []
    stretch = _Stretch()
    for run in runs(text):
        at = 0
        for bracket in _BRACKETS.finditer(run):
            stretch.add(run[at:bracket.start()])
            out.append(stretch.text())
            out.append(bracket.group(0))
            stretch = _Stretch()
            at = bracket.end()
        stretch.add(run[at:])
    out.append(stretch.text())
    made = "".join(out)
    if len(_SKELETONS) >= _KEPT_SKELETONS:
        del _SKELETONS[next(iter(_SKELETONS))]
    _SKELETONS[text] = made
    return made


def _first_shown(text: str) -> str:
    """The first character of the whole text that is not white space ("" when none is)."""
    for run in runs(text):
        found = _NOT_SPACE.search(run)
        if found is not None:
            return found.group(0)
    return ""


# ---------------------------------------------------------------- the rules


def is_blank(text: str) -> bool:
    """`text_rules.is_blank` of the whole text (of the head kept of a cut one: `as_held`)."""
    if lifted.is_cut(text):
        return text_rules.is_blank(as_held(text))
    return _is_blank(text)


def _is_blank(text: str) -> bool:
    first = _first_shown(text)
    if not first:
        return True
    if first != "<":
        return False  # words before any tag (the common case: read one run)
    return text_rules.is_blank(skeleton(text))


def empty_wrapper_names(text: str) -> list[str]:
    """`text_rules.empty_wrapper_names` of the whole text (see `is_blank`)."""
    if lifted.is_cut(text):
        return text_rules.empty_wrapper_names(as_held(text))
    return text_rules.empty_wrapper_names(skeleton(text))


def wrapper_of(text: str) -> Wrapper | None:
    """`harness_rules.wrapper_of` of the whole text (see `is_blank`)."""
    if lifted.is_cut(text):
        return harness_rules.wrapper_of(as_held(text))
    return harness_rules.wrapper_of(skeleton(text))


def interrupt_of(text: str) -> str | None:
    """`harness_rules.interrupt_of` of the whole text (see `is_blank`)."""
    if lifted.is_cut(text):
        return harness_rules.interrupt_of(as_held(text))
    if _first_shown(text) != "[":
        return None
    return harness_rules.interrupt_of(skeleton(text))


def is_harness_text(text: str) -> bool:
    """`harness_rules.is_harness_text` of the whole text (see `is_blank`)."""
    if lifted.is_cut(text):
        return harness_rules.is_harness_text(as_held(text))
    if _first_shown(text) not in ("<", "[", "C", "c"):
        return False
    return harness_rules.is_harness_text(skeleton(text))


def one_line(text: str, limit: int = 120) -> str:
    """`text_rules.one_line` of the whole text, reading only the runs it shows (see
    `is_blank`)."""
    if lifted.is_cut(text):
        return text_rules.one_line(as_held(text), limit)
    words: list[str] = []
    size = -1
    carry = ""
    for run in runs(text):
        chunk = carry + run
        found = chunk.split()
        carry = found.pop() if found and not chunk[-1].isspace() else ""
        for word in found:
            words.append(word)
            size += len(word) + 1
        if size > limit or len(carry) > limit:
            break
    if carry:
        words.append(carry)
    return text_rules.one_line(" ".join(words), limit)


def _first_shown_at(rope: Rope) -> int:
    """The index of the first character that is not white space (the length when none)."""
    for at, run in rope.pieces(RUN_CHARS):
        found = _NOT_SPACE.search(run)
        if found is not None:
            return at + found.start()
    return len(rope)


def shorten(text: str, limit: int = text_rules.PREVIEW_CHARS) -> tuple[str | None, bool]:
    """`text_rules.shorten` of the whole text: the head it keeps is decoded (no placeholder
    is kept), the whole is read only to judge it blank or to find its first words (a cut
    text is the head kept of it, `as_held`)."""
    if lifted.is_cut(text):
        return text_rules.shorten(as_held(text), limit)
    return _shorten(text, limit)


def _shorten(text: str, limit: int) -> tuple[str | None, bool]:
    rope = rope_of(text)
    if len(rope) <= limit:
        return rope.read(), False
    if _is_blank(text):
        return text_rules.wrappers_text(text_rules.empty_wrapper_names(skeleton(text)),
                                        limit), True
    head = rope.read(0, limit)
    if text_rules.is_blank(head):
        start = _first_shown_at(rope)
        head = rope.read(start, start + limit)
        if text_rules.is_blank(head):
            head = _stripped_head(rope, limit)
    return head, True


def _tokens(rope: Rope, pattern: re.Pattern[str]) -> Iterator[str | re.Match[str]]:
    """The whole text as `pattern.finditer` splits it: texts between matches (a text may come
    in several pieces) and the matches, a run at a time. `pattern` matches from a `<` to the
    first `>` after it, with no `<` inside (a tag)."""
    carry = ""
    for _, run in rope.pieces(RUN_CHARS):
        buffer = carry + run
        cut = buffer.rfind("<")
        if cut < 0 or buffer.find(">", cut) >= 0 or len(buffer) - cut > CARRY_CHARS:
            cut = len(buffer)
        carry = buffer[cut:]
        yield from _split(buffer[:cut], pattern)
    yield from _split(carry, pattern)


def _split(text: str, pattern: re.Pattern[str]) -> Iterator[str | re.Match[str]]:
    at = 0
    for match in pattern.finditer(text):
        if match.start() > at:
            yield text[at:match.start()]
        yield match
        at = match.end()
    if at < len(text):
        yield text[at:]


def _stripped_head(rope: Rope, limit: int) -> str:
    """`text_rules.strip_empty_wrappers(whole).strip()[:limit]`, reading the runs it needs
    (the same pairing of tags, a run at a time)."""
    out = ""  # what is settled, left-stripped
    pieces: list[str] = []
    open_tags: list[tuple[str, int]] = []
    for token in _tokens(rope, text_rules._TAG):
        if isinstance(token, str):
            if token.isspace():
                pieces.append(token[:limit + 1])  # more white space changes nothing shown
            else:
                pieces.append(token)
                open_tags.clear()
        else:
            closing, name, attributes, slash = token.groups()
            if name is not None:
                if slash or (attributes is not None and attributes.endswith("/")):
                    continue
                open_tags.append((name, len(pieces)))
                pieces.append(token.group(0))
            elif open_tags and open_tags[-1][0] == closing:
                del pieces[open_tags.pop()[1]:]
            else:
                pieces.append(token.group(0))
                open_tags.clear()
        settled = open_tags[0][1] if open_tags else len(pieces)
        if settled:
            out = (out + "".join(pieces[:settled])).lstrip()
            del pieces[:settled]
            open_tags = [(tag, index - settled) for tag, index in open_tags]
            shown = _NOT_SPACE.search(out, max(limit - 1, 0))
            if shown is not None:
                return out[:limit]
            out = out[:2 * limit + 1]
    return (out + "".join(pieces)).strip()[:limit]


def same_or_within(left: str, right: str) -> bool:
    """`l == r or (l and l in r)` of the two whole texts stripped (`l`, `r`), reading them a
    run at a time. A stripped `left` longer than `CARRY_CHARS` found inside a longer `right`
    is not looked for (False)."""
    a, b = rope_of(left), rope_of(right)
    a_start, a_end = _shown_span(a)
    b_start, b_end = _shown_span(b)
    a_size, b_size = a_end - a_start, b_end - b_start
    if a_size == b_size:
        return all(a.read(a_start + at, min(a_start + at + RUN_CHARS, a_end))
                   == b.read(b_start + at, min(b_start + at + RUN_CHARS, b_end))
                   for at in range(0, a_size, RUN_CHARS))
    if a_size == 0 or a_size > b_size or a_size > CARRY_CHARS:
        return False
    needle = a.read(a_start, a_end)
    step = max(RUN_CHARS, a_size)
    return any(needle in b.read(at, min(at + step + a_size, b_end))
               for at in range(b_start, b_end, step))


def _shown_span(rope: Rope) -> tuple[int, int]:
    """(start, end) of the rope once stripped of white space at both ends."""
    start = _first_shown_at(rope)
    if start == len(rope):
        return start, start
    end = len(rope)
    while end > start:
        begin = max(start, end - RUN_CHARS)
        run = rope.read(begin, end)
        stripped = run.rstrip()
        if stripped:
            return start, begin + len(stripped)
        end = begin
    return start, start
