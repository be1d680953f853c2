"""A run of megabytes of a Markdown file's lines left in the file (an Aider reply of 50 MB).

Aider writes a reply as it is, one line of the file a line of the reply, and a prompt as
`#### ` lines: a huge message is a huge run of lines, not a JSON string. The history reader
(`aider._SessionBuilder`) reads it a line at a time as ever; with lifting on (the app,
`huge_strings.enable()`) a block whose text passes `LIFT_CHARS` (a mebibyte) stops keeping
its lines and keeps a `LineRun` instead: where it starts in the file, where its pieces start (a line
start about every `PIECE_BYTES`, with the character its text has there), its length in
characters and lines, and its first characters. When the block becomes a turn, its text is
a placeholder (`lifted.register`) for a `FileLines`: a `lifted.FileText` whose runs are
decoded from the file's lines as the reader made them (UTF-8 with replacement, any of LF,
CRLF, CR a line end, a line of white space inside a reply an empty line, a prompt line
without its `#### `). It re-checks the file before each read exactly as a `FileText` does
(the file's stamp, then a checksum of the run's bytes when the file only grew), so a file
rewritten under a shown message says so and shows nothing else.

Only the app lifts: a command that prints or writes a history reads it whole as before.
"""

from __future__ import annotations

import os
import re
import zlib
from array import array

from replay.core.readers import huge_strings
from replay.core.session import lifted

LIFT_CHARS = 1 << 20
"""A block's text held past this many characters is left in its file."""
PIECE_BYTES = 1 << 16
"""Bytes of the file between two of a run's marks (at least: marks are at line starts)."""
HEAD_CHARS = huge_strings.HEAD_CHARS
"""Characters of a run's text its placeholder holds."""
_CHECK_BYTES = 1 << 20

_LINE_END = re.compile(r"\r\n|\r|\n")
ROLES = frozenset({"assistant", "user"})
"""The blocks lifted: a reply (its lines as they are) and a prompt (`#### ` lines)."""
_MADE: dict[tuple[str, int, int, int, tuple[int, int, int]], str] = {}
"""The placeholder made for each run (path, start, end, characters, the file's stamp): a
chat's exchange read again gives the same placeholder, the run not checked again."""


def shown_lines(data: bytes, role: str) -> str:
    """The text a block of `role` makes of whole lines of the file (`data`, from a line
    start): each line as the history reader keeps it, each followed by a line end but the
    last when `data` does not end with one."""
    lines = _LINE_END.split(data.decode("utf-8", errors="replace"))
    if role == "user":
        return "\n".join([line.rstrip()[5:] for line in lines])
    return "\n".join(["" if line.isspace() else line for line in lines])


class LineRun:
    """A block's lines as they are read: counted, marked and (once past `LIFT_CHARS`) no
    longer kept by the block."""

    __slots__ = ("at_bytes", "at_chars", "blank", "chars", "head", "held", "lines",
                 "start", "stamp")

    def __init__(self, start: int) -> None:
        self.start = start
        self.at_bytes, self.at_chars = array("q"), array("q")
        self.chars = -1
        """Characters of the text so far (-1: no line yet)."""
        self.lines = -1
        """Line ends in the text so far."""
        self.head = ""
        self.blank = True
        self.held = True
        """The block still keeps its lines."""
        self.stamp: tuple[int, int, int] | None = None
        """The file's stamp when the block stopped keeping its lines."""

    def line(self, text: str, offset: int | None) -> None:
        """The next line of the text (`offset` its place in the file; None for an empty
        line the reader adds without one: a blank line inside a reply)."""
        at = self.chars + 1
        if offset is not None and (not self.at_bytes
                                   or offset - self.at_bytes[-1] >= PIECE_BYTES):
            self.at_bytes.append(offset)
            self.at_chars.append(at)
        self.chars = at + len(text)
        self.lines += 1
        if len(self.head) < HEAD_CHARS:
            self.head = (self.head + "\n" + text if at else text)[:HEAD_CHARS]
        self.blank = self.blank and not text.strip()

    def let_go(self, path: str) -> bool:
        """True when the block should stop keeping its lines now (its text is past
        `LIFT_CHARS`, and the file can be read back)."""
        if not self.held or self.chars <= LIFT_CHARS:
            return False
        try:
            status = os.stat(path)
        except OSError:
            return False
        self.stamp = (status.st_ino, status.st_size, status.st_mtime_ns)
        self.held = False
        return True

    def text(self, path: str, end: int, role: str) -> str:
        """The placeholder for the run's text, its bytes [start, end) of the file (`end`
        after its last line's end, or past the file's end)."""
        if self.blank:
            return "\n" * self.lines  # white space only: as blank as it was
        assert self.stamp is not None
        path = os.path.abspath(path)
        end = min(end, self.stamp[1])
        key = (path, self.start, end, self.chars, self.stamp)
        made = _MADE.get(key)
        if made is not None:
            return made
        crc = 0
        try:
            with open(path, "rb") as handle:
                handle.seek(self.start)
                left = end - self.start
                while left > 0:
                    piece = handle.read(min(left, _CHECK_BYTES))
                    if not piece:
                        break
                    crc = zlib.crc32(piece, crc)
                    left -= len(piece)
        except OSError:
            left = -1
        if left:
            crc = -1  # cut already: never read (a line says so)
        made = lifted.register(FileLines(path, self.stamp, self.start, end, self.at_bytes,
                                         self.at_chars, self.chars, self.lines, crc, role),
                               self.head)
        _MADE[key] = made
        return made


class FileLines(lifted.FileText):
    """The text of a run of a Markdown file's lines, decoded on demand (see the module)."""

    __slots__ = ("role",)

    def __init__(self, path: str, stamp: tuple[int, int, int], start: int, end: int,
                 at_bytes: array[int], at_chars: array[int], chars: int, lines: int,
                 crc: int, role: str) -> None:
        super().__init__(path, stamp, start, end, at_bytes, at_chars, chars, lines, crc)
        self.role = role

    def _decode(self, begin: int, stop: int) -> str:
        """The text of the file's lines `begin` to `stop`, as the reader makes it."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            data = os.pread(fd, stop - begin, begin)
        finally:
            os.close(fd)
        if len(data) != stop - begin:
            raise lifted.TextMoved("the file was cut since it was read")
        return shown_lines(data, self.role)
