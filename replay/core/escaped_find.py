"""Where a needle is in a text as the screen shows it, without making the whole shown text.

The screen shows a transcript's text cleaned: each control or invisible character spelt as
an escape (`␛[ESC]`, `[BEL]`, `\\x00`, `<U+202E>`: `replay.core.safe.escape_controls`), tabs
expanded to the next multiple of 8 columns (`shown_line`). A search of a 50 MB message
for the row to scroll to cleaned the whole text (seconds, and twice its size).

`find` looks first in the text as it is for an *anchor*: the longest run of the needle
(casefolded) that every occurrence of the needle in the shown text holds as the text itself
does, because no escape can have spelt any of it and no tab (`anchor`: no space, and no
piece that could be an escape's, whole inside the needle or cut at one of its ends). Only
the lines holding the anchor are cleaned, and the needle looked for in them. An ASCII anchor
is looked for in the text's UTF-8 bytes lowered (ASCII only: a fraction of a casefold),
unless the text holds a character whose casefold could spell part of it (ß for `ss`, the
Kelvin sign for `k`): then in the casefolded text. A line longer than a block is looked
through a window at a time (never whole), its windows overlapping by the needle, those
without the anchor only measured. Lines are counted as they are read (no line starts
needed beforehand).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache

from replay.core.safe import escape_controls, escaped_shape, has_controls

TAB = 8
"""Columns between tab stops."""
BLOCK = 1 << 18
"""Characters of whole lines read and looked through at a time."""
LONG_LINE = 1 << 16
"""A line longer than a block is looked through a window of this many characters at a
time."""

_ASCII_BYTES = bytes(range(0x80))
_ASCII_RUN = re.compile("[\\x00-\\x7f]+")
_HEX = frozenset("0123456789abcdef")
_NAMED = ("␛[esc]", "[bel]", "[csi]", "[osc]", "[cr]", "[nul]")


@cache
def _forms() -> tuple[tuple[frozenset[str], ...], ...]:
    """Every escape `escape_controls` writes, casefolded, as the characters each of its
    places may hold."""
    forms = [tuple(frozenset(character) for character in name) for name in _NAMED]
    forms.append((frozenset("\\"), frozenset("x"), _HEX, _HEX))
    forms.append((frozenset("<"), frozenset("u"), frozenset("+"), _HEX, _HEX, _HEX, _HEX,
                  frozenset(">")))
    return tuple(forms)


def shown_line(line: str, column: int = 0) -> str:
    """A line (or a piece of one starting at shown column `column`) as the screen shows it:
    escaped, tabs expanded."""
    return tabs_expanded(escape_controls(line), column)


def tabs_expanded(text: str, column: int = 0) -> str:
    """`text`'s tabs expanded to the next multiple of `TAB` columns as if it started at
    shown column `column` of its line (what `expandtabs` of the whole line gives there)."""
    if "\t" not in text:
        return text
    lead = column % TAB
    return (" " * lead + text).expandtabs(TAB)[lead:] if lead else text.expandtabs(TAB)


def _fits(needle: str, at: int, form: tuple[frozenset[str], ...], start: int,
          count: int) -> bool:
    """`needle[at:at + count]` may be `form[start:start + count]`."""
    return all(needle[at + offset] in form[start + offset] for offset in range(count))


def _maybe_made(needle: str) -> list[bool]:
    """For each character of `needle` (shown, casefolded), whether an occurrence of the
    needle in a shown text may have it from an escape or a tab, not from the text as it is.
    An escape overlapping an occurrence lies whole inside it, or holds its start (the
    needle opens with the escape's end), or its end, or all of it."""
    size = len(needle)
    made = [character == " " for character in needle]

    def mark(first: int, last: int) -> None:
        made[first:last] = [True] * (last - first)

    for form in _forms():
        length = len(form)
        for at in range(size - length + 1):
            if _fits(needle, at, form, 0, length):
                mark(at, at + length)
        for count in range(1, min(length, size + 1)):
            if _fits(needle, 0, form, length - count, count):
                mark(0, count)
            if _fits(needle, size - count, form, 0, count):
                mark(size - count, size)
        for start in range(length - size + 1):
            if _fits(needle, 0, form, start, size):
                mark(0, size)
    return made


def anchor(needle: str) -> str:
    """The run of `needle` (shown, casefolded) that the text as it is holds, casefolded,
    wherever its shown form holds the needle: the longest run of ASCII (looked for fast)
    when it has two characters or more, else the longest run. "" when there is none (a
    needle that escapes or spaces may make whole)."""
    runs = verbatim_runs(needle)
    ascii_runs = [piece for run in runs for piece in _ASCII_RUN.findall(run)]
    best_ascii = max(ascii_runs, key=len, default="")
    if len(best_ascii) >= 2:
        return best_ascii
    return max(runs, key=len, default="")


def verbatim_runs(needle: str) -> list[str]:
    """Every run of `needle` (shown, casefolded) that a text holding it once shown holds
    as it is (casefolded): between the characters an escape or a tab may have made."""
    made = _maybe_made(needle)
    runs: list[str] = []
    start = None
    for at, maybe in enumerate([*made, True]):
        if not maybe and start is None:
            start = at
        elif maybe and start is not None:
            runs.append(needle[start:at])
            start = None
    return runs


@cache
def ascii_folds() -> dict[str, str]:
    """Every non-ASCII character whose casefold holds an ASCII one (ß, the Kelvin sign, ﬁ, ...):
    all in the Basic Multilingual Plane (a test checks every plane)."""
    folds: dict[str, str] = {}
    for number in range(0x80, 0x10000):
        if 0xD800 <= number <= 0xDFFF:
            continue
        folded = chr(number).casefold()
        if any(ord(part) < 0x80 for part in folded):
            folds[chr(number)] = folded
    return folds


def folds_into(chunk: bytes, piece: str) -> bool:
    """Whether the chunk holds a non-ASCII character whose casefold shares a character with
    the ASCII `piece` (only then can bytes lower-cased miss an occurrence)."""
    groups = _folding_groups(piece)
    if not groups:
        return False
    # Only the chunk's non-ASCII bytes: UTF-8 never spells a character with an ASCII byte, so
    # what is left is whole characters side by side, much shorter to look through.
    rest = chunk.translate(None, _ASCII_BYTES)
    return any(lead in rest and any(spelled in rest for spelled in group)
               for lead, group in groups)


@cache
def _folding_groups(piece: str) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """The UTF-8 spellings `folds_into` looks for, grouped by their first two bytes."""
    groups: dict[bytes, list[bytes]] = {}
    for character, folded in ascii_folds().items():
        if any(part in piece for part in folded):
            spelled = character.encode()
            groups.setdefault(spelled[:2], []).append(spelled)
    return tuple((lead, tuple(group)) for lead, group in groups.items())


def holds_folded(text: str, needle: str) -> bool:
    """`needle in text.casefold()` (`needle` casefolded), for an ASCII needle told from the
    text's UTF-8 bytes lowered when no character of it folds into one of the needle's
    (a third of a casefold's time)."""
    if needle.isascii():
        data = text.encode("utf-8", "surrogatepass")
        if data.isascii() or not folds_into(data, needle):
            return needle.encode() in data.lower()
    return needle in text.casefold()


def _column(shown: str, folded_at: int) -> int:
    """The column of `shown` whose character's casefold holds index `folded_at` of
    `shown.casefold()`."""
    total = 0
    for column, character in enumerate(shown):
        total += len(character.casefold())
        if total > folded_at:
            return column
    return len(shown)


def _matches_in(shown: str, needle: str, base: int = 0) -> Iterator[int]:
    """Shown columns (+ `base`) of each occurrence of `needle` (casefolded) in `shown`,
    casefolded (overlapping ones too)."""
    folded = shown.casefold()
    at = folded.find(needle)
    same = len(folded) == len(shown)
    while at >= 0:
        yield base + (at if same else _column(shown, at))
        at = folded.find(needle, at + 1)


def _anchor_lines(text: str, anchor_text: str) -> Iterator[tuple[int, str]]:
    """(number in `text`, line) of each line of `text` (whole lines) that holds
    `anchor_text` once casefolded, in order."""
    if anchor_text.isascii():
        data = text.encode("utf-8", "surrogatepass")
        if data.isascii() or not folds_into(data, anchor_text):
            wanted = anchor_text.encode()
            lowered = data.lower()
            at, counted, number = lowered.find(wanted), 0, 0
            while at >= 0:
                number += lowered.count(b"\n", counted, at)
                start = lowered.rfind(b"\n", 0, at) + 1
                counted = lowered.find(b"\n", at)
                stop = len(data) if counted < 0 else counted
                yield number, data[start:stop].decode("utf-8", "surrogatepass")
                if counted < 0:
                    return
                at = lowered.find(wanted, counted)
            return
    folded = text.casefold()
    lines: list[str] | None = None
    at, counted, number = folded.find(anchor_text), 0, 0
    while at >= 0:
        number += folded.count("\n", counted, at)
        if lines is None:
            lines = text.split("\n")
        yield number, lines[number]
        counted = folded.find("\n", at)
        if counted < 0:
            return
        at = folded.find(anchor_text, counted)


def find(read: Callable[[int, int], str], size: int, needle: str
         ) -> Iterator[tuple[int, int]]:
    """(line, shown column) of each occurrence of `needle` shown (escaped: a needle as
    typed, or as shown already) in the lines of a text as shown (`shown_line`), both
    casefolded, in order.

    `read(start, end)` gives characters of the text, `size` characters long, read a block
    of `BLOCK` at a time (a line longer than a block a window at a time): the lines are
    counted as they are read. A needle holding a line end or a tab is in no shown line."""
    return (step for step in find_steps(read, size, needle) if not isinstance(step, int))


def find_steps(read: Callable[[int, int], str], size: int, needle: str
               ) -> Iterator[tuple[int, int] | int]:
    """`find`, and after each block (or window of a long line) looked through, how many
    characters of the text are: where whoever looks may pause (a UI between frames)."""
    folded = escape_controls(needle).casefold()
    if not folded or "\n" in folded or "\t" in folded:
        return
    found = anchor(folded)
    others = [run for run in verbatim_runs(folded) if run not in found]
    at, number = 0, 0
    while at < size:
        chunk = read(at, min(at + BLOCK, size))
        if at + len(chunk) < size:
            cut = chunk.rfind("\n")
            if cut < 0:  # a line longer than a block: a window at a time
                end = [size]
                for column, searched in _long_line(read, at, size, folded, found, end):
                    yield searched if column is None else (number, column)
                at, number = end[0] + 1, number + 1
                yield min(at, size)
                continue
            chunk = chunk[:cut]
        if found:
            candidates = _anchor_lines(chunk, found)
        else:
            candidates = enumerate(chunk.split("\n"))
        for line, text in candidates:
            if all(holds_folded(text, run) for run in others):  # (before it is cleaned)
                yield from ((number + line, column)
                            for column in _matches_in(shown_line(text), folded))
        at += len(chunk) + 1
        number += chunk.count("\n") + 1
        yield min(at, size)


def _long_line(read: Callable[[int, int], str], begin: int, size: int, folded: str,
               anchor_text: str, end: list[int]) -> Iterator[tuple[int | None, int]]:
    """(shown column, characters of the text looked through) of each occurrence of `folded`
    in the line starting at `begin` (long), and (None, characters looked through) after each
    window of it: a window at a time, to its line end (whose place is left in `end[0]`) or
    the text's end, each searched after the last shown characters of the one before (as
    many as the needle), only occurrences ending past them given. A window whose raw text
    (after the last characters of the one before) lacks the anchor holds no end of an
    occurrence: it is only measured (`shown_length`), its last characters shown."""
    length = len(folded)
    column, tail, raw_tail = 0, "", ""
    at = begin
    while at < size:
        raw = read(at, min(at + LONG_LINE, size))
        stop = raw.find("\n")
        if stop >= 0:
            raw = raw[:stop]
            end[0] = at + stop
        at += len(raw)
        if anchor_text and not holds_folded(raw_tail + raw, anchor_text):
            cut = max(0, len(raw) - length)
            column += shown_length(raw[:cut], column)
            last = shown_line(raw[cut:], column)
            column += len(last)
            tail = (tail + last)[-length:]
        else:
            shown = shown_line(raw, column)
            joined = tail + shown
            held = len(tail.casefold())
            base = column - len(tail)
            fold = joined.casefold()
            same = len(fold) == len(joined)
            hit = fold.find(folded)
            while hit >= 0:
                if hit + length > held:
                    yield base + (hit if same else _column(joined, hit)), at
                hit = fold.find(folded, hit + 1)
            column += len(shown)
            tail = joined[-length:]
        raw_tail = (raw_tail + raw)[-length:]
        if stop >= 0:
            return
        yield None, at
    end[0] = size


def shown_length(text: str, column: int = 0) -> int:
    """`len(shown_line(text, column))`, measured without spelling its escapes out."""
    if "\t" not in text and not has_controls(text):
        return len(text)
    shape = escaped_shape(text)
    if "\t" not in shape:
        return len(shape)
    lead = column % TAB
    return len((" " * lead + shape).expandtabs(TAB)) - lead
