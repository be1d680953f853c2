"""`escaped_find.find` against the naive way: clean the whole text, casefold it, look."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay.core import escaped_find
from replay.core.escaped_find import anchor, find, holds_folded
from replay.core.safe import escape_controls

ALPHABET = ["a", "A", "b", "e", "E", "s", "S", "c", "x", "X", "0", "1", "f", "u", "U", "+",
            "<", ">", "[", "]", "\\", "ß", "ẞ", "\u212a", "k", "K", "ﬁ", "İ", "i", " ",
            "\t", "\n", "\x1b", "\x07", "\x00", "\r", "\x9b", "\x85", "\u202e", "\u200b",
            "\ud800", "\udc85", "日", "本", "🦊", "é", "É", "␛"]
"""Letters escapes are made of, characters whose casefold changes length or spells ASCII,
controls, invisible characters, lone surrogates, wide characters."""


def naive(text: str, needle: str) -> list[tuple[int, int]]:
    """Every (line, shown column) of the needle, from the whole text cleaned at once."""
    folded = escape_controls(needle).casefold()
    if not folded or "\n" in folded or "\t" in folded:
        return []
    found = []
    for number, line in enumerate(escape_controls(text).expandtabs(8).split("\n")):
        ends, total = [], 0  # where each shown character's casefold ends
        for character in line:
            total += len(character.casefold())
            ends.append(total)
        whole = line.casefold()
        at = whole.find(folded)
        while at >= 0:
            found.append((number, next(c for c, end in enumerate(ends) if end > at)))
            at = whole.find(folded, at + 1)
    return found


def found(text: str, needle: str) -> list[tuple[int, int]]:
    reads: list[tuple[int, int]] = []

    def read(start: int, end: int) -> str:
        reads.append((start, end))
        return text[start:end]

    result = list(find(read, len(text), needle))
    # a block or a window at a time, never more
    most = max(escaped_find.BLOCK, escaped_find.LONG_LINE)
    assert all(end - start <= most for start, end in reads), reads
    return result


texts = st.lists(st.sampled_from(ALPHABET), max_size=120).map("".join)


@st.composite
def text_and_needle(draw: st.DrawFn) -> tuple[str, str]:
    """A text, and a needle: a piece of the text as written or as shown (so that most
    needles are found), or any."""
    text = draw(texts)
    how = draw(st.sampled_from(["raw", "shown", "any", "upper"]))
    source = {"raw": text, "shown": escape_controls(text), "upper": text.upper(),
              "any": draw(texts)}[how]
    start = draw(st.integers(0, len(source)))
    return text, source[start:start + draw(st.integers(1, 12))]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_needle())
def test_the_same_as_cleaning_the_whole_text(case: tuple[str, str]) -> None:
    text, needle = case
    assert found(text, needle) == naive(text, needle)


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_needle(), st.integers(1, 9), st.integers(1, 30))
def test_long_lines_and_blocks_cut_anywhere(case: tuple[str, str], window: int,
                                            block: int) -> None:
    """Windows of a long line and blocks of short lines of a few characters: occurrences
    across a window's edge (an escape, a tab, a casefold that grows on either side) are
    found once, at the right column."""
    text, needle = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(escaped_find, "LONG_LINE", window)
        patch.setattr(escaped_find, "BLOCK", block)
        assert found(text, needle) == naive(text, needle)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_and_needle(), st.integers(1, 9), st.integers(1, 30))
def test_find_steps_say_how_far_they_have_looked_between_the_same_hits(
        case: tuple[str, str], window: int, block: int) -> None:
    """`find_steps` gives `find`'s hits, in order, with how far it has looked between them
    (where a UI may pause): never back, never past the text, the whole text at the end."""
    text, needle = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(escaped_find, "LONG_LINE", window)
        patch.setattr(escaped_find, "BLOCK", block)
        steps = list(escaped_find.find_steps(lambda a, b: text[a:b], len(text), needle))
        assert [step for step in steps if not isinstance(step, int)] == naive(text, needle)
    looked = [step for step in steps if isinstance(step, int)]
    assert looked == sorted(looked) and all(0 < at <= len(text) for at in looked)
    if text and needle and "\n" not in needle and "\t" not in needle:
        assert looked and looked[-1] == len(text)


@pytest.mark.parametrize(("needle", "expected"), [
    ("the last line", "last"),
    ("list[int]", "list[int]"),
    ("␛[esc][1m", "[1m"),       # the escape's own letters are no anchor
    ("sc]abc", "abc"),           # the end of an escape opens the needle
    ("fox", "ox"),               # `f` may end a `\x0f`
    ("ab", ""),                  # may be inside `<U+00AB>`
    ("[bel]", ""),
    ("日本語 🦊", "日本語"),
])
def test_anchor_is_what_no_escape_nor_tab_can_make(needle: str, expected: str) -> None:
    assert anchor(needle) == expected


def test_only_the_lines_holding_the_anchor_are_cleaned(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    """A text of 20,000 lines full of escapes: one line is cleaned, the one holding the
    needle, whose column is counted in its shown form."""
    line = "The fox [/] list[int] \x1b[2J\x1b]0;PWNED\x07 café \x00 \t\x9b31m \r naïve.\n"
    text = line * 10_000 + "\x1b[1mthe LAST line [/]\t\x1b[0m\n" + line * 10_000
    cleaned: list[int] = []
    real = escaped_find.escape_controls

    def counting(piece: str) -> str:
        cleaned.append(len(piece))
        return real(piece)

    monkeypatch.setattr(escaped_find, "escape_controls", counting)
    assert found(text, "the last line [/]") == [(10_000, len("␛[ESC][1m"))]
    assert sum(cleaned) < 200, sum(cleaned)
    assert found(text, "\x1b[0m") == [(10_000, len("␛[ESC][1mthe LAST line [/]\t".expandtabs(8)))]
    cleaned.clear()  # the anchor in every line, the needle's other run in one
    assert found(text + "list[int] rarely\n", "list[int] RARELY") == [(20_001, 0)]
    assert sum(cleaned) < 200, sum(cleaned)


@settings(max_examples=1500, deadline=None)
@given(text_and_needle())
def test_holds_folded_is_a_casefold_search(case: tuple[str, str]) -> None:
    """The bytes lowered stand for the casefold only where no character folds into the
    needle's (ß into `ss`, the Kelvin sign into `k`, ﬁ into `fi`, İ into `i`)."""
    text, needle = case
    folded = needle.casefold()
    assert holds_folded(text, folded) == (folded in text.casefold())


@settings(max_examples=500, deadline=None)
@given(texts, st.integers(0, 20))
def test_shown_length_is_the_shown_lines_length(text: str, column: int) -> None:
    line = text.replace("\n", "")
    assert escaped_find.shown_length(line, column) == len(escaped_find.shown_line(line, column))


def test_a_long_line_is_cleaned_only_where_the_anchor_is(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """A line of 1.6 M characters full of escapes and tabs: the windows without the
    needle's anchor are measured, not cleaned; the column is the shown one."""
    piece = "The fox [/] list[int] \x1b[2J\x1b]0;PWNED\x07 café \x00 \t\x9b31m \r naïve. "
    text = piece * 20_000 + "\x1b[1mthe LAST line [/]" + piece * 5_000 + "\n"
    cleaned: list[int] = []
    real = escaped_find.escape_controls

    def counting(line: str) -> str:
        cleaned.append(len(line))
        return real(line)

    expected = naive(text, "the last line [/]")
    monkeypatch.setattr(escaped_find, "escape_controls", counting)
    assert found(text, "the last line [/]") == expected and len(expected) == 1
    assert sum(cleaned) < 3 * escaped_find.LONG_LINE + 20_000, sum(cleaned)
