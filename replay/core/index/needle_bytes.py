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

A harness command is searched as the screen shows it (`/clear args`, `! ls`,
`⎿ (no output)`: `harness.as_shown`), which puts words of several tags side by side with
its own glue between them. A needle holding that glue may be in no record as such:
`shown_lines_holding` adds the few lines with a harness tag that may show it.
"""

from __future__ import annotations

import bisect
import os
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import orjson

from replay.core.escaped_find import ascii_folds, folds_into
from replay.core.session.harness import NO_OUTPUT

__all__ = ["ascii_folds", "folds_into"]  # (what the byte search told fold by fold: there)

SEPARATORS = re.compile(r"[\[\]\n]")
"""Characters the reader may add between or around the texts it takes from a record."""

MADE_UP = "block"
"""A word the reader writes (`[block]`) that no record needs to hold."""

SCAN_BYTES = 256 * 1024
"""Bytes of the file looked through at a time (cut at a line's end). A search holds about
four copies of one at its peak (the chunk, it after the line before it, its whole lines,
them lowered): 1 MiB chunks were 4 MiB of the app's search phase, twice when the count and
`n` searched at once."""

_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))", re.DOTALL)
_SHORT = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
          "t": "\t"}
_SURROGATE = re.compile("[\ud800-\udfff]")
_KEPT_ESCAPED = re.compile('[\\\\"\x00-\x1f\ud800-\udfff]')
"""Characters orjson writes escaped (or cannot write)."""
_SHORT_ESCAPED = re.compile('[\\\\"/\x00-\x1f]')
"""Characters a two-character JSON escape can spell."""
_ANY_ESCAPE = re.compile(rb"\\")
_U_CODE = re.compile(rb"\\u([0-9a-fA-F]{4})")


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


def _decoded(line: bytes, piece: str) -> str:
    """The line's text with its escapes decoded, casefolded (as far as `piece` can tell)."""
    if not _KEPT_ESCAPED.search(piece):
        # orjson writes every string back with only `"`, `\\` and control characters
        # escaped: none of them is in `piece`, so its text there is the decoded text, and
        # much faster to get than by unescaping in Python.
        try:
            return orjson.dumps(orjson.loads(line)).decode().casefold()
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            pass  # (not JSON, or numbers orjson cannot write back: decoded in Python)
    return unescaped(line.decode("utf-8", "replace")).casefold()


def needle_piece(needle: str) -> str | None:
    """The part of `needle` (casefolded) that one record must hold; None when none need be."""
    pieces = [piece for piece in SEPARATORS.split(needle.casefold())
              if piece and piece not in MADE_UP]
    return max(pieces, key=len) if pieces else None


Found = tuple[tuple[object, ...], Sequence[int]]
"""A `lines_with` answer as an index keeps it: the key it was found under, the turns."""


class SearchStart(NamedTuple):
    """How every `lines_with` starts (`search_start`)."""

    piece: str
    """The part of the needle one record must hold (`needle_piece`)."""
    key: tuple[object, ...]
    """What the answer depends on: keep the answer under it."""
    kept: Sequence[int] | None
    """The answer kept under the same key (the same needle, turns and file): give it again."""


def search_start(path: str, needle: str, last: Found | None, *shape: object
                 ) -> SearchStart | None:
    """The start shared by every index's `lines_with`: the needle's piece and the key to
    keep the answer under, with the kept answer when the last one was found under that key.

    The key is the piece, `shape` (whatever else the index's answer depends on: its turn
    count, a shown piece) and the file's size and modification time, so a search and its
    match count, which ask the same in a row, read the file once, and a file that grew or
    changed is read again. None when the bytes cannot tell (an empty needle, or one only
    of separators and made-up words) or the file cannot be looked at."""
    piece = needle_piece(needle) if needle else None
    if piece is None:
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    key = (piece, *shape, status.st_size, status.st_mtime_ns)
    return SearchStart(piece, key, last[1] if last is not None and last[0] == key else None)


def lines_holding(path: str, piece: str) -> array[int]:
    """Offsets of the lines of a file that hold `piece` (casefolded, no separator in it),
    casefolded, as written or with their JSON escapes decoded; sorted, in an array (a
    one-letter piece is in most lines of a pretty-printed document: millions of them,
    eight bytes each here, about fifty in a set)."""
    starts: array[int] = array("q")
    for found in lines_holding_by_chunk(path, piece):
        starts.extend(found)
    return starts


def lines_holding_by_chunk(path: str, piece: str) -> Iterator[list[int]]:
    """`lines_holding`, a chunk of the file at a time (sorted, in order): a caller that
    only maps each line to something bigger (an exchange of an Aider chat) holds no more
    than a chunk's lines."""
    wanted = piece.encode("utf-8", "surrogatepass")
    # Read a chunk at a time, not mapped: a mapped file's pages count in the app's memory
    # (its resident set) as long as they stay mapped, the whole file for one search.
    with open(path, "rb", buffering=0) as handle:
        for base, data, _ in line_runs(handle.read):
            if data is None:
                yield [base]  # a huge line: its turn's texts are looked through as they are
                continue
            found: set[int] = set()
            _look(data, base, piece, wanted, found)
            yield sorted(found)


LONG_LINE_BYTES = 4 << 20
"""A line longer than this (a 50 MB message, left in its file by the reader) is not looked
through by its bytes: its turn may hold the needle, and the search reads that turn's texts a
run at a time. (Held whole to be looked at, it was the line, its lowered copy and, joined a
chunk at a time, 20 s of copying for 75 MB.)"""


def line_runs(read: Callable[[int], bytes]) -> Iterator[tuple[int, bytes | None, int]]:
    """(offset, whole lines, end) of a file read with `read` (`SCAN_BYTES` at a time),
    in order: runs of whole lines (the last one may lack its line feed), each line longer
    than `LONG_LINE_BYTES` alone as (its offset, None, the offset of its line feed or of
    the file's end), never held. Linear however long a line is."""
    base, pending, held, long = 0, [], 0, False
    while True:
        chunk = read(SCAN_BYTES)
        if not chunk:
            break
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # a line longer than a chunk: read on to its end
            held += len(chunk)
            if not long:
                pending.append(chunk)
                if held > LONG_LINE_BYTES:
                    long, pending = True, []
            continue
        if long:
            first = chunk.find(b"\n") + 1
            yield base, None, base + held + first - 1
            base += held + first
            long, data = False, chunk[first:cut]
        else:
            pending.append(chunk[:cut])
            data = pending[0] if len(pending) == 1 else b"".join(pending)
        if data:
            yield base, data, base + len(data)
            base += len(data)
        rest = chunk[cut:]
        pending, held = ([rest], len(rest)) if rest else ([], 0)
    if long:
        yield base, None, base + held
    elif pending:
        data = b"".join(pending)
        yield base, data, base + len(data)


def holds(starts: array[int], offset: int) -> bool:
    """Whether `offset` is one of `starts` (sorted, from `lines_holding`)."""
    at = bisect.bisect_left(starts, offset)
    return at < len(starts) and starts[at] == offset


def line_end(fd: int, start: int) -> int:
    """Where the line starting at `start` of an open file ends: the offset of its line feed,
    or the file's size."""
    at, block = start, 4096
    while True:
        data = os.pread(fd, block, at)
        found = data.find(b"\n")
        if found >= 0:
            return at + found
        if len(data) < block:
            return at + len(data)
        at += len(data)
        block = min(block * 2, SCAN_BYTES)


def line_ends(path: str, starts: Sequence[int]) -> array[int]:
    """Where each line starting at one of `starts` (line starts) ends (see `line_end`)."""
    ends: array[int] = array("q")
    fd = os.open(path, os.O_RDONLY)
    try:
        for start in starts:
            ends.append(line_end(fd, start))
    finally:
        os.close(fd)
    return ends


def _look(chunk: bytes, base: int, piece: str, wanted: bytes, starts: set[int]) -> None:
    """Add to `starts` the lines of `chunk` (whole lines, from offset `base`) holding `piece`."""
    if chunk.isascii() or (piece.isascii() and not folds_into(chunk, piece)):
        # ASCII casefolds to ASCII, and no other character in the chunk folds into the
        # piece: lower-casing the bytes is the casefold wherever the piece can be, in place.
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
    # Escapes: only a line with a backslash has any. A two-character escape (`\\n`, `\\"`)
    # spells a character that a piece without `"`, `\\`, `/` or control characters lacks, so
    # such a piece stands as written (found above) unless a `\\u` escape spells one of its
    # characters. Each line that may hold it escaped is looked at decoded.
    if _SHORT_ESCAPED.search(piece):
        escapes = _ANY_ESCAPE
    else:
        # Only a `\\u` escape whose character folds to one of the piece's characters can
        # add to an occurrence (a fold is never empty, so any other escaped character breaks
        # it): lines with none of those are settled above, and most chunks have none.
        spelling = [code for code in {code.lower() for code in _U_CODE.findall(chunk)}
                    if _could_spell(code, piece)]
        if not spelling:
            return
        escapes = re.compile(rb"\\u(?:" + b"|".join(spelling) + rb")", re.IGNORECASE)
    found = escapes.search(chunk)
    while found is not None:
        at = found.start()
        line = chunk.rfind(b"\n", 0, at) + 1
        stop = chunk.find(b"\n", at)
        stop = len(chunk) if stop < 0 else stop
        if piece in _decoded(chunk[line:stop], piece):
            starts.add(base + line)
        found = escapes.search(chunk, stop)



def _could_spell(code: bytes, piece: str) -> bool:
    """Whether the character of a `\\u` escape (hex `code`) may be part of `piece` once
    casefolded; a surrogate may pair into any astral character, so it always may."""
    number = int(code, 16)
    if 0xD800 <= number <= 0xDFFF:
        return True
    return any(character in piece for character in chr(number).casefold())


SHOWN_GLUE = re.compile(r'[\[\]\n /!⎿()"\\]')
"""What the shown form of a harness command may add or change between the texts it takes
from its tags: line feeds, spaces (`/clear args`, an output's indent), the `/` before a
name, `! `, `⎿ `, `(no output)`, and (for a `<command-contents>` written as JSON inside the
record's JSON) quotes and backslashes, escaped twice in the file."""

_TAG_WORDS = (b"command-", b"bash-")
"""Every harness tag `as_shown` shows differently holds one of these (`command-name`,
`local-command-stdout`, `bash-input`, ...)."""
_TAG_OPENINGS = (b"<", b"<local-", b"\\u003c", b"\\u003C", b"\\u003clocal-", b"\\u003Clocal-")
"""What stands before a tag word in a record: `<`, as written or JSON-escaped."""

_harness_lines: dict[str, tuple[tuple[int, int], dict[int, int]]] = {}
"""Per file, for its (size, modification time): the lines holding a harness tag, start to
end (found once per version of the file: any search holding glue asks again)."""


def shown_piece(needle: str) -> str | None:
    """The longest piece of `needle` (casefolded) between the glue of a harness command's
    shown form that a tag's text must hold, "" when no piece need be in one; None when the
    needle holds no glue and is no piece of `(no output)`: then its occurrences in a shown
    command lie inside one tag's text, which `lines_holding` finds as it is.

    A piece that could be a word of `(no output)` (written by `as_shown`, in no record) is
    never the one asked for."""
    folded = needle.casefold()
    if not folded or (not SHOWN_GLUE.search(folded) and folded not in NO_OUTPUT):
        return None
    made_up = [word for word in SHOWN_GLUE.split(NO_OUTPUT) if word]
    pieces = [piece for piece in SHOWN_GLUE.split(folded)
              if piece and not any(piece in word for word in made_up)]
    return max(pieces, key=len) if pieces else ""


def shown_lines_holding(path: str, needle: str) -> set[int]:
    """Offsets of the lines with a harness tag whose text may show `needle` (see
    `shown_piece`): a superset, each line checked as written and with its escapes decoded
    (twice, for contents written as JSON).

    A needle without glue (`shown_piece` None) is in the tags' texts as `lines_holding`
    finds it, but for a `<command-contents>` written as JSON: only those lines are added."""
    piece = shown_piece(needle)
    contents_only = piece is None
    if piece is None:
        piece = needle_piece(needle)
        if piece is None:
            return set()
    fd = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(fd)
        lines = _tagged_lines(path, fd, (status.st_size, status.st_mtime_ns))
        if not piece:
            return set(lines)
        found: set[int] = set()
        for start, end in lines.items():
            if end - start > LONG_LINE_BYTES:
                found.add(start)  # a huge line, never read whole: its turn may show it
                continue
            raw = os.pread(fd, end - start, start)
            if contents_only and b"command-contents" not in raw:
                continue
            line = raw.decode("utf-8", "replace")
            once = unescaped(line)
            if piece in line.casefold() or piece in once.casefold() \
                    or piece in unescaped(once).casefold():
                found.add(start)
        return found
    finally:
        os.close(fd)


def _tagged_lines(path: str, fd: int, key: tuple[int, int]) -> dict[int, int]:
    """The lines of the file (open as `fd`) holding a harness tag, start to end (read a
    chunk at a time, as `lines_holding` reads)."""
    known = _harness_lines.get(path)
    if known is not None and known[0] == key:
        return known[1]
    lines: dict[int, int] = {}
    at = [0]

    def read(size: int) -> bytes:
        data = os.pread(fd, size, at[0])
        at[0] += len(data)
        return data

    for base, data, end in line_runs(read):
        if data is not None:
            _tags_in(data, base, lines)
        elif _long_line_tagged(fd, base, end):
            lines[base] = end
    _harness_lines.clear()  # one file searched at a time: keep only its lines
    _harness_lines[path] = (key, lines)
    return lines


def _long_line_tagged(fd: int, start: int, end: int) -> bool:
    """Whether the line from `start` to `end` (longer than `LONG_LINE_BYTES`) holds a harness
    tag, looked for a chunk at a time (overlapping by a tag's opening and word)."""
    overlap = max(map(len, _TAG_OPENINGS)) + max(map(len, _TAG_WORDS))
    found: dict[int, int] = {}
    for at in range(start, end, SCAN_BYTES):
        window = os.pread(fd, min(SCAN_BYTES + overlap, end - at), at)
        _tags_in(window, 0, found)
        if found:
            return True
    return False


def _tags_in(chunk: bytes, base: int, lines: dict[int, int]) -> None:
    """Add the lines of `chunk` (whole lines, from offset `base`) holding a harness tag."""
    for word in _TAG_WORDS:
        at = chunk.find(word)
        while at >= 0:
            if any(chunk[max(0, at - len(opening)):at] == opening for opening in _TAG_OPENINGS):
                start = chunk.rfind(b"\n", 0, at) + 1
                end = chunk.find(b"\n", at)
                end = len(chunk) if end < 0 else end
                lines[base + start] = base + end
                at = chunk.find(word, end)
            else:
                at = chunk.find(word, at + len(word))
