"""`replay share --as cast`: the session as an asciicast v2 recording.

A header line, then one `[time, "o", text]` event per turn drawn as the app's turn list
draws it (a coloured heading, the words, tool calls and reasoning on one folded line each),
and a marker `[time, "m", "#N reason"]` at every empty turn, so `asciinema play` and
asciinema-player's `pauseOnMarkers` stop at the silences. Time follows the app's playback
at 1x: the real clock between turns with idle gaps capped.

Every colour is ours: transcript text goes through `escape_controls`, so no escape sequence
of the transcript reaches the player's terminal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from replay.core.publish.share_model import (
    SharedPart,
    SharedSession,
    SharedTurn,
    clock,
    evidence_line,
    gap_text,
    suggestion_line,
)
from replay.core.safe import escape_controls
from replay.core.session.text import plural

WIDTH = 100
HEIGHT = 32
"""The terminal the recording is drawn for."""

PART_LINES = 24
"""Lines of a text part shown before the rest is counted."""

RESET = "\x1b[0m"
STYLES = {"user": "\x1b[1;36m", "assistant": "\x1b[1;32m", "system": "\x1b[1;35m",
          "dim": "\x1b[2m", "tool": "\x1b[33m", "banner": "\x1b[1;7;33m", "bold": "\x1b[1m",
          "empty": "\x1b[33m"}
"""The only escape sequences a recording holds."""


def _safe(text: str) -> str:
    """Transcript text for the terminal: controls visible, lines ended as a terminal wants."""
    return escape_controls(text).replace("\n", "\r\n")


def _paint(style: str, text: str) -> str:
    return f"{STYLES[style]}{text}{RESET}"


def cast_chunks(shared: SharedSession) -> Iterator[str]:
    """The recording, one JSON line at a time."""
    header: dict[str, object] = {
        "version": 2, "width": WIDTH, "height": HEIGHT,
        "title": escape_controls(f"{shared.title} · replay share"),
        "env": {"TERM": "xterm-256color", "SHELL": "/bin/sh"}}
    started = shared.session.started
    if started is not None:
        header["timestamp"] = int(started)
    yield json.dumps(header, ensure_ascii=False) + "\n"
    clock_at = 0.0
    intro = _paint("bold", _safe(shared.title)) + "\r\n" + _paint(
        "dim", f"{shared.session.format} · {plural(shared.count, 'turn')} · "
               f"{plural(len(shared.empties), 'empty turn')} · replay share") + "\r\n"
    yield _event(clock_at, "o", intro)
    previous_delay = 0.0
    for turn in shared.turns():
        clock_at += previous_delay
        if turn.empty is not None:
            yield _event(clock_at, "m", f"#{turn.name} {turn.empty.reason}")
        yield _event(clock_at, "o", turn_text(turn, shared))
        previous_delay = turn.delay


def _event(time: float, kind: str, text: str) -> str:
    return json.dumps([round(time, 6), kind, text], ensure_ascii=False) + "\n"


def turn_text(turn: SharedTurn, shared: SharedSession) -> str:
    """One turn as terminal output, colours ours, the transcript's neutralised."""
    heading = [f"#{turn.name}", turn.role, "not in the file" if turn.placeholder else clock(turn)]
    if gap_text(turn):
        heading.append(gap_text(turn))
    style = turn.role if turn.role in STYLES else "bold"
    lines = ["", _paint(style, _safe(" · ".join(heading)))]
    if turn.empty is not None:
        empty = turn.empty
        lines.append(_paint("banner", f" EMPTY TURN {turn.ordinal} / {len(shared.empties)} ")
                     + " " + _paint("bold", _safe(f"{turn.headline} ({empty.reason})")))
        lines.append(_paint("empty", " evidence: ") + _safe(evidence_line(empty)))
        lines.append(_paint("empty", " suggested: ") + _safe(suggestion_line(empty)))
        for note in turn.annotations:
            title = shared.label_titles.get(note.label)
            label = f"{note.label} ({title})" if title else note.label
            line = f"{label} · {note.reviewer or 'unknown'} · {note.confidence}"
            lines.append(_paint("empty", " label: ") + _safe(line))
            if note.note:
                lines.append(_paint("empty", " note: ") + _safe(" ".join(note.note.split())))
        if not turn.annotations:
            lines.append(_paint("dim", " not annotated"))
    for part in turn.parts:
        lines.extend(part_lines(part))
    return "\r\n".join(lines) + "\r\n"


def part_lines(part: SharedPart) -> list[str]:
    """A part as terminal lines: words in full up to `PART_LINES`, the rest one line each."""
    if part.kind == "text":
        if not part.body.strip():
            return []
        rows = part.body.strip("\n").split("\n")
        shown = [_safe(row) for row in rows[:PART_LINES]]
        hidden = len(rows) - PART_LINES
        if hidden > 0:
            shown.append(_paint("dim", f"… {hidden:,} more lines"))
        return shown
    if part.kind == "reasoning":
        return [_paint("dim", f"∴ {_safe(part.title)}")]
    if part.kind == "tool":
        first = next((row for row in part.body.splitlines() if row.strip()), "")
        preview = " " + _safe(first[:WIDTH - len(part.title) - 6]) if first else ""
        return [_paint("tool", f"▸ {_safe(part.title)}") + _paint("dim", preview)]
    return [_paint("dim", _safe(part.title))]
