"""Byte patterns that find every JSONL line whose decoded text may hold a search needle.

A search matches when `needle.casefold()` is in a turn's search text, casefolded. That text
is made of JSON strings of the turn's records (each character spelled raw in UTF-8 or as any
legal JSON escape), raw JSON (a tool call's input) and a few separators the reader adds: the
newline joining pieces, and `[type]` (or `[block]`) standing for a non-text result block.
`needle_pattern` takes the longest piece of the needle between those separators and spells
each of its characters every way a line can hold it: any character whose casefold gives it
(K and the Kelvin sign, ß for "ss", ﬁ for "fi", a fold cut at either end of the piece), raw
or escaped (`\\u00e9` in either hex case, surrogate pairs, `\\"`, `\\\\`, `\\/`, `\\n`, ...).
"""

from __future__ import annotations

import functools
import re
import sys
from collections import defaultdict

SEPARATORS = re.compile(r"[\[\]\n]")
"""Characters the reader may add between or around the texts it takes from a record."""

MADE_UP = "block"
"""A word the reader writes (`[block]`) that no record needs to hold."""

MAX_PATTERN = 50_000
"""Bytes of pattern above which a piece is cut shorter (long runs like `ssss` get there:
every way to tile them with ß doubles the pattern)."""

_SHORT = {'"': b'\\\\"', "\\": b"\\\\\\\\", "/": b"\\\\/", "\b": b"\\\\b", "\f": b"\\\\f",
          "\n": b"\\\\n", "\r": b"\\\\r", "\t": b"\\\\t"}
"""The two-character JSON escapes, as regex source."""


@functools.cache
def _folds() -> tuple[dict[str, tuple[str, ...]], tuple[tuple[str, str], ...]]:
    """Every character by its casefold, and the characters whose casefold is longer than one."""
    by_fold: dict[str, list[str]] = defaultdict(list)
    longer: list[tuple[str, str]] = []
    for block in range(0, sys.maxunicode + 1, 256):
        chars = "".join(map(chr, range(block, block + 256)))
        if chars.casefold() == chars:
            continue  # (casefold works character by character: all of them fold to themselves)
        for char in chars:
            folded = char.casefold()
            if folded != char:
                by_fold[folded].append(char)
                if len(folded) > 1:
                    longer.append((char, folded))
    for folded in list(by_fold):
        if len(folded) == 1 and folded.casefold() == folded:
            by_fold[folded].append(folded)
    return {fold: tuple(chars) for fold, chars in by_fold.items()}, tuple(longer)


def _hex(value: int) -> bytes:
    """Regex source for `\\uXXXX` with hex letters in either case."""
    digits = b"".join(b"[" + bytes([d]) + bytes([d]).upper() + b"]" if d >= 0x61 else bytes([d])
                      for d in f"{value:04x}".encode())
    return b"\\\\u" + digits


def spellings(char: str) -> bytes:
    """Regex source matching `char` in every way a JSON line can spell it."""
    code = ord(char)
    ways = [re.escape(char.encode("utf-8", "surrogatepass"))]
    if code < 0x10000:
        ways.append(_hex(code))
    else:
        high, low = divmod(code - 0x10000, 0x400)
        ways.append(_hex(0xD800 + high) + _hex(0xDC00 + low))
    if char in _SHORT:
        ways.append(_SHORT[char])
    if char == "\ufffd":
        # A tool input is decoded with errors replaced: any undecodable run of one to three
        # bytes stands there as U+FFFD.
        ways.append(b"[\\x80-\\xff]{1,3}")
    return b"(?:" + b"|".join(ways) + b")"


def _any_of(chars: list[str] | tuple[str, ...]) -> bytes:
    return b"(?:" + b"|".join(spellings(char) for char in chars) + b")"


def _tiled(folded: str) -> bytes:
    """Regex source for the text whose casefold holds `folded` (no separator in it)."""
    by_fold, longer = _folds()

    @functools.cache
    def rest(at: int) -> bytes:
        if at == len(folded):
            return b""
        options: list[bytes] = []
        for size in (1, 2, 3):
            if at + size > len(folded):
                break
            target = folded[at:at + size]
            chars = by_fold.get(target) or ((target,) if size == 1 else ())
            if chars:
                options.append(_any_of(chars) + rest(at + size))
        # The needle may end inside a character's longer fold (needle "s" in ß).
        left = folded[at:]
        ends = [char for char, fold in longer if len(fold) > len(left) and fold.startswith(left)]
        if ends:
            options.append(_any_of(ends))
        return b"(?:" + b"|".join(options) + b")" if options else b"(?!)"

    # It may also start inside one (needle "sa" in ßa), or lie wholly inside one.
    options = [rest(0)]
    for char, fold in longer:
        if folded in fold and fold != folded:
            options.append(_any_of((char,)))
        for size in range(1, min(len(fold), len(folded))):
            if fold.endswith(folded[:size]):
                options.append(_any_of((char,)) + rest(size))
    return b"(?:" + b"|".join(options) + b")"


def needle_piece(needle: str) -> str | None:
    """The part of `needle` (casefolded) that one record must hold; None when none need be."""
    pieces = [piece for piece in SEPARATORS.split(needle.casefold())
              if piece and piece not in MADE_UP]
    return max(pieces, key=len) if pieces else None


def needle_pattern(piece: str) -> re.Pattern[bytes]:
    """A bytes pattern found in every line whose decoded text, casefolded, holds `piece`.

    A piece whose pattern would pass `MAX_PATTERN` is halved until it does not: a prefix
    of the piece makes the test looser, never stricter.
    """
    source = _tiled(piece)
    while len(source) > MAX_PATTERN and len(piece) > 1:
        piece = piece[: len(piece) // 2]
        source = _tiled(piece)
    return re.compile(source)
