"""Which JSONL lines may hold a search needle, found from the file's bytes.

A search matches when `needle.casefold()` is in a turn's search text, casefolded. That text
is made of JSON strings of the turn's records (each character spelled raw in UTF-8 or as a
JSON escape: `\\u00e9` in either hex case, surrogate pairs, `\\"`, `\\\\`, `\\/`, `\\n`,
...), raw JSON (a tool call's input, as the line has it) and a few separators the reader
adds: the newline joining pieces, and `[type]` (or `[block]`) standing for a non-text result
block. `needle_piece` takes the longest piece of the needle between those separators;
`lines_holding` finds the lines that hold it once casefolded, either as written or with
their escapes decoded, so every spelling and every case fold (ß for "ss", the Kelvin sign
for "k") counts.
"""

from __future__ import annotations

import mmap
import os
import re

SEPARATORS = re.compile(r"[\[\]\n]")
"""Characters the reader may add between or around the texts it takes from a record."""

MADE_UP = "block"
"""A word the reader writes (`[block]`) that no record needs to hold."""

SCAN_BYTES = 8 * 1024 * 1024
"""Bytes of the file looked through at a time (cut at a line's end)."""

_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.DOTALL)
_SHORT = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
          "t": "\t"}
_SURROGATE = re.compile("[\ud800-\udfff]")


def _one(match: re.Match[str]) -> str:
    code = match.group(1)
    if code is not None:
        return chr(int(code, 16))
    return _SHORT.get(match.group(2), match.group(0))


def unescaped(line: str) -> str:
    """`line` with its JSON escapes decoded, left to right as a JSON parser reads them."""
    text = _ESCAPE.sub(_one, line)
    if _SURROGATE.search(text):
        # A pair of `\\u` escapes spells one astral character.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def needle_piece(needle: str) -> str | None:
    """The part of `needle` (casefolded) that one record must hold; None when none need be."""
    pieces = [piece for piece in SEPARATORS.split(needle.casefold())
              if piece and piece not in MADE_UP]
    return max(pieces, key=len) if pieces else None


def lines_holding(path: str, piece: str) -> set[int]:
    """Offsets of the lines of a file that hold `piece` (casefolded, no separator in it),
    casefolded, as written or with their JSON escapes decoded."""
    starts: set[int] = set()
    wanted = piece.encode("utf-8", "surrogatepass")
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if not size:
            return starts
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            base = 0
            while base < size:
                end = data.find(b"\n", min(base + SCAN_BYTES, size))
                end = size if end < 0 else end + 1
                _look(data[base:end], base, piece, wanted, starts)
                base = end
    return starts


def _look(chunk: bytes, base: int, piece: str, wanted: bytes, starts: set[int]) -> None:
    """Add to `starts` the lines of `chunk` (whole lines, from offset `base`) holding `piece`."""
    if chunk.isascii():
        # ASCII casefolds to ASCII: lower-casing the bytes is the casefold, in place.
        if piece.isascii():
            lowered = chunk.lower()
            at = lowered.find(wanted)
            while at >= 0:
                line = chunk.rfind(b"\n", 0, at) + 1
                starts.add(base + line)
                stop = chunk.find(b"\n", at)
                if stop < 0:
                    break
                at = lowered.find(wanted, stop + 1)
    else:
        # A casefold may change lengths (ß is ss): count lines, not bytes.
        folded = chunk.decode("utf-8", "replace").casefold()
        at = folded.find(piece)
        line_no = line_at = counted = 0
        while at >= 0:
            target = line_no + folded.count("\n", counted, at)
            counted = at
            while line_no < target:
                line_at = chunk.index(b"\n", line_at) + 1
                line_no += 1
            starts.add(base + line_at)
            stop = folded.find("\n", at)
            if stop < 0:
                break
            at = folded.find(piece, stop + 1)
    # Escapes: only a line with a backslash has any; look at each such line decoded.
    at = chunk.find(b"\\")
    while at >= 0:
        line = chunk.rfind(b"\n", 0, at) + 1
        stop = chunk.find(b"\n", at)
        stop = len(chunk) if stop < 0 else stop
        text = chunk[line:stop].decode("utf-8", "replace")
        if piece in unescaped(text).casefold():
            starts.add(base + line)
        at = chunk.find(b"\\", stop)
