"""Turning turns into safe Rich renderables: no transcript text is ever parsed as markup."""

from __future__ import annotations

import functools
import re
from array import array
from collections.abc import Callable
from datetime import datetime

from rich.cells import cell_len, chop_cells, get_character_cell_size
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from replay.core.detection.empty import format_duration
from replay.core.session.model import Kind, Part, Turn
from replay.ui.literal import shown

FOLD_LINES = 24
"""Lines of a tool output shown before the rest is folded."""
FOLD_CHARS = 20_000
"""Characters of a folded text shown at most (however few its lines)."""
LONG_TEXT_CHARS = 100_000
"""Texts longer than this are shown unfolded as a `LongText`, a screen at a time."""


def clean(text: str | None) -> str:
    """Transcript text made safe for the terminal (see `replay.ui.literal.shown`)."""
    return shown(text)


def clock(turn: Turn) -> str:
    """The turn's local wall-clock time, `14:02:51`, or its raw timestamp."""
    if turn.time is None:
        return clean(turn.timestamp) if turn.timestamp else ""
    try:
        return datetime.fromtimestamp(turn.time).strftime("%H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return ""


def gap_text(seconds: float | None) -> str:
    """`+38 s` for the gap since the previous turn."""
    return f"+{format_duration(seconds)}" if seconds is not None and seconds >= 1 else ""


def prose(text: str) -> RenderableType:
    """Markdown for prose; plain text when it is large (rendering cost) or has no markdown."""
    safe = clean(text)
    if len(safe) > 20_000 or not any(mark in safe for mark in ("#", "*", "`", "- ", "1. ", "|")):
        return Text(safe)
    return _markdown(safe)


_PARSERS: list[object] = []
"""The Markdown parser, made on first use: importing it costs 30 ms at startup."""


def _markdown(text: str) -> RenderableType:
    """Markdown whose HTML (tags, comments) is text to show, not markup to drop: an agent's
    `<!-- rm -rf / -->` must stay on screen."""
    from markdown_it import MarkdownIt
    from rich.markdown import Markdown

    if not _PARSERS:
        _PARSERS.append(MarkdownIt("commonmark", {"html": False})
                        .enable("strikethrough").enable("table"))
    parser = _PARSERS[0]
    assert isinstance(parser, MarkdownIt)
    document = Markdown("", hyperlinks=False, code_theme="ansi_dark", inline_code_lexer=None)
    document.markup = text
    document.parsed = parser.parse(text)
    return document


def fold(text: str, lines: int = FOLD_LINES, chars: int = FOLD_CHARS) -> tuple[str, int]:
    """The first `lines` lines of a text, at most `chars` characters of it, and how many
    lines were hidden (at least 1 when the text was cut inside a line). Bounded however
    large the text: a 50 MB line is cut, not wrapped whole, and its lines are counted
    without splitting it."""
    if len(text) > chars:
        shown, hidden = fold(text[:chars], lines, chars)
        hidden += text.count("\n", chars)
        return shown, max(hidden, 1)
    all_lines = text.splitlines()
    if len(all_lines) <= lines:
        return text, 0
    return "\n".join(all_lines[:lines]), len(all_lines) - lines


def _narrow(text: str) -> bool:
    """True when every character of a shown text is one cell wide, checked at C speed: ASCII,
    or Latin-1 (whose controls and soft hyphen `clean` has already spelled out), or else
    each of its few distinct other characters one cell wide (`␛`, `…`, box drawing: a
    50 MB reply of such lines was wrapped grapheme by grapheme, 10 s for 10 MB)."""
    if text.isascii():
        return True
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        pass
    # Each distinct other character once, by a search that then skips it too (no list of
    # every occurrence: 600,000 `␛` in a 50 MB reply were 30 MB of strings).
    allowed, at = "", 0
    while (found := _not_latin(allowed).search(text, at)) is not None:
        character = found.group()
        if not _one_cell(character):
            return False
        allowed += character
        at = found.start()
    return True


@functools.lru_cache(maxsize=256)
def _not_latin(allowed: str) -> re.Pattern[str]:
    """A character past Latin-1 that is not one of `allowed`."""
    return re.compile(f"[^\\x00-\\xff{re.escape(allowed)}]")


@functools.cache
def _one_cell(character: str) -> bool:
    """True when the character takes exactly one cell."""
    return get_character_cell_size(character) == 1


class LongText:
    """A very long plain text drawn a screen at a time (`TurnLines` asks for rows).

    Rich would wrap the whole text into lines before the first is shown: a 50 MB message
    took minutes and gigabytes. Here rows are counted when the width is known (a line of
    ASCII is `len / width` rows, computed, not made), and a row is cut from its line only
    when drawn. Lines wrap at the width by cells (no word wrap).
    """

    def __init__(self, text: str, style: Style | None = None, indent: int = 1) -> None:
        safe = clean(text)
        if "\t" in safe:
            safe = safe.expandtabs(8)
        self._text = safe
        # Where each line starts (8 bytes a line), not a string each: a 50 MB message split
        # into 600,000 lines was 85 MB more.
        starts = array("q", [0])
        find, at = safe.find, safe.find("\n")
        while at >= 0:
            starts.append(at + 1)
            at = find("\n", at + 1)
        starts.append(len(safe) + 1)  # where a line after the last would start
        self._starts = starts
        self._narrow = _narrow(safe)
        self.style = style
        self.indent = indent
        self._width = -1
        self._line_of: array[int] = array("q")
        self._start_of: array[int] = array("q")

    def layout(self, width: int) -> int:
        """The number of rows at `width` columns (laid out once per width)."""
        if width != self._width:
            self._width = width
            room = max(1, width - self.indent)
            line_of: array[int] = array("q")
            start_of: array[int] = array("q")
            starts, lines = self._starts, self.line_count
            if self._narrow and max(map(int.__sub__, starts[1:], starts)) - 1 <= room:
                # Every line fits (most text at most widths): a row per line, made at once.
                self._line_of = array("q", range(lines))
                self._start_of = array("q", bytes(8 * lines))
                return lines
            for number in range(lines):
                length = starts[number + 1] - starts[number] - 1
                line = "" if self._narrow else self.line(number)
                if self._narrow or _narrow(line):
                    count = max(1, -(-length // room))
                    line_of.extend([number] * count)
                    start_of.extend(range(0, count * room, room))
                else:
                    start = 0
                    for piece in chop_cells(line, room) or [""]:
                        line_of.append(number)
                        start_of.append(start)
                        start += len(piece)
            self._line_of, self._start_of = line_of, start_of
        return len(self._line_of)

    @property
    def line_count(self) -> int:
        """Lines of the text."""
        return len(self._starts) - 1

    def line(self, number: int) -> str:
        """Line `number` of the text (without its line end)."""
        return self._text[self._starts[number]:self._starts[number + 1] - 1]

    def row(self, number: int) -> list[Segment]:
        """Row `number` at the laid-out width, padded to it."""
        line_number = self._line_of[number]
        line = self.line(line_number)
        start = self._start_of[number]
        last = number + 1 >= len(self._line_of) or self._line_of[number + 1] != line_number
        piece = line[start:] if last else line[start:self._start_of[number + 1]]
        pad = max(0, self._width - self.indent - cell_len(piece))
        return [Segment(" " * self.indent), Segment(piece, self.style), Segment(" " * pad)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Outside `TurnLines`: its first lines only (never the whole text)."""
        end = self._starts[min(FOLD_LINES, self.line_count)] - 1
        yield Text(self._text[:end], style=self.style or "")


def tool_title(part: Part) -> str:
    """`bash · completed · 2.1 s` for a tool call's fold line."""
    pieces = [clean(part.name or "tool")]
    if part.status:
        pieces.append(clean(part.status))
    if part.duration is not None:
        pieces.append(format_duration(part.duration) if part.duration >= 1 else
                      f"{part.duration * 1000:.0f} ms")
    return " · ".join(pieces)


def marker_line(part: Part) -> Text:
    """One dim line for markers, errors, files and other small parts."""
    if part.kind == Kind.ERROR:
        message = f" {clean(part.text)}" if part.text else ""
        return Text(f"error: {clean(part.name) or 'unknown'}{message}", style="bold red")
    if part.kind == Kind.COMPACTION:
        return Text(f"⟲ compaction{' (auto)' if part.name == 'auto' else ''}", style="bold")
    if part.kind == Kind.FILE:
        return Text(f"◇ {clean(part.name or part.text)}", style="italic")
    if part.kind == Kind.IMAGE:
        return Text(f"▣ image {clean(part.name or '')}".rstrip(), style="italic")
    if part.kind == Kind.PATCH:
        return Text(f"± patch {clean(part.text or part.name or '')}".rstrip(), style="italic")
    if part.kind == Kind.STEP:
        return Text(f"· step {clean(part.name or '')}".rstrip(), style="dim")
    if part.kind == Kind.SNAPSHOT:
        return Text("· snapshot", style="dim")
    if part.kind == Kind.AGENT:
        return Text(f"@{clean(part.name or part.text)}", style="bold")
    if part.kind == Kind.SUBTASK:
        return Text(f"↳ subtask {clean(part.name or '')}: {clean(part.text)}", style="italic")
    if part.kind == Kind.RETRY:
        return Text("· retry", style="dim")
    return Text(f"· {clean(part.name or part.kind)} {clean(part.text)[:200]}".rstrip(), style="dim")


def tool_body(part: Part, needle: str = "") -> Text:
    """Input and (folded) output of a tool call, as plain text; a line holding `needle`
    (a search, any case) that the fold would hide is shown with the lines around it."""
    body = Text()
    if part.input:
        body.append("input\n", style="bold dim")
        _append_folded(body, clean(part.input), 12, needle, "more lines")
    output = part.output if part.kind == Kind.TOOL_CALL else part.text
    if output:
        if body:
            body.append("\n")
        body.append("output\n", style="bold dim")
        _append_folded(body, clean(output), FOLD_LINES, needle,
                       "more lines folded (v shows the raw record)")
    if part.shortened:
        body.append("\n… shortened in memory; v shows the raw record", style="dim italic")
    return body


def _append_folded(body: Text, text: str, lines: int, needle: str, more: str) -> None:
    """The first `lines` lines of `text`, then the first hidden line holding `needle` with
    two lines either side, then how many lines are left out."""
    shown, hidden = fold(text, lines)
    body.append(shown)
    if not hidden:
        return
    wanted = needle.lower()
    all_lines = text.splitlines()
    at = None
    if wanted and wanted not in shown.lower():
        at = next((i for i in range(lines, len(all_lines)) if wanted in all_lines[i].lower()),
                  None)
    if at is None:
        body.append(f"\n… {hidden:,} {more}", style="dim italic")
        return
    start, end = max(lines, at - 2), min(len(all_lines), at + 3)
    if start > lines:
        body.append(f"\n… {start - lines:,} lines", style="dim italic")
    body.append("\n" + "\n".join(line[:FOLD_CHARS] for line in all_lines[start:end]))
    if end < len(all_lines):
        body.append(f"\n… {len(all_lines) - end:,} {more}", style="dim italic")


def summarize_tools(parts: list[Part]) -> str:
    """`bash × 3, read` for a compact view of several tool calls."""
    counts: dict[str, int] = {}
    for part in parts:
        name = clean(part.name or "tool")
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} × {count}" if count > 1 else name for name, count in counts.items())


def turn_plain_text(parts: list[Part]) -> str:
    """The text of a turn for copying: prose, then tool calls with input and output."""
    pieces: list[str] = []
    for part in parts:
        if part.kind == Kind.TEXT:
            pieces.append(part.text)
        elif part.kind in (Kind.TOOL_CALL, Kind.TOOL_RESULT):
            pieces.append(f"[{part.name or 'tool'}] {part.input or ''}\n{part.output or part.text}")
        elif part.kind == Kind.REASONING and part.text:
            pieces.append(f"(reasoning) {part.text}")
    return "\n\n".join(piece.strip() for piece in pieces if piece.strip())


_JSON_TOKEN = re.compile(
    r'(?P<key>"(?:[^"\\\n]|\\.)*"(?=\s*:))'
    r'|(?P<string>"(?:[^"\\\n]|\\.)*")'
    r"|(?P<number>-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)"
    r"|(?P<literal>\b(?:true|false|null)\b)"
)
"""JSON tokens, one pass: a quoted string followed by a colon is a key."""

JSON_TOKEN_VARIABLES = {"key": "text-primary", "string": "text-success",
                        "number": "text-warning", "literal": "text-secondary"}
"""The theme variable that colours each kind of JSON token."""


def highlight_json(text: str, style_of: Callable[[str], Style]) -> Text:
    """Raw records with JSON keys, strings, numbers and literals coloured.

    The text is made safe first (control characters shown as escapes) and is never parsed
    as markup: colours are spans laid over plain text. Text that is not JSON (a heading, a
    line that did not parse) only gets colour where a token happens to match.
    """
    safe = Text(clean(text))
    styles = {kind: style_of(variable) for kind, variable in JSON_TOKEN_VARIABLES.items()}
    for match in _JSON_TOKEN.finditer(safe.plain):
        kind = match.lastgroup
        if kind is not None:
            safe.stylize(styles[kind], match.start(), match.end())
    return safe
